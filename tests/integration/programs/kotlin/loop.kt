fun main() {
    while (true) {}
}
