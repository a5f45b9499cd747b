(dotimes (i 3) (format t "line ~a~%" i) (sleep 1))
