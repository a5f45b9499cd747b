-module(main).
-export([main/1]).
main(Args) ->
    io:format("hello~n"),
    Line = string:trim(io:get_line("")),
    io:format("~s~n", [lists:join(" ", [Line | Args])]),
    {ok, Data} = file:read_file("data.txt"),
    [First | _] = string:split(Data, "\n"),
    io:format("~s~n", [First]),
    io:format("~p~n", [util:twice(21)]),
    io:format(standard_error, "oops~n", []),
    halt(3).
