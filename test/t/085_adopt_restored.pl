# 085_adopt_restored.pl
#	adopt_column never lifts the refusal of a restored copy (issue 30,
#	points 1 and 3 as far as adopt_column goes).
#
# A base backup of a server with a fixed node id, started as a plain server
# beside its running original, refuses snowflake IDs.  There:
#  - adopt_column of a table whose largest value is a current-time ID of
#    the original's node (as a copy of its latest rows holds), by a superuser and by the table's owner (no superuser), is refused
#    with the refusal's own error (55000), and changes nothing;
#  - adopt_snowflake_advance of that ID is refused the same way;
#  - snowflake IDs are still refused after all of them;
#  - the table's owner adopts the same column for a segment tag: segment IDs
#    are refused there too (55000) until a superuser's segment_resume, then
#    every new ID is above the old maximum.
# Outcomes only: errors, the column's state, IDs; never durations.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $orig = idgen_node('adopt_orig', allows_streaming => 1);
start_node($orig);
$orig->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE ROLE app;
	GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
		idgen.segment_alter(text, int, text, bigint, int),
		idgen.segment_export_leaf(text, boolean) TO app;
	CREATE TABLE orders (id bigserial PRIMARY KEY, v text);
	ALTER TABLE orders OWNER TO app;
});
wait_ready($orig);
$orig->safe_psql('postgres',
	q{INSERT INTO orders (id, v) SELECT idgen.snowflake_nextval(), 'orig' FROM generate_series(1, 1000)});
$orig->backup('adopt_base');
# The original goes on running
my $orig_max;

my $clone = PostgreSQL::Test::Cluster->new('adopt_clone');
$clone->init_from_backup($orig, 'adopt_base');
$clone->start;
my $refused = qr/55000: snowflake IDs are refused because this server was started from a backup/;
my ($ret, $out, $err) = try_sql($clone, 'SELECT idgen.snowflake_nextval()');
like($err, $refused, 'the copy refuses snowflake IDs');

# A row the original made just now, as a copy of its data would hold
$clone->safe_psql('postgres', q{
	INSERT INTO orders (id, v)
	SELECT idgen.id_make(clock_timestamp(), s.node_id, 4095), 'latest'
	  FROM idgen.snowflake_status() s});
$orig_max = $clone->safe_psql('postgres', 'SELECT max(id) FROM orders');

my $state = q{
	SELECT format_type(a.atttypid, a.atttypmod) || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
	  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	 WHERE a.attrelid = 'orders'::regclass AND a.attname = 'id'};
my $before = $clone->safe_psql('postgres', $state);
for my $call (
	q{SELECT idgen.adopt_column('orders', 'id')},
	q{SET ROLE app; SELECT idgen.adopt_column('orders', 'id')})
{
	($ret, $out, $err) = try_sql($clone, $call);
	like($err, $refused, "$call: refused with the refusal's error (55000)");
}
# Its step that moves the generator is adopt_column's alone
($ret, $out, $err) = try_sql($clone,
	q{SET ROLE app; SELECT idgen.adopt_snowflake_advance('orders', max(id)) FROM orders});
like($err, qr/42501: adopt_snowflake_advance can only be called by idgen.adopt_column/,
	'adopt_snowflake_advance called directly: refused (42501)');
is($clone->safe_psql('postgres', $state), $before, 'the column is unchanged');
($ret, $out, $err) = try_sql($clone, 'SELECT idgen.snowflake_nextval()');
like($err, $refused, 'snowflake IDs are still refused after all of them');

# A segment tag: the owner adopts the column for one, but the copy hands
# out no segment ID either until a superuser resumes them (t/118)
$clone->safe_psql('postgres', q{SET ROLE app; SELECT idgen.adopt_column('orders', 'id', 'segment:orders')});
($ret, $out, $err) = try_sql($clone,
	q{SET ROLE app; INSERT INTO orders (v) SELECT 'clone' FROM generate_series(1, 100)});
like($err, qr/55000: segment IDs are refused because this server was started from a backup/,
	'the adopted column draws no segment ID on the copy (55000)');
$clone->safe_psql('postgres', 'SELECT idgen.segment_resume()');
$clone->safe_psql('postgres',
	q{SET ROLE app; INSERT INTO orders (v) SELECT 'clone' FROM generate_series(1, 100)});
is($clone->safe_psql('postgres',
		"SELECT count(*) FROM orders WHERE v = 'clone' AND id > $orig_max"),
	'100', 'after segment_resume, every new ID above the old maximum');

$clone->stop;
$orig->stop;
done_testing();
