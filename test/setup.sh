#!/usr/bin/env bash
# Install what building and testing idgen needs, from Debian's packages.
# Idempotent: installs only what is missing.  Needs root (or does nothing).
set -euo pipefail

# PostgreSQL's major version: PG_CONFIG's, PG_MAJOR, or this Debian release's
. "$(dirname "$0")/pg_major.sh"

# The fuzzers (test/fuzz) need libFuzzer, in the libclang-rt-N-dev of the
# release's default clang-N (trixie and later name it libclang-rt-dev)
case $PG_MAJOR in
15) clang_rt=libclang-rt-14-dev ;;
*) clang_rt=libclang-rt-dev ;;
esac

pkgs=(postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR make gcc libipc-run-perl
	faketime clang $clang_rt default-jdk-headless gnuplot-nox rsync pgbouncer)

# Tools that users run idgen with, installed where this release has them
# and never a reason to fail: pg_partman (t/065), pglogical (t/077), the
# client libraries of docs/clients.md (t/097).  A test whose package is
# missing skips with a line.
optional=(postgresql-$PG_MAJOR-partman postgresql-$PG_MAJOR-pglogical
	python3-psycopg python3-sqlalchemy python3-django libpostgresql-jdbc-java
	libhibernate3-java libjavassist-java nodejs node-pg)

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
# The optional packages are tried once per list (a stamp remembers it)
stamp=/var/lib/idgen-setup-optional
want_optional=0
[ "$(cat "$stamp" 2>/dev/null)" = "${optional[*]}" ] || want_optional=1
[ ${#missing[@]} -eq 0 ] && [ $want_optional = 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	[ ${#missing[@]} -eq 0 ] && exit 0
	echo "setup: missing packages: ${missing[*]}; install them as root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# A version only in experimental (19 before its release, with experimental
# in apt's sources as test/matrix.sh puts it): PostgreSQL's own packages
# from there, all at once so that they match; everything else from the
# release.  (apt-get -t experimental would take other packages, perl, from
# experimental too, which do not match the release's.)
if ! apt-cache madison "postgresql-$PG_MAJOR" | grep -v ' experimental/' | grep -q . &&
	apt-cache madison "postgresql-$PG_MAJOR" | grep -q ' experimental/'; then
	pg=(postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-client-$PG_MAJOR
		libpq-dev libpq5)
	echo "setup: PostgreSQL $PG_MAJOR from experimental: ${pg[*]}"
	apt-get install -y -qq "${pg[@]/%//experimental}" >/dev/null
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ $want_optional = 1 ]; then
	for p in "${optional[@]}"; do
		installed "$p" && continue
		if apt-cache show "$p" >/dev/null 2>&1; then
			echo "setup: installing $p (optional)"
			apt-get install -y -qq "$p" >/dev/null ||
				echo "setup: $p could not be installed; the tests that use it skip" >&2
		else
			echo "setup: $p is not in this release; the tests that use it skip"
		fi
	done
	echo "${optional[*]}" >"$stamp"
fi
