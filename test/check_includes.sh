#!/bin/bash
# Check that the C files of src/ include each other's declarations in no
# circle.  A component is a header X.h with the files X.c and X_*.c (as
# pgvector's hnsw.h with hnsw*.c); a file with no such header is a component
# of its own.  Component A depends on B when a file of A includes B's header.
# Exits 1, naming the circle, when the dependencies form one.
#
# Usage: bash test/check_includes.sh [srcdir]    (default: src)
set -euo pipefail
src=${1:-$(dirname "$0")/../src}
cd "$src"

# Component of a file: the longest X such that X.h exists and the file is
# X.h, X.c or X_*.c.  One exception: the pure C core (layout, codec, gene:
# X.c includes no PostgreSQL header) is fenced from the server, and its SQL
# glue X_sql.c, which needs the server side, is a component of its own.
component() {
	local base=${1%.*} best=${1%.*} try
	case $1 in
	*_sql.c)
		if [ -f "${1%_sql.c}.c" ] && ! grep -q '#include "postgres.h"' "${1%_sql.c}.c"; then
			echo "$base"
			return
		fi ;;
	esac
	try=$base
	while :; do
		if [ -f "$try.h" ]; then best=$try; break; fi
		case $try in *_*) try=${try%_*} ;; *) break ;; esac
	done
	echo "$best"
}

edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in *.c *.h; do
	from=$(component "$f")
	echo "$from $from" >> "$edges"		# every component is a node
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
	while read -r h; do
		[ -f "$h" ] || continue			# not a project header
		to=$(component "$h")
		[ "$to" = "$from" ] || echo "$to $from"
	done >> "$edges"
done

if ! out=$(tsort "$edges" 2>&1 >/dev/null) || [ -n "$out" ]; then
	echo "check_includes: the components of $src include each other in a circle:" >&2
	echo "$out" | grep -v 'input contains a loop' | sed 's/^tsort: /  /' >&2
	exit 1
fi
echo "check_includes: no include circle among $(cut -d' ' -f1 "$edges" | sort -u | wc -l) components"
