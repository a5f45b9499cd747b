BEGIN { s = "x"; while (1) s = s s }
