# Loaded by PERL5OPT (registry/registry.yaml): Perl buffers STDOUT when it
# is not a terminal, so a program's lines would arrive only at its exit.
package IsoboxSync;
use IO::Handle;
STDOUT->autoflush(1);
STDERR->autoflush(1);
1;
