l = []
loop
  l.push Buffer.alloc 1000000, 1
