for {set i 0} {$i < 3} {incr i} { puts "line $i"; after 1000 }
