fun main() {
    throw RuntimeException("boom")
}
