#!/usr/bin/env bash
# Build, install, and show idgen on a throwaway cluster under ./tmp_demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh
. test/env.sh
build_and_install

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
CREATE TABLE orders (
    id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
    item text NOT NULL
);
INSERT INTO orders (item) VALUES ('apple'), ('pear'), ('plum');
SELECT o.id, o.item, d.ts, d.node_id, d.sequence
FROM orders o, LATERAL idgen.id_decode(o.id) d ORDER BY o.id;
SELECT node_id, layout, issued, clock_back_events, worker_running
FROM idgen.snowflake_status();
EOSQL
echo "demo: done; the cluster in $demo is stopped and can be removed."
