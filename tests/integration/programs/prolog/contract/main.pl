:- initialization(main, main).
:- consult(util).
main :-
    writeln(hello),
    read_line_to_string(user_input, Line),
    current_prolog_flag(argv, Args),
    atomic_list_concat([Line | Args], ' ', Out), writeln(Out),
    open('data.txt', read, S), read_line_to_string(S, First), close(S), writeln(First),
    twice(21, X), writeln(X),
    format(user_error, "oops~n", []),
    halt(3).
