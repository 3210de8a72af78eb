#!/usr/bin/env bash
# Benchmark idgen against what a user would use instead (sequences, bigserial,
# gen_random_uuid), all in one run on a throwaway cluster under ./tmp_bench,
# so that ratios hold on a noisy machine.  Not a test: it never fails on a
# slow figure, it reports.
#
# Every figure is the median of BENCH_ROUNDS runs (5 for the short
# single-backend ones), with min and max beside it;
# the runs of the alternatives are interleaved (A B C .. A B C ..) so drift
# hits them all alike, and each ratio is the median of per-round ratios.
# A function that is not installed yet (to_regprocedure) shows as "n/a".
#
# Prints the tables and writes results.md, chart.png and (the part
# "scaling") scaling.png to test/bench/ (with BENCH_QUICK=1, to
# test/bench/results/, which git ignores); without gnuplot, no chart, and the
# run says so.
#   BENCH_QUICK=1     smoke run: small sizes, short points
#   BENCH_ROUNDS=N    runs per figure (default 3; single backend: 5, at least this)
#   BENCH_ROWS=N      rows per single-backend and insert run (default 2000000)
#   BENCH_T=N         seconds of the pgbench points at 4 clients, the sustained
#                     rate and the latency runs (default 10)
#   BENCH_SCALE_T=N   seconds of the pgbench points at 1, 2 and 8 clients
#                     (default 5)
#   BENCH_LONG_ROWS=N IDs each backend draws in the one long statement of the
#                     part "rate" (default 10000000; BENCH_QUICK: 1000000)
#   BENCH_PORT=N      server port (default 54339; the socket is in ./tmp_bench)
#   BENCH_OUT=DIR     where results.md, chart.png and scaling.png go
#   BENCH_ONLY="..."  run only these parts of: single pgbench insert rate
#                     latency scaling
#   BENCH_SCALING_T=N     seconds of each point of the scaling part (default 2;
#                         BENCH_QUICK: 1)
#   BENCH_SCALING_ROWS=N  calls per statement there (default 200000)
#   BENCH_SCALING_MAX=N   most backends there (default nproc, the machine's
#                         CPUs); the points are 1, 2, 4, ... and N itself
#   PGEDGE_SRC=DIR    a source checkout of pgEdge's snowflake extension: it is
#                     built (in a scratch copy) and installed into the same
#                     PostgreSQL, and measured beside idgen in every table.
#                     Without it (pgEdge's extension is in no Debian release)
#                     its rows are n/a, and the run says why.
#   BENCH_INSTALLED=1 build nothing: idgen (and pgEdge's snowflake, whose rows
#                     are measured when its extension is there) was built
#                     and installed into PG_CONFIG's PostgreSQL beforehand,
#                     on another machine, say; no compiler, make or server
#                     headers are needed (docs/benchmarks.md)
#   PG_CONFIG=PATH    the PostgreSQL to build against and run (its bindir's
#                     initdb, pg_ctl, psql and pgbench); default: the Debian
#                     release's.  When it, make and its C compiler are there,
#                     nothing is installed (no package manager or network is
#                     needed); else test/setup.sh installs what is missing.
#                     The extension is installed into it (root, or a user who
#                     may write its directories); as root the server runs as
#                     the user "postgres", which must exist.
#
# The scaling part: N backends at once (pgbench -c N -j N -T
# BENCH_SCALING_T), each running SELECT count(f) FROM generate_series(1,
# BENCH_SCALING_ROWS) over and over; calls per second = statements *
# rows / seconds, for N = 1, 2, 4, ... up to the machine's CPUs, for each
# generator and the baselines (the empty loop count(1), sequences CACHE 1
# and CACHE 1000, gen_random_uuid(), uuidv7(), pgEdge's nextval()), with each
# rate's ratio to the empty loop and to nextval() CACHE 1000 at the same N
# and to the same f at one backend.  idgen.max_lead is 1 h there, so that
# snowflake_nextval() is not held to the clock (its clock waits are
# reported).  segment_nextval() runs once plain and once on a tag with
# cache => 100, where segment_create or segment_alter has a cache argument.
# It writes the table to results.md and the chart scaling.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)

if [ -n "${BENCH_QUICK:-}" ]; then
	rounds=${BENCH_ROUNDS:-3}
	rows=${BENCH_ROWS:-200000}
	long_rows=${BENCH_LONG_ROWS:-1000000}
	pgb_t=${BENCH_T:-2}
	scale_t=${BENCH_SCALE_T:-1}
	out=${BENCH_OUT:-$top/test/bench/results}
else
	rounds=${BENCH_ROUNDS:-3}
	rows=${BENCH_ROWS:-2000000}
	long_rows=${BENCH_LONG_ROWS:-10000000}
	pgb_t=${BENCH_T:-10}
	scale_t=${BENCH_SCALE_T:-5}
	out=${BENCH_OUT:-$top/test/bench}
fi
port=${BENCH_PORT:-54339}
single_rounds=$((rounds > 5 ? rounds : 5))
parts=" ${BENCH_ONLY:-single pgbench insert rate latency scaling} "
# True when the part is to run
want() { [[ $parts == *" $1 "* ]]; }
# The rounds of a part: its round numbers from $2, none if it is not to run
rounds_of() { if want "$1"; then seq "$2" "${3:-$rounds}"; fi; }
clients_list="1 2 4 8"
# The scaling part: backends 1, 2, 4, ... up to the machine's CPUs (or
# BENCH_SCALING_MAX), that number itself included
scal_max=${BENCH_SCALING_MAX:-$(nproc)}
scal_rows=${BENCH_SCALING_ROWS:-200000}
scal_t=${BENCH_SCALING_T:-$([ -n "${BENCH_QUICK:-}" ] && echo 1 || echo 2)}
if ! [[ $scal_max =~ ^[1-9][0-9]*$ && $scal_rows =~ ^[1-9][0-9]*$ && $scal_t =~ ^[1-9][0-9]*$ ]]; then
	echo "bench: BENCH_SCALING_MAX, BENCH_SCALING_ROWS and BENCH_SCALING_T are positive integers" >&2
	exit 2
fi
scal_list=$(n=1
	while [ "$n" -lt "$scal_max" ]; do printf '%s ' "$n"; n=$((n * 2)); done
	echo "$scal_max")
# The default layout 'idgen': 12 sequence bits per 1 ms tick
layout_max=4096000

# Nothing to install when PG_CONFIG's PostgreSQL (with pgbench and the
# server headers), make and the C compiler are there: a machine without a
# package manager or network runs the benchmark against the PostgreSQL that
# PG_CONFIG names.  Else test/setup.sh installs Debian's packages (gnuplot
# among them).
. test/pg_major.sh
# What the run cannot do without, one a line
bench_missing() {
	local bin cc inc
	if ! command -v "$PG_CONFIG" >/dev/null; then
		echo "PG_CONFIG=$PG_CONFIG"
		return 0
	fi
	bin=$("$PG_CONFIG" --bindir)
	for p in initdb pg_ctl psql pgbench; do
		[ -x "$bin/$p" ] || echo "$bin/$p"
	done
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		echo "the user postgres (root runs the server as postgres; or run as another user)"
	fi
	if [ -n "${BENCH_INSTALLED:-}" ]; then
		[ -f "$("$PG_CONFIG" --sharedir)/extension/idgen.control" ] ||
			echo "idgen installed into $("$PG_CONFIG" --sharedir) (BENCH_INSTALLED is set)"
		return 0
	fi
	# Debian's client package has pgxs.mk without the server headers
	[ -f "$("$PG_CONFIG" --pgxs)" ] || echo "PGXS ($("$PG_CONFIG" --pgxs))"
	inc=$("$PG_CONFIG" --includedir-server)
	[ -f "$inc/postgres.h" ] || echo "the server headers ($inc/postgres.h)"
	cc=$("$PG_CONFIG" --cc | cut -d' ' -f1)
	command -v "$cc" >/dev/null || echo "the C compiler $cc"
	command -v make >/dev/null || echo make
	return 0
}
# gnuplot is not needed: without it the run says that it drew no chart
if [ -n "$(bench_missing)" ] && ! bash test/setup.sh || [ -n "$(bench_missing)" ]; then
	echo "bench: test/setup.sh could not install what the run needs:" >&2
	bench_missing | sed 's/^/  /' >&2
	echo "bench: point PG_CONFIG at a PostgreSQL's pg_config (docs/benchmarks.md)" >&2
	exit 1
