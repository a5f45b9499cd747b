:- initialization(main, main).
main :- repeat, fail.
