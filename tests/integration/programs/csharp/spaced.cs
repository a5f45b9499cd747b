using System;
using System.Threading;
class P {
    static void Main() {
        for (int i = 0; i < 3; i++) { Console.WriteLine("line " + i); Thread.Sleep(1000); }
    }
}
