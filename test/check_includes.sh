#!/bin/bash
# Check that the C files of src/ include each other's declarations in no
# circle.  A component is a header X.h with the files X.c and X_*.c (as
# pgvector's hnsw.h with hnsw*.c); a file with no such header is a component
# of its own.  Component A depends on B when a file of A includes B's header.
# Exits 1, naming the circle, when the dependencies form one.  Also checks
# that no file but module.c uses what a *_sql.c file defines (below).
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
# No arrow back up into the SQL layer: a file X_sql.c holds SQL-callable
# functions and their glue, above the core, so no other file uses a
# function or variable that a *_sql.c file defines (they share a component
# and its header, which the include check above cannot tell apart).  One
# exception: module.c, the module's entry above every component, which
# installs the SQL layer's hooks.  Comments and string literals are not
# read.  Exits 1, naming each use.
if ! perl -e '
	my (%def, @bad);
	sub code {		# the text of a file without comments and literals
		local $/;
		open(my $fh, "<", $_[0]) or die "$_[0]: $!";
		my $s = <$fh>;
		$s =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}
			{my $m = $1; $m =~ tr/\n//cd; " $m"}gse;
		return $s;
	}
	for my $f (glob "*_sql.c") {
		my $prev = "";
		for (split /\n/, code($f)) {
			# a definition at file scope: "name(" after its type line, or
			# "type name = ...;" / "type name;"
			if (/^([A-Za-z_]\w*)\s*\(/) {
				my $name = $1;
				$def{$name} = $f
					if $prev =~ /\S/ && $prev !~ /\bstatic\b|[;{}]\s*$/ &&
					$name !~ /^[A-Z_0-9]+$/;
			} elsif (/^(?!static\b|extern\b|typedef\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*(?:=|;|\[)/ &&
					 !/\(/) {
				$def{$1} = $f;
			}
			$prev = $_;
		}
	}
	for my $f (glob "*.c") {
		next if $f =~ /_sql\.c$/ || $f eq "module.c";
		my %seen;
		for my $id (code($f) =~ /\b([A-Za-z_]\w*)\b/g) {
			push @bad, "  $f uses $id, defined in $def{$id}"
				if exists $def{$id} && !$seen{$id}++;
		}
	}
	print STDERR "$_\n" for @bad;
	exit(@bad ? 1 : 0);
'; then
	echo "check_includes: a core file of $src uses the SQL layer (X_sql.c) above it; move what it needs into the core" >&2
	exit 1
fi
echo "check_includes: no include circle among $(cut -d' ' -f1 "$edges" | sort -u | wc -l) components, and no core file uses the SQL layer"
