program p
  integer :: i
  do i = 0, 2
    print '(a,i0)', 'line ', i
    call sleep(1)
  end do
end program p
