using System;
using System.IO;
class Program {
    static int Main(string[] args) {
        Console.WriteLine("hello");
        var parts = new System.Collections.Generic.List<string> { Console.ReadLine().Trim() };
        parts.AddRange(args);
        Console.WriteLine(string.Join(" ", parts));
        Console.WriteLine(File.ReadAllLines("data.txt")[0]);
        Console.WriteLine(Util.Twice(21));
        Console.Error.WriteLine("oops");
        return 3;
    }
}
