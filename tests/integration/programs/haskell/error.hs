main :: IO ()
main = error "boom"
