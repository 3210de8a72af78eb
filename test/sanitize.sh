#!/usr/bin/env bash
# idgen's tests against an assert-enabled PostgreSQL 15 built, with idgen,
# under AddressSanitizer and UBSan (issue 40, point 1).
#
#   bash test/sanitize.sh
#   bash test/sanitize.sh --list   the TAP tests it runs
#   bash test/sanitize.sh valgrind "make check" under Valgrind (below)
#   bash test/sanitize.sh --fetch [PACKAGE] DIR   only step 1's download:
#                                 the newest source the mirror serves
#
# 1. PostgreSQL 15 from Debian's own source package of this machine's
#    release (apt-get source postgresql-15), through an apt configuration
#    of the script's own under $IDGEN_SANITIZE_CACHE/apt: deb-src entries
#    made from the machine's apt sources (one-line and deb822, an archive
#    named twice merged), its own lists, the machine's keyrings; nothing
#    is written into /etc/apt.  Of the versions the index lists, newest
#    first, the first already built or whose files the mirror serves (an
#    index can list a version the mirror no longer has: the lane says
#    which it skipped and fails only when none can be had).  It is
#    configured with --enable-cassert
#    --enable-debug --enable-tap-tests and built with $SAN_CFLAGS, installed
#    into a prefix under $IDGEN_SANITIZE_CACHE (default
#    /var/cache/idgen-sanitize), keyed by the source version and the flags:
#    a build already there is reused, none is required.
# 2. idgen built against it (PGXS takes the server's CFLAGS, so the same
#    sanitizers; warnings stay errors) and installed into that prefix.
# 3. As the server user (postgres when run as root), in a scratch copy:
#    the plain C unit tests built with the same sanitizers, "make check"
#    (pg_regress and isolation), and the TAP tests of shared memory, the
#    worker, crashes, clocks and segments ($SANITIZE_TAP_TESTS).
# A test passes when it passes and nothing it ran reported: no
# AddressSanitizer report (every process writes them to files under the
# scratch copy's sanitizer/, ASAN_OPTIONS log_path), and no "TRAP:" (a
# failed Assert), UBSan "runtime error:", sanitizer line or abort in any
# server log.  Ends with "sanitize: N passed, N failed" (test/run.sh adds
# these to its own counts on PostgreSQL 15); exits non-zero on a failure.
#
# Run it as root on a machine (or chroot) of Debian bookworm you may change:
# it installs PostgreSQL's build dependencies with apt-get.  As another
# user it installs nothing and needs the build in the cache.
#   IDGEN_SANITIZE_CACHE  where the PostgreSQL build is kept
#   SANITIZE_TAP_TESTS    "t/010_x.pl ..." instead of the default list
#   SANITIZE_JOBS         make -j (default 2)
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

pg_major=15
cache=${IDGEN_SANITIZE_CACHE:-/var/cache/idgen-sanitize}
jobs=${SANITIZE_JOBS:-2}
# PostgreSQL's own CI (src/tools/ci, .cirrus.tasks.yml) builds its
# sanitizer tasks with -Og -ggdb, -fno-sanitize-recover=all and the
# sanitizers; every UBSan finding is fatal
SAN_CFLAGS="-Og -ggdb -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
configure_flags=(--enable-cassert --enable-debug --enable-tap-tests
	--without-readline --without-icu --without-llvm)
# The TAP tests of shared memory, the worker, crashes, clocks, segments and
# parallel workers
tap_default="t/003_fakeclock.pl t/010_pgbench_unique.pl t/030_segment_pgbench.pl
	t/031_segment_restart.pl t/032_segment_worker_kill.pl t/040_segment_cache.pl
	t/050_crash.pl t/051_clock.pl t/052_restart_clock_back.pl t/053_failover.pl
	t/054_standby.pl t/055_mark_survives.pl t/056_layout_change.pl
	t/060_held_to_clock.pl t/066_spin_bounded.pl t/067_currval_parallel.pl
	t/072_node_lease.pl t/076_worker_slots.pl t/091_guards.pl
	t/117_standby_hang.pl t/118_restored_segments.pl"
tap_tests=${SANITIZE_TAP_TESTS:-$tap_default}
# test/run.sh asks which TAP tests this runs (it leaves them out of its own
# run on the same version)
if [ "${1:-}" = --list ]; then
	echo $tap_tests
	exit 0
