import std.stdio, std.string, std.array, std.file;
import util;
int main(string[] args) {
    writeln("hello");
    auto line = readln().strip();
    writeln(([line] ~ args[1 .. $]).join(" "));
    writeln(readText("data.txt").splitLines()[0]);
    writeln(twice(21));
    stderr.writeln("oops");
    return 3;
}
