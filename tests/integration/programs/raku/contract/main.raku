use lib ".";
use Util;
say "hello";
say ($*IN.get.trim, |@*ARGS).join(" ");
say "data.txt".IO.lines.head;
say twice(21);
note "oops";
exit 3;
