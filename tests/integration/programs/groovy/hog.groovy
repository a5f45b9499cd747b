def l = []
while (true) l << new byte[1000000]
