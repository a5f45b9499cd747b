twice <- function(x) 2 * x
