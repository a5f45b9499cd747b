let rec f n = f (n + 1)
let () = f 0
