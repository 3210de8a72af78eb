#!/usr/bin/env bash
# Line and branch coverage of src/*.c (issue 40, point 3), from the counts
# that a tree built with "make COVERAGE=1" collected while the suite ran
# (test/run.sh does this on IDGEN_NEIGHBOURS_MAJOR): gcovr (Debian's
# package) reads them; this prints one line per file (lines and branches
# covered), the totals, and every function of which under 80% of the lines
# ran, where the branches not taken sit, and the lines never run of each
# file under 90%.  Fails when gcovr is missing, found no counts, or the totals fall
# under the floors, which sit just under the figures CONTRIBUTING.md
# records, so that a change losing tested lines fails.
#   bash test/coverage.sh DIR     DIR: the built tree (its src/*.gcno, *.gcda)
#   COVERAGE_MIN_LINES=N COVERAGE_MIN_BRANCHES=N   other floors (percent;
#                                 default: those below)
#   COVERAGE_JSON=FILE            keep gcovr's JSON report there too
set -uo pipefail
dir=${1:?usage: $0 DIR}
# The floors: just under the figures of CONTRIBUTING.md (Coverage)
min_lines=${COVERAGE_MIN_LINES:-95.0}
min_branches=${COVERAGE_MIN_BRANCHES:-79.0}

if ! command -v gcovr >/dev/null; then
	echo "coverage: gcovr not found (Debian's gcovr)"
	exit 1
fi
if ! compgen -G "$dir/src/*.gcda" >/dev/null; then
	echo "coverage: no counts (.gcda) in $dir/src: was it built with make COVERAGE=1, and did the tests run?"
	exit 1
fi
json=${COVERAGE_JSON:-$(mktemp /tmp/idgen-coverage.XXXXXX.json)}
# The objects of src/ and those of the unit tests (test/unit, built with
# --coverage by test/run.sh), merged per source file
if ! (cd "$dir" && gcovr -r . -f 'src/[^/]*\.c$' --json "$json" .) >"$json.log" 2>&1; then
	cat "$json.log"
	echo "coverage: gcovr failed"
	exit 1
fi
rm -f "$json.log"
python3 - "$json" "$min_lines" "$min_branches" "$dir" <<'EOF'
import itertools, json, os, re, sys
path, min_lines, min_branches, top = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
files = sorted(json.load(open(path))["files"], key=lambda f: f["file"])
def pct(a, b):
    return 100.0 * a / b if b else 100.0
tl = tlc = tb = tbc = 0
low = []
# Branches not taken, by where they sit: on lines that never ran (an
# untested path), on lines that ran and start an ereport or elog (the
# macro's test of errstart: for ERROR and above only one way can happen),
# elsewhere on lines that ran (a condition tested one way only)
not_run = on_report = elsewhere = 0
report_re = re.compile(r'\b(ereport|elog)\s*\(')
error_re = re.compile(r'\b(ereport|elog)\s*\(\s*(ERROR|FATAL|PANIC)\b')
impossible = 0
never = []
print("%-22s %15s %8s %15s %8s" % ("file", "lines", "", "branches", ""))
for f in files:
    lines = [l for l in f["lines"] if not l.get("gcovr/noncode")]
    lc = sum(1 for l in lines if l["count"] > 0)
    br = [b for l in lines for b in l.get("branches", [])]
    bc = sum(1 for b in br if b["count"] > 0)
    tl += len(lines); tlc += lc; tb += len(br); tbc += bc
    try:
        src = open(os.path.join(top, f["file"]), errors="replace").read().split("\n")
    except OSError:
        src = []
    for l in lines:
        miss = sum(1 for b in l.get("branches", []) if b["count"] == 0)
        if l["count"] == 0:
            not_run += miss
        elif l["line_number"] <= len(src) and report_re.search(src[l["line_number"] - 1]):
            on_report += miss
            # errstart's false way of a report of ERROR or above, which
            # cannot happen: one branch, not taken, of each such line
            if miss and error_re.search(src[l["line_number"] - 1]):
                impossible += 1
        else:
            elsewhere += miss
    # The lines never run of a file under 90%, as ranges
    if pct(lc, len(lines)) < 90:
        # a range: code lines never run with no code line run between them
        runs = []
        ordered = sorted(lines, key=lambda l: l["line_number"])
        for never_run, group in itertools.groupby(ordered, key=lambda l: l["count"] == 0):
            if never_run:
                n = [l["line_number"] for l in group]
                runs.append(str(n[0]) if len(n) == 1 else "%d-%d" % (n[0], n[-1]))
        never.append((f["file"], runs))
    print("%-22s %7d / %5d %7.1f%% %7d / %5d %7.1f%%"
          % (f["file"], lc, len(lines), pct(lc, len(lines)), bc, len(br), pct(bc, len(br))))
    # A function's lines: from its first line to the next function's
    funcs = sorted(f.get("functions", []), key=lambda g: g["lineno"])
    for i, g in enumerate(funcs):
        end = funcs[i + 1]["lineno"] if i + 1 < len(funcs) else 1 << 30
        own = [l for l in lines if g["lineno"] <= l["line_number"] < end]
        c = sum(1 for l in own if l["count"] > 0)
        if own and pct(c, len(own)) < 80:
            low.append((f["file"], g["name"], g["lineno"], c, len(own)))
print("%-22s %7d / %5d %7.1f%% %7d / %5d %7.1f%%"
      % ("total", tlc, tl, pct(tlc, tl), tbc, tb, pct(tbc, tb)))
print()
print("branches not taken: %d; on lines never run %d, on ereport/elog lines that ran %d, elsewhere %d"
      % (tb - tbc, not_run, on_report, elsewhere))
print("branches leaving out errstart's impossible way on the %d ERROR/FATAL reports that ran: %d / %d %.1f%%"
      % (impossible, tbc, tb - impossible, pct(tbc, tb - impossible)))
for file, runs in never:
    print("lines never run of %s (under 90%%): %s" % (file, ", ".join(runs)))
print()
print("functions under 80% of their lines:")
for file, name, lineno, c, n in low:
    print("  %s:%d %s: %d of %d lines (%.0f%%)" % (file, lineno, name, c, n, pct(c, n)))
ok = True
if pct(tlc, tl) < min_lines:
    print("coverage: lines %.1f%% under the floor of %.1f%%" % (pct(tlc, tl), min_lines))
    ok = False
if pct(tbc, tb) < min_branches:
    print("coverage: branches %.1f%% under the floor of %.1f%%" % (pct(tbc, tb), min_branches))
    ok = False
print("coverage: lines %.1f%%, branches %.1f%% (floors %.1f%%, %.1f%%)"
      % (pct(tlc, tl), pct(tbc, tb), min_lines, min_branches))
sys.exit(0 if ok else 1)
EOF
rc=$?
[ -n "${COVERAGE_JSON:-}" ] || rm -f "$json"
exit $rc
