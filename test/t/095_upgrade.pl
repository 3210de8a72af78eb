# 095_upgrade.pl
#	ALTER EXTENSION idgen UPDATE from 0.1, with IDs issued before it.
#
# The extension is created at version 0.1 (its released install script),
# snowflake and segment IDs are drawn, then it is updated in place while the
# server runs.  Snowflake IDs continue above the old ones, tags keep their
# max_id and continue above it, the 0.2.0 objects are there, and after a
# restart with the clock set back IDs are still above every earlier one.
# DROP EXTENSION then leaves no object of the extension behind (the state
# file in the data directory stays, by design).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('upgrade', faketime => 1,
	conf => "idgen.max_lead = '10min'\n");
start_node($node);
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen VERSION '0.1';
	SELECT idgen.segment_create('order', 1, 100);
});
wait_ready($node);
is($node->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	'0.1', 'created at 0.1');

my $snow = draw_ids($node, 10000);
my $seg = [ map { $_ + 0 } split /\n/, $node->safe_psql('postgres',
	"SELECT idgen.segment_nextval('order') FROM generate_series(1, 250)") ];
my $max_before = $node->safe_psql('postgres',
	"SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'order'");

$node->safe_psql('postgres', 'ALTER EXTENSION idgen UPDATE');
is($node->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	'0.4.0', 'updated to 0.4.0');
cmp_ok($node->safe_psql('postgres',
		"SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'order'"),
	'>=', $max_before, 'the tag keeps its max_id');
my $snow2 = draw_ids($node, 10000);
cmp_ok(min_of(@$snow2), '>', max_of(@$snow), 'snowflake IDs continue above the old ones');
my $seg2 = [ map { $_ + 0 } split /\n/, $node->safe_psql('postgres',
	"SELECT idgen.segment_nextval('order') FROM generate_series(1, 250)") ];
cmp_ok(min_of(@$seg2), '>', max_of(@$seg), 'segment IDs continue above the old ones');

# What 0.2.0 adds or changes
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_proc WHERE proname IN
	  ('snowflake_accept_layout', 'segment_alloc_guard')
	  AND pronamespace = 'idgen'::regnamespace}),
	'2', 'the new functions are there');
is($node->safe_psql('postgres', q{
	SELECT bool_and(prosecdef) FROM pg_proc WHERE proname IN
	  ('segment_create', 'segment_alter', 'segment_drop')
	  AND pronamespace = 'idgen'::regnamespace}),
	't', 'the tag functions are SECURITY DEFINER');
is($node->safe_psql('postgres', q{
	SELECT 'idgen.snowflake_reservation'::regclass = ANY (extconfig)
	FROM pg_extension WHERE extname = 'idgen'}),
	'f', 'the reservation table is no longer dumped');
is($node->safe_psql('postgres', q{
	SELECT 'idgen.snowflake_reservation'::regclass IN
	  (SELECT objid FROM pg_depend WHERE refobjid =
	     (SELECT oid FROM pg_extension WHERE extname = 'idgen') AND deptype = 'e')}),
	't', 'but it is still a member of the extension');
is($node->safe_psql('postgres',
		'SELECT durable_until IS NOT NULL FROM idgen.snowflake_status()'),
	't', 'snowflake_status shows the reservation of the state file');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_proc p
	WHERE p.pronamespace = 'idgen'::regnamespace
	  AND obj_description(p.oid, 'pg_proc') IS NULL}),
	'0', 'every function has a comment');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_class c
	WHERE c.relnamespace = 'idgen'::regnamespace AND c.relkind IN ('r', 'v')
	  AND obj_description(c.oid, 'pg_class') IS NULL}),
	'0', 'every table and view has a comment');

# A restart with the clock 30 s back: still above every earlier ID
$node->stop('fast');
set_clock($node, '-30');
start_node($node);
wait_ready($node);
my $snow3 = draw_ids($node, 10000);
cmp_ok(min_of(@$snow3), '>', max_of(@$snow2),
	'after a restart 30 s back, IDs are above those drawn before the update');
is(scalar(duplicates($snow, $snow2, $snow3)), 0, 'no snowflake ID twice');

# DROP EXTENSION leaves no object behind: no extension row, no object that
# depended on it, no table, function, type or trigger in schema idgen.  The
# schema itself stays (PostgreSQL creates the control file's schema before
# the extension, so it is not a member); it is empty, so a plain DROP
# SCHEMA, which fails on any object left in it, removes it.
my $extoid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_extension WHERE extname = 'idgen'");
$node->safe_psql('postgres', 'DROP EXTENSION idgen');
is($node->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'idgen')
	     + (SELECT count(*) FROM pg_depend WHERE refobjid = $extoid
	          AND refclassid = 'pg_extension'::regclass)
	     + (SELECT count(*) FROM pg_depend WHERE objid = $extoid
	          AND classid = 'pg_extension'::regclass)}),
	'0', 'DROP EXTENSION: no extension row and no dependency left');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	          WHERE n.nspname = 'idgen')
	     + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	          WHERE n.nspname = 'idgen')
	     + (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
	          WHERE n.nspname = 'idgen')
	     + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'segment_alloc_guard%')}),
	'0', 'DROP EXTENSION leaves no table, function, type or trigger behind');
my ($dret, $dout, $derr) = $node->psql('postgres', 'DROP SCHEMA idgen');
is($dret, 0, 'the schema left is empty: DROP SCHEMA without CASCADE removes it')
  or diag $derr;

$node->stop;
done_testing();
