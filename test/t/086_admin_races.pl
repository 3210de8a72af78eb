# 086_admin_races.pl
#	Administrative steps against sessions running beside them (issue 37,
#	points 2 and 3).
#
# Asserts:
#  - snowflake_resume(L) on a restored copy is atomic: held between its
#    steps (idgen.test_hold_lock, an advisory lock the test holds), every
#    other session's draw is refused (55000), none returns an ID; once it
#    goes on, every ID is above L;
#  - adopt_column while 4 pgbench clients insert, through an inheritance
#    parent whose trigger routes rows to a child and straight into the
#    children, before, during and after the adoption: no ID twice over the
#    tree, every ID inserted after the adoption above the old maximum;
#  - a sequence two tables share: the adoption of one stops it, so that
#    the other's inserts fail (2200H) and never take an ID the tag gives:
#    no ID in both tables.
# Outcomes only: no ID twice, the SQLSTATE; never durations.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('races', allows_streaming => 1);
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($node);

# --- adopt_column under inserts --------------------------------------------

$node->safe_psql('postgres', q{
	CREATE TABLE ip (id serial PRIMARY KEY, src text);
	CREATE TABLE ip1 () INHERITS (ip);
	CREATE TABLE ip2 () INHERITS (ip);
	CREATE FUNCTION ip_route() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF NEW.id % 2 = 0 THEN INSERT INTO ip1 VALUES (NEW.*);
		ELSE INSERT INTO ip2 VALUES (NEW.*); END IF;
		RETURN NULL;
	END $$;
	CREATE TRIGGER ip_route BEFORE INSERT ON ip FOR EACH ROW EXECUTE FUNCTION ip_route();
	INSERT INTO ip (src) SELECT 'old' FROM generate_series(1, 1000);
	CREATE SEQUENCE shs;
	CREATE TABLE s1 (id bigint PRIMARY KEY DEFAULT nextval('shs'), src text);
	CREATE TABLE s2 (id bigint PRIMARY KEY DEFAULT nextval('shs'), src text);
	INSERT INTO s1 (src) SELECT 'old' FROM generate_series(1, 500);
	INSERT INTO s2 (src) SELECT 'old' FROM generate_series(1, 500);
});
my $old_max = $node->safe_psql('postgres', 'SELECT max(id) FROM ip');

# Inserts through the parent and into each child, and into both tables of
# the shared sequence (pgbench -n: a failed transaction is counted, not
# retried; 2200H on s2 after the adoption is expected)
my @load = (
	start_pgbench($node, "INSERT INTO ip (src) VALUES ('parent');", clients => 1, transactions => 3000),
	start_pgbench($node, "INSERT INTO ip1 (src) VALUES ('ip1');", clients => 1, transactions => 3000),
	start_pgbench($node, "INSERT INTO ip2 (src) VALUES ('ip2');", clients => 1, transactions => 3000),
	start_pgbench($node,
		"INSERT INTO s1 (src) VALUES ('load');\nINSERT INTO s2 (src) VALUES ('load');",
		clients => 1, transactions => 3000));
$node->poll_query_until('postgres',
	"SELECT (SELECT count(*) FROM ip WHERE src <> 'old') > 300 AND (SELECT count(*) FROM s2) > 600")
  or die 'no inserts';
$node->safe_psql('postgres', q{SELECT idgen.adopt_column('ip', 'id', 'segment:ip')});
$node->safe_psql('postgres', q{SELECT idgen.adopt_column('s1', 'id', 'segment:s1')});
my $adopted_at = $node->safe_psql('postgres', "SELECT count(*) FROM ip");
for my $p (@load)
{
	my ($out, $err, $rc) = finish_pgbench($p);
	note "pgbench: $err" if $err;
}
# And after the load, rows straight into every table of the tree
$node->safe_psql('postgres', q{
	INSERT INTO ip (src) SELECT 'after' FROM generate_series(1, 500);
	INSERT INTO ip1 (src) SELECT 'after' FROM generate_series(1, 500);
	INSERT INTO ip2 (src) SELECT 'after' FROM generate_series(1, 500);
	INSERT INTO s1 (src) SELECT 'after' FROM generate_series(1, 500);
});
my ($rows, $distinct) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT id) FROM ip');
cmp_ok($rows, '>', $adopted_at, 'rows were inserted into the tree after the adoption');
is($distinct, $rows, "no ID twice over the inheritance tree ($rows rows)");
is($node->safe_psql('postgres',
		"SELECT count(*) FROM ip WHERE src = 'after' AND id <= $old_max"),
	'0', 'every ID inserted after the adoption is above the old maximum');
