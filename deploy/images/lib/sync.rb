# Loaded by RUBYOPT (registry/registry.yaml): Ruby buffers $stdout when it
# is not a terminal, so a program's lines would arrive only at its exit.
$stdout.sync = true
$stderr.sync = true
