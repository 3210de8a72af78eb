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
apt-get install -y -qq "${missing[@]}" >/dev/null
