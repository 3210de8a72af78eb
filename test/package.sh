#!/usr/bin/env bash
# The release zip and the Debian package, installed as users install them.
# Run by test/matrix.sh in each version's chroot after test/run.sh (it
# installs and removes files in PostgreSQL's directories: root, and only in
# a machine or chroot of its own):
#   1. "make dist" in a git repository made of this tree; t/002 there (every
#      file META.json provides is in the zip)
#   2. the zip, unzipped in a temporary directory, builds and installs:
#      make && make install
#   3. make uninstall: no idgen file is left in PostgreSQL's directories
#      (neither the suite's "make install" nor the zip's)
#   4. debian/control and debian/tests/control are what "pg_buildext
#      updatecontrol" makes of their .in files for the versions they name;
#      dpkg-buildpackage -us -uc -b in a clean copy (the zip's tree, with
#      the committed debian/control) makes postgresql-N-idgen_<version>_<arch>.deb
#   5. with the build trees gone and the build products of every idgen
#      tree on the system removed (this tree's, test/run.sh's scratch copy
#      in /tmp/idgen-test.*), the .deb installs (apt); the only idgen.so on
#      the system, and every idgen file in PostgreSQL's directories, are
#      the package's
#   6. the demo (test/demo.sh --installed) and the package's autopkgtest
#      (debian/tests/installcheck: make installcheck in a pg_virtualenv
#      cluster) run against the packaged files
#   7. on IDGEN_NEIGHBOURS_MAJOR and IDGEN_CLIENTS_SECOND_MAJOR, the pages
#      pasted as a user does (test/paste.pl): README.md's configuration and
#      examples, docs/clients.md's setup and clients as its role, on the
#      stock cluster N/main with its own authentication, then
#      docs/install.md's Uninstalling (the package removed: step 8 finds
#      nothing left)
#   8. dpkg -r removes the package: none of its files is left, and no
#      idgen.so anywhere
# Ends with "package: N passed, N failed"; exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
. test/env.sh

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: package: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: package: $1"; }
tmp=
finish() {
	[ -n "$tmp" ] && rm -rf "$tmp"
	echo "package: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if [ "$(id -u)" -ne 0 ]; then
	fail "needs root (make install, dpkg -i)"
	finish
fi

# What building the zip and the package needs
export DEBIAN_FRONTEND=noninteractive
missing=()
for p in git unzip build-essential dpkg-dev debhelper postgresql-server-dev-all; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "package: installing ${missing[*]}"
	if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
		fail "apt-get install ${missing[*]}"
		finish
	fi
fi

version=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" idgen.control)
debversion=$(dpkg-parsechangelog -l debian/changelog -S Version)
arch=$(dpkg --print-architecture)
deb=postgresql-$PG_MAJOR-idgen_${debversion}_$arch.deb
pkg=postgresql-$PG_MAJOR-idgen
libdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)
# Every idgen file in PostgreSQL's directories
idgen_files() {
	ls -d "$libdir"/idgen.so "$libdir"/bitcode/idgen* "$sharedir"/extension/idgen.control "$sharedir"/extension/idgen--*.control \
		"$sharedir"/extension/idgen--*.sql 2>/dev/null
}

tmp=$(mktemp -d /tmp/idgen-package.XXXXXX)
chmod 755 "$tmp"

echo "== make dist [at ${SECONDS} s]"
# A git repository of this tree as it is (what .gitignore leaves out stays
# out), so that "make dist" archives exactly the files under test
git_tree=$tmp/git
cp -a "$top" "$git_tree"
rm -rf "$git_tree/.git"
(
	cd "$git_tree" &&
		git init -q &&
		git add -A &&
		git -c user.name=test -c user.email=test@localhost commit -q -m 'tree under test'
) || fail "git repository of the tree"
zip=$git_tree/idgen-$version.zip
if make -s -C "$git_tree" PG_CONFIG="$PG_CONFIG" dist && [ -s "$zip" ]; then
	pass "make dist makes idgen-$version.zip"
else
	fail "make dist makes idgen-$version.zip"