is($node->safe_psql('postgres', 'SELECT count(*) FROM s1 JOIN s2 USING (id)'),
	'0', 'no ID in both tables of the shared sequence');
my ($ret, $out, $err) = try_sql($node, q{INSERT INTO s2 (src) VALUES ('late')});
like($err, qr/2200H: nextval: reached maximum value of sequence "shs"/,
	'the shared sequence is stopped: the other table\'s insert fails (2200H)');

# --- snowflake_resume is atomic --------------------------------------------

# A restored copy in place: the server restarted for archive recovery
# (recovery.signal) refuses snowflake IDs until snowflake_resume
my $before = $node->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()');
$node->stop;
$node->append_conf('postgresql.conf', "restore_command = 'false'\n");
$node->set_recovery_mode;
start_node($node);
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'no promotion';
my $refused = qr/55000: snowflake IDs are refused because this server was started from a backup/;
($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
like($err, $refused, 'the copy refuses snowflake IDs');

# The ID the caller vouches for: 2 s ahead of the clock, well above
# anything the generator would give without it
my $vouched = $node->safe_psql('postgres',
	q{SELECT idgen.id_make(clock_timestamp() + interval '2 s', s.node_id, 0) FROM idgen.snowflake_status() s});
cmp_ok($vouched, '>', $before, 'the vouched ID is above the last one drawn');

# Hold the advisory lock the resuming backend waits for between its steps
my $hold_in = "SELECT pg_advisory_lock(86);\n\\echo HELD\n";
my ($hold_out, $hold_err) = ('', '');
my $holder = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-q', '-d', $node->connstr('postgres') ],
	'<', \$hold_in, '>', \$hold_out, '2>', \$hold_err);
pump_until($holder, IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default),
	\$hold_out, qr/HELD/) or die 'could not take the advisory lock';
my ($res_out, $res_err) = ('', '');
my $resumer = IPC::Run::start(
	[
		'psql', '-X', '-A', '-t', '-q', '-v', 'VERBOSITY=verbose', '-d', $node->connstr('postgres'),
		'-c', "SET idgen.test_hold_lock = 86; SELECT idgen.snowflake_resume($vouched)"
	],
	'<', \undef, '>', \$res_out, '2>', \$res_err);
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 86 AND NOT granted})
  or die 'snowflake_resume did not reach its wait point';

# While it is held there: 200 draws in 4 statements, each refused; the
# worker has had time to act on a lifted refusal (it looks every second)
my ($drawn, $other) = (0, 0);
for my $i (1 .. 4)
{
	($ret, $out, $err) = try_sql($node,
		q{SELECT idgen.snowflake_nextval() FROM generate_series(1, 50)});
	if ($ret == 0) { $drawn += scalar(split /\n/, $out); }
	elsif ($err !~ $refused) { $other++; note $err; }
	$node->safe_psql('postgres', 'SELECT pg_sleep(0.5)');
}
is($drawn, 0, 'while snowflake_resume is held between its steps, no session draws an ID');
is($other, 0, 'every draw meanwhile fails with the refusal');

# Let it go on
$hold_in .= "SELECT pg_advisory_unlock(86);\n\\q\n";
$holder->pump_nb;
$holder->finish;
$resumer->finish;
chomp $res_out;
is($res_out, 't', 'snowflake_resume lifted the refusal');
my $ids = draw_ids($node, 1000);
is(scalar(grep { $_ <= $vouched } @$ids), 0, 'every ID after it is above the vouched ID');

$node->stop;
done_testing();
