import core.stdc.stdlib, core.stdc.string;
void main() {
    for (;;) {
        auto p = cast(ubyte*) malloc(1 << 20);
        memset(p, 1, 1 << 20);
    }
}
