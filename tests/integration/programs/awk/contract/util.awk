function twice(x) { return 2 * x }
