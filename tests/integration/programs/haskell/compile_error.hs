main :: IO ()
main = undefinedName
