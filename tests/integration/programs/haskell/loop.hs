import Control.Monad
main :: IO ()
main = forever (return ())