fi
. test/env.sh
if [ -n "${BENCH_INSTALLED:-}" ]; then
	echo "== BENCH_INSTALLED: idgen as installed in $("$PG_CONFIG" --sharedir), nothing built"
else
	echo "== build and install"
	build_and_install
fi
# "version V" of an extension's control file
control_version() { sed -n "s/^default_version = '\(.*\)'/version \1/p" "$1"; }
# pgEdge's snowflake, from the source checkout given (never committed here)
pgedge_why=
if [ -n "${BENCH_INSTALLED:-}" ]; then
	pgedge_ctl=$("$PG_CONFIG" --sharedir)/extension/snowflake.control
	if [ -f "$pgedge_ctl" ]; then
		pgedge_rev=$(control_version "$pgedge_ctl")
	else
		pgedge_why="BENCH_INSTALLED is set and pgEdge's snowflake is not installed in $("$PG_CONFIG" --sharedir)"
	fi
elif [ -n "${PGEDGE_SRC:-}" ]; then
	echo "== build and install pgEdge's snowflake from $PGEDGE_SRC"
	pgedge_why=$(install_pgedge "$PGEDGE_SRC") || true
	pgedge_rev=$(git -C "$PGEDGE_SRC" rev-parse --short HEAD 2>/dev/null ||
		control_version "$PGEDGE_SRC/snowflake.control")
else
	pgedge_why="PGEDGE_SRC is not set (pgEdge's snowflake is in no Debian release; give a source checkout to measure it)"
fi
# The code measured: the commit built, and whether the tree differed from it
# (with BENCH_INSTALLED, the commit the bundle was built from: its env.sh
# sets BENCH_COMMIT)
if [ -n "${BENCH_INSTALLED:-}" ] && [ -n "${BENCH_COMMIT:-}" ]; then
	commit=$BENCH_COMMIT
else
	commit=$(code_commit)
fi

dir=$top/tmp_bench
work=$top/test/bench/results
raw=$work/raw.tsv
mkdir -p "$work" "$out"
rm -rf "$dir"
mkdir -p "$dir/logs"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir"
# The server user may not reach the checkout (one under /root, say)
if ! as_pg_user test -w "$dir/logs"; then
	rm -rf "$dir"
	dir=$(mktemp -d /tmp/idgen-bench.XXXXXX)
	mkdir -p "$dir/logs"
	chown -R postgres: "$dir"
	echo "bench: the postgres user cannot reach $top; cluster in $dir"
fi
chmod 777 "$dir/logs"
: >"$raw"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
load_max=0
# Keep the highest 1-minute load average seen at the end of a round
sample_load() {
	load_max=$(awk -v m="$load_max" '{ print ($1 > m) ? $1 : m }' /proc/loadavg)
}
started=$(date +%s)

echo "== cluster in $dir"
as_pg_user initdb -D "$dir/data" -A trust -U postgres >/dev/null
cat >>"$dir/data/postgresql.conf" <<EOC
shared_preload_libraries = 'idgen'
idgen.node_id = 1
snowflake.node = 2
idgen.layout = 'idgen'
idgen.database = 'postgres'
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
max_connections = $((scal_max > 30 ? scal_max + 20 : 50))
shared_buffers = 256MB
work_mem = 256MB
max_wal_size = 8GB
checkpoint_timeout = 30min
autovacuum = off
EOC
as_pg_user pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
stop_server() {
	as_pg_user pg_ctl -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}
trap stop_server EXIT

PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres)
q() { "${PSQL[@]}" -c "$1"; }
# Record one measurement: kind, name, round, value
rec() { [ -n "$4" ] || return 0; printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$raw"; }
# True when the function (a regprocedure signature) exists
have() { [ "$(q "SELECT to_regprocedure('$1') IS NOT NULL")" = t ]; }

q "CREATE EXTENSION idgen"
q "CREATE SEQUENCE bench_seq1 CACHE 1"
q "CREATE SEQUENCE bench_seq1000 CACHE 1000"
# Milliseconds one statement takes inside the server
q "CREATE FUNCTION bench_ms(stmt text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE stmt;
	RETURN 1000 * extract(epoch FROM clock_timestamp() - t0);
END \$\$"
# Lead of the snowflake clock (ms) and clock waits so far
sf_state() { q "SELECT round(greatest(lead_ms, 0)::numeric, 1), clock_waits, issued FROM idgen.snowflake_status()" | tr '|' ' '; }
# Set a reloadable setting (value DEFAULT resets it) and wait until new
# sessions show it as shown
set_guc() {
	if [ "$2" = DEFAULT ]; then
		q "ALTER SYSTEM RESET $1"
	else
		q "ALTER SYSTEM SET $1 = '$2'"
	fi
	q "SELECT pg_reload_conf()" >/dev/null
	for _ in $(seq 1 50); do
		[ "$(q "SHOW $1")" = "$3" ] && return 0
		sleep 0.1
	done
	echo "bench: $1 did not become $3" >&2
	return 1
}
# Wait (up to $1 tenths of a second, default 100) until the snowflake clock
# is back on the wall clock: a burst beyond the layout's rate runs ahead of
# it, and the next run must not start with less of idgen.max_lead left than
# the one before
drain_lead() {
	local lead
	for _ in $(seq 1 "${1:-100}"); do
		read -r lead _ _ <<<"$(sf_state)"
		awk -v l="$lead" 'BEGIN { exit !(l <= 0) }' && return 0
		sleep 0.1
	done
}

# Segment tags: 'bench' (step 1000) for throughput, two for latency
seg=
if have 'idgen.segment_nextval(text)'; then
	if q "SELECT idgen.segment_create('bench', 1, 1000);
		  SELECT idgen.segment_create('bench_s100', 1, 100);
		  SELECT idgen.segment_create('bench_s100d', 1, 100);
		  SELECT idgen.segment_create('bench_s100000', 1, 100000)" >/dev/null &&
		q "SELECT idgen.segment_nextval('bench'), idgen.segment_nextval('bench_s100'),
		          idgen.segment_nextval('bench_s100d'),
		          idgen.segment_nextval('bench_s100000')" >/dev/null; then
		seg=1
	else
		echo "bench: segment functions exist but failed; segment rows are n/a" >&2
	fi
fi
# A key of public IDs (63 bits) for id_encrypt, where this idgen has it
pid=
if have 'idgen.id_encrypt(bigint,text)'; then
	if q "SELECT idgen.id_key_create('bench_pid')" >/dev/null; then
		pid=1
	else
		echo "bench: idgen.id_key_create failed; id_encrypt rows are n/a" >&2
	fi
fi
# A segment tag with a cache of 100 IDs (segment_create's or segment_alter's
# argument cache, where there is one): its row in the scaling part is n/a
# otherwise, with the reason in the report
segc=
segc_why="neither idgen.segment_create nor idgen.segment_alter has an argument cache in this idgen"
# True when idgen's function $1 has an argument named $2
has_arg() {
	[ "$(q "SELECT EXISTS (SELECT FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'idgen' AND p.proname = '$1' AND '$2' = ANY (p.proargnames))")" = t ]
}
if [ -n "$seg" ]; then
	segc_how=
	if has_arg segment_create cache; then
		segc_how="SELECT idgen.segment_create('bench_cache', 1, 1000, cache => 100)"
	elif has_arg segment_alter cache; then
		segc_how="SELECT idgen.segment_create('bench_cache', 1, 1000);
			  SELECT idgen.segment_alter('bench_cache', cache => 100)"
	fi
	if [ -n "$segc_how" ]; then
		if q "$segc_how" >/dev/null && q "SELECT idgen.segment_nextval('bench_cache')" >/dev/null; then
			segc=1
			segc_why=
		else
			segc_why="setting the tag's cache failed ($(tr -s '\n\t' '  ' <<<"$segc_how"))"
		fi
	fi
else
	segc_why="idgen has no segment_nextval"
fi
gene=
if have 'idgen.gene_id(text,integer)'; then
	q "SELECT idgen.gene_id('testroy', 3)" >/dev/null && gene=1
fi
# pgEdge's snowflake extension, built above from PGEDGE_SRC: its rows show
# n/a otherwise, with the reason in the report
pgedge=
if [ -z "$pgedge_why" ]; then
	if q "CREATE EXTENSION IF NOT EXISTS snowflake" >/dev/null 2>&1 &&
		have 'snowflake.nextval(regclass)' &&
		q "SELECT snowflake.nextval()" >/dev/null 2>&1; then
		pgedge=1
		pgedge_ver=$(q "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")
	else
		pgedge_why="CREATE EXTENSION snowflake or snowflake.nextval() failed after the build"
	fi
fi
[ -n "$pgedge" ] || echo "bench: pgEdge's snowflake rows are n/a: $pgedge_why"
# uuidv7() is PostgreSQL's own from 18 on
uuid7=
have 'uuidv7()' && uuid7=1
# An alternative is measured if its requirement (seg/gene/pgedge/uuid7/1) is met
avail() {
	case $1 in
	seg) [ -n "$seg" ] ;; segc) [ -n "$segc" ] ;; gene) [ -n "$gene" ] ;; pgedge) [ -n "$pgedge" ] ;;
	uuid7) [ -n "$uuid7" ] ;; pid) [ -n "$pid" ] ;; *) true ;;
	esac
}

