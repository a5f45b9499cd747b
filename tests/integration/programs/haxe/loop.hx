class Main {
    static function main() {
        while (true) {}
    }
}
