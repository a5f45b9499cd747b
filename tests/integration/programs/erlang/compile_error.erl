-module(main).
-export([main/1]).
main(_) -> undefined_name().
