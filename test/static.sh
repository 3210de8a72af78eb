#!/usr/bin/env bash
# Static analysis of src/: cppcheck and clang's scan-build (issue 40,
# point 4).  Each must report nothing; a finding that is not a bug is
# suppressed in test/static.supp, one line with its reason above it.
#   bash test/static.sh [cppcheck|scan-build]   (default: both)
# Needs cppcheck and clang-tools (scan-build) and PostgreSQL's server
# headers (PG_CONFIG, test/pg_major.sh).  Works in a scratch copy, so the
# tree's build is left alone.  Exits non-zero on any finding.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
. test/pg_major.sh
which=${1:-both}
rc=0

if [ "$which" = both ] || [ "$which" = cppcheck ]; then
	# The server's headers, so that macros (list_make2, ereport) are read
	# as PostgreSQL defines them; PG_VERSION_NUM from pg_config.h
	out=$(cppcheck --enable=warning,performance,portability --std=c11 --quiet \
		--error-exitcode=1 --inline-suppr \
		--suppressions-list="$top/test/static.supp" \
		--suppress=missingIncludeSystem \
		-I "$top/src" -I "$("$PG_CONFIG" --includedir-server)" \
		-I "$("$PG_CONFIG" --includedir)" -D__GNUC__ \
		"$top"/src/*.c 2>&1)
	status=$?
	if [ $status -ne 0 ] || [ -n "$out" ]; then
		echo "$out"
		echo "static: cppcheck reported findings"
		rc=1
	else
		echo "static: cppcheck: nothing found in src/"
	fi
fi

if [ "$which" = both ] || [ "$which" = scan-build ]; then
	ccc=$(ls /usr/share/clang/scan-build-*/libexec/ccc-analyzer 2>/dev/null | sort -V | tail -1)
	if [ -z "$ccc" ] || ! command -v scan-build >/dev/null; then
		echo "static: scan-build not found (Debian's clang-tools)"
		exit 1
	fi
	work=$(mktemp -d /tmp/idgen-static.XXXXXX)
	rsync -a --exclude .git --exclude 'tmp_*' --exclude results "$top/" "$work/"
	make -s -C "$work" clean PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1
	# PGXS sets CC itself: the analyzer's wrapper is passed on make's
	# command line; it compiles with the real compiler and analyzes with
	# clang
	out=$(scan-build --status-bugs -o "$work/scan-build" \
		make -s -C "$work" PG_CONFIG="$PG_CONFIG" CC="$ccc" 2>&1)
	status=$?
	if [ $status -ne 0 ]; then
		echo "$out" | grep -v '^scan-build: Using' | tail -40
		echo "static: scan-build reported findings (or the build failed)"
		rc=1
	else
		echo "static: scan-build: nothing found in src/"
	fi
	case $work in /tmp/idgen-static.*) rm -rf "$work" ;; esac
fi
exit $rc
