@include "util.awk"
BEGIN { print "hello"; getline l < "/dev/stdin"; s = l; for (i = 1; i < ARGC; i++) s = s " " ARGV[i]; print s; getline d < "data.txt"; print d; print twice(21); print "oops" > "/dev/stderr"; exit 3 }
