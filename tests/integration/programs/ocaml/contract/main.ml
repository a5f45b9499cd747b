let () =
  print_endline "hello";
  let line = input_line stdin in
  print_endline (String.concat " " (line :: List.tl (Array.to_list Sys.argv)));
  let ic = open_in "data.txt" in
  print_endline (input_line ic);
  close_in ic;
  Printf.printf "%d\n" (Util.twice 21);
  prerr_endline "oops";
  exit 3
