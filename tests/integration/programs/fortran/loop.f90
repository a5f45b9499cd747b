program p
  integer(8), volatile :: n
  n = 0
  do
    n = n + 1
  end do
end program p