fi
# "valgrind": PostgreSQL 15 built with USE_VALGRIND (PostgreSQL's
# buildfarm's Valgrind animals' way: memory contexts tell Valgrind what is
# allocated), the server run under Valgrind's memcheck with PostgreSQL's
# src/tools/valgrind.supp, for "make check" (pg_regress and isolation)
mode=asan
case ${1:-} in
valgrind) mode=valgrind ;;
"" | asan | --fetch) ;;
*) echo "usage: $0 [asan|valgrind|--list|--fetch [PACKAGE] DIR]" >&2; exit 2 ;;
esac
# Valgrind's options (in the build's key: the script running the server
# under Valgrind is made with the build); --fullpath-after= prints each
# frame's whole source path, which tells idgen's code from the server's
vg_opts="--trace-children=yes --track-origins=yes --read-var-info=no --read-inline-info=yes --num-callers=20 --leak-check=no --error-limit=no --gen-suppressions=all --fullpath-after= --error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END"
if [ $mode = valgrind ]; then
	build_cflags="-Og -ggdb -fno-omit-frame-pointer"
	build_cppflags="-DUSE_VALGRIND"
	build_ldflags=
else
	build_cflags=$SAN_CFLAGS
	build_cppflags=
	build_ldflags="-fsanitize=address,undefined"
fi

