class P { static void Main() { undefinedName(); } }
