-module(main).
-export([main/1]).
main(_) -> hog([]).
hog(L) -> hog([binary:copy(<<1>>, 100000) | L]).
