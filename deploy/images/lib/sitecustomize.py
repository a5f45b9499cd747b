
# isobox (deploy/images/lib/sitecustomize.py, appended by build.sh): in a
# sandbox stdout is a pipe, which Python buffers in 8 KiB blocks, so a
# program's lines would arrive only at its exit. Line buffering sends each
# line as it is printed (stderr is line-buffered already).
import sys as _isobox_sys
try:
    _isobox_sys.stdout.reconfigure(line_buffering=True)
except (AttributeError, ValueError):  # no stdout, or not a text stream
    pass
del _isobox_sys
