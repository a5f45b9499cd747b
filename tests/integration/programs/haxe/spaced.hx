class Main {
    static function main() {
        for (i in 0...3) {
            Sys.println("line " + i);
            Sys.sleep(1);
        }
    }
}
