-module(main).
-export([main/1]).
main(_) -> erlang:error(boom).
