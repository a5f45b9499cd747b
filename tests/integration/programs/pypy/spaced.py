import time
for i in range(3):
    print('line', i)
    time.sleep(1)