# Single backend: name|requirement|expression.  The snowflake kinds come
# first: they may run ahead of the clock, which then drains during the others.
single=(
	"bare loop|1|1"
	"snowflake_nextval()|1|idgen.snowflake_nextval()"
	"segment_nextval(tag)|seg|idgen.segment_nextval('bench')"
	"gene_id(key, bits)|gene|idgen.gene_id('testroy', 3)"
	"pgEdge snowflake.nextval()|pgedge|snowflake.nextval()"
	"nextval() CACHE 1|1|nextval('bench_seq1')"
	"nextval() CACHE 1000|1|nextval('bench_seq1000')"
	"gen_random_uuid()|1|gen_random_uuid()"
	"uuidv7()|uuid7|uuidv7()"
	"id_decode(id)|1|idgen.id_decode(i)"
	"id_encrypt(id, key)|pid|idgen.id_encrypt(i, 'bench_pid')"
)
want single && echo "== single backend: count(f()) over $rows rows, $single_rounds rounds"
for r in $(rounds_of single 0 "$single_rounds"); do
	for e in "${single[@]}"; do
		IFS='|' read -r name req expr <<<"$e"
		avail "$req" || continue
		n=$rows
		if [ "$r" -eq 0 ]; then
			n=$((rows / 10))	# round 0 warms up, not recorded
		fi
		case $expr in idgen.snowflake* | idgen.gene*) drain_lead ;; esac
		ms=$(q "SELECT bench_ms('SELECT count($(sed "s/'/''/g" <<<"$expr")) FROM generate_series(1, $n) AS g(i)')")
		if [ "$r" -gt 0 ]; then
			rec single "$name" "$r" "$ms"
		fi
	done
	sample_load
	echo "   round $r done"
done

# pgbench of SELECT f(): name|requirement|statement
stmts=(
	"SELECT 1|1|SELECT 1"
	"snowflake_nextval()|1|SELECT idgen.snowflake_nextval()"
	"segment_nextval(tag)|seg|SELECT idgen.segment_nextval('bench')"
	"pgEdge snowflake.nextval()|pgedge|SELECT snowflake.nextval()"
	"nextval() CACHE 1|1|SELECT nextval('bench_seq1')"
	"gen_random_uuid()|1|SELECT gen_random_uuid()"
	"uuidv7()|uuid7|SELECT uuidv7()"
)
# Run pgbench with a one-statement script; prints TPS.  Extra options follow.
pgb() {
	local stmt=$1 c=$2 t=$3 f
	shift 3
	f=$(mktemp "$dir/logs/script.XXXXXX")
	echo "$stmt;" >"$f"
	pgbench -n -M prepared -c "$c" -j "$c" -T "$t" -f "$f" "$@" \
		-h "$dir" -p "$port" -U postgres postgres 2>&1 |
		awk '/^tps = / { print $3; found = 1 }
			 /error|ERROR|aborted/ { print > "/dev/stderr" }
			 END { if (!found) exit 1 }'
	rm -f "$f"
}
want pgbench && echo "== pgbench -M prepared: SELECT f() at $clients_list clients, $rounds rounds"
for r in $(rounds_of pgbench 1); do
	for c in $clients_list; do
		t=$scale_t
		if [ "$c" -eq 4 ]; then t=$pgb_t; fi
		for e in "${stmts[@]}"; do
			IFS='|' read -r name req stmt <<<"$e"
			avail "$req" || continue
			rec tps "$name@$c" "$r" "$(pgb "$stmt" "$c" "$t")"
		done
	done
	sample_load
	echo "   round $r done"
done

# Inserts into a table whose primary key defaults to the generator; the last
# two give each row an ID for outsiders as well: a public ID stored beside
# the key (looked up through the key's own index: WHERE id =
# id_decrypt($1, key)), or a uuid column with its own unique index
inserts=(
	"bigserial|1|id bigserial PRIMARY KEY"
	"gen_random_uuid()|1|id uuid PRIMARY KEY DEFAULT gen_random_uuid()"
	"snowflake_nextval()|1|id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval()"
	"segment_nextval(tag)|seg|id bigint PRIMARY KEY DEFAULT idgen.segment_nextval('bench')"
	"pgEdge snowflake.nextval()|pgedge|id bigint PRIMARY KEY DEFAULT snowflake.nextval()"
	"uuidv7()|uuid7|id uuid PRIMARY KEY DEFAULT uuidv7()"
	"snowflake + stored public ID|pid|id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(), pid bigint GENERATED ALWAYS AS (idgen.id_encrypt(id, 'bench_pid')) STORED"
	"snowflake + uuid column|1|id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(), pid uuid NOT NULL UNIQUE DEFAULT gen_random_uuid()"
)
want insert && echo "== insert $rows rows, $rounds rounds"
for r in $(rounds_of insert 1); do
	for e in "${inserts[@]}"; do
		IFS='|' read -r name req col <<<"$e"
		avail "$req" || continue
		q "DROP TABLE IF EXISTS bench_ins; CREATE TABLE bench_ins ($col, v int); CHECKPOINT"
		ms=$("${PSQL[@]}" -c '\timing on' \
			-c "INSERT INTO bench_ins (v) SELECT i FROM generate_series(1, $rows) AS g(i)" |
			awk '/^Time: / { print $2 }')
		rec ins_s "$name" "$r" "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
		rec ins_mb "$name" "$r" "$(q "SELECT round(pg_relation_size('bench_ins_pkey') / 1048576.0, 1)")"
		rec ins_tot "$name" "$r" "$(q "SELECT round(pg_total_relation_size('bench_ins') / 1048576.0, 1)")"
	done
	sample_load
	echo "   round $r done"
done
q "DROP TABLE IF EXISTS bench_ins; CHECKPOINT"

