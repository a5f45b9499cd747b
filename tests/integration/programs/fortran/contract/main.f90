program main
  implicit none
  integer :: twice, i, n
  character(len=256) :: line, arg
  print '(a)', 'hello'
  read (*, '(a)') line
  n = command_argument_count()
  do i = 1, n
    call get_command_argument(i, arg)
    line = trim(line) // ' ' // trim(arg)
  end do
  print '(a)', trim(line)
  open (10, file='data.txt', status='old')
  read (10, '(a)') line
  close (10)
  print '(a)', trim(line)
  print '(i0)', twice(21)
  write (0, '(a)') 'oops'
  call exit(3)
end program main
