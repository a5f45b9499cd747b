(loop [] (recur))
