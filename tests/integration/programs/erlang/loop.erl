-module(main).
-export([main/1]).
main(_) -> loop(0).
loop(N) -> loop(N + 1).
