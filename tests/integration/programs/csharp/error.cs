class P { static void Main() { throw new System.Exception("boom"); } }
