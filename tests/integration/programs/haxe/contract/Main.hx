class Main {
    static function main() {
        Sys.println("hello");
        var line = StringTools.trim(Sys.stdin().readLine());
        Sys.println([line].concat(Sys.args()).join(" "));
        Sys.println(sys.io.File.getContent("data.txt").split("\n")[0]);
        Sys.println(Util.twice(21));
        Sys.stderr().writeString("oops\n");
        Sys.exit(3);
    }
}
