let () = for i = 0 to 2 do Printf.printf "line %d\n" i; Unix.sleep 1 done
