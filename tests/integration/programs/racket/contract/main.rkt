#lang racket
(require "util.rkt")
(displayln "hello")
(displayln (string-join (cons (string-trim (read-line)) (vector->list (current-command-line-arguments))) " "))
(displayln (first (file->lines "data.txt")))
(displayln (twice 21))
(eprintf "oops\n")
(exit 3)
