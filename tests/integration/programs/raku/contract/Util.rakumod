unit module Util;
sub twice($x) is export { 2 * $x }
