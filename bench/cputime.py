"""cputime.py: run a command, append its CPU time to a file (bench/ab.sh).

    python3 cputime.py FILE COMMAND [ARG ...]

Appends "USER SYS" in seconds, from getrusage(RUSAGE_CHILDREN): the
kernel's own account of the finished child, to the microsecond, where
time(1) rounds to 10 ms ticks (2% of a half-second run).  The command's
output passes through; its exit status is this script's.
"""
import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "a") as f:
    f.write("%.6f %.6f\n" % (r.ru_utime, r.ru_stime))
sys.exit(rc)