# Snowflake rate at 1, 2 and 4 backends, each transaction $batch IDs:
# - "max_lead 0": held to the wall clock (an ID's tick at most one ahead of
#   the clock's), the sustained rate against the layout's physical limit;
# - "no limit": idgen.max_lead 1 h, so nothing holds the generator back: how
#   the shared generator scales with backends.
# Two loops: the streaming loop (generate_series in the select list, about
# 35 ns a row here), where the generator is most of the work, and the
# FROM generate_series loop (a materialised function scan, a few hundred ns a
# row), where each backend has per-row work of its own besides the generator.
# And long statements: each backend one FROM generate_series statement of
# $long_rows rows, all started at once; the rate is their IDs over the time
# from the first one's start until the last one ended, read in the server
# (statement_timestamp() and clock_timestamp() at the end), so the
# connections' start is not counted.  Its rows are built before its first
# call, a pause that a generator held to the clock must not lose.
batch=10000
rate_clients="1 2 4"
nolimit_t=${BENCH_NOLIMIT_T:-$([ -n "${BENCH_QUICK:-}" ] && echo 1 || echo 2)}
loop_stream="SELECT count(idgen.snowflake_nextval()) FROM (SELECT generate_series(1, $batch)) AS g"
loop_fscan="SELECT count(idgen.snowflake_nextval()) FROM generate_series(1, $batch) AS g"
# "1 backend", "2 backends"
backends() { if [ "$1" -gt 1 ]; then echo "$1 backends"; else echo "1 backend"; fi; }
# name|idgen.max_lead as set|as shown|loop|seconds
sustained=("max_lead 0|0|0|$loop_stream|$pgb_t"
	"max_lead 0, FROM generate_series|0|0|$loop_fscan|$pgb_t"
	"no limit|1h|1h|$loop_stream|$nolimit_t"
	"no limit, FROM generate_series|1h|1h|$loop_fscan|$nolimit_t"
	"max_lead 0, $long_rows-row statements|0|0|long|"
	"no limit, $long_rows-row statements|1h|1h|long|")
loop_long="SELECT count(idgen.snowflake_nextval()) FROM generate_series(1, $long_rows) AS g"
# c backends, each one long statement, all at once: "IDs/s seconds"
long_run() {
	local c=$1 i f pids=()
	f=$(mktemp "$dir/logs/long.XXXXXX")
	for i in $(seq 1 "$c"); do
		"${PSQL[@]}" -F ' ' -c "SELECT n, extract(epoch FROM statement_timestamp()), extract(epoch FROM clock_timestamp())
			FROM ($loop_long) AS s(n)" >>"$f" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || return 1; done
	awk -v c="$c" '{ n += $1; if (NR == 1 || $2 < a) a = $2; if ($3 > b) b = $3 }
		END { if (NR == c && b > a) printf "%.0f %.3f\n", n / (b - a), b - a; else exit 1 }' "$f"
	rm -f "$f"
}
# The rate a caller held to the clock can reach: the smaller of the
# layout's limit and what the same loop at the same backends draws without
# a limit.  "max_lead 0[, loop]" is compared with "no limit[, loop]".
nolimit_of() { echo "no limit${1#max_lead 0}"; }
# After no-limit runs the generator may be tens of seconds ahead
drain_all() { drain_lead 1200; }
want rate && echo "== snowflake rate, $rate_clients backends, $rounds rounds"
for r in $(rounds_of rate 1); do
	for e in "${sustained[@]}"; do
		IFS='|' read -r ml_name ml ml_shown loop secs <<<"$e"
		set_guc idgen.max_lead "$ml" "$ml_shown"
		for c in $rate_clients; do
			name="$ml_name, $(backends "$c")"
			[ "$ml" = 0 ] && drain_all
			read -r lead0 waits0 _ <<<"$(sf_state)"
			# IDs per second and the seconds of the run
			if [ "$loop" = long ]; then
				read -r ids secs <<<"$(long_run "$c")" || ids=
			else
				ids=$(pgb "$loop" "$c" "$secs" | awk -v b="$batch" '{ printf "%.0f", $1 * b }') || ids=
			fi
			read -r lead waits1 _ <<<"$(sf_state)"
			rec rate "$name" "$r" "$ids"
			rec lead_ms "$name" "$r" "$lead"
			rec clock_waits "$name" "$r" "$((waits1 - waits0))"
			# Net of the ticks borrowed ahead of the clock during the run:
			# the share of the wall clock's ticks that were used
			rec net "$name" "$r" "$(awk -v i="$ids" -v s="$secs" -v l="$lead" -v l0="$lead0" -v m="$layout_max" \
				'BEGIN { if (i != "") printf "%.4f", (i * s - (l - l0) / 1000 * m) / s / m }')"
		done
	done
	# With max_lead 0 at full speed, how far an ID's timestamp (the start of
	# its tick) is ahead of the wall clock read right after the ID was made:
	# less than one tick is the promise
	set_guc idgen.max_lead 0 0
	drain_all
	rec ahead_us "max_lead 0" "$r" "$(q "SELECT round(max(extract(epoch FROM idgen.id_timestamp(idgen.snowflake_nextval()) - clock_timestamp()) * 1e6))
		FROM (SELECT generate_series(1, 2000000)) AS g")"
	sample_load
	echo "   round $r done"
done
if want rate; then
	set_guc idgen.max_lead 1h 1h
	drain_all
	set_guc idgen.max_lead DEFAULT 5s
fi

# Latency percentiles (microseconds) from pgbench --log.  One client: on a
# small machine more clients than cores measure the scheduler's time slices.
# name|requirement|statement|segment tag|idgen.segment_step_grow_after.
# Step 100 once as by default (the dynamic step soon makes it large), once
# held fixed: the worker must then fetch a segment every 100 calls, Leaf's
# TP999 case.
lats=(
	"SELECT 1|1|SELECT 1||"
	"segment_nextval step 100|seg|SELECT idgen.segment_nextval('bench_s100d')|bench_s100d|"
	"segment_nextval step 100, fixed|seg|SELECT idgen.segment_nextval('bench_s100')|bench_s100|0"
	"segment_nextval step 100000|seg|SELECT idgen.segment_nextval('bench_s100000')|bench_s100000|"
)
# Segments fetched, calls that waited for the worker, and the dynamic step
seg_state() {
	q "SELECT coalesce(sum(fetches), 0), coalesce(sum(waits), 0), coalesce(max(step), 0),
	          coalesce(max(chain_length), 0)
	   FROM idgen.segment_status WHERE biz_tag = '$1'" | tr '|' ' '
}
want latency && echo "== latency from pgbench --log, 1 client x ${pgb_t} s, $rounds rounds"
for r in $(rounds_of latency 1); do
	for e in "${lats[@]}"; do
		IFS='|' read -r name req stmt tag grow <<<"$e"
		avail "$req" || continue
		if [ -n "$grow" ]; then set_guc idgen.segment_step_grow_after "$grow" "$grow"; fi
		prefix=$dir/logs/lat$r
		rm -f "$prefix".*
		# 2 s of the same load first, not timed: a hungry tag's chain of
		# ready segments grows within its first segments (and shrinks again
		# while the other statements run); the calls that waited during it
		# are reported apart, as the cold start
		if [ -n "$tag" ]; then
			read -r _ wc0 _ <<<"$(seg_state "$tag")"
			pgb "$stmt" 1 2 >/dev/null
			read -r _ wc1 _ <<<"$(seg_state "$tag")"
			rec seg_waits_cold "$name" "$r" "$((wc1 - wc0))"
		fi
		if [ -n "$tag" ]; then read -r f0 w0 _ <<<"$(seg_state "$tag")"; fi
		pgb "$stmt" 1 "$pgb_t" --log --log-prefix="$prefix" >/dev/null
		if [ -n "$tag" ]; then
			read -r f1 w1 step chain <<<"$(seg_state "$tag")"
			rec seg_chain "$name" "$r" "$chain"
			rec seg_fetches "$name" "$r" "$((f1 - f0))"
			rec seg_waits "$name" "$r" "$((w1 - w0))"
			rec seg_step "$name" "$r" "$step"
		fi
		if [ -n "$grow" ]; then set_guc idgen.segment_step_grow_after DEFAULT 15min; fi
		read -r p50 p99 p999 <<<"$(cat "$prefix".* | awk '{ print $3 }' | sort -n |
			awk '{ v[NR] = $1 }
				 function pct(p,  i) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] }
				 END { print pct(0.50), pct(0.99), pct(0.999) }')"
		rm -f "$prefix".*
		rec p50 "$name" "$r" "$p50"
		rec p99 "$name" "$r" "$p99"
		rec p999 "$name" "$r" "$p999"
		rec p999x "$name" "$r" "$(awk -v a="$p999" -v b="$p50" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"
	done
	sample_load
	echo "   round $r done"
done

