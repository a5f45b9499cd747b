#lang racket
(provide twice)
(define (twice x) (* 2 x))
