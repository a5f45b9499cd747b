object Main {
  def main(args: Array[String]): Unit = {
    val l = scala.collection.mutable.ArrayBuffer[Array[Byte]]()
    while (true) l += Array.fill[Byte](1000000)(1)
  }
}
