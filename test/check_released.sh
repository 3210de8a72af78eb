#!/usr/bin/env bash
# Released SQL scripts are never edited (test/released.sha256): each listed
# script, or src/idgen.sql for the built install script of the default
# version, must hash as it did when released; the default version, once
# CHANGELOG.md gives it a date, must have its install script listed; and
# every idgen--*.sql in the tree is either listed or belongs to the open
# version.  Prints what differs, one line each; exits 1 if anything does.
#   bash test/check_released.sh [TOP]   (default: the tree this file is in)
set -euo pipefail
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top"
manifest=test/released.sha256
default=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" idgen.control)
bad=0
say() { echo "check_released: $*" >&2; bad=1; }
declare -A listed=()
while read -r sum file; do
	case "$sum" in '' | '#'*) continue ;; esac
	listed[$file]=1
	if [ "$file" = "idgen--$default.sql" ]; then
		src=src/idgen.sql	# what make builds it from
	elif [ -f "$file" ]; then
		src=$file
	else
		say "$file was released but is not in the tree"
		continue
	fi
	[ "$(sha256sum "$src" | cut -d' ' -f1)" = "$sum" ] ||
		say "$src differs from the released $file (a change of SQL goes into the next update script)"
done < "$manifest"
# The default version is released once CHANGELOG.md's heading gives a
# date; META.json's release_status is stable then and only then
status=$(sed -n 's/^ *"release_status": *"\([a-z]*\)".*/\1/p' META.json)
if grep -Eq "^## $(printf '%s' "$default" | sed 's/\./\\./g') \([0-9]{4}-[0-9]{2}-[0-9]{2}\)" CHANGELOG.md; then
	[ -n "${listed[idgen--$default.sql]:-}" ] ||
		say "$default is released (CHANGELOG.md) but idgen--$default.sql is not in $manifest"
	[ "$status" = stable ] ||
		say "$default is released (CHANGELOG.md) but META.json's release_status is '$status', not stable"
elif [ "$status" = stable ]; then
	say "META.json's release_status is stable but CHANGELOG.md gives $default no date"
fi
for f in idgen--*.sql; do
	[ -f "$f" ] || continue
	[ "$f" = "idgen--$default.sql" ] && continue	# built by make
	[ -n "${listed[$f]:-}" ] && continue
	# the open version's update script, idgen--A--$default.sql
	case "$f" in *"--$default.sql") continue ;; esac
	say "$f is neither released ($manifest) nor the update script to the open version $default"
done
exit $bad
