void main() {
    undefinedName();
}
