object Main {
  def main(args: Array[String]): Unit = {
    println("hello")
    val line = scala.io.StdIn.readLine().trim
    println((line +: args).mkString(" "))
    println(scala.io.Source.fromFile("data.txt").getLines().next())
    println(Util.twice(21))
    System.err.println("oops")
    sys.exit(3)
  }
}
