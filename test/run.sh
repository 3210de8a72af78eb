#!/usr/bin/env bash
# Run every idgen test: plain C unit tests, fuzzers (bounded), then the make
# targets "check" (pg_regress and isolation on a throwaway server) and
# "prove_installcheck" (TAP).  Installs what is missing, builds and installs
# the extension, then runs the tests from a scratch copy of the tree owned
# by the server user (initdb refuses to run as root).
# A TAP test skipped for want of a package that this release has (one
# test/setup.sh names and apt-cache policy has a candidate for) fails, and
# so does such a package that setup.sh could not install.
# Ends with a line "N passed, N failed"; exits non-zero if anything failed.
#   FUZZ_SECONDS=N  seconds per fuzz target (default 15 on IDGEN_NEIGHBOURS_MAJOR
#                   of test/pg_major.sh, 0 on other versions; 0 skips fuzzing)
#   TAP_TESTS="t/010_x.pl ..."  run only these TAP tests (paths from test/)
#   COVERAGE=0      no coverage build and report on IDGEN_NEIGHBOURS_MAJOR
#                   (test/coverage.sh; CONTRIBUTING.md, Coverage)
#   PGEDGE_SRC=DIR  a checkout of pgEdge's snowflake: built and installed
#                   first, so that t/084 checks the 'pgedge' preset against it
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
bash test/setup.sh || exit 1
. test/env.sh

passed=0
failed=0
failures=()
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "FAILED: $1"; }
# Whether a tool of a Debian package is on PATH; where it is not, a failure
# if this release has the package (test/setup.sh's record), else a skip line
have_tool() {
	command -v "$1" >/dev/null && return 0
	if grep -q "^$2 " /var/lib/idgen-setup-packages 2>/dev/null; then
		fail "$1 missing although this release has package $2"
	else
		echo "  skipped: $1 not found (Debian's $2)"
	fi
	return 1
}

echo "== build and install for PostgreSQL $PG_MAJOR ($("$PG_CONFIG" --version)) [at ${SECONDS} s]"
if ! build_and_install; then
	fail "build"
	echo "$passed passed, $failed failed"
	exit 1
fi

# pgEdge's snowflake, for t/084's cross-check, from a checkout given
if [ -n "${PGEDGE_SRC:-}" ]; then
	echo "== build and install pgEdge's snowflake from $PGEDGE_SRC"
	if why=$(install_pgedge "$PGEDGE_SRC"); then
		pass "pgEdge's snowflake built and installed"
	else
		fail "pgEdge's snowflake: $why"
	fi
fi

# Scratch copy for everything that writes test output
work=$(mktemp -d /tmp/idgen-test.XXXXXX)
rsync -a --exclude .git --exclude 'tmp_*' --exclude results "$top/" "$work/"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$work"
chmod 755 "$work"

# Coverage (issue 40, point 3), on the neighbours' version: the scratch
# copy is built again with "make COVERAGE=1" as the server user and
# installed, so that every process of the suite that loads idgen writes its
# counts next to the objects there; test/coverage.sh reports them at the end
coverage=0
if [ "$PG_MAJOR" = "$IDGEN_NEIGHBOURS_MAJOR" ] && [ "${COVERAGE:-1}" != 0 ]; then
	echo "== build with coverage in $work [at ${SECONDS} s]"
	if as_pg_user make -s -C "$work" PG_CONFIG="$PG_CONFIG" clean &&
		as_pg_user make -s -C "$work" PG_CONFIG="$PG_CONFIG" COVERAGE=1 &&
		make -s -C "$work" PG_CONFIG="$PG_CONFIG" COVERAGE=1 install; then
		coverage=1
	else
		fail "build with coverage (make COVERAGE=1)"
	fi
fi

echo "== include structure [at ${SECONDS} s]"
if bash test/check_includes.sh; then
	pass "no include circle among the components of src/"
else
	fail "include circle (test/check_includes.sh)"
fi

# The alert rules of monitoring/ (docs/monitoring.md), with Debian's
# promtool (package prometheus, which test/setup.sh installs on the
# neighbours' version only): they are valid, and their unit tests pass
if [ "$PG_MAJOR" = "$IDGEN_NEIGHBOURS_MAJOR" ]; then
	echo "== promtool: monitoring/idgen-rules.yml [at ${SECONDS} s]"
	if have_tool promtool prometheus; then
		if (cd "$work/monitoring" && promtool check rules idgen-rules.yml); then
			pass "promtool check rules monitoring/idgen-rules.yml"
		else
			fail "promtool check rules monitoring/idgen-rules.yml"
		fi
		if (cd "$work/monitoring" && promtool test rules idgen-rules-test.yml); then
			pass "promtool test rules monitoring/idgen-rules-test.yml"
		else
			fail "promtool test rules monitoring/idgen-rules-test.yml"
		fi
	fi
