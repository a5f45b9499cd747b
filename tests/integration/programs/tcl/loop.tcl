while 1 {}