# Scaling: N backends at once, each running SELECT count(f) FROM
# generate_series(1, $scal_rows) over and over for $scal_t s (pgbench -c N
# -j N -T); calls per second = statements * rows / seconds.  For each N the
# generators run one after the other, so that the ratios at the same N come
# from the same minutes.  name|requirement|expression
scal=(
	"count(1), the empty loop|1|1"
	"snowflake_nextval()|1|idgen.snowflake_nextval()"
	"segment_nextval(tag)|seg|idgen.segment_nextval('bench')"
	"segment_nextval(tag), cache 100|segc|idgen.segment_nextval('bench_cache')"
	"pgEdge snowflake.nextval()|pgedge|snowflake.nextval()"
	"nextval() CACHE 1|1|nextval('bench_seq1')"
	"nextval() CACHE 1000|1|nextval('bench_seq1000')"
	"gen_random_uuid()|1|gen_random_uuid()"
	"uuidv7()|uuid7|uuidv7()"
)
scal_loop="count(1), the empty loop"
scal_c1000="nextval() CACHE 1000"
# The statement of an expression
scal_stmt() { echo "SELECT count($1) FROM generate_series(1, $scal_rows) AS g(i)"; }
if want scaling; then
	echo "== scaling: SELECT count(f) FROM generate_series(1, $scal_rows), backends $scal_list, $scal_t s each, $rounds rounds"
	# Not held to the wall clock: the shared generator's own rate
	set_guc idgen.max_lead 1h 1h
	# Warm up: each f once at one backend, not recorded
	for e in "${scal[@]}"; do
		IFS='|' read -r name req expr <<<"$e"
		avail "$req" || continue
		pgb "$(scal_stmt "$expr")" 1 1 >/dev/null || true
	done
fi
for r in $(rounds_of scaling 1); do
	for c in $scal_list; do
		for e in "${scal[@]}"; do
			IFS='|' read -r name req expr <<<"$e"
			avail "$req" || continue
			case $expr in idgen.snowflake*) read -r _ waits0 _ <<<"$(sf_state)" ;; esac
			tps=$(pgb "$(scal_stmt "$expr")" "$c" "$scal_t") || tps=
			rec scal "$name@$c" "$r" "$(awk -v t="$tps" -v n="$scal_rows" 'BEGIN { if (t != "") printf "%.6f", t * n / 1e6 }')"
			case $expr in idgen.snowflake*)
				read -r lead waits1 _ <<<"$(sf_state)"
				rec scal_lead "$name@$c" "$r" "$lead"
				rec scal_waits "$name@$c" "$r" "$((waits1 - waits0))" ;;
			esac
		done
	done
	sample_load
	echo "   round $r done"
done
if want scaling; then
	set_guc idgen.max_lead DEFAULT 5s
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$(($(date +%s) - started))
pgversion=$(q "SHOW server_version")
stop_server
trap - EXIT

