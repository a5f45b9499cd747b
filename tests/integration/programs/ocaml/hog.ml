let () = let l = ref [] in while true do l := Bytes.make 100000 'x' :: !l done
