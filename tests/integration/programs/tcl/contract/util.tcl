proc twice {x} { return [expr {2 * $x}] }
