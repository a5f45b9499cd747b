:- initialization(main, main).
main :- numlist(1, 100000000, L), sum_list(L, S), writeln(S).
