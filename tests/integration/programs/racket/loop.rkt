#lang racket
(let loop () (loop))
