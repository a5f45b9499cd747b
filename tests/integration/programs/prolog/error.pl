:- initialization(main, main).
main :- X is 1 / 0, writeln(X).
