l = []
while True:
    l.append(bytearray(1000000))