fi

echo "== links of the documentation [at ${SECONDS} s]"
if perl test/check_links.pl; then
	pass "every relative link and anchor of the documentation resolves"
else
	fail "broken links in the documentation (perl test/check_links.pl)"
fi

echo "== released scripts [at ${SECONDS} s]"
if bash test/check_released.sh; then
	pass "the released SQL scripts are as released (test/released.sha256)"
else
	fail "a released SQL script was edited or is missing (bash test/check_released.sh)"
fi

echo "== unit tests (plain C) [at ${SECONDS} s]"
if [ -f test/unit/Makefile ]; then
	unit_cflags=()
	[ $coverage = 1 ] && unit_cflags=(CFLAGS="-std=c11 -O0 -g -Wall -Wextra -Werror --coverage")
	out=$(as_pg_user make -s -B -C "$work/test/unit" run "${unit_cflags[@]}" 2>&1)
	echo "$out" | tail -20
	line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
	if [ -n "$line" ]; then
		passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
		n=$(echo "$line" | cut -d' ' -f3)
		[ "$n" -gt 0 ] && fail "unit tests ($n)" && failed=$((failed + n - 1))
	else
		fail "unit tests did not run"
	fi
fi

# The fuzz targets are idgen's plain-C codecs and layout parser, which
# include no PostgreSQL header: by default they run on one version, the
# neighbours' (test/pg_major.sh), as CI runs every version
echo "== fuzzing [at ${SECONDS} s]"
if [ -z "${FUZZ_SECONDS:-}" ]; then
	if [ "$PG_MAJOR" = "$IDGEN_NEIGHBOURS_MAJOR" ]; then
		FUZZ_SECONDS=15
	else
		FUZZ_SECONDS=0
		echo "(not on PostgreSQL $PG_MAJOR: the fuzz targets include no PostgreSQL header and run on $IDGEN_NEIGHBOURS_MAJOR; FUZZ_SECONDS=N runs them here)"
	fi
fi
if [ -f test/fuzz/run.sh ] && [ "$FUZZ_SECONDS" != 0 ]; then
	for t in $(cd "$work/test/fuzz" && ls fuzz_*.c | sed 's/\.c$//'); do
		if as_pg_user env FUZZ_SECONDS="$FUZZ_SECONDS" bash "$work/test/fuzz/run.sh" "$t" >"$work/fuzz_$t.log" 2>&1; then
			pass "fuzz $t"
		else
			tail -30 "$work/fuzz_$t.log"
			fail "fuzz $t"
		fi
	done
fi

# Static analysis of src/ (cppcheck, scan-build: test/static.sh), on the
# neighbours' version only, as the fuzzers: the code is the same on every
# version but for src/compat.h
echo "== static analysis [at ${SECONDS} s]"
if [ "$PG_MAJOR" = "$IDGEN_NEIGHBOURS_MAJOR" ]; then
	for a in cppcheck scan-build; do
		if bash test/static.sh "$a" >"$work/static_$a.log" 2>&1; then
			pass "static analysis: $a"
		else
			tail -40 "$work/static_$a.log"
			fail "static analysis: $a"
		fi
	done
else
	echo "(not on PostgreSQL $PG_MAJOR: static analysis runs on $IDGEN_NEIGHBOURS_MAJOR)"
fi

# idgen under AddressSanitizer and UBSan in an assert-enabled PostgreSQL
# 15 built from Debian's source package (test/sanitize.sh), on the
# neighbours' version only: with the whole suite (TAP_TESTS unset) or
# IDGEN_SANITIZE=1; IDGEN_SANITIZE=0 leaves it out.  It needs root (apt-get
# and the build) unless its build is in the cache already.  Each of its
# results counts here.
echo "== sanitizers, assert-enabled PostgreSQL 15 (test/sanitize.sh) [at ${SECONDS} s]"
sanitized=
sanitize=${IDGEN_SANITIZE:-}
[ -z "$sanitize" ] && { [ -z "${TAP_TESTS:-}" ] && sanitize=1 || sanitize=0; }
if [ "$PG_MAJOR" != "$IDGEN_NEIGHBOURS_MAJOR" ] || [ "$PG_MAJOR" != 15 ]; then
	echo "(not on PostgreSQL $PG_MAJOR: test/sanitize.sh builds 15 and runs on $IDGEN_NEIGHBOURS_MAJOR)"
elif [ "$sanitize" != 1 ]; then
	echo "(left out: TAP_TESTS is set; IDGEN_SANITIZE=1 runs it)"