fi
chown -R postgres: "$git_tree"
if as_pg_user env -u TAP_TESTS make -s -C "$git_tree" PG_CONFIG="$PG_CONFIG" \
	prove_installcheck PROVE_FLAGS=-v PROVE_TESTS=test/t/002_meta_json.pl >"$tmp/t002.log" 2>&1 &&
	! grep -q '# skip' "$tmp/t002.log"; then
	pass "t/002 in a git checkout (META.json's files in the zip)"
else
	cat "$tmp/t002.log"
	fail "t/002 in a git checkout"
fi

echo "== the zip builds and installs [at ${SECONDS} s]"
mkdir -p "$tmp/dist"
dist_tree=$tmp/dist/idgen-$version
if unzip -q "$zip" -d "$tmp/dist" &&
	make -s -C "$dist_tree" PG_CONFIG="$PG_CONFIG" >"$tmp/dist.log" 2>&1 &&
	make -s -C "$dist_tree" PG_CONFIG="$PG_CONFIG" install >>"$tmp/dist.log" 2>&1 &&
	[ -f "$sharedir/extension/idgen--$version.sql" -o -n "$(ls "$sharedir"/extension/idgen--*--"$version".sql 2>/dev/null)" ]; then
	pass "unzipped idgen-$version.zip: make && make install"
else
	tail -30 "$tmp/dist.log"
	fail "unzipped idgen-$version.zip: make && make install"
fi
if [ -e "$dist_tree/.ci" ]; then
	fail "the zip leaves out .ci/"
else
	pass "the zip leaves out .ci/"
fi
if grep -q 'PostgreSQL License' "$dist_tree/LICENSE" 2>/dev/null; then
	pass "the zip carries LICENSE (the PostgreSQL License)"
else
	fail "the zip carries LICENSE (the PostgreSQL License)"
fi

echo "== make uninstall [at ${SECONDS} s]"
make -s -C "$dist_tree" PG_CONFIG="$PG_CONFIG" uninstall >/dev/null 2>&1
if [ -z "$(idgen_files)" ]; then
	pass "make uninstall leaves no idgen file"
else
	idgen_files
	fail "make uninstall leaves no idgen file"
fi

echo "== debian/control [at ${SECONDS} s]"
# Committed as "pg_buildext updatecontrol" makes it (in Debian unstable):
# checkcontrol, for the versions it names and without PG_UPDATECONTROL,
# fails if control.in (or tests/control.in) says something else
ctl=$tmp/ctl
mkdir -p "$ctl"
cp -a "$dist_tree/debian" "$ctl/"
named=$(sed -n 's/^Package: postgresql-\([0-9.]*\)-idgen$/\1/p' "$ctl/debian/control" | xargs)
if [ -n "$named" ] && (cd "$ctl" &&
	env -u PG_UPDATECONTROL PG_SUPPORTED_VERSIONS="$named" pg_buildext checkcontrol) >"$tmp/ctl.log" 2>&1; then
	pass "debian/control is control.in's for PostgreSQL $named"
else
	cat "$tmp/ctl.log"
	fail "debian/control is control.in's for the versions it names (pg_buildext updatecontrol)"
fi

echo "== dpkg-buildpackage [at ${SECONDS} s]"
# A clean copy: the zip's tree (no build products, no .git), its
# debian/control as committed
build=$tmp/build
mkdir -p "$build"
cp -a "$dist_tree" "$build/idgen"
# Debian's tooling builds for the versions pg_buildext supported-versions
# names: debian/pgversions (15+) and the release's supported versions,
# the release's own PostgreSQL unless PG_SUPPORTED_VERSIONS, its documented
# override, names others.  Where the release's own is the version under
# test (bookworm 15, trixie 17, forky 18) dpkg-buildpackage runs as it is;
# for another (19 from experimental on sid, whose own is 18)
# PG_SUPPORTED_VERSIONS names that one version.  debian/rules lets
# checkcontrol rewrite debian/control for the versions built.
supported=$(cd "$build/idgen" && env -u PG_SUPPORTED_VERSIONS pg_buildext supported-versions 2>/dev/null | xargs)
if [ "$supported" = "$PG_MAJOR" ]; then
	build_env=()
else
	build_env=("PG_SUPPORTED_VERSIONS=$PG_MAJOR")
