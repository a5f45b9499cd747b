fun main() {
    val l = ArrayList<ByteArray>()
    while (true) l.add(ByteArray(1000000) { 1 })
}
