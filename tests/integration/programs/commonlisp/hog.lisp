(let (l) (loop (push (make-array 100000 :element-type '(unsigned-byte 8) :initial-element 1) l)))
