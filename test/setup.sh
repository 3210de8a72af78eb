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
	faketime clang $clang_rt default-jdk-headless gnuplot-nox rsync)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
		|| missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: missing packages: ${missing[*]}; install them as root" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
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
apt-get install -y -qq "${missing[@]}" >/dev/null
