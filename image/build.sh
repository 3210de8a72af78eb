#!/usr/bin/env bash
# The extension image of idgen for CloudNativePG's image volume extensions
# (PostgreSQL 18 and later, through extension_control_path and
# dynamic_library_path): an OCI archive built FROM scratch that holds
# nothing but
#   lib/idgen.so
#   share/extension/idgen.control, idgen--*.sql, idgen--*.control
#   licenses/idgen/LICENSE
# tagged idgen:<PostgreSQL major>-<idgen version>-<Debian codename>, as
# CloudNativePG's catalogue tags its extension images.
#
#   make image [PG_CONFIG=/usr/lib/postgresql/18/bin/pg_config]
#   IMAGE_OUT=FILE  the archive (default: ./idgen-<major>-<version>-<codename>.oci.tar)
#
# Built with Debian's buildah (packages buildah and netavark, which
# buildah 1.43 needs even FROM scratch): no daemon and no network;
# its storage is a scratch directory, removed afterwards.  The library
# is the one this machine builds: build the image on the Debian release of
# the PostgreSQL image it will run beside (docs/install.md, CloudNativePG).
set -euo pipefail
cd "$(dirname "$0")/.."

pg_config=${PG_CONFIG:-pg_config}
if ! "$pg_config" --version >/dev/null 2>&1; then
	echo "image: cannot run \"$pg_config\"; name the server's with PG_CONFIG=" >&2
	exit 1
fi
if ! command -v buildah >/dev/null; then
	echo "image: needs buildah (Debian: apt-get install buildah netavark)" >&2
	exit 1
fi
major=$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
version=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" idgen.control)
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || codename=unknown
tag=idgen:$major-$version-$codename
out=${IMAGE_OUT:-$(pwd)/idgen-$major-$version-$codename.oci.tar}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac

work=$(mktemp -d /tmp/idgen-image.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT

# The files "make install" writes, from a staging directory
make -s install DESTDIR="$work/stage" PG_CONFIG="$pg_config" >/dev/null
lib=$work/stage$("$pg_config" --pkglibdir)
ext=$work/stage$("$pg_config" --sharedir)/extension
root=$work/root
mkdir -p "$root/lib" "$root/share/extension" "$root/licenses/idgen"
cp "$lib/idgen.so" "$root/lib/"
cp "$ext"/idgen.control "$ext"/idgen--*.sql "$ext"/idgen--*.control "$root/share/extension/"
cp LICENSE "$root/licenses/idgen/"
chmod -R u=rwX,go=rX "$root"

bah=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)
ctr=$("${bah[@]}" from --quiet scratch)
"${bah[@]}" copy --quiet "$ctr" "$root/" / >/dev/null
"${bah[@]}" config \
	--label org.opencontainers.image.title=idgen \
	--label org.opencontainers.image.version="$version" \
	--label org.opencontainers.image.licenses=PostgreSQL \
	--label org.opencontainers.image.description="idgen $version for PostgreSQL $major ($codename): 64-bit IDs" \
	"$ctr"
rm -f "$out"
"${bah[@]}" commit --quiet --rm --format oci --omit-history \
	"$ctr" "oci-archive:$out:$tag" >/dev/null
echo "image: $out ($tag)"
