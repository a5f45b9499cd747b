(defun twice (x) (* 2 x))
