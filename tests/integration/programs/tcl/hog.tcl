set s x
while 1 { append s $s }