#
# Report
#
# Median, min and max of kind/name: "med min max", or "n/a n/a n/a"
stats() {
	awk -F'\t' -v k="$1" -v n="$2" '$1 == k && $2 == n { print $4 }' "$raw" | sort -g |
		awk '{ v[NR] = $1 }
			 END { if (NR == 0) { print "n/a n/a n/a"; exit }
				   m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				   print m, v[1], v[NR] }'
}
# Per-round derived values from two series: kind/name A, kind/name B, awk
# expression over a and b; recorded as kind/name given last
derive() {
	local ka=$1 na=$2 kb=$3 nb=$4 expr=$5 kout=$6 nout=$7 guard=1
	# A ratio is undefined for a round whose denominator is not positive
	# (a net cost lost in the noise)
	if [ "$expr" = "a / b" ]; then guard="b_ > 0"; fi
	awk -F'\t' -v ka="$ka" -v na="$na" -v kb="$kb" -v nb="$nb" -v ko="$kout" -v no="$nout" \
		"\$1 == ka && \$2 == na { a[\$3] = \$4 }
		 \$1 == kb && \$2 == nb { b[\$3] = \$4 }
		 END { for (r in a) if (r in b) { a_ = a[r]; b_ = b[r]
			   if (!($guard)) continue
			   printf \"%s\t%s\t%s\t%.6g\n\", ko, no, r, $(sed 's/\ba\b/a_/g; s/\bb\b/b_/g' <<<"$expr") } }" \
		"$raw" >>"$raw.derived"
}
: >"$raw.derived"
for e in "${single[@]}"; do
	IFS='|' read -r name _ _ <<<"$e"
	[ "$name" = "bare loop" ] && continue
	derive single "$name" single "bare loop" "(a - b) * 1e6 / $rows" ns "$name"
done
cat "$raw.derived" >>"$raw"
: >"$raw.derived"
for e in "${single[@]}"; do
	IFS='|' read -r name _ _ <<<"$e"
	[ "$name" = "bare loop" ] && continue
	derive ns "nextval() CACHE 1" ns "$name" "a / b" x_seq1 "$name"
	derive ns "nextval() CACHE 1000" ns "$name" "a / b" x_seq1000 "$name"
done
for e in "${stmts[@]}"; do
	IFS='|' read -r name _ _ <<<"$e"
	for c in $clients_list; do
		derive tps "$name@$c" tps "SELECT 1@$c" "a / b" x_sel1 "$name@$c"
	done
done
for e in "${inserts[@]}"; do
	IFS='|' read -r name _ _ <<<"$e"
	derive ins_s "$name" ins_s bigserial "a / b" x_ins "$name"
	derive ins_mb "$name" ins_mb bigserial "a / b" x_mb "$name"
	derive ins_tot "$name" ins_tot bigserial "a / b" x_tot "$name"
done
for e in "${sustained[@]}"; do
	IFS='|' read -r ml_name _ <<<"$e"
	for c in $rate_clients; do
		name="$ml_name, $(backends "$c")"
		derive rate "$name" rate "$name" "a / $layout_max" share "$name"
		# Speed with c backends over the speed with one
		derive rate "$name" rate "$ml_name, 1 backend" "a / b" x_one "$name"
		# Held to the clock: the share of what this caller can reach
		case $ml_name in "max_lead 0"*)
			derive rate "$name" rate "$(nolimit_of "$ml_name"), $(backends "$c")" \
				"a / (b < $layout_max ? b : $layout_max)" reach "$name" ;;
		esac
	done
done
for e in "${lats[@]}"; do
	IFS='|' read -r name _ _ <<<"$e"
	derive p999 "$name" p999 "SELECT 1" "a / b" x_p999 "$name"
done
# Scaling: each rate over the empty loop's and nextval() CACHE 1000's at the
# same backends, and over the same f's at one backend, within a round
for e in "${scal[@]}"; do
	IFS='|' read -r name _ _ <<<"$e"
	for c in $scal_list; do
		derive scal "$name@$c" scal "$scal_loop@$c" "a / b" x_loop "$name@$c"
		derive scal "$name@$c" scal "$scal_c1000@$c" "a / b" x_c1000 "$name@$c"
		derive scal "$name@$c" scal "$name@1" "a / b" x_scal1 "$name@$c"
	done
done
cat "$raw.derived" >>"$raw"
rm -f "$raw.derived"

# Number formatting: fmt DECIMALS VALUE (n/a passes through)
fmt() { awk -v d="$1" -v v="$2" 'BEGIN { if (v == "n/a") print v; else printf "%.*f\n", d, v }'; }
med() { stats "$@" | cut -d' ' -f1; }
# "median (min-max)" with decimals
mmm() {
	local m lo hi
	read -r m lo hi <<<"$(stats "$2" "$3")"
	if [ "$m" = n/a ]; then echo n/a; else echo "$(fmt "$1" "$m") ($(fmt "$1" "$lo")–$(fmt "$1" "$hi"))"; fi
}
# "median% (min%-max%)" of a share
pct() {
	local m lo hi
	read -r m lo hi <<<"$(stats "$1" "$2")"
	if [ "$m" = n/a ]; then echo n/a; else awk -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN { printf "%.0f%% (%.0f–%.0f%%)\n", 100 * m, 100 * lo, 100 * hi }'; fi
}
ratio() { local m; m=$(med "$1" "$2"); [ "$m" = n/a ] && echo n/a || echo "$(fmt 2 "$m")x"; }

# Tables as TSV, header first: rendered to text and to markdown
t_single=$work/single.tsv t_tps=$work/tps.tsv t_ins=$work/ins.tsv
t_rate=$work/rate.tsv t_lat=$work/lat.tsv t_scal=$work/scaling.tsv
{
	printf 'function\tms per %s rows\tns per ID (net of loop)\tspeed vs nextval CACHE 1\tspeed vs nextval CACHE 1000\n' "$rows"
	for e in "${single[@]}"; do
		IFS='|' read -r name _ _ <<<"$e"
		if [ "$name" = "bare loop" ]; then
			printf '%s\t%s\t—\t—\t—\n' "$name" "$(mmm 0 single "$name")"
		else
			printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$(mmm 0 single "$name")" "$(mmm 1 ns "$name")" \
				"$(ratio x_seq1 "$name")" "$(ratio x_seq1000 "$name")"
		fi
	done
} >"$t_single"
{
	printf 'statement\tclients\tTPS\tvs SELECT 1\n'
	for c in $clients_list; do
		for e in "${stmts[@]}"; do
			IFS='|' read -r name _ _ <<<"$e"
			printf '%s\t%s\t%s\t%s\n' "$name" "$c" "$(mmm 0 tps "$name@$c")" "$(ratio x_sel1 "$name@$c")"
		done
	done
} >"$t_tps"
{
	printf 'primary key\tinsert s\tvs bigserial\tPK index MB\tvs bigserial\ttable + indexes MB\tvs bigserial\n'
	for e in "${inserts[@]}"; do
		IFS='|' read -r name _ _ <<<"$e"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(mmm 2 ins_s "$name")" "$(ratio x_ins "$name")" \
			"$(fmt 1 "$(med ins_mb "$name")")" "$(ratio x_mb "$name")" \
			"$(fmt 1 "$(med ins_tot "$name")")" "$(ratio x_tot "$name")"
	done
} >"$t_ins"
{
	printf 'snowflake_nextval()\tIDs/s\tshare of layout max %s/s\tshare of min(limit, no-limit rate)\tvs 1 backend\tlead at end (ms)\tshare net of the lead\tclock waits\n' "$layout_max"
	for e in "${sustained[@]}"; do
		IFS='|' read -r ml_name _ <<<"$e"
		for c in $rate_clients; do
			name="$ml_name, $(backends "$c")"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(mmm 0 rate "$name")" "$(pct share "$name")" \
				"$(pct reach "$name" | sed 's/^n\/a$/—/')" \
				"$(ratio x_one "$name")" "$(mmm 0 lead_ms "$name")" "$(pct net "$name")" "$(mmm 0 clock_waits "$name")"
		done
	done
} >"$t_rate"
{
	printf 'statement (1 client)\tp50 µs\tp99 µs\tp99.9 µs\tp99.9 / p50\tp99.9 vs SELECT 1\tsegments fetched\tcalls that waited\tstep at end\tchain at end\twaited in the 2 s before\n'
	for e in "${lats[@]}"; do
		IFS='|' read -r name _ _ <<<"$e"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(mmm 0 p50 "$name")" "$(mmm 0 p99 "$name")" \
			"$(mmm 0 p999 "$name")" "$(mmm 2 p999x "$name")" "$(ratio x_p999 "$name")" \
			"$(mmm 0 seg_fetches "$name")" "$(mmm 0 seg_waits "$name")" "$(mmm 0 seg_step "$name")" \
			"$(mmm 0 seg_chain "$name")" "$(mmm 0 seg_waits_cold "$name")"
	done
} >"$t_lat"
{
	printf 'f\tbackends\tvs count(1)\tvs nextval() CACHE 1000\tvs 1 backend\tmillion calls/s\n'
	for c in $scal_list; do
		for e in "${scal[@]}"; do
			IFS='|' read -r name _ _ <<<"$e"
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$(ratio x_loop "$name@$c")" \
				"$(ratio x_c1000 "$name@$c")" "$(ratio x_scal1 "$name@$c")" "$(mmm 2 scal "$name@$c")"
		done
	done
} >"$t_scal"

# Goals: "label|kind|name|threshold"; a negative threshold is a ceiling.
# Shares print as percentages, the rest as ratios.
goals=(
	"max_lead 0, streaming loop, 1 backend >= 97% of min(limit, its no-limit rate)|reach|max_lead 0, 1 backend|0.97"
	"max_lead 0, streaming loop, 2 backends >= 97% of min(limit, its no-limit rate)|reach|max_lead 0, 2 backends|0.97"
	"max_lead 0, FROM generate_series, 1 backend >= 97% of min(limit, its no-limit rate)|reach|max_lead 0, FROM generate_series, 1 backend|0.97"
	"max_lead 0, FROM generate_series, 2 backends >= 97% of min(limit, its no-limit rate)|reach|max_lead 0, FROM generate_series, 2 backends|0.97"
	"max_lead 0, $long_rows-row statements, 1 backend >= 95% of min(limit, its no-limit rate)|reach|max_lead 0, $long_rows-row statements, 1 backend|0.95"
	"max_lead 0, $long_rows-row statements, 2 backends >= 95% of min(limit, its no-limit rate)|reach|max_lead 0, $long_rows-row statements, 2 backends|0.95"
	"no limit, FROM generate_series: 2 backends >= 1 backend|x_one|no limit, FROM generate_series, 2 backends|1"
	"no limit, FROM generate_series: 4 backends >= 1 backend|x_one|no limit, FROM generate_series, 4 backends|1"
	"max_lead 0: an ID's time never more than one tick (1000 µs) ahead of the clock|ahead_us|max_lead 0|-1000"
	"segment step held at 100: no call waits|seg_waits|segment_nextval step 100, fixed|-0.5"
	"segment step held at 100: p99.9 <= 1.5x SELECT 1's|x_p999|segment_nextval step 100, fixed|-1.5"
	"snowflake single backend >= 1.5x nextval CACHE 1|x_seq1|snowflake_nextval()|1.5"
	"snowflake pgbench -c 4 >= 0.9x SELECT 1|x_sel1|snowflake_nextval()@4|0.9"
	"segment single backend >= 2x nextval CACHE 1|x_seq1|segment_nextval(tag)|2"
	"segment single backend >= 1.2x nextval CACHE 1000|x_seq1000|segment_nextval(tag)|1.2"
	"segment pgbench -c 4 >= 0.9x SELECT 1|x_sel1|segment_nextval(tag)@4|0.9"
	"segment step 100 p99.9 <= 2x p50|p999x|segment_nextval step 100|-2"
	"same, step 100 held fixed|p999x|segment_nextval step 100, fixed|-2"
)
t_goals=$work/goals.tsv
{
	printf 'goal\tmeasured\tresult\n'
	for g in "${goals[@]}"; do
		IFS='|' read -r label kind name th <<<"$g"
		m=$(med "$kind" "$name")
		if [ "$m" = n/a ]; then shown=n/a
		elif [ "$kind" = share ] || [ "$kind" = reach ]; then shown=$(awk -v m="$m" 'BEGIN { printf "%.1f%%", 100 * m }')
		elif [ "$kind" = seg_waits ]; then shown="$(mmm 0 seg_waits "$name") calls"
		elif [ "$kind" = ahead_us ]; then shown="$(mmm 0 ahead_us "$name") µs"
		else shown="$(fmt 2 "$m")x"; fi
		printf '%s\t%s\t%s\n' "$label" "$shown" \
			"$(awk -v m="$m" -v t="$th" 'BEGIN { if (m == "n/a") print "n/a";
				else if (t < 0) print (m <= -t ? "met" : "NOT met");
				else print (m >= t ? "met" : "NOT met") }')"
	done
} >"$t_goals"

# Text rendering
# (a machine without util-linux's column gets the tab-separated table)
totext() { if command -v column >/dev/null; then column -t -s $'\t' "$1"; else cat "$1"; fi; }
# Markdown rendering
tomd() {
	awk -F'\t' '{ printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; print "" }
				NR == 1 { printf "|"; for (i = 1; i <= NF; i++) printf "---|"; print "" }' "$1"
}

