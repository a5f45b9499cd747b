integer function twice(x)
  integer :: x
  twice = 2 * x
end function twice
