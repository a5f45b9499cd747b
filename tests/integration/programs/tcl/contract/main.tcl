source [file join [file dirname [info script]] util.tcl]
puts "hello"
gets stdin line
puts [join [concat [list $line] $argv] " "]
set f [open data.txt]; puts [gets $f]; close $f
puts [twice 21]
puts stderr "oops"
exit 3