passed=0
failed=0
failures=()
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "FAILED: $1"; }
finish() {
	# idgen's build products go (test/package.sh then finds no idgen
	# built outside its package: the scratch copy's objects and libraries,
	# the fake clock's, idgen's files in the prefix); test output stays
	if [ -n "${work:-}" ] && [ -f "$work/idgen.control" ]; then
		find "$work" \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -delete
		rm -f "$work"/idgen--*.sql
	fi
	if [ -n "${prefix:-}" ] && [ -d "$prefix" ]; then
		rm -f "$prefix/lib/idgen.so" "$prefix"/share/extension/idgen*
	fi
	echo
	[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
	echo "test/sanitize.sh took ${SECONDS} s"
	echo "sanitize: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

as_pg_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- env PATH="$PATH" ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
			UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" PGCTLTIMEOUT="${PGCTLTIMEOUT:-60}" \
			IDGEN_VALGRIND_LOGS="${IDGEN_VALGRIND_LOGS:-}" "$@"
	else
		"$@"
	fi
}

# Build dependencies of this configuration (not apt-get build-dep: that
# brings LLVM, ICU, the documentation toolchain, ...)
build_deps=(dpkg-dev gcc make bison flex perl libipc-run-perl zlib1g-dev
	libssl-dev pkg-config rsync)
[ $mode = valgrind ] && build_deps+=(valgrind)

# The source package comes through an apt configuration of this script's
# own, never through /etc/apt: its sources (deb-src entries, one for each
# archive and suite of this machine's apt sources, one-line and deb822
# forms alike, an archive named twice merged into one entry, its Signed-By
# and Trusted kept), lists and caches lie under $aptdir, and the machine's
# keyrings (Dir::Etc::trusted*, each entry's Signed-By) check them.  So the
# machine's apt sees none of it, whatever its sources look like.
aptdir=$cache/apt
apt_private=(-o Dir::Etc::sourcelist="$aptdir/sources.list"
	-o Dir::Etc::sourceparts="$aptdir/sources.list.d"
	-o Dir::State::Lists="$aptdir/lists" -o Dir::Cache="$aptdir/cache")
# The entries, from the files apt itself reads (apt-config: APT_CONFIG and
# Dir::Etc:: as this machine has them)
write_private_sources() {
	local sl sp
	eval "$(apt-config shell sl Dir::Etc::sourcelist/f sp Dir::Etc::sourceparts/d)"
	rm -rf --one-file-system "$aptdir/sources.list.d"
	mkdir -p "$aptdir/sources.list.d" "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
	: >"$aptdir/sources.list"
	perl - "${sl:-/etc/apt/sources.list}" "${sp:-/etc/apt/sources.list.d}"/*.list \
		"${sp:-/etc/apt/sources.list.d}"/*.sources >"$aptdir/sources.list.d/idgen-src.sources" <<'EOP'
use strict;
use warnings;
my (%entry, @order);
sub add {
	my ($uri, $suite, $comps, $signed, $trusted) = @_;
	return if $uri =~ /^cdrom:/;
	(my $k = $uri) =~ s{/+$}{};
	$k .= " $suite";
	unless ($entry{$k}) {
		push @order, $k;
		$entry{$k} = { uri => $uri, suite => $suite, comps => [], signed => '', trusted => '' };
	}
	my $e = $entry{$k};
	for my $c (@$comps) {
		push @{ $e->{comps} }, $c unless grep { $_ eq $c } @{ $e->{comps} };
	}
	$e->{signed} = $signed if $e->{signed} eq '' && defined $signed;
	$e->{trusted} = $trusted if $e->{trusted} eq '' && defined $trusted;
}
for my $f (@ARGV) {
	open(my $fh, '<', $f) or next;
	local $/;
	my $text = <$fh>;
	close $fh;
	if ($f =~ /\.sources$/) {
		for my $para (split /\n[ \t]*\n/, $text) {
			my (%h, $cur);
			for my $line (split /\n/, $para) {
				next if $line =~ /^#/;
				if ($line =~ /^[ \t]/ && defined $cur) {
					$h{$cur} .= "\n$line";
				} elsif ($line =~ /^([A-Za-z0-9-]+):[ \t]*(.*?)[ \t]*$/) {
					$cur = lc $1;
					$h{$cur} = $2;
				}
			}
			next unless grep { /^deb(-src)?$/ } split ' ', ($h{types} // '');
			next if ($h{enabled} // 'yes') =~ /^no$/i;
			for my $u (split ' ', ($h{uris} // '')) {
				for my $s (split ' ', ($h{suites} // '')) {
					add($u, $s, [ split ' ', ($h{components} // '') ], $h{'signed-by'}, $h{trusted});
				}
			}
		}
	} else {
		for my $line (split /\n/, $text) {
			$line =~ s/#.*//;
			next unless $line =~ /^\s*deb(?:-src)?\s+(?:\[([^\]]*)\]\s*)?(\S+)\s+(\S+)\s*(.*?)\s*$/;
			my ($opts, $u, $s, $c) = ($1 // '', $2, $3, $4);
			my %o = map { /^([^=+-]+)[+-]?=(.*)$/ ? (lc $1, $2) : () } split ' ', $opts;
			add($u, $s, [ split ' ', $c ], $o{'signed-by'}, $o{trusted});
		}
	}
}
for my $k (@order) {
	my $e = $entry{$k};
	print "Types: deb-src\nURIs: $e->{uri}\nSuites: $e->{suite}\n";
	print "Components: @{ $e->{comps} }\n" if @{ $e->{comps} };
	print "Signed-By: $e->{signed}\n" if $e->{signed} ne '';
	print "Trusted: $e->{trusted}\n" if $e->{trusted} ne '';
	print "\n";
}
EOP
}
# The source versions of a package the private lists hold, newest first
source_versions() {
	apt-cache "${apt_private[@]}" showsrc "$1" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -uVr
}
# apt-get source of one version into a directory; fails when the mirror
# does not serve its files
fetch_source() {
	local pkg=$1 v=$2 dir=$3
	(cd "$dir" && apt-get "${apt_private[@]}" source -qq --only-source "$pkg=$v" >"$dir/source.log" 2>&1) &&
		[ -n "$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" -print -quit)" ]
}

if [ "$(id -u)" -eq 0 ]; then
	# Files of this name in /etc/apt are an older version's of this
	# script (which wrote its deb-src entries there): they go, so that the
	# machine's apt is as it was before
	for f in /etc/apt/sources.list.d/idgen-sanitize-src.list /etc/apt/sources.list.d/idgen-sanitize-src.sources; do
		[ -e "$f" ] && { echo "sanitize: removing $f (an older test/sanitize.sh's)"; rm -f "$f"; }
	done
	write_private_sources
	# A source without deb-src indices (a third party's) fails its part
	# of the update alone: what counts is whether the package is listed
	apt-get "${apt_private[@]}" update -qq >"$aptdir/update.log" 2>&1 ||
		echo "sanitize: apt-get update (private sources) did not reach every source: $(grep -E '^(E|W):' "$aptdir/update.log" | head -3 | tr '\n' ' ')"
fi

