# 057_admin_paths.pl
#	What administrators and other roles do cannot make idgen hand out an ID
#	twice or stop another generator (issue 10, points 3 to 6).
#
#  3. A tag administrator with EXECUTE on the three tag functions, and no
#     table privilege, manages tags; no path through the functions or the
#     table moves max_id backwards, and no segment ID is handed out twice.
#  4. 10,000 calls for distinct unknown tags by a LOGIN-only role take no
#     shared-memory slot: a new tag is created and drawn from at once, and
#     the 53400 hint (for real tags) says what is true.
#  5. While idgen.segment_alloc is locked by another session, for longer
#     than every timeout, snowflake IDs keep flowing without one failure,
#     segment calls fail with the documented error, and segments flow again
#     once the lock is gone; the same with idgen.segment_privilege locked
#     (a new session of a role that is not a superuser, naming the table).
#  6. The registry and central-server functions take their bounds from the
#     serving server: a negative guard cannot take a live lease, a renewal
#     cannot shorten one, a forged instance gets nothing, and a caller's
#     huge max_step gets no more than the server's idgen.segment_max_step.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('admin', conf => q{
idgen.segment_max_tags = 16
idgen.segment_wait_timeout = '2s'
idgen.worker_wait_timeout = '2s'
idgen.segment_max_step = 500
});
start_node($node);
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE TABLE idgen_test_stop (stop boolean);
	CREATE ROLE tagadmin LOGIN;
	GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
	    idgen.segment_alter(text, int, text, bigint, int), idgen.segment_drop(text)
	    TO tagadmin;
	CREATE ROLE anyone LOGIN;
	CREATE ROLE leaser LOGIN;
	GRANT EXECUTE ON FUNCTION
		idgen.node_lease_acquire(text, text, int, int, int, bigint),
		idgen.node_lease_renew(text, int, text, int, bigint),
		idgen.segment_allocate(text, bigint, bigint) TO leaser;
});
wait_ready($node);

