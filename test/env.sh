# Sourced by the scripts in test/: PostgreSQL's paths, and the user that runs
# servers (initdb refuses root, so root runs them as "postgres").
. "$(dirname "${BASH_SOURCE[0]}")/pg_major.sh"
PG_BINDIR=$("$PG_CONFIG" --bindir)
PGXS_DIR=$(cd "$(dirname "$("$PG_CONFIG" --pgxs)")/../.." && pwd)
export PATH="$PG_BINDIR:$PATH"
export IDGEN_NEIGHBOURS_MAJOR IDGEN_CLIENTS_SECOND_MAJOR

# Run a command as the server user: "postgres" when we are root, else us
as_pg_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- env PATH="$PATH" "$@"
	else
		"$@"
	fi
}

# Build and install the extension (install needs root or a writable libdir);
# with a folder as $1, install under it instead (DESTDIR)
build_and_install() {
	make -s PG_CONFIG="$PG_CONFIG"
	make -s PG_CONFIG="$PG_CONFIG" install ${1:+DESTDIR="$1"}
}

# Build pgEdge's snowflake extension from a source checkout ($1, never part
# of this repository) in a scratch copy and install it into this
# PostgreSQL (needs root or a writable libdir), or under the folder $2
# (DESTDIR).  Prints why on failure.
install_pgedge() {
	local src=$1 destdir=${2:-} build rc=0
	if [ ! -f "$src/snowflake.c" ]; then
		echo "$src has no snowflake.c"
		return 1
	fi
	build=$(mktemp -d /tmp/idgen-pgedge.XXXXXX)
	cp -a "$src/." "$build/"
	if ! { make -s -C "$build" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" &&
		make -s -C "$build" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" install ${destdir:+DESTDIR="$destdir"}; } >"$build.log" 2>&1; then
		cat "$build.log" >&2
		echo "pgEdge's snowflake did not build from $src (log above)"
		rc=1
	fi
	rm -rf "$build" "$build.log"
	return $rc
}

# The code of this checkout: its commit, and "+uncommitted changes" when the
# extension's files differ from it ("unknown" outside a git checkout)
code_commit() {
	local c
	c=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	[ -z "$(git status --porcelain -- src idgen--*.sql idgen.control Makefile 2>/dev/null)" ] ||
		c="$c+uncommitted changes"
	echo "$c"
}
