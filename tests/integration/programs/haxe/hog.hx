class Main {
    static function main() {
        var l = [];
        while (true) l.push(haxe.io.Bytes.alloc(1000000));
    }
}
