loop
  null
