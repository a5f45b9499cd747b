(let loop () (loop))
