# gawk flushes before it starts a command (system, a pipe), so the wait is
# a busy one, from one second's start to the next: what a long computation
# between lines would look like.
function tick(t) { t = systime(); while (systime() == t) ; }
BEGIN { tick(); for (i = 0; i < 3; i++) { print "line " i; tick() } }
