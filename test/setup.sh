#!/usr/bin/env bash
# Install what building and testing idgen needs, from Debian's packages.
# Idempotent: installs only what is missing.  Needs root (or does nothing).
#   bash test/setup.sh           everything the tests use
#   bash test/setup.sh --build   only what building idgen and the demo need
#                                (PostgreSQL, its server headers, make, gcc,
#                                libssl-dev)
set -euo pipefail
build_only=0
case ${1:-} in
--build) build_only=1 ;;
"") ;;
*) echo "usage: $0 [--build]" >&2; exit 2 ;;
esac

# PostgreSQL's major version: PG_CONFIG's, PG_MAJOR, or this Debian release's
. "$(dirname "$0")/pg_major.sh"

# The fuzzers (test/fuzz) need libFuzzer, in the libclang-rt-N-dev of the
# release's default clang-N (trixie and later name it libclang-rt-dev)
case $PG_MAJOR in
15) clang_rt=libclang-rt-14-dev ;;
*) clang_rt=libclang-rt-dev ;;
esac

# libssl-dev: the FF1 cipher (src/ff1.c) builds on libcrypto;
# python3-cryptography: test/ff1_crosscheck.py's independent FF1
pkgs=(postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR make gcc libssl-dev libipc-run-perl
	clang $clang_rt default-jdk-headless gnuplot-nox rsync pgbouncer python3-cryptography)

# Tools that users run idgen with, installed where this release has them:
# pg_partman (t/065), pglogical (t/077), the client libraries of
# docs/clients.md (t/097).  On a release without one (no candidate in
# apt-cache policy) the tests that use it skip with a line.  On a release
# that has it, failing to install it is loud: setup.sh says so, no stamp is
# written (the next run tries again), and test/run.sh counts the package,
# and every skip that names it, as a failure.
optional=(postgresql-$PG_MAJOR-partman postgresql-$PG_MAJOR-pglogical
	python3-psycopg python3-psycopg2 python3-sqlalchemy python3-django libpostgresql-jdbc-java
	libhibernate3-java libjavassist-java nodejs node-pg)

# Neighbouring tools, tested on one version only (IDGEN_NEIGHBOURS_MAJOR,
# test/pg_major.sh): on the others they are neither installed nor recorded.
# The Go, Ruby, PHP and Rust clients of docs/clients.md (t/098); the
# failover managers of docs/high-availability.md (t/110, t/111); the
# Prometheus exporters and promtool of docs/monitoring.md (t/092, and
# test/run.sh's promtool checks of monitoring/).
neighbours=(golang-go golang-github-lib-pq-dev golang-github-jackc-pgx-v4-dev
	ruby-pg ruby-activerecord php-cli php-pgsql cargo librust-tokio-postgres-dev
	patroni etcd-server etcd-client postgresql-$PG_MAJOR-auto-failover
	prometheus prometheus-postgres-exporter prometheus-sql-exporter)
# buildah for the extension image of CloudNativePG (make image, t/121), on
# the versions with extension_control_path; buildah 1.43 needs netavark
# even for an image FROM scratch, and Debian's buildah does not pull it in
if [ "$PG_MAJOR" -ge 18 ]; then
	optional+=(buildah netavark)
fi
if [ "$PG_MAJOR" = "$IDGEN_NEIGHBOURS_MAJOR" ]; then
	optional+=("${neighbours[@]}")
	# test/static.sh's analyzers and test/coverage.sh's gcovr, run on
	# this version only
	pkgs+=(cppcheck clang-tools gcovr)
elif [ "$PG_MAJOR" = "$IDGEN_CLIENTS_SECOND_MAJOR" ]; then
	# the clients of t/098 whose versions differ in a way the page's code
	# feels, on a second version (test/pg_major.sh)
	optional+=(ruby-pg ruby-activerecord)
fi

if [ $build_only = 1 ]; then
	pkgs=(postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR make gcc libssl-dev)
	optional=()
fi

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# "package candidate-version" for each package named that this release has
# (apt-cache policy names a candidate; it needs no root and no network)
candidates() {
	apt-cache policy "$@" 2>/dev/null | awk '
		/^[^ ].*:$/ { p = substr($0, 1, length($0) - 1) }
		/^  Candidate:/ && $2 != "(none)" { print p, $2 }'
}

# What run.sh reads: every package named here that this release has, and
# whether it is installed ("pkg version installed|missing")
record=/var/lib/idgen-setup-packages
write_record() {
	[ "$(id -u)" -eq 0 ] && [ $build_only = 0 ] || return 0
	candidates "${pkgs[@]}" "${optional[@]}" | while read -r p v; do
		if installed "$p"; then echo "$p $v installed"; else echo "$p $v missing"; fi
	done >"$record.new.$$" && mv "$record.new.$$" "$record"
}

