twice(X, Y) :- Y is 2 * X.
