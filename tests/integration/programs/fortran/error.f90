program p
  error stop 'boom'
end program p
