import sys
from util import twice
print("hello")
print(sys.stdin.readline().strip(), *sys.argv[1:])
print(open("data.txt").readline().strip())
print(twice(21))
print("oops", file=sys.stderr)
sys.exit(3)
