class Main {
    static function main() {
        throw "boom";
    }
}
