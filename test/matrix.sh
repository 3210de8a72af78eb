#!/usr/bin/env bash
# Run the whole test suite (test/run.sh) on every supported PostgreSQL major
# version, each built against Debian's own packages of its release, in a
# chroot of that release:
#   15  bookworm   17  trixie   18  forky (Debian testing)
#   19  sid, with PostgreSQL's packages (only those) from experimental
#       while 19 is there (test/setup.sh picks them)
#
#   bash test/matrix.sh [-j 2] [--fresh N]... [15|17|18|19 ...]   (default: all four)
#
# Each chroot is made with debootstrap if missing and reused if present, in
# a cache directory outside the checkout.  The checkout's files (what git
# tracks, plus new files it does not ignore) are copied in, and the suite
# runs there as root, with the servers run as the chroot's postgres user;
# then test/package.sh (the release zip and the Debian package, installed
# and removed), whose results count with the suite's.
# Prints "PG N: X passed, Y failed" per version and "X passed, Y failed" in
# total; exits non-zero if any version failed or its chroot could not be
# made (an unreachable archive fails loudly, it is never skipped).
#
#   --fresh N / IDGEN_MATRIX_FRESH="N ..."  make version N's chroot anew for
#                this run (and remove it afterwards), then run the README's
#                own two commands in it, bash test/demo.sh and bash
#                test/run.sh, as a new user of that release would
#   -j 2         the first version named runs in a second process beside
#                the others, which run in turn (CI: 15, whose lane also
#                runs the sanitizers, coverage and the neighbouring tools,
#                takes as long as 17, 18 and 19 together); its output is
#                printed when it ends, and counts with theirs
#   IDGEN_MATRIX_CACHE   where the chroots live (default /var/cache/idgen-matrix)
#   IDGEN_MATRIX_MIRROR  Debian mirror (default: the first one in this
#                machine's apt sources)
#   FUZZ_SECONDS, TAP_TESTS, IDGEN_SANITIZE, SANITIZE_TAP_TESTS  passed on
#                to test/run.sh (and its test/sanitize.sh)
# Needs root (debootstrap, chroot, mount) and installs debootstrap if missing.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

cache=${IDGEN_MATRIX_CACHE:-/var/cache/idgen-matrix}
fresh=" ${IDGEN_MATRIX_FRESH:-} "
versions=()
jobs=1
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
	--fresh) fresh+=" $2 "; versions+=("$2"); shift 2 ;;
	--fresh=*) fresh+=" ${1#--fresh=} "; versions+=("${1#--fresh=}"); shift ;;
	15|17|18|19) versions+=("$1"); shift ;;
	*) echo "usage: $0 [-j 2] [--fresh N]... [15|17|18|19 ...]" >&2; exit 2 ;;
	esac
done
case $jobs in
1|2) ;;
*) echo "matrix: -j takes 1 or 2" >&2; exit 2 ;;
esac
[ ${#versions[@]} -eq 0 ] && versions=(15 17 18 19)
# each version once, in the order given
versions=($(printf '%s\n' "${versions[@]}" | awk '!seen[$0]++'))

if [ "$(id -u)" -ne 0 ]; then
	echo "matrix: needs root (debootstrap, chroot, mount)" >&2
	exit 1
fi

codename() {
	case $1 in 15) echo bookworm ;; 17) echo trixie ;; 18) echo forky ;; 19) echo sid ;; esac
}

# The Debian mirror this machine's apt uses (deb822 or one-line sources)
mirror() {
	if [ -n "${IDGEN_MATRIX_MIRROR:-}" ]; then
		echo "$IDGEN_MATRIX_MIRROR"
		return
	fi
	local f m=
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$f")
		[ -n "$m" ] && break
	done
	if [ -z "$m" ]; then
		m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/ && $i !~ /security/) { print $i; exit } }')
	fi
	echo "$m"
}

# The processes running inside a chroot
procs_in_root() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
	done
	return 0
}

