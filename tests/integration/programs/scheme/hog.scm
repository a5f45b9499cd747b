(let loop ((l '())) (loop (cons (make-string 100000 #\x) l)))
