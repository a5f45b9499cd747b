Stream.iterate([], fn l -> [:binary.copy("x", 100000) | l] end) |> Stream.run()
