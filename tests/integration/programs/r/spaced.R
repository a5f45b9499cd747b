for (i in 0:2) {
  cat(sprintf("line %d\n", i))
  Sys.sleep(1)
}
