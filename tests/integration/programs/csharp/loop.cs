class P { static void Main() { while (true) {} } }
