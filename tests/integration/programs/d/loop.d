void main() {
    for (;;) {}
}
