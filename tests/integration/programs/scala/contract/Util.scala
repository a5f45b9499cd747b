object Util {
  def twice(x: Int): Int = 2 * x
}
