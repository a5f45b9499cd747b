static class Util { public static int Twice(int x) { return 2 * x; } }
