my @l;
loop { @l.push: Buf.new(1 xx 1_000_000) }
