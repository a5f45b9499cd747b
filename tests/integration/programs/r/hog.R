l <- list()
repeat l[[length(l) + 1]] <- runif(1e6)
