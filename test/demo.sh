#!/usr/bin/env bash
# Build, install, and show idgen on a throwaway cluster under ./tmp_demo:
# snowflake IDs (decoded), segment IDs, gene IDs, decode/make and text forms.
#   bash test/demo.sh --installed   use the idgen already installed (the
#                                   Debian package, say): no build, no install
set -euo pipefail
cd "$(dirname "$0")/.."
installed=0
case ${1:-} in
--installed) installed=1 ;;
"") ;;
*) echo "usage: $0 [--installed]" >&2; exit 2 ;;
esac
if [ $installed = 1 ]; then
	. test/env.sh
	if [ ! -f "$("$PG_CONFIG" --sharedir)/extension/idgen.control" ]; then
		echo "demo: idgen is not installed for PostgreSQL $PG_MAJOR" >&2
		exit 1
	fi
else
	bash test/setup.sh --build
	. test/env.sh
	build_and_install
fi

# The cluster lives under the checkout, unless the server user cannot reach
# it there (a checkout under /root, say): then under /tmp
demo=$(pwd)/tmp_demo
rm -rf "$demo"
mkdir -p "$demo"
[ "$(id -u)" -eq 0 ] && chown postgres: "$demo"
if ! as_pg_user test -w "$demo"; then
	rm -rf "$demo"
	demo=$(mktemp -d /tmp/idgen-demo.XXXXXX)
	chown postgres: "$demo"
	echo "demo: the postgres user cannot reach $(pwd); using $demo"
fi
port=${DEMO_PORT:-54329}

as_pg_user initdb -D "$demo/data" -A trust >/dev/null
cat >>"$demo/data/postgresql.conf" <<EOC
shared_preload_libraries = 'idgen'
idgen.node_id = 42
port = $port
listen_addresses = ''
unix_socket_directories = '$demo'
EOC
as_pg_user pg_ctl -D "$demo/data" -l "$demo/server.log" -w start >/dev/null
trap 'as_pg_user pg_ctl -D "$demo/data" -m fast -w stop >/dev/null' EXIT

as_pg_user psql -X -h "$demo" -p "$port" -d postgres -v ON_ERROR_STOP=1 -e <<'EOSQL'
CREATE EXTENSION idgen;

\echo '== Snowflake IDs: a column default, decoded back to time, node and sequence'
CREATE TABLE orders (
    id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
    item text NOT NULL
);
INSERT INTO orders (item) VALUES ('apple'), ('pear'), ('plum');
SELECT o.id, o.item, d.ts, d.node_id, d.sequence
FROM orders o, LATERAL idgen.id_decode(o.id) d ORDER BY o.id;
SELECT node_id, layout, issued, clock_back_events, worker_running
FROM idgen.snowflake_status();

\echo '== Segment IDs: dense numbers per tag, from segments the worker allocates'
SELECT idgen.segment_create('invoice', start => 1000, step => 100);
CREATE TABLE invoices (
    id bigint PRIMARY KEY DEFAULT idgen.segment_nextval('invoice'),
    item text NOT NULL
);
INSERT INTO invoices (item) VALUES ('first'), ('second'), ('third');
SELECT id, item FROM invoices ORDER BY id;
SELECT biz_tag, state, cur_value, cur_max, fetches FROM idgen.segment_status;

\echo '== Gene IDs: the low 3 bits of each ID are the gene of the name (shard = id % 8)'
SELECT name, idgen.gene_of(name, 3) AS gene, id, id % 8 AS shard
FROM (SELECT name, idgen.gene_id(name, 3) AS id
      FROM unnest(ARRAY['alice', 'bob', 'carol', 'José']) AS name) AS s;
SELECT * FROM idgen.gene_decode(idgen.gene_id(12394846, 'testroy', 3), 3);

\echo '== Decode and make: any layout, here a documented Discord ID'
SELECT * FROM idgen.id_decode(175928847299117063, 'discord');
SELECT idgen.id_make('2016-04-30 11:18:25.796+00', 32, 7, 'discord');

\echo '== Text forms: base62 and friendly, with exact inverses'
SELECT id, idgen.id_to_base62(id) AS base62, idgen.id_to_friendly(id) AS friendly,
       idgen.id_from_base62(idgen.id_to_base62(id)) = id AS round_trip
FROM orders ORDER BY id;
EOSQL
echo "demo: done; the cluster in $demo is stopped and can be removed."