fi
echo "${build_env[*]:+${build_env[*]} }dpkg-buildpackage -us -uc -b (this release supports: ${supported:-none})"
if (
	cd "$build/idgen" &&
		env -u PG_SUPPORTED_VERSIONS -u PG_UPDATECONTROL "${build_env[@]}" dpkg-buildpackage -us -uc -b
) >"$tmp/build.log" 2>&1 && [ -f "$build/$deb" ]; then
	grep -E '^(Notice: |### PostgreSQL [0-9.]+ loop ###)' "$tmp/build.log"
	pass "${build_env[*]:+${build_env[*]} }dpkg-buildpackage -us -uc -b makes $deb"
	cp "$build/$deb" "$tmp/"
	if dpkg-deb --fsys-tarfile "$build/$deb" | tar -xO "./usr/share/doc/$pkg/copyright" 2>/dev/null |
		grep -q '^License: PostgreSQL$'; then
		pass "$deb carries the license (/usr/share/doc/$pkg/copyright)"
	else
		fail "$deb carries the license (/usr/share/doc/$pkg/copyright)"
	fi
else
	tail -40 "$tmp/build.log"
	ls "$build"
	fail "${build_env[*]:+${build_env[*]} }dpkg-buildpackage -us -uc -b makes $deb"
	finish
