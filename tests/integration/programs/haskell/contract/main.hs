import System.Environment (getArgs)
import System.Exit
import System.IO
import Util (twice)
main :: IO ()
main = do
  putStrLn "hello"
  line <- getLine
  args <- getArgs
  putStrLn (unwords (line : args))
  d <- readFile "data.txt"
  putStrLn (head (lines d))
  print (twice 21)
  hPutStrLn stderr "oops"
  exitWith (ExitFailure 3)
