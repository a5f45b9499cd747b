program p
  implicit none
  print *, undefined_name
end program p
