# Sourced by the scripts in test/: PostgreSQL's paths, and the user that runs
# servers (initdb refuses root, so root runs them as "postgres").
. "$(dirname "${BASH_SOURCE[0]}")/pg_major.sh"
PG_BINDIR=$("$PG_CONFIG" --bindir)
PGXS_DIR=$(cd "$(dirname "$("$PG_CONFIG" --pgxs)")/../.." && pwd)
export PATH="$PG_BINDIR:$PATH"

# Run a command as the server user: "postgres" when we are root, else us
as_pg_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- env PATH="$PATH" "$@"
	else
		"$@"
	fi
}

# Build and install the extension (install needs root or a writable libdir)
build_and_install() {
	make -s PG_CONFIG="$PG_CONFIG"
	make -s PG_CONFIG="$PG_CONFIG" install
}
