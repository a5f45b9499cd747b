object Main {
  def main(args: Array[String]): Unit = {
    undefinedName()
  }
}
