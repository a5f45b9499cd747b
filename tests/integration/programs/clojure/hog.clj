(loop [l ()] (recur (conj l (byte-array 1000000))))
