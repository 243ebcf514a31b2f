#!/bin/sh
# install-missing.sh: the one installer behind ensure-deps.sh (the build's
# tools) and ensure-conformance-deps.sh (make conformance's data).
#
#   sh scripts/install-missing.sh WHO PACKAGE...
#
# As root with apt-get it installs the Debian packages (an 'apt-get update'
# first only when the plain install fails: a fresh machine's lists may be
# empty); otherwise it prints what WHO needs and the one command to run,
# and exits 1.
who=$1
shift
[ $# -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "$who: installing $*" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q "$@" >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "$@" >/dev/null; } ||
		{ echo "$who: apt-get install $* failed" >&2; exit 1; }
	exit 0
fi
echo "$who needs: $*" >&2
echo "run: sudo apt-get install $*" >&2
exit 1
