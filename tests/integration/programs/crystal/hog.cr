l = [] of Bytes
loop { l << Bytes.new(1_000_000, 1_u8) }
