#lang racket
(let loop ([l '()]) (loop (cons (make-bytes 1000000 1) l)))