# Run SQL as a role; returns (exit code, stdout, stderr with SQLSTATE)
sub as_role
{
	my ($role, $sql) = @_;
	return $node->psql('postgres', $sql,
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
}

# Draw $n IDs of a tag as a role
sub draw_tag
{
	my ($role, $tag, $n) = @_;
	my ($ret, $out, $err) = as_role($role,
		"SELECT idgen.segment_nextval('$tag') FROM generate_series(1, $n)");
	die "could not draw from $tag: $err" if $ret != 0;
	return [ map { $_ + 0 } split /\n/, $out ];
}

# --- 3. Tag administration through EXECUTE only ---------------------------
my ($ret, $out, $err) = as_role('tagadmin',
	"SELECT idgen.segment_create('order', 1, 10)");
is($ret, 0, 'the tag administrator creates a tag with EXECUTE alone')
  or diag($err);
my @seg = @{ draw_tag('anyone', 'order', 25) };
($ret, $out, $err) = as_role('tagadmin',
	'UPDATE idgen.segment_alloc SET max_id = 0');
like($err, qr/ERROR:  42501: permission denied for table segment_alloc/,
	'the tag administrator has no table privilege');
($ret, $out, $err) = as_role('tagadmin',
	"SELECT idgen.segment_alter('order', max_id => 1)");
like($err, qr/ERROR:  22023: cannot move max_id of segment tag "order" backwards/,
	'segment_alter refuses to move max_id back');
($ret, $out, $err) = try_sql($node,
	"UPDATE idgen.segment_alloc SET max_id = 0 WHERE biz_tag = 'order'");
like($err, qr/ERROR:  22023: cannot move max_id of segment tag "order" backwards/,
	'a superuser\'s UPDATE cannot move max_id back either');
($ret, $out, $err) = as_role('tagadmin', "SELECT idgen.segment_drop('order')");
is($ret, 0, 'the tag administrator drops the tag');
($ret, $out, $err) = as_role('tagadmin',
	"SELECT idgen.segment_create('order', 1, 10)");
like($err, qr/ERROR:  22023: segment tag "order" cannot start at 1/,
	'a tag created again cannot start below what was allocated');
my ($hint) = $err =~ /start of (\d+) or more/;
ok(defined $hint, 'the hint names the smallest allowed start');
($ret, $out, $err) = as_role('tagadmin',
	"SELECT idgen.segment_create('order', $hint, 10)");
is($ret, 0, 'it can be created again above it') or diag($err);
$node->safe_psql('postgres', 'TRUNCATE idgen.segment_alloc');
($ret, $out, $err) = as_role('tagadmin',
	"SELECT idgen.segment_create('order', 1, 10)");
like($err, qr/ERROR:  22023: segment tag "order" cannot start at 1/,
	'a truncated table remembers its tags');
($ret, $out, $err) = as_role('tagadmin',
	"SELECT idgen.segment_create('order', $hint, 10)");
push @seg, @{ draw_tag('anyone', 'order', 25) };
is(scalar(duplicates(\@seg)), 0, 'no segment ID handed out twice through any path');
is(first_disorder(\@seg), -1, 'segment IDs increase through every path');

# --- 4. Unknown tags cannot fill shared memory -----------------------------
($ret, $out, $err) = as_role('anyone', q{
DO $$
DECLARE
    failed int := 0;
BEGIN
    FOR i IN 1..10000 LOOP
        BEGIN
            PERFORM idgen.segment_nextval('junk-' || i);
        EXCEPTION WHEN undefined_object THEN
            failed := failed + 1;
        END;
    END LOOP;
    RAISE NOTICE 'failed: %', failed;
END
$$});
like($err, qr/failed: 10000/, '10,000 calls for unknown tags each fail with 42704');
is($node->safe_psql('postgres', 'SELECT count(*) FROM idgen.segment_status'),
	'1', 'they left no slot behind (only tag "order" is in shared memory)');
($ret, $out, $err) = as_role('tagadmin', "SELECT idgen.segment_create('fresh')");
is($ret, 0, 'a new tag is created right after') or diag($err);
($ret, $out, $err) = as_role('anyone', "SELECT idgen.segment_nextval('fresh')");
is($out, '1', 'and its first ID is drawn at once') or diag($err);
# Real tags beyond the slots: the hint says what is true
$node->safe_psql('postgres',
	"SELECT count(idgen.segment_create('real' || i)) FROM generate_series(1, 20) i");
($ret, $out, $err) = as_role('anyone', q{
	SELECT idgen.segment_nextval('real' || i) FROM generate_series(1, 20) i});
like($err, qr/ERROR:  53400: could not load segment tag "real\d+" into shared memory/,
	'more real tags than slots: 53400');
like($err, qr/DETAIL:  All 16 tag slots allowed by idgen.segment_max_tags hold tags that exist and have been drawn from since the server started/,
	'the detail says what holds the slots');
like($err, qr/HINT:  Raise idgen.segment_max_tags/, 'the hint says what helps');
$node->safe_psql('postgres',
	"SELECT count(idgen.segment_drop('real' || i)) FROM generate_series(1, 20) i");

# --- 5. A locked segment table stops neither the worker nor snowflake IDs ---
my @drawers = map { start_drawer($node, name => "lock$_", pause => 0.01) } 1 .. 2;
IdgenTest::wait_drawn($_, 0) for @drawers;
# A session holds the lock until told to commit
my ($lin, $lout, $lerr) = ("BEGIN;\nLOCK TABLE idgen.segment_alloc IN ACCESS EXCLUSIVE MODE;\n\\echo LOCKED\n", '', '');
my $locker = IPC::Run::start(
	[ 'psql', '-X', '-q', '-d', $node->connstr('postgres') ],
	'<', \$lin, '>', \$lout, '2>', \$lerr);
$locker->pump until $lout =~ /LOCKED/;
# Draw past the IDs the tag has buffered: then a call needs the worker,
# which cannot lock the table, and fails with the documented error after
# idgen.segment_wait_timeout.  (Each call here is a new session of a role
# that is not a superuser: it reads the tag's privileges first, cannot
# lock the table for that either, and fails after the same timeout with
# the error that says so; a session that had read them goes on.)
my $seg_err = '';
for (1 .. 100)
{
	($ret, $out, $err) = as_role('anyone',
		"SELECT idgen.segment_nextval('order') FROM generate_series(1, 50)");
	if ($ret != 0) { $seg_err = $err; last; }
}
like($seg_err,
	qr/ERROR:  55000: could not draw an ID for segment tag "order": (the idgen worker did not load a segment within 2000 ms|its privileges could not be read within 2000 ms)/,
	'while the table is locked, a segment call that needs the worker fails clearly');
# Hold the lock for longer than every timeout (2 s each), measured by what
# the drawers drew, not by the clock
my $before = IdgenTest::drawn_count($drawers[0]);
for my $round (1 .. 3)
{
	($ret, $out, $err) = as_role('anyone',
		"SELECT idgen.segment_nextval('order')");
	IdgenTest::wait_drawn($drawers[0], IdgenTest::drawn_count($drawers[0]) + 200);
}
my $waited = $node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_locks WHERE relation = 'idgen.segment_alloc'::regclass
	   AND NOT granted});