# The JavaScript ORMs of docs/clients.md (t/097) come from npm, on the
# neighbours' version only: test/npm/package.json names their versions; npm
# installs them into a cache outside the checkout, again whenever that
# package.json changes.  npm is Debian's package where no npm is on PATH
# (a Node.js from elsewhere brings its own).  A failure is loud, and leaves
# no package.json in the cache, so the next run tries again.
npm_cache=${IDGEN_NPM_CACHE:-/var/cache/idgen-npm}
# Written when that failed, read by test/run.sh (a failure there)
npm_failed=/var/lib/idgen-setup-npm-failed
npm_packages() {
	[ "$(id -u)" -eq 0 ] && [ $build_only = 0 ] && [ "$PG_MAJOR" = "$IDGEN_NEIGHBOURS_MAJOR" ] || return 0
	local want
	want="$(dirname "$0")/npm/package.json"
	cmp -s "$want" "$npm_cache/package.json" && return 0
	if ! command -v npm >/dev/null; then
		echo "setup: installing npm"
		apt-get install -y -qq npm >/dev/null ||
			{ apt-get update -qq && apt-get install -y -qq npm >/dev/null; } ||
			{ echo "setup: FAILED to install npm: the npm ORM tests of t/097 skip" \
				"and test/run.sh fails" >&2; echo npm >"$npm_failed"; return 0; }
	fi
	echo "setup: installing the npm packages of $want into $npm_cache"
	mkdir -p "$npm_cache"
	rm -f "$npm_cache/package.json"
	cp "$want" "$npm_cache/package.json.new.$$"
	mv "$npm_cache/package.json.new.$$" "$npm_cache/package.json"
	if ! (cd "$npm_cache" && npm install --no-audit --no-fund --ignore-scripts --omit=dev >/dev/null); then
		rm -f "$npm_cache/package.json"
		echo "setup: FAILED to install the npm packages: the npm ORM tests of t/097 skip" \
			"and test/run.sh fails; the next run tries again" >&2
		echo "$want" >"$npm_failed"
		return 0
	fi
	rm -f "$npm_failed"
	return 0
}

missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
# The optional packages are looked up after an apt-get update once per list
# (a stamp remembers it); after that, one the release has but that is not
# installed (a transient failure last time, say) is tried again on every run
stamp=/var/lib/idgen-setup-optional
want_optional=0
[ $build_only = 1 ] || [ "$(cat "$stamp" 2>/dev/null)" = "${optional[*]}" ] || want_optional=1
if [ $want_optional = 0 ] && [ $build_only = 0 ]; then
	while read -r p v; do
		installed "$p" || want_optional=1
	done < <(candidates "${optional[@]}")
fi
if [ ${#missing[@]} -eq 0 ] && [ $want_optional = 0 ]; then
	write_record
	npm_packages
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	[ ${#missing[@]} -eq 0 ] && exit 0
	echo "setup: missing packages: ${missing[*]}; install them as root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# A version only in experimental (19 before its release, with experimental
# in apt's sources as test/matrix.sh puts it): PostgreSQL's own packages
# from there, all at once so that they match; everything else from the
# release.  (apt-get -t experimental would take other packages, perl, from
# experimental too, which do not match the release's.)
# (madison's output is read whole first: under pipefail, "… | grep -q"
# fails when grep stops reading early and the writer dies of SIGPIPE)
madison=$(apt-cache madison "postgresql-$PG_MAJOR")
if ! grep -qv -e ' experimental/' -e '^$' <<<"$madison" &&
	grep -q ' experimental/' <<<"$madison"; then
	pg=(postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-client-$PG_MAJOR
		libpq-dev libpq5)
	echo "setup: PostgreSQL $PG_MAJOR from experimental: ${pg[*]}"
	apt-get install -y -qq "${pg[@]/%//experimental}" >/dev/null
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ $want_optional = 1 ]; then
	optional_failed=()
	have=$(candidates "${optional[@]}")
	for p in "${optional[@]}"; do
		installed "$p" && continue
		v=$(echo "$have" | awk -v p="$p" '$1 == p { print $2 }')
		if [ -z "$v" ]; then
			echo "setup: $p is not in this release; the tests that use it skip"
			continue
		fi
		echo "setup: installing $p $v (optional)"
		if ! apt-get install -y -qq "$p" >/dev/null; then
			echo "setup: FAILED to install $p although this release has it ($v):" \
				"the tests that use it fail; the next run tries again" >&2
			optional_failed+=("$p")
		fi
	done
	# No stamp after a failure, so that the next run looks again
	[ ${#optional_failed[@]} -eq 0 ] && echo "${optional[*]}" >"$stamp"
fi
write_record
npm_packages
