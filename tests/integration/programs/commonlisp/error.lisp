(error "boom")