# "--fetch DIR": only the source of postgresql-$pg_major, the newest
# version that can be downloaded, into DIR (what the build below starts
# from); "--fetch PACKAGE DIR" another package's.  Before the build's
# dependencies: their apt-get install uses the machine's apt as it is
if [ "${1:-}" = --fetch ]; then
	[ "$(id -u)" -eq 0 ] || { echo "sanitize: --fetch needs root" >&2; exit 2; }
	# (only dpkg-source, to unpack: the build's dependencies are not
	# installed for a download)
	command -v dpkg-source >/dev/null ||
		{ echo "sanitize: --fetch needs dpkg-source (package dpkg-dev)" >&2; exit 2; }
	pkg=postgresql-$pg_major
	[ $# -ge 3 ] && { pkg=$2; shift; }
	dir=${2:?usage: $0 --fetch [PACKAGE] DIR}
	mkdir -p "$dir"
	for v in $(source_versions "$pkg"); do
		if fetch_source "$pkg" "$v" "$dir"; then
			echo "sanitize: fetched $pkg $v into $dir"
			exit 0
		fi
		echo "sanitize: $pkg $v is listed but could not be downloaded ($(grep -E '^E:' "$dir/source.log" | head -1)); trying an older version"
	done
	echo "sanitize: no source of $pkg could be downloaded (versions listed: $(source_versions "$pkg" | tr '\n' ' '))"
	exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	missing=()
	for p in "${build_deps[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "sanitize: installing ${missing[*]}"
		apt-get install -y -qq "${missing[@]}" >/dev/null ||
			{ apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
			{ fail "apt-get install ${missing[*]}"; finish; }
	fi
fi

# The build's key: the source version and the flags
build_key() {
	printf '%s\n' "$1" "$build_cflags" "$build_cppflags" "$build_ldflags" "${configure_flags[*]}" \
		"$([ $mode = valgrind ] && echo "$vg_opts")" |
		sha256sum | cut -c1-12
}
prefix_of() { echo "$cache/postgresql-$pg_major-$1-$mode-$(build_key "$1")"; }
# The version: of those the private lists hold, newest first, the first
# whose build is in the cache or whose source the mirror serves (an index
# may list a version whose files the mirror no longer has); as another
# user, who updates no lists, the newest build in the cache
if [ "$(id -u)" -eq 0 ]; then
	candidates=$(source_versions "postgresql-$pg_major")
else
	candidates=$(for d in "$cache/postgresql-$pg_major-"*"-$mode-"*; do
		[ -e "$d/.complete" ] || continue
		d=${d#"$cache/postgresql-$pg_major-"}
		echo "${d%-"$mode"-*}"
	done | sort -uVr)
fi
if [ -z "$candidates" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		fail "no source package postgresql-$pg_major in this machine's apt sources (deb-src made from them in $aptdir)"
	else
		fail "no build of PostgreSQL $pg_major in $cache (run as root to make it)"
	fi
	finish
fi
version=
build=
unserved=()
for v in $candidates; do
	p=$(prefix_of "$v")
	if [ -x "$p/bin/postgres" ] && [ -e "$p/.complete" ]; then
		version=$v
		break
	fi
	[ "$(id -u)" -eq 0 ] || continue
	build=$(mktemp -d /tmp/idgen-sanitize-build.XXXXXX)
	echo "== apt-get source postgresql-$pg_major=$v into $build [at ${SECONDS} s]"
	if fetch_source "postgresql-$pg_major" "$v" "$build"; then
		version=$v
		break
	fi
	grep -E '^E:' "$build/source.log" | head -3
	echo "sanitize: postgresql-$pg_major $v is listed but could not be downloaded; trying an older version"
	unserved+=("$v")
	case $build in /tmp/idgen-sanitize-build.*) rm -rf --one-file-system "$build" ;; esac
	build=
done
if [ -z "$version" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		fail "no source of postgresql-$pg_major could be downloaded (listed: $(echo $candidates))"
	else
		fail "no build of PostgreSQL $pg_major in $cache for this configuration (run as root to make it)"
	fi
	finish
fi
# The prefix's name contains "postgresql": Debian's source (its patch
# 50-per-version-dirs) puts the server's modules and PGXS into
# /usr/lib/postgresql/15/lib, Debian's own package's directory, unless the
# library directory's path names postgres or pgsql, as PostgreSQL's own
# Makefile.global does (make install would overwrite Debian's files)
prefix=$(prefix_of "$version")
echo "== PostgreSQL $pg_major $version${unserved[*]:+ (newer but not served: ${unserved[*]})}, $build_cflags $build_cppflags ${configure_flags[*]}: $prefix [at ${SECONDS} s]"

if [ -n "$build" ]; then
	srcdir=$(find "$build" -mindepth 1 -maxdepth 1 -type d -name "postgresql-$pg_major-*" | head -1)
	echo "== configure and build in $srcdir (make -j$jobs) [at ${SECONDS} s]"
	rm -rf --one-file-system "$prefix"
	mkdir -p "$cache"
	if ! (cd "$srcdir" &&
		./configure --prefix="$prefix" "${configure_flags[@]}" CFLAGS="$build_cflags" \
			CPPFLAGS="$build_cppflags" LDFLAGS="$build_ldflags" >"$build/configure.log" 2>&1 &&
		make -s -j"$jobs" >"$build/make.log" 2>&1 &&
		make -s install >"$build/install.log" 2>&1); then
		tail -40 "$build/configure.log" "$build/make.log" "$build/install.log" 2>/dev/null
		fail "PostgreSQL $pg_major $version did not build (logs in $build)"
		finish
	fi
	if [ $mode = valgrind ]; then
		# PostgreSQL's suppressions, and bin/postgres replaced by a
		# script running the server under Valgrind (initdb's bootstrap
		# and single-user runs and version checks run without it)
		cp "$srcdir/src/tools/valgrind.supp" "$prefix/share/valgrind.supp" &&
			mv "$prefix/bin/postgres" "$prefix/bin/postgres.bin" || { fail "valgrind wrapper"; finish; }
		cat >"$prefix/bin/postgres" <<EOW
#!/bin/sh
# postgres under Valgrind (test/sanitize.sh valgrind); logs one file per
# process into \$IDGEN_VALGRIND_LOGS
case "\$1" in
--boot | --single | -V | --version | -C | --describe-config | --check) exec "\$0.bin" "\$@" ;;
esac
exec valgrind $vg_opts --suppressions="$prefix/share/valgrind.supp" \\
	--log-file="\${IDGEN_VALGRIND_LOGS:-/tmp}/%p.log" "\$0.bin" "\$@"
EOW
		chmod 755 "$prefix/bin/postgres"
	fi
	touch "$prefix/.complete"
	case $build in /tmp/idgen-sanitize-build.*) rm -rf --one-file-system "$build" ;; esac
	echo "== PostgreSQL built and installed [at ${SECONDS} s]"
fi
# Everything of this build, PGXS and the server's modules included, lies
# under the prefix (see above)
# (pg_config is built with ASan: no leak check at its exit)
for d in pkglibdir pgxs sharedir includedir-server; do
	dir=$(ASAN_OPTIONS=detect_leaks=0 "$prefix/bin/pg_config" --$d)
	case $dir in
	"$prefix"/*) ;;
	*) fail "pg_config --$d of $prefix lies outside it: $dir"; finish ;;
	esac
done
pg_config=$prefix/bin/pg_config
export PATH="$prefix/bin:$PATH"

# The scratch copy, owned by the server user
work=$(mktemp -d /tmp/idgen-sanitize.XXXXXX)
tar -C "$top" --exclude .git --exclude 'tmp_*' --exclude results \
	--exclude '*.o' --exclude '*.so' -cf - . | tar -C "$work" -xf -
reports=$work/sanitizer
mkdir -p "$reports"
# PostgreSQL's own CI settings (detect_leaks=0: a backend's memory lives
# in memory contexts freed at exit); every report is fatal.  ASan writes
# its reports to files of their own under $reports (log_path); UBSan's go
# to stderr whatever its log_path says when ASan's runtime is loaded too,
# so to the server's log, which is read after each test.  verify_asan_link_order=0:
# the clock tests preload test/fakeclock.c's library (LD_PRELOAD), so
# ASan's runtime is not the first library of those servers; the fake clock
# replaces clock_gettime and gettimeofday, which ASan does not intercept.
export ASAN_OPTIONS="print_stacktrace=1:abort_on_error=1:detect_leaks=0:verify_asan_link_order=0:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$work"
chmod 755 "$work"

echo "== build and install idgen against $prefix [at ${SECONDS} s]"
if ! as_pg_user make -s -C "$work" PG_CONFIG="$pg_config" >"$work/build.log" 2>&1; then
	cat "$work/build.log"
	fail "idgen build with $build_cflags $build_cppflags"
	finish
fi
if ! make -s -C "$work" PG_CONFIG="$pg_config" install >>"$work/build.log" 2>&1; then
	cat "$work/build.log"
	fail "idgen install into $prefix"
	finish
fi
if [ $mode = valgrind ]; then
	export IDGEN_VALGRIND_LOGS=$work/valgrind PGCTLTIMEOUT=900
	mkdir -p "$IDGEN_VALGRIND_LOGS"
	[ "$(id -u)" -eq 0 ] && chown postgres: "$IDGEN_VALGRIND_LOGS"
	echo "== make check (pg_regress, isolation) under Valgrind [at ${SECONDS} s]"
	as_pg_user env -u TAP_TESTS make -s --no-print-directory -C "$work" PG_CONFIG="$pg_config" \
		check TEMP_PORT=58533 >"$work/check.log" 2>&1
	grep -E '^(test| *[a-z_]+ +\.\.\.|ok|not ok)' "$work/check.log" || true
	for t in $(make -s --no-print-directory -C "$work" PG_CONFIG="$pg_config" print-tests); do
		if grep -qE "(^|[ ])$t +\.\.\. +ok" "$work/check.log"; then
			pass "make check under Valgrind: $t"
		else
			fail "make check under Valgrind: $t"
		fi
	done
	for f in "$work/regression.diffs" "$work/output_iso/regression.diffs"; do
		[ -s "$f" ] && { echo "-- $f:"; head -60 "$f"; }
	done
	# Each error Valgrind reported (between its markers), and those with
	# a frame in idgen's code: a source file of this copy's src/ (whole
	# paths, --fullpath-after=), or idgen.so where a frame has no line
	n=$(grep -l 'Memcheck, a memory error detector' "$IDGEN_VALGRIND_LOGS"/*.log 2>/dev/null | wc -l)
	errors=$(cat "$IDGEN_VALGRIND_LOGS"/*.log 2>/dev/null | awk -v ours_src="($work/src/" '
		/VALGRINDERROR-BEGIN/ { inb = 1; b = ""; next }
		/VALGRINDERROR-END/ { inb = 0; all++; if (index(b, ours_src) || b ~ /idgen\.so/) { ours++; print b "----" } next }
		inb { b = b $0 "\n" }
		END { printf "%d errors in all, %d in idgen\n", all, ours }')
	echo "$errors" | tail -1
	if [ "$n" -gt 0 ] && grep -q 'postgres.bin' "$IDGEN_VALGRIND_LOGS"/*.log; then
		pass "the server ran under Valgrind ($n processes)"
	else
		fail "no process ran under Valgrind (logs in $IDGEN_VALGRIND_LOGS)"
	fi
	if echo "$errors" | tail -1 | grep -q ', 0 in idgen$'; then
		pass "Valgrind: no error in idgen's code ($(echo "$errors" | tail -1))"
	else
		echo "$errors" | head -200
		fail "Valgrind: errors in idgen's code ($(echo "$errors" | tail -1))"
	fi
	grep -l 'VALGRINDERROR-BEGIN' "$IDGEN_VALGRIND_LOGS"/*.log 2>/dev/null | head -5
	echo "test output kept in $work"
	finish
fi

# The same flags as the server's, from its pg_config
case " $("$pg_config" --cflags) " in
*" -fsanitize=address,undefined "*) pass "idgen built with the server's sanitizers and -Werror" ;;
*) fail "pg_config --cflags lacks the sanitizers: $("$pg_config" --cflags)" ;;
esac

# Lines of sanitizer reports and failed assertions in the files given
findings() {
	grep -HnE 'ERROR: AddressSanitizer|runtime error:|TRAP:|Sanitizer:DEADLYSIGNAL|LeakSanitizer|terminated by signal 6' "$@" 2>/dev/null
}
# Reports written since the last call (moved aside, so each counts once);
# prints them and returns 1 when there were any
new_reports() {
	local name=$1 f any=1
	for f in "$reports"/asan.* "$reports"/ubsan.*; do
		[ -e "$f" ] || continue
		any=0
		echo "-- sanitizer report $f (during $name):"
		head -60 "$f"
		mkdir -p "$reports/$name"
		mv "$f" "$reports/$name/"
	done
	return $any
}

# The detection itself: a program built with these flags that reads past a
# heap block and overflows an int, run as the server user with these
# options, must leave an AddressSanitizer report in $reports and a UBSan
# report on its stderr (where a server's goes: its log) that findings()
# sees; the server and its client programs must carry ASan's runtime
cat >"$work/canary.c" <<'EOC'
#include <limits.h>
#include <stdlib.h>
__attribute__((noinline)) static int at(const char *p, int i) { return p[i]; }
int main(int argc, char **argv)
{
	volatile int big = INT_MAX;
	char *p = malloc(4);
	(void) argv;
	if (argc > 1)
		return big + argc;
	return at(p, argc + 4);
}
EOC
chown postgres: "$work/canary.c" 2>/dev/null
as_pg_user cc $SAN_CFLAGS -o "$work/canary" "$work/canary.c" &&
	{ as_pg_user "$work/canary" 2>/dev/null; as_pg_user "$work/canary" ubsan 2>"$work/canary.ubsan"; }
# (Each output is read whole before grep -q looks at it: with pipefail,
# "ldd … | grep -q" fails when grep stops reading before ldd has written
# its last line and ldd dies of SIGPIPE; CI's run of 4cd8ecd failed so,
# 11 times in 300 on this machine under load)
if grep -q 'heap-buffer-overflow' <<<"$(findings "$reports"/asan.*)" &&
	grep -q 'signed integer overflow' <<<"$(findings "$work/canary.ubsan")" &&
	grep -q libasan <<<"$(ldd "$prefix/bin/postgres")" && grep -q libasan <<<"$(ldd "$prefix/bin/pgbench")" &&
	grep -q -- --enable-cassert <<<"$("$pg_config" --configure)"; then
	pass "a heap overflow and an int overflow are reported (as the server user); postgres and pgbench carry ASan; assertions enabled"
	rm -f "$reports"/asan.*
else
	fail "sanitizer reports do not reach $reports, or postgres lacks ASan"
fi

mk() { as_pg_user env -u TAP_TESTS make -s --no-print-directory -C "$work" PG_CONFIG="$pg_config" "$@"; }

echo "== unit tests (plain C, $SAN_CFLAGS) [at ${SECONDS} s]"
out=$(as_pg_user make -s -C "$work/test/unit" run \
	CFLAGS="-std=c11 -Wall -Wextra -Werror $SAN_CFLAGS" 2>&1)
echo "$out" | tail -5
line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
if [ -n "$line" ] && [ "$(echo "$line" | cut -d' ' -f3)" = 0 ] && ! new_reports unit &&
	! echo "$out" | findings -; then
	pass "unit tests under ASan and UBSan ($line)"
else
	fail "unit tests under ASan and UBSan (${line:-no result})"
fi

echo "== make check (pg_regress, isolation) [at ${SECONDS} s]"
mk check TEMP_PORT=58532 >"$work/check.log" 2>&1
grep -E '^(test| *[a-z_]+ +\.\.\.|ok|not ok)' "$work/check.log" || true
logs=("$work/tmp_instance/postmaster.log")
bad=$(findings "${logs[@]}")
for t in $(mk print-tests); do
	if grep -qE "(^|[ ])$t +\.\.\. +ok" "$work/check.log"; then
		pass "make check: $t"
	else
		fail "make check: $t"
	fi
done
for f in "$work/regression.diffs" "$work/output_iso/regression.diffs"; do
	[ -s "$f" ] && { echo "-- $f:"; head -100 "$f"; }
done
if [ -n "$bad" ] || new_reports check; then
	echo "$bad"
	fail "make check: sanitizer report or failed assertion"
else
	pass "make check: no sanitizer report, no failed assertion"
fi

echo "== TAP [at ${SECONDS} s]"
for t in $tap_tests; do
	t=test/${t#test/}
	name=$(basename "$t" .pl)
	if [ ! -f "$work/$t" ]; then
		fail "tap $t: no such test"
		continue
	fi
	log=$work/tap_$name.log
	t0=$SECONDS
	mk prove_installcheck PROVE_TESTS="$t" >"$log" 2>&1
	rc=$?
	# keep the servers' logs (the next test removes tmp_check)
	as_pg_user cp -r "$work/tmp_check" "$work/tap_$name" 2>/dev/null
	bad=$(findings "$work/tap_$name"/log/*.log)
	if [ $rc -ne 0 ]; then
		tail -40 "$log"
		fail "tap $t"
	fi
	if [ -n "$bad" ] || new_reports "$name"; then
		echo "$bad" | head -40
		fail "tap $t: sanitizer report or failed assertion"
	elif [ $rc -eq 0 ]; then
		pass "tap $t ($((SECONDS - t0)) s)"
	fi
done

echo "test output kept in $work"
finish
