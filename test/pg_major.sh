# Sourced by test/setup.sh and test/env.sh: which PostgreSQL major version
# to build and test against, as PG_MAJOR and PG_CONFIG.
#   PG_CONFIG set: its version (PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config)
#   else PG_MAJOR set: /usr/lib/postgresql/$PG_MAJOR/bin/pg_config
#   else the version of this Debian release: bookworm 15, trixie 17, forky 18
if [ -z "${PG_MAJOR:-}" ]; then
	if [ -n "${PG_CONFIG:-}" ]; then
		case $PG_CONFIG in
		/usr/lib/postgresql/*/bin/pg_config)
			PG_MAJOR=${PG_CONFIG#/usr/lib/postgresql/}
			PG_MAJOR=${PG_MAJOR%%/*} ;;
		*)
			PG_MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/') ;;
		esac
	else
		case $(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") in
		trixie) PG_MAJOR=17 ;;
		forky) PG_MAJOR=18 ;;
		*) PG_MAJOR=15 ;;
		esac
	fi
fi
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/$PG_MAJOR/bin/pg_config}

# The one PostgreSQL version on which the tests of neighbouring tools run
# (failover managers, the drivers and ORMs of other languages): their
# packages are installed by test/setup.sh only for this version, and their
# TAP tests skip on the others (IdgenTest::neighbours_version).  CI runs
# every version, so this keeps their cost to one lane.
IDGEN_NEIGHBOURS_MAJOR=${IDGEN_NEIGHBOURS_MAJOR:-15}

# The second version on which docs/clients.md's Go, Ruby, PHP and Rust
# examples (t/098) run, for the clients whose next Debian release ships a
# version the page's code feels (Active Record 7.2 in trixie against
# bookworm's 6.1): only those clients' packages are installed there
# (test/setup.sh) and only their examples run (t/098), to keep CI's time.
IDGEN_CLIENTS_SECOND_MAJOR=${IDGEN_CLIENTS_SECOND_MAJOR:-17}
