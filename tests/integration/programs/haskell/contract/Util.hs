module Util (twice) where
twice :: Int -> Int
twice x = 2 * x
