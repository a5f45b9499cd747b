#lang racket
(for ([i 3])
  (printf "line ~a\n" i)
  (sleep 1))
