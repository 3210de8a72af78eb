#!/usr/bin/env bash
# Pack PG_CONFIG's PostgreSQL, with this checkout's idgen (and, with
# PGEDGE_SRC, pgEdge's snowflake) installed into it, and the shared libraries
# its programs use, into one tarball that runs make bench on another x86-64
# Linux machine with no compiler, package manager or network (one with many
# cores, say):
#
#   PG_CONFIG=... [PGEDGE_SRC=DIR] bash test/bench/bundle.sh OUT.tar.gz
#   # there, as root, in a checkout of the same commit:
#   mkdir -p /opt/b && tar -xzf OUT.tar.gz -C /opt/b
#   . /opt/b/idgen-bench/env.sh && bash test/bench/run.sh
#
# The tarball holds PostgreSQL's programs, its library folder (no JIT
# bitcode) and share folder at their paths relative to each other, so that
# pg_config and the server find them where they are unpacked; every library
# ldd lists for them but the C library's own (libc, libm, libresolv, the
# loader) and the compiler's runtime (libstdc++, libgcc_s), which the
# machine has; each program and module finds the libraries through its run
# path (patchelf), so the machine's own programs never see them; and the
# UTC time zone files, for a machine
# without tzdata.  env.sh sets PATH, PG_CONFIG, LC_ALL=C, TZ=UTC,
# BENCH_INSTALLED=1 (test/bench/run.sh then builds nothing) and
# BENCH_COMMIT (the commit built, which the report names), puts
# the time zone files in place when /usr/share/zoneinfo has no UTC, and, as
# root, creates the user postgres that runs the server if there is none.
# Unpack it where that user can read it (not under /root).
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
out=${1:?usage: bundle.sh OUT.tar.gz}
case $out in /*) ;; *) out=$top/$out ;; esac
. test/env.sh
for d in bindir pkglibdir sharedir; do
	[ -d "$("$PG_CONFIG" --$d)" ] || { echo "bundle: $PG_CONFIG has no --$d" >&2; exit 1; }
done
bindir=$("$PG_CONFIG" --bindir)
pkglibdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)

if ! command -v patchelf >/dev/null; then
	apt-get install -y patchelf >/dev/null || { echo "bundle: needs patchelf (Debian's package patchelf)" >&2; exit 1; }
fi
tmp=$(mktemp -d /tmp/idgen-bundle.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/idgen-bench
mkdir -p "$root/lib" "$root/zoneinfo/Etc"
# The three folders at the same paths relative to each other as here
tar -C / -cf - "${bindir#/}" "${pkglibdir#/}" "${sharedir#/}" | tar -C "$root" -xf -

echo "== build idgen and install it into the copy"
build_and_install "$root" >/dev/null
if [ -n "${PGEDGE_SRC:-}" ]; then
	echo "== build pgEdge's snowflake from $PGEDGE_SRC and install it into the copy"
	why=$(install_pgedge "$PGEDGE_SRC" "$root") || { echo "bundle: $why" >&2; exit 1; }
fi
# No JIT: its bitcode (ours included) and provider stay behind
rm -rf "$root$pkglibdir/bitcode" "$root$pkglibdir"/llvmjit*

echo "== the shared libraries they use"
find "$root$bindir" "$root$pkglibdir" -type f \( -perm -u+x -o -name '*.so' \) -print0 |
	{ xargs -0 ldd 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
	while read -r lib; do
		case ${lib##*/} in
		libc.so.* | libm.so.* | libresolv.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux* | \
			libstdc++.so.* | libgcc_s.so.*) ;;
		*) cp -L "$lib" "$root/lib/" ;;
		esac
	done
# Each program and module finds them through its run path (relative to
# itself), not LD_LIBRARY_PATH, which would hand these libraries to the
# machine's own programs too (its runuser with this libpam, say)
rel=$(realpath --relative-to="$root$bindir" "$root/lib")
find "$root$bindir" -type f -perm -u+x -print0 | while IFS= read -r -d '' f; do
	if patchelf --print-rpath "$f" >/dev/null 2>&1; then patchelf --set-rpath "\$ORIGIN/$rel" "$f"; fi
done
rel=$(realpath --relative-to="$root$pkglibdir" "$root/lib")
for f in "$root$pkglibdir"/*.so; do patchelf --set-rpath "\$ORIGIN/$rel" "$f"; done
for f in "$root"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done
for z in UTC GMT Etc/UTC Etc/GMT; do
	if [ -f "/usr/share/zoneinfo/$z" ]; then cp -L "/usr/share/zoneinfo/$z" "$root/zoneinfo/$z"; fi
done

# The code built
commit=$(code_commit)
cat >"$root/env.sh" <<EOF
# Source me (bash): the PostgreSQL of this bundle for make bench
_b=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
export PATH="\$_b$bindir:\$PATH"
export PG_CONFIG="\$_b$bindir/pg_config"
export LC_ALL=C TZ=UTC BENCH_INSTALLED=1 BENCH_COMMIT="$commit (bundle)"
if [ ! -e /usr/share/zoneinfo/UTC ] && [ -w /usr/share ]; then
	mkdir -p /usr/share/zoneinfo && cp -a "\$_b/zoneinfo/." /usr/share/zoneinfo/
fi
if [ "\$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
	useradd -r -M -d /nonexistent -s /bin/sh postgres
fi
unset _b
EOF
tar -C "$tmp" -caf "$out" idgen-bench
echo "bundle: wrote $out ($(du -h "$out" | cut -f1)), idgen $commit"
