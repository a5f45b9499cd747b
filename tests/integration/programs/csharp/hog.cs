using System.Collections.Generic;
class P {
    static void Main() {
        var l = new List<byte[]>();
        while (true) { var b = new byte[1000000]; for (int i = 0; i < b.Length; i += 4096) b[i] = 1; l.Add(b); }
    }
}
