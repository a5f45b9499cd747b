import Control.Concurrent
main :: IO ()
main = mapM_ (\i -> putStrLn ("line " ++ show i) >> threadDelay 1000000) [0 .. 2 :: Int]
