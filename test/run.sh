#!/usr/bin/env bash
# Run every idgen test: plain C unit tests, fuzzers (bounded), pg_regress,
# isolation and TAP tests.  Installs what is missing, builds and installs the
# extension, then runs the server-side tests from a scratch copy of the tree
# owned by the server user (initdb refuses to run as root).
# Ends with a line "N passed, N failed"; exits non-zero if anything failed.
#   FUZZ_SECONDS=N  seconds per fuzz target (default 15; 0 skips fuzzing)
#   TAP_TESTS="t/010_x.pl ..."  run only these TAP tests
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

echo "== build and install"
if ! build_and_install; then
	fail "build"
	echo "$passed passed, $failed failed"
	exit 1
fi

# Scratch copy for everything that writes test output
work=$(mktemp -d /tmp/idgen-test.XXXXXX)
rsync -a --exclude .git --exclude 'tmp_*' --exclude results "$top/" "$work/"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$work"
chmod 755 "$work"

echo "== unit tests (plain C)"
if [ -f test/unit/Makefile ]; then
	out=$(as_pg_user make -s -C "$work/test/unit" run 2>&1)
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

echo "== fuzzing"
if [ -f test/fuzz/run.sh ] && [ "${FUZZ_SECONDS:-15}" != 0 ]; then
	for t in $(cd "$work/test/fuzz" && ls fuzz_*.c | sed 's/\.c$//'); do
		if as_pg_user env FUZZ_SECONDS="${FUZZ_SECONDS:-15}" bash "$work/test/fuzz/run.sh" "$t" >"$work/fuzz_$t.log" 2>&1; then
			pass "fuzz $t"
		else
			tail -30 "$work/fuzz_$t.log"
			fail "fuzz $t"
		fi
	done
fi

# pg_regress-style suite: $1 = driver, $2 = tests, $3.. = extra options
run_regress() {
	local driver=$1 tests=$2 outdir=$3 indir=$4
	shift 4
	[ -n "$tests" ] || return 0
	as_pg_user "$PGXS_DIR/src/test/$driver" --inputdir="$indir" \
		--dbname=contrib_regression \
		--outputdir="$work/$outdir" --bindir="$PG_BINDIR" \
		--temp-config="$work/test/regress.conf" \
		--temp-instance="$work/$outdir/tmp_check" --port=58432 \
		"$@" $tests >"$work/$outdir.log" 2>&1
	cat "$work/$outdir.log" | grep -E '^(test| *[a-z_]+ +\.\.\.|ok|not ok|#|     )' || true
	for t in $tests; do
		if grep -qE "^(not ok +[0-9]+ +[-+] +$t( |$)|test +$t +\.\.\. +FAILED| +$t +\.\.\. +FAILED|     $t +\.\.\. FAILED)|[ ]$t +\.\.\. +FAILED" "$work/$outdir.log"; then
			fail "$driver $t"
		elif grep -qE "(^| )$t +\.\.\. +ok|ok +[0-9]+ +[-+] +$t " "$work/$outdir.log"; then
			pass "$driver $t"
		else
			fail "$driver $t (no result)"
		fi
	done
	if [ -s "$work/$outdir/regression.diffs" ]; then
		echo "-- $outdir/regression.diffs:"
		head -200 "$work/$outdir/regression.diffs"
	fi
}

mkvar() { make -s --no-print-directory -f Makefile -f - print-var VAR="$1" <<'EOM'
print-var:
	@echo $($(VAR))
EOM
}

echo "== pg_regress"
mkdir -p "$work/regress" "$work/isolation" && [ "$(id -u)" -eq 0 ] && chown postgres: "$work/regress" "$work/isolation"
run_regress regress/pg_regress "$(mkvar REGRESS)" regress "$work"
echo "== isolation"
run_regress isolation/pg_isolation_regress "$(mkvar ISOLATION)" isolation "$work/test"

echo "== TAP"
tap_tests=${TAP_TESTS:-$(cd "$work/test" && ls t/*.pl 2>/dev/null)}
for t in $tap_tests; do
	log="$work/tap_$(basename "$t" .pl).log"
	as_pg_user mkdir -p "$work/test/tmp_$(basename "$t" .pl)"
	# TESTDIR for 15; 16 and later read TESTDATADIR and TESTLOGDIR (else a
	# relative tmp_check, which the servers, in their data directory, miss)
	tdir="$work/test/tmp_$(basename "$t" .pl)"
	if (cd "$work/test" && as_pg_user env TESTDIR="$tdir" \
		TESTDATADIR="$tdir/tmp_check" TESTLOGDIR="$tdir/tmp_check/log" \
		PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
		prove -I "$PGXS_DIR/src/test/perl" -I "$work/test" "$t") >"$log" 2>&1; then
		pass "tap $t"
	else
		tail -40 "$log"
		find "$work/test/tmp_$(basename "$t" .pl)" -name '*.log' -path '*log*' 2>/dev/null | head -3 | while read -r f; do echo "-- $f"; tail -15 "$f"; done
		fail "tap $t"
	fi
done

echo
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "test output kept in $work"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
