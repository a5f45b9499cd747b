for i <- 0..2 do
  IO.puts("line #{i}")
  Process.sleep(1000)
end
