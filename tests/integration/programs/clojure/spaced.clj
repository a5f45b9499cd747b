(dotimes [i 3]
  (println (str "line " i))
  (Thread/sleep 1000))
