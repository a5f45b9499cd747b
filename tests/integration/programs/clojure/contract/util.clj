(ns util)
(defn twice [x] (* 2 x))
