program p
  integer, allocatable :: a(:)
  integer(8) :: n
  n = 1000000
  do
    n = n * 2
    if (allocated(a)) deallocate(a)
    allocate(a(n))
    a = 1
  end do
end program p
