#!/usr/bin/env bash
# Install what building and testing idgen needs, from Debian's packages.
# Idempotent: installs only what is missing.  Needs root (or does nothing).
set -euo pipefail

pkgs=(postgresql-15 postgresql-server-dev-15 make gcc libipc-run-perl
	faketime clang libclang-rt-14-dev default-jdk-headless gnuplot-nox rsync)

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
