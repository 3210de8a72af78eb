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
#   4. dpkg-buildpackage -us -uc -b in a clean copy (the zip's tree) makes
#      postgresql-N-idgen_<version>_<arch>.deb
#   5. with the build trees removed and this tree cleaned, the .deb installs
#      (apt), and its files are the only idgen files
#   6. the demo (test/demo.sh --installed) and "make check" (installcheck
#      against a throwaway instance) run against the packaged files
#   7. dpkg -r removes the package, and its files are gone
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

echo "== make dist"
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

echo "== the zip builds and installs"
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

echo "== make uninstall"
make -s -C "$dist_tree" PG_CONFIG="$PG_CONFIG" uninstall >/dev/null 2>&1
if [ -z "$(idgen_files)" ]; then
	pass "make uninstall leaves no idgen file"
else
	idgen_files
	fail "make uninstall leaves no idgen file"
fi

echo "== dpkg-buildpackage"
# A clean copy: the zip's tree (no build products, no .git)
build=$tmp/build
mkdir -p "$build"
cp -a "$dist_tree" "$build/idgen"
if (
	cd "$build/idgen" &&
		export PG_SUPPORTED_VERSIONS=$PG_MAJOR &&
		pg_buildext updatecontrol &&
		dpkg-buildpackage -us -uc -b
) >"$tmp/build.log" 2>&1 && [ -f "$build/$deb" ]; then
	pass "dpkg-buildpackage -us -uc -b makes $deb"
	cp "$build/$deb" "$tmp/"
else
	tail -40 "$tmp/build.log"
	fail "dpkg-buildpackage -us -uc -b makes $deb"
	finish
fi

echo "== the package installed, no build tree left"
rm -rf "$build" "$tmp/dist" "$git_tree"
make -s -C "$top" PG_CONFIG="$PG_CONFIG" clean >/dev/null 2>&1
if [ -n "$(idgen_files)" ]; then
	idgen_files
	fail "no idgen file before the package is installed"
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

echo "== demo with the package"
if DEMO_PORT=54339 bash test/demo.sh --installed >"$tmp/demo.log" 2>&1; then
	pass "test/demo.sh --installed"
else
	tail -30 "$tmp/demo.log"
	fail "test/demo.sh --installed"
fi
rm -rf "$top/tmp_demo"

echo "== make check (installcheck) with the package"
# A scratch copy owned by the server user, as test/run.sh makes; nothing
# is built in it
check=$tmp/check
mkdir -p "$check"
(cd "$top" && tar --exclude=./.git --exclude='./tmp_*' -cf - .) | tar -C "$check" -xf -
chown -R postgres: "$check"
if as_pg_user env -u TAP_TESTS make -s --no-print-directory -C "$check" PG_CONFIG="$PG_CONFIG" \
	TEMP_PORT=58439 check >"$tmp/check.log" 2>&1 && [ ! -e "$check/idgen.so" ]; then
	pass "make check against the packaged files ($(grep -cE '^ok |\.\.\. +ok' "$tmp/check.log") tests)"
else
	grep -E '^(not ok|.*FAILED)' "$tmp/check.log"
	head -100 "$check/regression.diffs" "$check/output_iso/regression.diffs" 2>/dev/null
	tail -20 "$tmp/check.log"
	fail "make check against the packaged files"
fi

echo "== dpkg -r"
if dpkg -r "$pkg" >/dev/null && [ -z "$(idgen_files)" ]; then
	pass "dpkg -r $pkg removes idgen's files"
else
	idgen_files
	fail "dpkg -r $pkg removes idgen's files"
fi
finish
