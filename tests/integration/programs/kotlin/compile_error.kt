fun main() {
    undefinedName()
}