$lin .= "COMMIT;\n\\q\n";
$locker->finish;
stop_drawers($node);
my @snow;
for my $d (@drawers)
{
	my ($ids, $derr, $end) = finish_drawer($d);
	is($end, 'stopped', "session $d->{name} drew until asked to stop");
	unlike($derr, qr/ERROR/, "session $d->{name}: no snowflake call failed while the table was locked");
	is(first_disorder($ids), -1, "session $d->{name}: IDs increase");
	push @snow, @$ids;
}
is($waited, '0', 'no process was waiting for the lock (the worker only tries)');
is(scalar(duplicates(\@snow)), 0, 'no snowflake ID twice');
$node->poll_query_until('postgres', "SELECT idgen.segment_nextval('order') > 0")
  or die 'segments did not flow again';
push @seg, @{ draw_tag('anyone', 'order', 100) };
is(scalar(duplicates(\@seg)), 0, 'segments flow again after the lock, no ID twice');

# The table of grants locked: a new session of a role that is not a
# superuser cannot read the tag's privileges and fails after the same
# timeout, naming that table; unlocked, it draws
($lin, $lout, $lerr) = ("BEGIN;\nLOCK TABLE idgen.segment_privilege IN ACCESS EXCLUSIVE MODE;\n\\echo LOCKED\n", '', '');
$locker = IPC::Run::start(
	[ 'psql', '-X', '-q', '-d', $node->connstr('postgres') ],
	'<', \$lin, '>', \$lout, '2>', \$lerr);
$locker->pump until $lout =~ /LOCKED/;
($ret, $out, $err) = as_role('anyone', "SELECT idgen.segment_nextval('order')");
like($err,
	qr/ERROR:  55000: could not draw an ID for segment tag "order": its privileges could not be read within 2000 ms\n.*DETAIL:  Table idgen.segment_privilege is locked by another transaction/,
	'with the table of grants locked, a new session fails clearly, naming it');
$lin .= "COMMIT;\n\\q\n";
$locker->finish;
push @seg, @{ draw_tag('anyone', 'order', 100) };
is(scalar(duplicates(\@seg)), 0, 'unlocked, it draws again, no ID twice');

# --- 6. Bounds come from the serving server ---------------------------------
($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node FROM idgen.node_lease_acquire('ns', 'victim key 1234', 0, 60000, 10000, 0)});
is($out, '0', 'a server leases node 0 for 60 s');
for my $guard (-100000000, -2147483648, 0)
{
	($ret, $out, $err) = as_role('leaser', qq{
		SELECT leased_node IS NULL FROM idgen.node_lease_acquire('ns', 'attacker', 0, 1000, $guard, 0)});
	is($out, 't', "guard_ms $guard does not take over the live lease");
}
my $exp = $node->safe_psql('postgres',
	"SELECT expires_at FROM idgen.node_lease WHERE namespace = 'ns' AND node_id = 0");
($ret, $out, $err) = as_role('leaser', q{
	SELECT idgen.node_lease_renew('ns', 0, 'victim key 1234', -100000000, 0)});
is($node->safe_psql('postgres',
		"SELECT expires_at >= '$exp' FROM idgen.node_lease WHERE namespace = 'ns' AND node_id = 0"),
	't', 'a renewal with a negative lease time does not shorten the lease');
($ret, $out, $err) = as_role('leaser', q{
	SELECT idgen.node_lease_renew('ns', 0, 'attacker', 60000, 0)});
is($out, 'f', 'a renewal by another instance is refused');
($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node IS NULL FROM idgen.node_lease_acquire('ns', 'attacker', 0, 1000, -100000000, 0)});
is($out, 't', 'the lease is still the victim\'s');
($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node FROM idgen.node_lease_acquire('ns', 'other', 2000000000, 1000, 0, 0)});
is($out, '1', 'a huge max_node is bounded and still gets the lowest free id');

$node->safe_psql('postgres', "SELECT idgen.segment_create('central', 1, 100)");
($ret, $out, $err) = as_role('leaser', q{
	SELECT known, first_id, len FROM idgen.segment_allocate('central', 1000000000000000, 9000000000000000000)});
is($out, 't|1|500', 'a huge max_step gets no more than the server\'s idgen.segment_max_step');
($ret, $out, $err) = as_role('leaser', q{
	SELECT len FROM idgen.segment_allocate('central', -5, -5)});
is($out, '100', 'a negative step gets the tag\'s own step');

$node->stop;
done_testing();
