:- initialization(main, main).
main :- forall(between(0, 2, I), (format("line ~w~n", [I]), sleep(1))).
