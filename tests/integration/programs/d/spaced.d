import core.thread, core.time, std.stdio;
void main() {
    foreach (i; 0 .. 3) {
        writeln("line ", i);
        Thread.sleep(1.seconds);
    }
}
