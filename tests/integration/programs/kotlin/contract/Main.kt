import java.io.File
import kotlin.system.exitProcess
fun main(args: Array<String>) {
    println("hello")
    val line = readLine()!!.trim()
    println((listOf(line) + args).joinToString(" "))
    println(File("data.txt").readLines()[0])
    println(twice(21))
    System.err.println("oops")
    exitProcess(3)
}
