main :: IO ()
main = do
  let l = [1 ..] :: [Integer]
  print (length l)
  print (head l)
