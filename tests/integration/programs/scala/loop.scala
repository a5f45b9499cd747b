object Main {
  def main(args: Array[String]): Unit = {
    while (true) {}
  }
}
