let () = undefined_name ()
