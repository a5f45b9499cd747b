(let loop ((i 0))
  (when (< i 3)
    (display "line ") (display i) (newline) (sleep 1) (loop (+ i 1))))
