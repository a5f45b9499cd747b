-module(main).
-export([main/1]).
main(_) -> lists:foreach(fun(I) -> io:format("line ~p~n", [I]), timer:sleep(1000) end, [0, 1, 2]).
