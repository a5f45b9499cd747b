(define-module (util) #:export (twice))
(define (twice x) (* 2 x))