model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1048576 }' /proc/meminfo)
# Sockets, cores, threads per core and NUMA nodes, as lscpu counts them
topology=$(lscpu | awk -F': *' '
	/^Socket\(s\):/ { s = $2 } /^Core\(s\) per socket:/ { c = $2 }
	/^Thread\(s\) per core:/ { t = $2 } /^NUMA node\(s\):/ { n = $2 }
	END { printf "%s socket(s) x %s core(s) x %s thread(s) per core, %s NUMA node(s)", s, c, t, n }')
machine="$(nproc) CPUs ($model; $topology), ${mem} GiB RAM, $(. /etc/os-release && echo "$PRETTY_NAME"), PostgreSQL $pgversion"
when=$(date -u '+%Y-%m-%d %H:%M UTC')
settings="$rounds runs per figure ($single_rounds single-backend); $rows rows per single-backend and insert run; pgbench -M prepared -T $pgb_t at 4 clients (-T $scale_t at 1, 2, 8 clients); scaling: -T $scal_t at $(echo $scal_list | sed 's/ /, /g') backends, $scal_rows calls per statement"
# The scaling part's notes: the snowflake clock, the segment cache tag
scal_waits=$(awk -F'\t' '$1 == "scal_waits" { s += $4; n++ } END { print n ? s : "n/a" }' "$raw")
scal_lead=$(awk -F'\t' '$1 == "scal_lead" { if (!n++ || $4 > m) m = $4 } END { print n ? m : "n/a" }' "$raw")
scal_notes="idgen.max_lead was 1h during this part, so snowflake_nextval() was not held to the wall clock (the layout's 4,096,000 IDs/s): calls that waited for the clock in its runs: $scal_waits; its largest lead over the wall clock at the end of a run: $scal_lead ms. pgEdge's snowflake.nextval() has no such setting."
if [ -n "$segc" ]; then
	scal_notes+=" segment_nextval(tag), cache 100: the tag 'bench_cache' (step 1000) with cache => 100."
else
	scal_notes+=" segment_nextval(tag), cache 100: n/a, $segc_why."
fi

# Chart data: single backend ns/ID; TPS by clients; latency
{
	for e in "${single[@]}"; do
		IFS='|' read -r name _ _ <<<"$e"
		[ "$name" = "bare loop" ] && continue
		read -r m lo hi <<<"$(stats ns "$name")"
		[ "$m" = n/a ] && continue
		# Snowflake-based figures are bursts ahead of the wall clock
		case $name in snowflake* | gene* | pgEdge*) name="$name, burst" ;; esac
		printf '"%s"\t%s\t%s\t%s\n' "$name" "$m" "$lo" "$hi"
	done
} >"$work/chart_single.dat"
# Rate by backends: each loop held to the clock (max_lead 0) and without a
# limit; the layout's limit is drawn as a line
{
	printf 'backends\t"streaming, max_lead 0"\t"streaming, no limit"\t"FROM generate_series, max_lead 0"\t"FROM generate_series, no limit"\n'
	for c in $rate_clients; do
		printf '%s' "$c"
		for n in "max_lead 0" "no limit" "max_lead 0, FROM generate_series" "no limit, FROM generate_series"; do
			m=$(med rate "$n, $(backends "$c")")
			printf '\t%s' "$([ "$m" = n/a ] && echo NaN || echo "$m")"
		done
		echo
	done
} >"$work/chart_rate.dat"
# A chart's data: a header row (XNAME, then the names of the entries of the
# array named ENTRIES that were measured, so that the chart has no legend
# entry without a line), then a row per x of XS with each entry's median of
# KIND at "name@x" (NaN where there is none).  Sets cols to the number of
# columns.
chart_matrix() {
	local xname=$1 kind=$2 xs=$3 e name req m x
	local -n entries=$4
	cols=1
	printf '%s' "$xname"
	for e in "${entries[@]}"; do
		IFS='|' read -r name req _ <<<"$e"
		avail "$req" || continue
		printf '\t"%s"' "$name"
		cols=$((cols + 1))
	done
	echo
	for x in $xs; do
		printf '%s' "$x"
		for e in "${entries[@]}"; do
			IFS='|' read -r name req _ <<<"$e"
			avail "$req" || continue
			m=$(med "$kind" "$name@$x")
			printf '\t%s' "$([ "$m" = n/a ] && echo NaN || echo "$m")"
		done
		echo
	done
}
# TPS by clients
chart_matrix clients tps "$clients_list" stmts >"$work/chart_tps.dat"
tps_cols=$cols
{
	for e in "${inserts[@]}"; do
		IFS='|' read -r name _ _ <<<"$e"
		m=$(med ins_s "$name")
		[ "$m" = n/a ] && continue
		printf '"%s"\t%s\t%s\n' "$name" "$m" "$(med ins_mb "$name")"
	done
} >"$work/chart_ins.dat"
{
	for e in "${lats[@]}"; do
		IFS='|' read -r name _ _ <<<"$e"
		m=$(med p50 "$name")
		[ "$m" = n/a ] && continue
		printf '"%s"\t%s\t%s\t%s\n' "$name" "$m" "$(med p99 "$name")" "$(med p999 "$name")"
	done
} >"$work/chart_lat.dat"
# Scaling chart data: million calls/s and the ratio to the empty loop by
# backends
for k in scal x_loop; do
	chart_matrix backends "$k" "$scal_list" scal >"$work/chart_$k.dat"
done
scal_cols=$cols
# The charts drawn, for the last line; "no chart" and why otherwise
wrote="$out/results.md"
no_chart=
if ! command -v gnuplot >/dev/null; then
	no_chart="gnuplot is not installed (Debian's package: gnuplot-nox), so no chart was drawn; the tables are complete"
	echo "bench: $no_chart" >&2
else
	if want single || want pgbench || want insert || want rate || want latency; then
		if gnuplot -e "datadir='$work'; rows='$rows'; tps_cols=$tps_cols; layout_max=$layout_max; outfile='$out/chart.png'; subtitle='$(nproc) CPUs, PostgreSQL ${pgversion%% *}, $when; medians of $rounds runs, $single_rounds single backend'" \
			test/bench/chart.gp 2>"$work/gnuplot.log"; then
			wrote+=" and $out/chart.png"
		else
			cat "$work/gnuplot.log" >&2
			echo "bench: the chart could not be drawn (a part without data?)" >&2
		fi
	fi
	if want scaling; then
		if gnuplot -e "datadir='$work'; ncols=$scal_cols; maxb=$scal_max; rows='$scal_rows'; outfile='$out/scaling.png'; subtitle='$(nproc) CPUs ($topology), PostgreSQL ${pgversion%% *}, $when, commit $commit; medians of $rounds runs of $scal_t s'" \
			test/bench/scaling.gp 2>"$work/gnuplot_scaling.log"; then
			wrote+=" and $out/scaling.png"
		else
			cat "$work/gnuplot_scaling.log" >&2
			no_chart="gnuplot failed on the scaling chart (log above); the table is complete"
			echo "bench: $no_chart" >&2
		fi
	fi
fi

# Output: text to stdout, markdown to results.md
# Where the alternatives that are not PostgreSQL's core come from
alternatives="pgEdge's snowflake: "
if [ -n "$pgedge" ]; then
	alternatives+="built from source ($pgedge_rev, extension version $pgedge_ver) into the same server"
else
	alternatives+="n/a, $pgedge_why"
