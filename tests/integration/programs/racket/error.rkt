#lang racket
(error "boom")
