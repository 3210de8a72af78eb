#!/bin/bash
# Build the libFuzzer targets with AddressSanitizer and UBSan and run each
# for a bounded time.  Exits nonzero if a target fails to build or finds a
# crash, leak, sanitizer report or invariant violation (abort).
#
#   run.sh [TARGET...]   TARGET: base62, friendly, layout (or fuzz_base62,
#                        ...); default all three, or $FUZZ_TARGETS
#   FUZZ_SECONDS   seconds per target (default 20)
#   FUZZ_WORKDIR   build and scratch directory, kept (default: a fresh temp
#                  dir, removed after a clean run)
#
# The seed corpora in test/fuzz/corpus/ are only read; inputs the fuzzer
# finds go to the scratch directory, and so do crash artifacts.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../src"
seconds=${FUZZ_SECONDS:-20}
if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=${FUZZ_TARGETS:-"base62 friendly layout"}
fi
if [ -n "${FUZZ_WORKDIR:-}" ]; then
	work=$FUZZ_WORKDIR
	keep=1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/idgen-fuzz.XXXXXX")
	keep=0
fi
CC=${FUZZ_CC:-clang}
flags="-g -O1 -std=c11 -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"

mkdir -p "$work"
status=0
for t in $targets; do
	t=${t#fuzz_}
	t=${t%.c}
	if [ ! -f "$here/fuzz_$t.c" ]; then
		echo "== no fuzz target \"$t\"" >&2
		status=1
		continue
	fi
	bin="$work/fuzz_$t"
	echo "== fuzz_$t: building"
	$CC $flags -I"$src" -o "$bin" "$here/fuzz_$t.c" \
		"$src/layout.c" "$src/codec.c" "$src/gene.c"
	mkdir -p "$work/corpus_$t" "$work/artifacts_$t"
	echo "== fuzz_$t: running for ${seconds}s"
	if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
		-max_len=512 -print_final_stats=1 \
		-artifact_prefix="$work/artifacts_$t/" \
		"$work/corpus_$t" "$here/corpus/$t" > "$work/fuzz_$t.log" 2>&1; then
		echo "== fuzz_$t: FAILED (log: $work/fuzz_$t.log)"
		tail -n 40 "$work/fuzz_$t.log"
		status=1
	else
		grep -E '^stat::number_of_executed_units|^Done' "$work/fuzz_$t.log" || true
		echo "== fuzz_$t: ok"
	fi
done
# a scratch directory of our own goes away unless something failed
if [ $status -eq 0 ] && [ $keep -eq 0 ]; then
	rm -rf "$work"
fi
exit $status