else
	# its download step on apt sources a machine may have (an archive
	# named twice, a version listed but not served), leaving /etc/apt as
	# it was (test/sanitize_apt.sh, root only: it runs apt-get)
	if [ "$(id -u)" -eq 0 ]; then
		bash test/sanitize_apt.sh >"$work/sanitize_apt.log" 2>&1
		grep -E '^(ok|FAILED): ' "$work/sanitize_apt.log" | sed 's/^ok: /ok: sanitize apt: /; s/^FAILED: /FAILED: sanitize apt: /'
		line=$(grep -E '^sanitize-apt: [0-9]+ passed, [0-9]+ failed$' "$work/sanitize_apt.log" | tail -1)
		if [ -n "$line" ]; then
			passed=$((passed + $(echo "$line" | cut -d' ' -f2)))
			n=$(echo "$line" | cut -d' ' -f4)
			[ "$n" -gt 0 ] && { tail -40 "$work/sanitize_apt.log"; fail "sanitize apt ($n)"; failed=$((failed + n - 1)); }
		else
			tail -40 "$work/sanitize_apt.log"
			fail "test/sanitize_apt.sh printed no result (log: $work/sanitize_apt.log)"
		fi
	fi
	bash test/sanitize.sh >"$work/sanitize.log" 2>&1
	grep -E '^(ok|FAILED): ' "$work/sanitize.log"
	line=$(grep -E '^sanitize: [0-9]+ passed, [0-9]+ failed$' "$work/sanitize.log" | tail -1)
	if [ -n "$line" ]; then
		passed=$((passed + $(echo "$line" | cut -d' ' -f2)))
		n=$(echo "$line" | cut -d' ' -f4)
		if [ "$n" -gt 0 ]; then
			grep -A60 -E '^-- sanitizer report|^FAILED: ' "$work/sanitize.log" | head -200
			while IFS= read -r l; do
				fail "sanitize: ${l#FAILED: }"
			done < <(grep -E '^FAILED: ' "$work/sanitize.log")
			# a failure the script counted without a FAILED line
			m=$(grep -cE '^FAILED: ' "$work/sanitize.log")
			[ "$n" -gt "$m" ] && failed=$((failed + n - m))
		fi
	else
		tail -40 "$work/sanitize.log"
		fail "test/sanitize.sh printed no result (log: $work/sanitize.log)"
	fi
	grep -E '^test/sanitize.sh took' "$work/sanitize.log"
	# The TAP tests it ran (passed or failed) ran against PostgreSQL 15
	# already, assert-enabled and under the sanitizers: without coverage
	# (COVERAGE=0) the whole suite below leaves them out here (the other
	# versions run them against Debian's builds), to save time; with
	# coverage they run again, as coverage is the whole suite's
	# (CONTRIBUTING, Every version at once); those it did not reach (its
	# build failed) run below
	if [ $coverage != 1 ]; then
		sanitized=" $(grep -oE '^(ok|FAILED): tap test/t/[^ :]+\.pl' "$work/sanitize.log" |
			sed -E 's/^.*tap test\///' | tr '\n' ' ') "
		[ -n "${sanitized// /}" ] || sanitized=
	fi
fi

# The make targets, as the server user, in the scratch copy
# (TAP_TESTS is this script's knob, not PGXS's switch of the same name)
mk() { as_pg_user env -u TAP_TESTS make -s --no-print-directory -C "$work" PG_CONFIG="$PG_CONFIG" "$@"; }

# pg_regress and isolation: "make check" (installcheck against a throwaway
# instance configured with test/regress.conf, stopped afterwards); one
# result per test, from the drivers' lines (15: "test x ... ok", 16 and
# later: "ok 1 - x")
echo "== make check (pg_regress, isolation) [at ${SECONDS} s]"
mk check >"$work/check.log" 2>&1
grep -E '^(test| *[a-z_]+ +\.\.\.|ok|not ok|#)' "$work/check.log" || true
for t in $(mk print-tests); do
	if grep -qE "^not ok +[0-9]+ +[-+] +$t( |$)|(^|[ ])$t +\.\.\. +FAILED" "$work/check.log"; then
		fail "make check: $t"
	elif grep -qE "(^| )$t +\.\.\. +ok|^ok +[0-9]+ +[-+] +$t( |$)" "$work/check.log"; then
		pass "make check: $t"
	else
		fail "make check: $t (no result)"
	fi
done
for f in "$work/regression.diffs" "$work/output_iso/regression.diffs"; do
	if [ -s "$f" ]; then
		echo "-- $f:"
		head -200 "$f"
	fi