fi
alternatives+="; uuidv7(): "
if [ -n "$uuid7" ]; then alternatives+="PostgreSQL's own"; else alternatives+="n/a before PostgreSQL 18"; fi
report_text() {
	echo "idgen benchmark, $when, commit $commit"
	echo "$alternatives"
	echo "machine: $machine"
	echo "load average before: $load_before; highest 1-min during: $load_max; after: $load_after; took ${elapsed} s"
	echo "$settings"
	echo "cells: median (min–max); ratios: median of per-round ratios"
	echo
	echo "-- single backend: SELECT count(f()) FROM generate_series(1, $rows); bare loop: count(1)"
	totext "$t_single"
	echo
	echo "-- pgbench -M prepared: SELECT f()"
	totext "$t_tps"
	echo
	echo "-- INSERT $rows rows into a table whose primary key defaults to the generator"
	totext "$t_ins"
	echo
	echo "-- snowflake rate: max_lead 0 over ${pgb_t} s, no limit over ${nolimit_t} s"
	totext "$t_rate"
	echo
	echo "-- latency from pgbench --log"
	totext "$t_lat"
	echo
	echo "max_lead 0: largest lead of an ID's timestamp over the wall clock read right after it, over 2,000,000 IDs: $(mmm 0 ahead_us "max_lead 0") µs (one tick is 1000 µs)"
	echo
	echo "-- goals"
	totext "$t_goals"
	echo "(for reference, SELECT 1's own p99.9 / p50 in the same runs: $(mmm 2 p999x "SELECT 1"))"
	echo
	echo "-- scaling: pgbench -M prepared -c N -j N -T $scal_t of SELECT count(f) FROM generate_series(1, $scal_rows); $(nproc) CPUs ($topology)"
	echo "calls/s = statements x $scal_rows / s; ratios: median of per-round ratios at the same backends"
	totext "$t_scal"
	echo "$scal_notes"
	[ -z "$no_chart" ] || echo "chart: $no_chart"
}
report_md() {
	echo "# idgen benchmark results"
	echo
	echo "Written by \`make bench\` (test/bench/run.sh); the chart is [chart.png](chart.png)."
	echo
	echo "- Date: $when, idgen commit $commit"
	echo "- Machine: $machine"
	echo "- Load average before the run: $load_before; highest 1-minute load at the end of a round: $load_max (this counts the benchmark's own clients, up to 8 pgbench clients and their backends); after: $load_after. The machine is shared, so ratios come from the same rounds. The run took ${elapsed} s"
	echo "- Settings: $settings; shared_buffers 256MB, work_mem 256MB (generate_series stays in memory), fsync on, synchronous_commit on, autovacuum off"
	echo "- Cells are median (min–max) of the runs; ratios are the median of per-round ratios, so drift between rounds cancels"
	echo "- $alternatives"
	echo
	echo "## Single backend: \`SELECT count(f()) FROM generate_series(1, $rows)\`"
	echo
	echo "ns per ID = (time of f - time of the bare loop, \`count(1)\`) / $rows, timed inside the server (clock_timestamp around the statement). Speed ratios: the sequence's ns per ID over f's (above 1 = f is faster). Snowflake-based rows are bursts: faster than the layout's 4,096 IDs per ms, they run ahead of the wall clock within idgen.max_lead (the run waits for the clock to catch up before each); gene_id(key, 3) takes a block of 8 sequence values per ID. See the sustained rate below for the limit."
	echo
	tomd "$t_single"
	echo
	echo "## pgbench -M prepared, \`SELECT f()\`"
	echo
	tomd "$t_tps"
	echo
	echo "## INSERT $rows rows into a table whose primary key defaults to the generator"
	echo
	echo "Timed by psql including commit; sizes after the insert (table + indexes: pg_total_relation_size). The last two rows give each row an ID for outsiders too: a public ID (\`id_encrypt(id, key)\`, a stored generated column, found through the primary key's own index by \`WHERE id = id_decrypt(\$1, key)\`), or a \`uuid\` column with a unique index of its own."
	echo
	tomd "$t_ins"
	echo
	echo "## Snowflake rate against the layout's limit"
	echo
	echo "1, 2 and 4 pgbench clients (each a backend), each transaction $batch IDs. Layout \`idgen\`: 4,096 IDs per 1 ms tick, so at most 4,096,000 IDs/s on the wall clock."
	echo
	echo "- **max_lead 0** (${pgb_t} s a run): the generator is held to the wall clock (an ID's tick is at most one ahead of the clock's: the next tick may begin once the current one is used up). This is the **sustained rate** against the layout's physical limit. Loop: \`$loop_stream\` (generate_series in the select list streams its rows, about 35 ns a row here, so the generator is most of the work)."
	echo "- **no limit** (${nolimit_t} s a run): idgen.max_lead 1 h, so the generator may borrow future ticks: a **burst**, showing how the one shared generator scales with backends. Same loop; here the generator itself is the work, and every ID is one atomic add on one shared cache line, which two CPUs pass back and forth."
	echo "- **FROM generate_series** rows: the loop \`$loop_fscan\` (a materialised function scan, a few hundred ns a row here): each backend has per-row work of its own besides the generator, as an application's statements do. A backend of this loop is only a little faster than the layout's limit, which is where a generator held to the clock loses most if it waits badly."
	echo "- **$long_rows-row statements**: each backend runs one \`$loop_long\`, all started at once; the rate is their IDs over the time from the first one's start until the last one ended, as the server's clock read them (\`statement_timestamp()\`, \`clock_timestamp()\` at the end). Each builds its $long_rows rows before its first call (a pause that a generator held to the clock must not lose), then draws for seconds, long enough for the scheduler to take a backend off its CPU in between."
	echo
	echo "Share of min(limit, no-limit rate): a max_lead 0 row's rate over the smaller of the layout's limit and the rate of the same loop at the same backends without a limit (in the same round): how much of what this caller could draw the clock leaves it."
	echo
	echo "vs 1 backend: the rate over the rate of one backend in the same mode. Lead: how far the generator was ahead of the wall clock at the end; share net of the lead: the share of the wall clock's ticks used during the run (IDs minus the ticks borrowed during it); clock waits: calls that waited for the wall clock."
	echo
	echo "With max_lead 0, the largest lead of an ID's timestamp (its tick's start) over the wall clock read right after the ID, over 2,000,000 IDs at full speed: $(mmm 0 ahead_us "max_lead 0") µs (one tick is 1,000 µs)."
	echo
	tomd "$t_rate"
	echo
	echo "## Latency from \`pgbench --log\`"
	echo
	echo "\`pgbench -M prepared -c 1 -T ${pgb_t} --log\`, percentiles over every transaction of a run. The segment tags are created with steps 100 and 100000 (idgen.segment_create). By default the step grows (doubles while a segment lasts under 15 minutes); the "fixed" row holds it at 100 (idgen.segment_step_grow_after = 0), so the worker must load a new segment every 100 calls: Leaf's TP999 case. SELECT 1 shows the machine's own tail. p99.9 vs SELECT 1: the statement's p99.9 over SELECT 1's in the same round. From idgen.segment_status: segments the worker fetched during a run, calls that had to wait for it, the tag's dynamic step and its chain of ready segments (chain_length) at the end. Each segment run follows 2 s of the same load that is not timed (a hungry tag's chain grows within its first segments, and shrinks again while the other statements run): the last column counts the calls that waited in those 2 s, the cold start."
	echo
	tomd "$t_lat"
	echo
	echo "## Goals"
	echo
	tomd "$t_goals"
	echo
	echo "For reference, SELECT 1's own p99.9 / p50 in the same runs: $(mmm 2 p999x "SELECT 1")."
	echo
	echo "## Scaling with backends: \`SELECT count(f) FROM generate_series(1, $scal_rows)\`"
	echo
	echo "N backends at once (\`pgbench -M prepared -c N -j N -T $scal_t\`, N = $(echo $scal_list | sed 's/ /, /g'): powers of two up to the machine's $(nproc) CPUs, $topology, and that number itself), each running the statement over and over; calls per second = statements × $scal_rows / seconds, summed over the backends, in millions. The generators run one after the other at each N, in every round. vs count(1): the rate over the empty loop's (\`count(1)\`) at the same N, the share of the loop's speed that is left with f in it; vs nextval() CACHE 1000: over that sequence's at the same N (above 1: f is faster); vs 1 backend: over the same f at one backend (N if it scaled perfectly). Ratios are the median of per-round ratios. pgbench runs on the same machine, but each of its clients waits for its statement almost all the time."
	echo
	echo "$scal_notes"
	echo
	if [ -n "$no_chart" ]; then
		echo "Chart: $no_chart."
	else
		echo "Chart: [scaling.png](scaling.png)."
	fi
	echo
	tomd "$t_scal"
}
echo
report_text | tee "$work/results.txt"
report_md >"$out/results.md"
echo
echo "bench: wrote $wrote"
