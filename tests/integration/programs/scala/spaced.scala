object Main {
  def main(args: Array[String]): Unit = {
    for (i <- 0 to 2) {
      println(s"line $i")
      Thread.sleep(1000)
    }
  }
}
