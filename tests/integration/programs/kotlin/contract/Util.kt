fun twice(x: Int) = 2 * x
