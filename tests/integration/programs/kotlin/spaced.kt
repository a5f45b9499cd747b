fun main() {
    for (i in 0..2) {
        println("line $i")
        Thread.sleep(1000)
    }
}