fi
# (and its debug symbols, which a newer debhelper puts in a .deb too)
others=$(cd "$build" && ls ./*.deb | grep -vE "^\./$pkg(-dbgsym)?_")
if [ -z "$others" ]; then
	pass "no package for another version built"
else
	fail "no package for another version built: $others"
fi

echo "== the package installed, no build tree left [at ${SECONDS} s]"
rm -rf "$build" "$tmp/dist" "$git_tree" "$ctl"
make -s -C "$top" PG_CONFIG="$PG_CONFIG" clean >/dev/null 2>&1
# Every idgen tree on the system (a directory with idgen.control that is no
# installation's)
idgen_trees() {
	find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune -o \
		-name idgen.control -print 2>/dev/null |
		while read -r f; do
			case $f in */share/postgresql/*/extension/*) continue ;; esac
			dirname "$f"
		done
}
# idgen.so anywhere, and the build products of every idgen tree
build_products() {
	local d
	find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune -o \
		-name idgen.so -print 2>/dev/null
	for d in $(idgen_trees); do
		find "$d" \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -print
		ls -d "$d/idgen--$version.sql" 2>/dev/null
	done | sort -u
}
# The build products of the trees the scripts in test/ made go: this one's
# (cleaned above) and test/run.sh's scratch copies (/tmp/idgen-test.*, with
# an idgen.so built for the suite), whose test output stays.  One found
# anywhere else is a failure, not removed: it is not this script's
for d in "$top" /tmp/idgen-test.*; do
	[ -f "$d/idgen.control" ] || continue
	find "$d" \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -delete
	rm -f "$d/idgen--$version.sql"
done
left=$(build_products)
if [ -z "$left" ] && [ -z "$(idgen_files)" ]; then
	pass "no idgen build product and no idgen file in PostgreSQL's directories before the package ($(idgen_trees | wc -l) source trees)"
else
	echo "$left"
	idgen_files
	fail "no idgen build product and no idgen file in PostgreSQL's directories before the package"
fi
if apt-get install -y -qq "$tmp/$deb" >/dev/null; then
	pass "apt-get install $deb"
else
	fail "apt-get install $deb"
	finish
fi
notpackaged=$(for f in $(idgen_files); do dpkg -S "$f" >/dev/null 2>&1 || echo "$f"; done)
if [ -f "$libdir/idgen.so" ] && [ -z "$notpackaged" ]; then
	pass "idgen's files are the package's ($(idgen_files | wc -l) files)"
else
	echo "not from the package: $notpackaged"
	fail "idgen's files are the package's"
fi
sos=$(build_products)
if [ "$sos" = "$libdir/idgen.so" ] && [ "$(dpkg -S "$sos" 2>/dev/null | cut -d: -f1)" = "$pkg" ]; then
	pass "the only idgen.so on the system is $pkg's"
else
	echo "$sos"
	dpkg -S $sos
	fail "the only idgen.so on the system is $pkg's"
fi
packaged=$(dpkg -L "$pkg" | while read -r f; do [ -f "$f" ] && echo "$f"; done)
# The monitoring files (docs/monitoring.md), as they are in the tree
mondir=/usr/share/doc/$pkg/monitoring
monbad=
for f in monitoring/*; do
	cmp -s "$f" "$mondir/$(basename "$f")" || monbad+=" $f"
done
if [ -z "$monbad" ] && [ -n "$(ls monitoring)" ]; then
	pass "the package installs monitoring/ in $mondir, uncompressed ($(ls monitoring | wc -l) files)"
else
	ls -l "$mondir" 2>&1
	fail "the package installs monitoring/ in $mondir:$monbad differ or are missing"
fi

echo "== demo with the package [at ${SECONDS} s]"
if DEMO_PORT=54339 bash test/demo.sh --installed >"$tmp/demo.log" 2>&1; then
	pass "test/demo.sh --installed"
else
	tail -30 "$tmp/demo.log"
	fail "test/demo.sh --installed"
fi
rm -rf "$top/tmp_demo"

echo "== autopkgtest (debian/tests/installcheck) with the package [at ${SECONDS} s]"
# In a scratch copy (the tests write their results into the tree), as
# autopkgtest runs it: pg_buildext installcheck for each installed
# postgresql-N-idgen, in a pg_virtualenv cluster on localhost; a port that
# nothing on this machine listens on (a chroot shares the host's network)
check=$tmp/check
mkdir -p "$check"
(cd "$top" && tar --exclude=./.git --exclude='./tmp_*' -cf - .) | tar -C "$check" -xf -
port=58440
while [ $port -lt 58540 ] && (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do
	port=$((port + 1))
done
if (cd "$check" && env -u TAP_TESTS PGPORT=$port debian/tests/installcheck) >"$tmp/check.log" 2>&1 &&
	grep -q "### End $PG_MAJOR installcheck ###" "$tmp/check.log" && [ -z "$(build_products | grep -v "^$libdir/idgen.so\$")" ]; then
	pass "debian/tests/installcheck against the packaged files ($(grep -cE '^ok |\.\.\. +ok' "$tmp/check.log") tests)"
else
	grep -E '^(not ok|.*FAILED)' "$tmp/check.log"
	tail -60 "$tmp/check.log"
	fail "debian/tests/installcheck against the packaged files"
fi

echo "== the pages pasted with the package (test/paste.pl) [at ${SECONDS} s]"
# README.md's commands and examples, then docs/clients.md's setup and
# clients as its role, on the stock cluster N/main made anew (on a free
# port: a chroot shares the host's network); on the two versions whose
# clients are tested (test/pg_major.sh), to keep CI's time
if [ "$PG_MAJOR" = "$IDGEN_NEIGHBOURS_MAJOR" ] || [ "$PG_MAJOR" = "$IDGEN_CLIENTS_SECOND_MAJOR" ]; then
	port=58560
	while [ $port -lt 58660 ] && (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do
		port=$((port + 1))
	done
	t0=$SECONDS
	perl test/paste.pl "$port" >"$tmp/paste.log" 2>&1
	grep -E '^(ok|FAILED|  skipped): |^  \| ' "$tmp/paste.log"
	line=$(grep -E '^paste: [0-9]+ passed, [0-9]+ failed$' "$tmp/paste.log" | tail -1)
	if [ -n "$line" ]; then
		passed=$((passed + $(echo "$line" | cut -d' ' -f2)))
		failed=$((failed + $(echo "$line" | cut -d' ' -f4)))
	else
		tail -40 "$tmp/paste.log"
		fail "test/paste.pl printed no result"
	fi
	echo "(test/paste.pl took $((SECONDS - t0)) s)"
else
	echo "(PostgreSQL $PG_MAJOR: the pages are pasted on $IDGEN_NEIGHBOURS_MAJOR and $IDGEN_CLIENTS_SECOND_MAJOR only)"
fi

echo "== dpkg -r [at ${SECONDS} s]"
dpkg -r "$pkg" >/dev/null
left=$(for f in $packaged; do [ -e "$f" ] && echo "$f"; done; build_products; idgen_files)
if [ -n "$packaged" ] && [ -z "$left" ]; then
	pass "dpkg -r $pkg removes its $(echo "$packaged" | wc -l) files; no idgen.so left anywhere"
else
	echo "$left"
	fail "dpkg -r $pkg removes idgen's files"
fi
finish