mounted=()
# Unmount what we mounted, innermost first; end what still runs inside
cleanup_root() {
	local root=$1 pid i
	for pid in $(procs_in_root "$root"); do
		kill -TERM "$pid" 2>/dev/null
	done
	sleep 1
	for pid in $(procs_in_root "$root"); do
		kill -KILL "$pid" 2>/dev/null
	done
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		case ${mounted[$i]} in
		"$root"/*)
			umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}"
			unset 'mounted[i]' ;;
		esac
	done
	mounted=("${mounted[@]}")
}

# End a process and its descendants, children first
kill_tree() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		kill_tree "$c"
	done
	kill -TERM "$1" 2>/dev/null
}

current_root=
bg_pid=
side_pid=
fresh_dirs=()
on_exit() {
	local d
	# the lane beside this one cleans up after itself
	if [ -n "$side_pid" ]; then
		kill -TERM "$side_pid" 2>/dev/null
		wait "$side_pid" 2>/dev/null
	fi
	[ -n "$bg_pid" ] && kill_tree "$bg_pid"
	[ -n "$current_root" ] && cleanup_root "$current_root"
	for d in "${fresh_dirs[@]}"; do
		remove_root "$d"
	done
}
trap on_exit EXIT
trap 'exit 130' INT TERM

domount() {
	mount "$@" && mounted+=("${!#}")
}

mount_root() {
	local root=$1
	domount -t proc proc "$root/proc" &&
		domount --bind /dev "$root/dev" &&
		domount -t tmpfs -o mode=1777 shm "$root/dev/shm"
}

# Mount points below a root, innermost first
mounts_below() {
	awk -v r="$1/" 'index($2, r) == 1 { print length($2) " " $2 }' /proc/mounts |
		sort -rn | cut -d' ' -f2-
}

# Remove a chroot, only when nothing is mounted below it.  Mounts left by a
# run that was killed before its cleanup (proc, dev, dev/shm) are unmounted
# first, unless a process still runs inside the root: then another run uses
# it, and it is left alone.
remove_root() {
	local root=$1 mounts pids m
	[ -e "$root" ] || return 0
	mounts=$(mounts_below "$root")
	if [ -n "$mounts" ]; then
		pids=$(procs_in_root "$root")
		if [ -n "$pids" ]; then
			echo "matrix: process" $pids "runs inside $root; not removing it" >&2
			return 1
		fi
		echo "matrix: unmounting what a run that ended early left mounted below $root"
		for m in $mounts; do
			umount "$m" 2>/dev/null || umount -l "$m"
		done
		if [ -n "$(mounts_below "$root")" ]; then
			echo "matrix: $root has mounts below it; not removing it" >&2
			return 1
		fi
	fi
	rm -rf --one-file-system "$root"
}

# debootstrap on this machine (before a second lane starts: one apt at a time)
need_debootstrap() {
	command -v debootstrap >/dev/null && return 0
	echo "matrix: installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
}

# Make the chroot of a release: debootstrap, and apt settings for a chroot
make_root() {
	local n=$1 root=$2 fresh_root=${3:-0} suite script=() m
	suite=$(codename "$n")
	m=$(mirror)
	if [ -z "$m" ]; then
		echo "matrix: no Debian mirror in this machine's apt sources; set IDGEN_MATRIX_MIRROR" >&2
		return 1
	fi
	need_debootstrap || return 1
	# A debootstrap too old to know a release uses sid's script (forky)
	[ -e "/usr/share/debootstrap/scripts/$suite" ] ||
		script=(/usr/share/debootstrap/scripts/sid)
	remove_root "$root" || return 1
	mkdir -p "$(dirname "$root")"
	echo "matrix: PG $n: debootstrap $suite into $root"
	if ! debootstrap --variant=minbase "$suite" "$root" "$m" "${script[@]}" \
		>"$root.debootstrap.log" 2>&1; then
		tail -20 "$root.debootstrap.log"
		echo "matrix: PG $n: debootstrap $suite failed (log: $root.debootstrap.log)" >&2
		return 1
	fi
	# Testing's and unstable's Release files may be past their Valid-Until
	# on a snapshot mirror
	if [ "$suite" = forky ] || [ "$suite" = sid ]; then
		echo 'Acquire::Check-Valid-Until "false";' \
			>>"$root/etc/apt/apt.conf.d/99idgen-matrix"
	fi
	# Debian 12's cloud and container images name their archive twice: in
	# sources.list (one-line) and in a deb822 debian.sources with
	# Signed-By.  The 15 chroot does too, so that the suite (test/sanitize.sh
	# and test/sanitize_apt.sh above all, which make apt sources of their
	# own from these) runs on such a machine; apt warns and works
	if [ "$suite" = bookworm ] && [ -e "$root/usr/share/keyrings/debian-archive-keyring.gpg" ]; then
		printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
			"$m" "$suite" >"$root/etc/apt/sources.list.d/debian.sources"
	fi
	# PostgreSQL 19 is in experimental until it is released: the same
	# mirror's experimental suite, which apt uses only when asked
	# (test/setup.sh asks for PostgreSQL's packages, nothing else)
	if [ "$suite" = sid ]; then
		echo "deb $m experimental main" \
			>"$root/etc/apt/sources.list.d/experimental.list"
	fi
	# A cached chroot installs only what setup.sh names (quicker); a fresh
	# one installs as a new user's apt does, recommended packages too
	if [ "$fresh_root" != 1 ]; then
		echo 'APT::Install-Recommends "false";' \
			>>"$root/etc/apt/apt.conf.d/99idgen-matrix"
	fi
	# No services start inside the chroot (postgresql's postinst would)
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	touch "$root/.idgen-matrix-ready"
}

# This machine's own CA certificates (/usr/local/share/ca-certificates: a
# company's or a proxy's), so that TLS clients in the chroot (npm, for
# t/097's JavaScript ORMs) reach what this machine reaches; apt uses the
# mirror of this machine's sources.  The chroot's ca-certificates takes
# them in when it is installed, or here when it already is.
trust_host_cas() {
	local root=$1
	compgen -G '/usr/local/share/ca-certificates/*' >/dev/null || return 0
	mkdir -p "$root/usr/local/share/ca-certificates"
	cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
	if [ -x "$root/usr/sbin/update-ca-certificates" ]; then
		in_root "$root" update-ca-certificates >/dev/null 2>&1 ||
			echo "matrix: update-ca-certificates failed in $root" >&2
	fi
	return 0
}

# Run a command in the chroot, as root, with a clean environment
in_root() {
	local root=$1
	shift
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		${CI:+CI=$CI} "$@"
}

# Run one version; sets v_passed, v_failed, v_note
run_version() {
	local n=$1 suite root log t0 t1 line is_fresh=0 rc
	suite=$(codename "$n")
	v_passed=0 v_failed=0 v_note=
	case $fresh in *" $n "*) is_fresh=1 ;; esac
	if [ $is_fresh = 1 ]; then
		root=$cache/$suite-fresh
		fresh_dirs+=("$root")
	else
		root=$cache/$suite
	fi
	log=$cache/$suite.log
	mkdir -p "$cache"

	t0=$(date +%s)
	if [ $is_fresh = 1 ] || [ ! -e "$root/.idgen-matrix-ready" ]; then
		if ! make_root "$n" "$root" "$is_fresh"; then
			v_failed=1 v_note="chroot could not be made"
			return
		fi
		t1=$(date +%s)
		v_note="chroot made in $((t1 - t0)) s"
	else
		t1=$t0
		v_note="chroot reused"
	fi

	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
	trust_host_cas "$root"
	current_root=$root
	if ! mount_root "$root"; then
		cleanup_root "$root"
		v_failed=1 v_note="$v_note; could not mount proc, dev, dev/shm"
		return
	fi

	# The checkout, as a fresh clone would have it (plus new files); the
	# last run's test output goes (run.sh keeps it under /tmp)
	rm -rf --one-file-system "$root/root/idgen" "$root"/tmp/idgen-test.* \
		"$root"/tmp/idgen-demo.*
	mkdir -p "$root/root/idgen"
	# (tar, not rsync: the machine running this may have no rsync)
	git -C "$top" ls-files -co --exclude-standard -z |
		tar -C "$top" --null -T - --ignore-failed-read -cf - 2>/dev/null |
		tar -C "$root/root/idgen" -xf -

	# In the background, so that a signal ends it at once (see on_exit)
	( {
		echo "== PG $n ($suite) in $root, $(date -u '+%F %T') UTC"
		if [ $is_fresh = 1 ]; then
			# The README's two commands, as a new user runs them, with
			# the version picked as the README says (PG_MAJOR): a
			# release's own version is its default, but sid's default is
			# not the 19 that experimental has
			echo "== PG_MAJOR=$n bash test/demo.sh"
			in_root "$root" env PG_MAJOR="$n" bash -c 'cd /root/idgen && bash test/demo.sh'
			rc=$?
			t0=$(date +%s)
			echo "== setup/demo done in $((t0 - t1)) s"
			[ $rc -eq 0 ] || echo "FAILED: demo (exit $rc)"
			echo "== PG_MAJOR=$n bash test/run.sh"
			in_root "$root" env PG_MAJOR="$n" FUZZ_SECONDS="${FUZZ_SECONDS:-}" TAP_TESTS="${TAP_TESTS:-}" \
				IDGEN_SANITIZE="${IDGEN_SANITIZE:-}" SANITIZE_TAP_TESTS="${SANITIZE_TAP_TESTS:-}" \
				bash -c 'cd /root/idgen && bash test/run.sh'
			echo "== bash test/package.sh"
			in_root "$root" env PG_MAJOR="$n" bash -c 'cd /root/idgen && bash test/package.sh'
		else
			in_root "$root" env PG_CONFIG=/usr/lib/postgresql/$n/bin/pg_config \
				bash /root/idgen/test/setup.sh
			rc=$?
			t0=$(date +%s)
			echo "== setup done in $((t0 - t1)) s"
			[ $rc -eq 0 ] || echo "FAILED: setup (exit $rc)"
			in_root "$root" apt-get clean
			in_root "$root" env PG_CONFIG=/usr/lib/postgresql/$n/bin/pg_config \
				FUZZ_SECONDS="${FUZZ_SECONDS:-}" TAP_TESTS="${TAP_TESTS:-}" \
				IDGEN_SANITIZE="${IDGEN_SANITIZE:-}" SANITIZE_TAP_TESTS="${SANITIZE_TAP_TESTS:-}" \
				bash -c 'cd /root/idgen && bash test/run.sh'
			echo "== bash test/package.sh"
			in_root "$root" env PG_CONFIG=/usr/lib/postgresql/$n/bin/pg_config \
				bash -c 'cd /root/idgen && bash test/package.sh'
		fi
		echo "== suite done in $(($(date +%s) - t0)) s"
	} 2>&1 | tee "$log" ) &
	bg_pid=$!
	wait "$bg_pid"
	bg_pid=
	cleanup_root "$root"
	current_root=

	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	if [ -n "$line" ]; then
		v_passed=$(echo "$line" | cut -d' ' -f1)
		v_failed=$(echo "$line" | cut -d' ' -f3)
	else
		v_failed=1
		v_note="$v_note; the suite printed no result (log: $log)"
	fi
	# The suite must have run against this version, not the release's default
	if ! grep -qE "^== build and install for PostgreSQL $n \(PostgreSQL $n([^0-9]|\$)" "$log"; then
		v_failed=$((v_failed + 1))
		v_note="$v_note; the suite did not build against PostgreSQL $n"
	fi
	# The release zip and the Debian package (test/package.sh) count too
	line=$(grep -E '^package: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	if [ -n "$line" ]; then
		v_passed=$((v_passed + $(echo "$line" | cut -d' ' -f2)))
		v_failed=$((v_failed + $(echo "$line" | cut -d' ' -f4)))
	else
		v_failed=$((v_failed + 1))
		v_note="$v_note; test/package.sh printed no result"
	fi
	if grep -qE '^FAILED: (demo|setup) \(exit' "$log"; then
		v_failed=$((v_failed + 1))
		v_note="$v_note; $(grep -oE '^FAILED: (demo|setup)' "$log" | sed 's/^FAILED: //') failed"
	fi
	v_note="$v_note; $(grep -oE '^== (setup|setup/demo) done in [0-9]+ s' "$log" | sed 's/^== //'), $(grep -oE '^== suite done in [0-9]+ s' "$log" | sed 's/^== //'); log $log"
	if [ $is_fresh = 1 ]; then
		remove_root "$root"
	fi
}

total_passed=0
total_failed=0
summary=()
side=
if [ "$jobs" = 2 ] && [ ${#versions[@]} -gt 1 ]; then
	need_debootstrap || { echo "matrix: debootstrap could not be installed" >&2; exit 1; }
	side=${versions[0]}
	versions=("${versions[@]:1}")
	mkdir -p "$cache"
	side_out=$cache/matrix-side-$side.out
	echo "matrix: PG $side runs beside PG ${versions[*]}; its output ($side_out) is printed when it ends"
	IDGEN_MATRIX_FRESH="$fresh" bash "$top/test/matrix.sh" "$side" >"$side_out" 2>&1 &
	side_pid=$!
fi
for n in "${versions[@]}"; do
	mkdir -p "$cache"
	exec 9>"$cache/.lock.$n"
	if ! flock -n 9; then
		echo "matrix: PG $n: another matrix run holds its lock; waiting"
		flock 9
	fi
	run_version "$n"
	exec 9>&-
	total_passed=$((total_passed + v_passed))
	total_failed=$((total_failed + v_failed))
	summary+=("PG $n: $v_passed passed, $v_failed failed" "  $v_note")
	echo "PG $n: $v_passed passed, $v_failed failed"
done

if [ -n "$side" ]; then
	wait "$side_pid"
	side_pid=
	echo
	echo "== PG $side, run beside the others"
	cat "$side_out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$side_out" | tail -1)
	if [ -n "$line" ]; then
		total_passed=$((total_passed + $(echo "$line" | cut -d' ' -f1)))
		total_failed=$((total_failed + $(echo "$line" | cut -d' ' -f3)))
		# its "== matrix" lines, less the heading and the total
		mapfile -t side_summary < <(sed -n '/^== matrix$/,$p' "$side_out" | sed '1d;$d')
		summary=("${side_summary[@]}" "${summary[@]}")
	else
		total_failed=$((total_failed + 1))
		summary=("PG $side: printed no result (output: $side_out)" "${summary[@]}")
	fi
fi

echo
echo "== matrix"
printf '%s\n' "${summary[@]}"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
