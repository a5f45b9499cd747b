class Util {
    public static function twice(x:Int):Int return 2 * x;
}
