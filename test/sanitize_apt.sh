#!/usr/bin/env bash
# test/sanitize.sh's download step on apt sources a machine may have, in a
# scratch apt of its own (APT_CONFIG names the "machine's" sources):
#  - one archive named twice, in sources.list (one-line, no options) and in
#    a deb822 .sources file with Signed-By and Trusted, beside a disabled
#    stanza and comments: the private sources name it once, and apt-get
#    update with them works;
#  - the index lists a version whose files the mirror does not serve: the
#    next older one is fetched, and the lane says which it skipped; with
#    none served it fails, naming the versions listed;
#  - /etc/apt is as it was, and the machine's own apt-get update works.
# The archive is a local one (file:), with a source package idgen-probe
# at 1.0 and 2.0, made here with dpkg-source.  Needs root (as
# test/sanitize.sh does).  Ends with "sanitize-apt: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }
finish() {
	echo "sanitize-apt: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
[ "$(id -u)" -eq 0 ] || { echo "sanitize-apt: needs root" >&2; exit 2; }
command -v dpkg-source >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev >/dev/null ||
	{ fail "apt-get install dpkg-dev"; finish; }

t=$(mktemp -d /tmp/idgen-sanitize-apt.XXXXXX)
etc_before=$(find /etc/apt -type f -exec sha256sum {} + | sort)

# The archive: idgen-probe 1.0 and 2.0, native source packages
repo=$t/repo
mkdir -p "$repo"
for v in 1.0 2.0; do
	d=$t/src/idgen-probe-$v
	mkdir -p "$d/debian/source"
	echo "3.0 (native)" >"$d/debian/source/format"
	printf 'Source: idgen-probe\nMaintainer: idgen <idgen@localhost>\nStandards-Version: 4.6.2\n\nPackage: idgen-probe\nArchitecture: all\nDescription: probe\n probe\n' >"$d/debian/control"
	printf 'idgen-probe (%s) unstable; urgency=low\n\n  * probe\n\n -- idgen <idgen@localhost>  Tue, 01 Dec 2026 00:00:00 +0000\n' "$v" >"$d/debian/changelog"
	printf '#!/usr/bin/make -f\n%%:\n\tdh $@\n' >"$d/debian/rules"
	echo "$v" >"$d/VERSION"
	(cd "$t/src" && dpkg-source -q -b "idgen-probe-$v" >/dev/null 2>&1) &&
		mv "$t/src/idgen-probe_$v.dsc" "$t/src/idgen-probe_$v.tar.xz" "$repo/" ||
		{ fail "dpkg-source -b idgen-probe $v"; finish; }
done
(cd "$repo" && dpkg-scansources . >Sources 2>/dev/null && gzip -9kn Sources) ||
	{ fail "dpkg-scansources"; finish; }
{
	echo "Origin: idgen-probe"
	echo "Date: $(date -u -R)"
	echo "SHA256:"
	for f in Sources Sources.gz; do
		printf ' %s %s %s\n' "$(sha256sum "$repo/$f" | cut -d' ' -f1)" "$(stat -c %s "$repo/$f")" "$f"
	done
} >"$repo/Release"

# The "machine's" sources: the archive in both forms, a disabled stanza
etc=$t/etc
mkdir -p "$etc/sources.list.d"
cat >"$etc/sources.list" <<EOF
# the archive, one-line
deb-src [trusted=yes] file:$repo ./
EOF
cat >"$etc/sources.list.d/probe.sources" <<EOF
# the same archive, deb822, with Signed-By
Types: deb-src
URIs: file:$repo/
Suites: ./
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
Trusted: yes

Types: deb-src
URIs: file:$t/nowhere
Suites: ./
Enabled: no
EOF
cat >"$t/apt.conf" <<EOF
Dir::Etc::sourcelist "$etc/sources.list";
Dir::Etc::sourceparts "$etc/sources.list.d";
EOF
export APT_CONFIG=$t/apt.conf IDGEN_SANITIZE_CACHE=$t/cache

# The newest version listed but not served
rm -f "$repo/idgen-probe_2.0.tar.xz"
out=$(bash "$top/test/sanitize.sh" --fetch idgen-probe "$t/out" 2>&1)
rc=$?
echo "$out" | sed 's/^/  /'
private=$t/cache/apt/sources.list.d/idgen-src.sources
n=$(grep -c '^Types: deb-src' "$private" 2>/dev/null)
if [ "$n" = 1 ] && grep -q '^Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg$' "$private" &&
	grep -q '^Trusted: yes$' "$private" && ! grep -q nowhere "$private"; then
	pass "the archive named twice is one private entry, with its Signed-By and Trusted; the disabled one left out"
else
	cat "$private"
	fail "private sources: $n entries for one archive"
fi
if [ $rc -eq 0 ] && grep -q 'idgen-probe 2.0 is listed but could not be downloaded' <<<"$out" &&
	grep -q "fetched idgen-probe 1.0 into $t/out" <<<"$out" &&
	[ "$(cat "$t/out/idgen-probe-1.0/VERSION" 2>/dev/null)" = 1.0 ]; then
	pass "2.0 listed but not served: 1.0 fetched, and the lane says so"
else
	fail "fallback to an older version (exit $rc)"
fi

# None served
rm -f "$repo/idgen-probe_1.0.tar.xz"
out=$(bash "$top/test/sanitize.sh" --fetch idgen-probe "$t/out2" 2>&1)
rc=$?
echo "$out" | sed 's/^/  /'
if [ $rc -ne 0 ] && grep -q 'no source of idgen-probe could be downloaded (versions listed: 2.0 1.0 )' <<<"$out"; then
	pass "no version served: fails, naming the versions listed"
else
	fail "no version served (exit $rc)"
fi

unset APT_CONFIG IDGEN_SANITIZE_CACHE
if [ "$(find /etc/apt -type f -exec sha256sum {} + | sort)" = "$etc_before" ]; then
	pass "/etc/apt unchanged"
else
	diff <(echo "$etc_before") <(find /etc/apt -type f -exec sha256sum {} + | sort)
	fail "/etc/apt changed"
fi
if apt-get update -qq >"$t/update.log" 2>&1 && ! grep -q '^E:' "$t/update.log"; then
	pass "the machine's apt-get update works after it"
else
	cat "$t/update.log"
	fail "the machine's apt-get update"
fi
case $t in /tmp/idgen-sanitize-apt.*) rm -rf --one-file-system "$t" ;; esac
finish
