-module(util).
-export([twice/1]).
twice(X) -> 2 * X.
