#!/usr/bin/env bash
# Build and install Citus from a source checkout, for test/t/100_citus.pl.
#
#   bash test/citus/build.sh SRC_DIR [PG_CONFIG]
#
# SRC_DIR is a checkout of Citus's public repository (citusdata/citus) at a
# release that supports the PostgreSQL of PG_CONFIG (default: pg_config on
# PATH, else the newest /usr/lib/postgresql/N/bin/pg_config); tag v13.2.2
# builds against PostgreSQL 15 to 17.  idgen does not carry Citus's source:
# fetch it yourself.  As root, installs the Debian packages the build needs
# (as another user it only says which are missing).  Builds in SRC_DIR with
# make -j2 and installs into PG_CONFIG's PostgreSQL.
#
# PostgreSQL 15.20 and later minor releases of 15 export
# have_createdb_privilege() from commands/dbcommands.h, which Citus's
# pg_version_compat.h defines again as a static inline for PostgreSQL 15;
# that build fails.  Where the header has it and the major version is 15,
# one compiler define renames Citus's copy (nothing in SRC_DIR is edited).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 SRC_DIR [PG_CONFIG]" >&2
	exit 2
fi
src=$(cd "$1" && pwd)
pg_config=${2:-${PG_CONFIG:-}}
if [ -z "$pg_config" ]; then
	pg_config=$(command -v pg_config ||
		ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -1)
fi
if [ -z "$pg_config" ] || [ ! -x "$pg_config" ]; then
	echo "citus build: no pg_config; give its path as the second argument" >&2
	exit 2
fi
if [ ! -f "$src/configure" ] || [ ! -d "$src/src/backend/distributed" ]; then
	echo "citus build: $src is not a Citus source checkout" >&2
	exit 2
fi
major=$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

# What the build needs, from Debian's packages
pkgs=(postgresql-server-dev-$major make gcc autoconf flex bison
	libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev
	libselinux1-dev libpam0g-dev libxslt1-dev libreadline-dev zlib1g-dev
	libicu-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "citus build: missing packages: ${missing[*]}; install them as root" >&2
		exit 1
	fi
	echo "citus build: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cppflags=
header=$("$pg_config" --includedir-server)/commands/dbcommands.h
if [ "$major" = 15 ] && grep -q 'have_createdb_privilege' "$header"; then
	echo "citus build: PostgreSQL 15's dbcommands.h declares have_createdb_privilege; renaming Citus's copy"
	cppflags="-Dhave_createdb_privilege=citus_have_createdb_privilege"
fi

cd "$src"
echo "citus build: configuring $src for PostgreSQL $major ($pg_config)"
CPPFLAGS="$cppflags" ./configure PG_CONFIG="$pg_config" >configure.idgen.log 2>&1 || {
	tail -20 configure.idgen.log
	exit 1
}
echo "citus build: make -j2 (a few minutes)"
make -j2 >make.idgen.log 2>&1 || {
	grep -E -m 20 -A 3 'error:' make.idgen.log || true
	tail -5 make.idgen.log
	exit 1
}
make install >install.idgen.log 2>&1 || {
	tail -20 install.idgen.log
	exit 1
}
echo "citus build: installed $(grep -E '^default_version' "$("$pg_config" --sharedir)/extension/citus.control" | sed -E "s/.*= *'?([^']*)'?/citus \1/") into $("$pg_config" --pkglibdir)"