done
if grep -q 'Error' "$work/check.log" && ! grep -qE '^(not ok|.* FAILED)' "$work/check.log"; then
	tail -30 "$work/check.log"
	tail -30 "$work/tmp_instance/postmaster.log" 2>/dev/null
fi

# The extension image for CloudNativePG (make image, docs/install.md), on
# the versions with extension_control_path; built here as root, because
# buildah cannot make a user namespace inside a chroot; t/121 checks what
# it holds and runs a server from its files
if [ "$PG_MAJOR" -ge 18 ]; then
	echo "== extension image (make image) [at ${SECONDS} s]"
	if have_tool buildah buildah; then
		if make -s -C "$work" PG_CONFIG="$PG_CONFIG" image IMAGE_OUT="$work/idgen.oci.tar"; then
			pass "make image"
			export IDGEN_IMAGE_ARCHIVE="$work/idgen.oci.tar"
		else
			fail "make image"
		fi
	fi
fi

# TAP: "make prove_installcheck", one file at a time, so that each has a
# result and its servers' logs are kept ($work/tap_NAME)
echo "== TAP (make prove_installcheck) [at ${SECONDS} s]"
# The packages this release has (test/setup.sh's record): one that setup.sh
# could not install is a failure, and so is a test skipped for want of one
# of them; a skip for a package the release lacks passes, with its line
record=/var/lib/idgen-setup-packages
released=()
if [ -r "$record" ]; then
	while read -r p v state; do
		released+=("$p")
		[ "$state" = installed ] ||
			fail "setup: $p ($v) is in this release but not installed"
	done <"$record"
else
	echo "(no $record from test/setup.sh as root: skips are not checked against the release)"
fi
# The npm packages of t/097 (test/setup.sh, on IDGEN_NEIGHBOURS_MAJOR)
[ -e /var/lib/idgen-setup-npm-failed ] &&
	fail "setup: npm could not install $(cat /var/lib/idgen-setup-npm-failed) (t/097's ORMs skip)"
# The packages of $released a skip line names (as whole words)
named_in() {
	local w p
	for w in $(echo "$1" | tr -c '[:alnum:].+-' ' '); do
		w=${w%.}
		for p in "${released[@]}"; do
			[ "$w" = "$p" ] && echo "$p"
		done
	done | sort -u
}
tap_tests=${TAP_TESTS:-$(cd "$work/test" && ls t/*.pl 2>/dev/null)}
if [ -z "${TAP_TESTS:-}" ] && [ -n "${sanitized:-}" ]; then
	echo "(left out here, run by test/sanitize.sh above:$sanitized)"
	tap_tests=$(for t in $tap_tests; do case $sanitized in *" $t "*) ;; *) echo "$t" ;; esac; done)
fi
for t in $tap_tests; do
	t=test/${t#test/}
	name=$(basename "$t" .pl)
	log="$work/tap_$name.log"
	t0=$SECONDS
	if mk prove_installcheck PROVE_TESTS="$t" >"$log" 2>&1; then
		# a test skipped where its tool is missing says why
		skipped=$(sed -n 's/^.* skipped: \(.*\)$/  skipped: \1/p' "$log")
		bad=
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			echo "$line"
			for p in $(named_in "$line"); do
				bad+=" $p"
			done
		done <<<"$skipped"
		if [ -n "$bad" ]; then
			fail "tap $t skipped although this release has$bad"
		else
			pass "tap $t ($((SECONDS - t0)) s)"
		fi
	else
		tail -40 "$log"
		as_pg_user cp -r "$work/tmp_check" "$work/tap_$name" 2>/dev/null
		# the test's own log first: a die's message is there, not in $log
		{ find "$work/tap_$name" -name "regress_log_$name" 2>/dev/null
		  find "$work/tap_$name" -name '*.log' -path '*log*' 2>/dev/null | head -3; } |
			while read -r f; do echo "-- $f"; tail -15 "$f"; done
		fail "tap $t"
	fi
done

if [ $coverage = 1 ]; then
	echo "== coverage of src/*.c (test/coverage.sh) [at ${SECONDS} s]"
	# the floors hold for the whole suite: with TAP_TESTS only the table
	floors=()
	[ -n "${TAP_TESTS:-}" ] && floors=(COVERAGE_MIN_LINES=0 COVERAGE_MIN_BRANCHES=0)
	if env "${floors[@]}" bash test/coverage.sh "$work"; then
		pass "coverage of src/*.c reported, above its floors"
	else
		fail "coverage of src/*.c (test/coverage.sh)"
	fi
fi

echo
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "test output kept in $work; test/run.sh took ${SECONDS} s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
