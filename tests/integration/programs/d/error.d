void main() {
    throw new Exception("boom");
}
