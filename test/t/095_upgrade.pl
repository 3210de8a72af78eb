# 095_upgrade.pl
#	ALTER EXTENSION idgen UPDATE from 0.1, with IDs issued before it.
#
# The extension is created at version 0.1 (its released install script),
# snowflake and segment IDs are drawn, then it is updated in place while the
# server runs.  Snowflake IDs continue above the old ones, tags keep their
# max_id and continue above it, the 0.2.0 objects are there, and after a
# restart with the clock set back IDs are still above every earlier one.
# A fresh CREATE EXTENSION (the install script built from src/idgen.sql)
# and updates from 0.1, 0.2.0 and 0.3.0 reach the same objects, compared one
# by one.  DROP EXTENSION then leaves no object of the extension behind, its
# schema included (the state file in the data directory stays, by design).
# A dump made with 0.3.0 restores into a database where 0.4.0 was created
# first (one error: its schema exists), and the empty schema DROP EXTENSION
# of 0.3.0 leaves must be dropped before CREATE EXTENSION of 0.4.0.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# The default version (idgen.control) and every released one before it
# (test/released.sha256, which test/check_released.sh keeps as released)
my $current = default_version();
my %released;
for (split /\n/, slurp_file(repo_file('test/released.sha256')))
{
	next unless /^[0-9a-f]{64}\s+idgen--(.+)\.sql$/;
	$released{$_} = 1 for split /--/, $1;
}
my @older = sort grep { $_ ne $current } keys %released;

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
	$current, "updated to $current");
cmp_ok($node->safe_psql('postgres',
		"SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'order'"),
	'>=', $max_before, 'the tag keeps its max_id');
my $snow2 = draw_ids($node, 10000);
cmp_ok(min_of(@$snow2), '>', max_of(@$snow), 'snowflake IDs continue above the old ones');
my $seg2 = [ map { $_ + 0 } split /\n/, $node->safe_psql('postgres',
	"SELECT idgen.segment_nextval('order') FROM generate_series(1, 250)") ];
cmp_ok(min_of(@$seg2), '>', max_of(@$seg), 'segment IDs continue above the old ones');
# Tags of before 0.4.0 keep what every role could do with them: draw
# (issue 37, point 6: public's draw by default)
$node->safe_psql('postgres', 'CREATE ROLE plain_095');
is($node->safe_psql('postgres', q{
	SET ROLE plain_095;
	SELECT idgen.segment_nextval('order') > 0;
	RESET ROLE;
	SELECT public_draw || '|' || public_read FROM idgen.segment_alloc WHERE biz_tag = 'order'}),
	"t\ntrue|false", 'a role that is not the owner still draws from a tag of before 0.4.0');

# What 0.2.0 adds or changes
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_proc WHERE proname IN
	  ('snowflake_accept_layout', 'segment_alloc_guard')
	  AND pronamespace = 'idgen'::regnamespace}),
	'2', 'the new functions are there');
is($node->safe_psql('postgres', q{
	SELECT bool_or(prosecdef) FROM pg_proc WHERE proname IN
	  ('segment_create', 'segment_alter', 'segment_drop')
	  AND pronamespace = 'idgen'::regnamespace}),
	'f', 'the tag functions run as their caller since 0.4.0 (they check the tag\'s owner)');
is($node->safe_psql('postgres', q{
	SELECT a.owner = r.rolname FROM idgen.segment_alloc a, pg_extension e
	  JOIN pg_roles r ON r.oid = e.extowner
	WHERE a.biz_tag = 'order' AND e.extname = 'idgen'}),
	't', 'a tag of before 0.4.0 is owned by the extension\'s owner');
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

# A fresh install and updates from each released version reach the same
# objects: functions (arguments, result, volatility, strictness,
# parallel safety, SECURITY DEFINER, settings, body, comment, privileges),
# tables and views (columns, defaults, comments, privileges, definition),
# constraints, triggers, the schema, the extension's members, its dumped
# tables and the initial privileges pg_dump relies on
my $describe = q{
SELECT kind, name, props FROM (
SELECT 'function' AS kind, p.oid::regprocedure::text AS name,
  concat_ws(' | ', pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.provolatile, p.proparallel, p.proisstrict, p.prosecdef, p.proconfig::text, (SELECT lanname FROM pg_language WHERE oid = p.prolang), md5(p.prosrc), p.probin, obj_description(p.oid, 'pg_proc'), p.proacl::text) AS props
FROM pg_proc p WHERE p.pronamespace = 'idgen'::regnamespace
UNION ALL
SELECT 'relation', c.relname, concat_ws(' | ', c.relkind, obj_description(c.oid, 'pg_class'), c.relacl::text,
   (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum)
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
   CASE WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid) END)
FROM pg_class c WHERE c.relnamespace = 'idgen'::regnamespace
UNION ALL
SELECT 'constraint', conrelid::regclass || '.' || conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = 'idgen'::regnamespace
UNION ALL
SELECT 'trigger', tgrelid::regclass || '.' || tgname, pg_get_triggerdef(oid) FROM pg_trigger
WHERE tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'idgen'::regnamespace) AND NOT tgisinternal
UNION ALL
SELECT 'schema', n.nspname, concat_ws(' | ', n.nspacl::text, obj_description(n.oid, 'pg_namespace')) FROM pg_namespace n WHERE n.nspname = 'idgen'
UNION ALL
SELECT 'extension', e.extname, concat_ws(' | ', e.extnamespace::regnamespace, e.extversion, e.extrelocatable, e.extcondition::text,
   (SELECT string_agg(x::regclass::text, ',' ORDER BY x::regclass::text) FROM unnest(e.extconfig) x))
FROM pg_extension e WHERE e.extname = 'idgen'
UNION ALL
SELECT 'member', pg_describe_object(classid, objid, objsubid), '' FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen') AND deptype = 'e'
UNION ALL
SELECT 'initprivs', pg_describe_object(classoid, objoid, objsubid), privtype::text || ' ' || initprivs::text FROM pg_init_privs
WHERE (classoid = 'pg_proc'::regclass AND objoid IN (SELECT oid FROM pg_proc WHERE pronamespace = 'idgen'::regnamespace))
   OR (classoid = 'pg_class'::regclass AND objoid IN (SELECT oid FROM pg_class WHERE relnamespace = 'idgen'::regnamespace))
   OR (classoid = 'pg_namespace'::regclass AND objoid = 'idgen'::regnamespace)
) o ORDER BY 1, 2, 3
};
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION idgen');
my $fresh = $node->safe_psql('fresh', $describe);
cmp_ok(scalar(split /\n/, $fresh), '>', 100, 'the fresh install is described object by object');
is($node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'idgen'}),
	$current, "a fresh install is $current, from its own install script");
is($node->safe_psql('postgres', $describe), $fresh,
	'updated from 0.1 (with IDs issued), the objects equal a fresh install\'s');
is(join(',', @older), '0.1,0.2.0,0.3.0,0.4.0', 'the versions released before 0.5.0 are updated from')
  if $current eq '0.5.0';
for my $from (@older)
{
	my $db = 'from_' . ($from =~ s/\./_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION idgen VERSION '$from'");
	$node->safe_psql($db, 'ALTER EXTENSION idgen UPDATE');
	my $updated = $node->safe_psql($db, $describe);
	is($updated, $fresh, "updated from $from, the objects equal a fresh install's")
	  or diag(join "\n", grep { index($fresh, $_) < 0 } split /\n/, $updated);
}

# segment_create and segment_alter gained an argument (cache) in 0.4.0: the
# EXECUTE granted on the 0.3.0 functions is granted on the new ones, and
# their initial privileges stay a fresh install's, so pg_dump still dumps
# the grant
$node->safe_psql('postgres', 'CREATE DATABASE grants_0_3_0');
$node->safe_psql('grants_0_3_0', q{
	CREATE EXTENSION idgen VERSION '0.3.0';
	CREATE ROLE tag_admin_095;
	GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text),
	    idgen.segment_alter(text, int, text, bigint) TO tag_admin_095;
	ALTER EXTENSION idgen UPDATE;
});
is($node->safe_psql('grants_0_3_0', q{
	SELECT has_function_privilege('tag_admin_095', 'idgen.segment_create(text, bigint, int, text, int)', 'EXECUTE'),
	       has_function_privilege('tag_admin_095', 'idgen.segment_alter(text, int, text, bigint, int)', 'EXECUTE'),
	       has_function_privilege('tag_admin_095', 'idgen.segment_drop(text)', 'EXECUTE')}),
	't|t|f', 'EXECUTE granted on segment_create and segment_alter of 0.3.0 is carried to 0.4.0\'s');
my $initprivs = q{
	SELECT string_agg(pg_describe_object(classoid, objoid, objsubid) || ' ' || initprivs::text, ', ' ORDER BY 1)
	  FROM pg_init_privs
	 WHERE classoid = 'pg_proc'::regclass
	   AND objoid IN ('idgen.segment_create(text, bigint, int, text, int)'::regprocedure,
	                  'idgen.segment_alter(text, int, text, bigint, int)'::regprocedure)};
is($node->safe_psql('grants_0_3_0', $initprivs), $node->safe_psql('fresh', $initprivs),
	'their initial privileges are a fresh install\'s (pg_dump dumps the carried grant)');
my ($grants_dump) = run_command([ 'pg_dump', '--schema-only', '-h', $node->host,
	'-p', $node->port, 'grants_0_3_0' ]);
like($grants_dump, qr/GRANT ALL ON FUNCTION idgen\.segment_create\(tag text, start bigint, step integer, description text, cache integer\) TO tag_admin_095;/,
	'pg_dump dumps the carried grant');
$node->safe_psql('grants_0_3_0', 'DROP EXTENSION idgen');
$node->safe_psql('postgres', 'DROP DATABASE grants_0_3_0');
$node->safe_psql('postgres', 'DROP ROLE tag_admin_095');

# Between installing a new library and ALTER EXTENSION UPDATE
# (docs/upgrading.md, steps 2 and 3) the functions of 0.3.0 run on the
# library of 0.4.0, as in 0.3.0: tags without owners, cache or privileges
# (a role that is not a superuser draws and reads its currval), created,
# altered and dropped; DROP ROLE, ALTER ROLE RENAME, REASSIGN OWNED and
# DROP OWNED leave the tags alone.  After the update the tag continues above
# every ID drawn before, none twice
$node->safe_psql('postgres', 'CREATE DATABASE window030');
$node->safe_psql('window030', q{
	CREATE EXTENSION idgen VERSION '0.3.0';
	CREATE ROLE window_095;
	CREATE ROLE window_095b;
	CREATE TABLE drawn (id bigint NOT NULL);
	GRANT INSERT, SELECT ON drawn TO window_095;
	SELECT idgen.segment_create('w', 1, 10);
	SELECT idgen.segment_alter('w', 20, 'altered before the update', NULL);
	SELECT idgen.segment_create('gone', 1, 10);
	SELECT idgen.segment_drop('gone');
});
is($node->safe_psql('window030', q{
	SET ROLE window_095;
	INSERT INTO drawn SELECT idgen.segment_nextval('w') FROM generate_series(1, 100);
	SELECT idgen.segment_currval('w') = (SELECT max(id) FROM drawn);
	RESET ROLE;
	SELECT count(*) FROM idgen.segment_status WHERE biz_tag = 'w';
	SELECT step || '|' || description FROM idgen.segment_alloc WHERE biz_tag = 'w'}),
	"t\n1\n20|altered before the update",
	'0.3.0 on the library of 0.4.0: tags are created, altered and drawn, a role reads its currval');
my ($ret, $out, $err) = try_sql($node, q{SELECT idgen.segment_nextval('gone')}, db => 'window030');
like($err, qr/42704: segment tag "gone" does not exist/, 'a tag dropped before the update is gone');
$node->safe_psql('window030', q{
	ALTER ROLE window_095b RENAME TO window_095c;
	REASSIGN OWNED BY window_095c TO window_095;
	DROP OWNED BY window_095c;
	DROP ROLE window_095c;
});
is($node->safe_psql('window030', q{SELECT count(*) FROM idgen.segment_alloc WHERE biz_tag = 'w'}),
	'1', 'role statements before the update leave the tags alone');
$node->safe_psql('window030', 'ALTER EXTENSION idgen UPDATE');
is($node->safe_psql('window030', q{
	SET ROLE window_095;
	WITH d AS (INSERT INTO drawn SELECT idgen.segment_nextval('w')
		FROM generate_series(1, 100) RETURNING id)
	SELECT min(id) > (SELECT max(id) FROM drawn WHERE id NOT IN (SELECT id FROM d)) FROM d;
	RESET ROLE;
	SELECT count(*) - count(DISTINCT id) FROM drawn}),
	"t\n0", 'after the update the tag continues above every earlier ID, none twice');
$node->safe_psql('window030', 'DROP EXTENSION idgen');
$node->safe_psql('postgres', 'DROP DATABASE window030');

# DROP EXTENSION leaves no object behind: no extension row, no object that
# depended on it, no schema, table, function, type or trigger
for my $db ('postgres', 'fresh')
{
	my $extoid = $node->safe_psql($db,
		"SELECT oid FROM pg_extension WHERE extname = 'idgen'");
	$node->safe_psql($db, 'DROP EXTENSION idgen');
	is($node->safe_psql($db, qq{
		SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'idgen')
		     + (SELECT count(*) FROM pg_depend WHERE refobjid = $extoid
		          AND refclassid = 'pg_extension'::regclass)
		     + (SELECT count(*) FROM pg_depend WHERE objid = $extoid
		          AND classid = 'pg_extension'::regclass)}),
		'0', "DROP EXTENSION ($db): no extension row and no dependency left");
	is($node->safe_psql($db, q{
		SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = 'idgen')
		     + (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		          WHERE n.nspname = 'idgen')
		     + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		          WHERE n.nspname = 'idgen')
		     + (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
		          WHERE n.nspname = 'idgen')
		     + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'segment_alloc_guard%')
		     + (SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'idgen%')}),
		'0', "DROP EXTENSION ($db) leaves no schema, table, function, type or trigger behind");
}

# README, Uninstalling: without CASCADE, DROP EXTENSION names what uses
# idgen; with it, every column default, view, index, CHECK constraint and
# generated column that calls an idgen function goes, and the rows stay
$node->safe_psql('postgres', 'CREATE DATABASE uninstall');
$node->safe_psql('uninstall', q{
	CREATE EXTENSION idgen;
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
		name text, gene int GENERATED ALWAYS AS (idgen.gene_of(name, 3)) STORED,
		CHECK (idgen.gene_of(name, 3) >= 0));
	CREATE INDEX orders_ts ON orders (idgen.id_timestamp(id, 'idgen'));
	CREATE VIEW order_times AS SELECT id, idgen.id_timestamp(id, 'idgen') AS ts FROM orders;
	INSERT INTO orders (id, name) VALUES (383301932539711489, 'testroy'), (383301932539711490, 'pear');
});
($ret, $out, $err) = try_sql($node, 'DROP EXTENSION idgen', db => 'uninstall');
like($err, qr/ERROR:  2BP01: .*\n.*default value for column id of table orders depends on function idgen\.snowflake_nextval\(\)/,
	'DROP EXTENSION without CASCADE names the column default that uses idgen (2BP01)');
$node->safe_psql('uninstall', 'DROP EXTENSION idgen CASCADE');
is($node->safe_psql('uninstall', q{
	SELECT (SELECT count(*) FROM pg_attrdef WHERE adrelid = 'orders'::regclass)
	     || ' ' || (SELECT count(*) FROM pg_class WHERE relname IN ('order_times', 'orders_ts'))
	     || ' ' || (SELECT count(*) FROM pg_constraint WHERE conrelid = 'orders'::regclass AND contype = 'c')
	     || ' ' || (SELECT count(*) FROM pg_attribute WHERE attrelid = 'orders'::regclass
	                  AND attname = 'gene' AND NOT attisdropped)
	     || ' ' || (SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM orders)}),
	'0 0 0 0 383301932539711489:testroy,383301932539711490:pear',
	'DROP EXTENSION idgen CASCADE drops the default, view, index, CHECK and generated column; the rows stay');

# --- What 0.3.0 and older leave in the way of 0.4.0 (README, Updating) ---
# A dump made with 0.3.0 names the extension's schema; restored into a
# database where CREATE EXTENSION idgen (0.4.0) ran first, its only error is
# the schema that already exists, and its rows load
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');	# the worker's reservation
wait_ready($node);
$node->safe_psql('postgres', 'CREATE DATABASE old030');
$node->safe_psql('old030', q{
	CREATE EXTENSION idgen VERSION '0.3.0';
	SELECT idgen.segment_create('t', 1, 10);
	CREATE TABLE x (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(), v int);
	INSERT INTO x (v) SELECT idgen.segment_nextval('t') FROM generate_series(1, 25);
});
my $old_snow = $node->safe_psql('old030', 'SELECT max(id) FROM x');
my $dump = $PostgreSQL::Test::Utils::tmp_check . '/old030.dump';
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-h', $node->host, '-p', $node->port, 'old030' ],
	'pg_dump of a database with idgen 0.3.0');
$node->safe_psql('postgres', 'CREATE DATABASE new040');
$node->safe_psql('new040', 'CREATE EXTENSION idgen');
my (undef, $stderr) =
  run_command([ 'pg_restore', '-d', 'new040', '-h', $node->host, '-p', $node->port, $dump ]);
my @errors = grep { /ERROR:/ } split /\n/, $stderr;
is(scalar @errors, 1, 'restoring the 0.3.0 dump after CREATE EXTENSION: one error')
  or diag $stderr;
like($errors[0] // '', qr/schema "idgen" already exists/, 'the schema that already exists');
is($node->safe_psql('new040', q{
	SELECT extversion || '|' || (SELECT count(*) FROM x) FROM pg_extension WHERE extname = 'idgen'}),
	"$current|25", "the extension is $current and the rows are restored");
cmp_ok($node->safe_psql('new040', q{SELECT idgen.segment_nextval('t')}), '>', 25,
	'the restored tag continues above its IDs');
cmp_ok($node->safe_psql('new040', q{SET ROLE plain_095; SELECT idgen.segment_nextval('t')}),
	'>', 25, 'a role that is not the owner draws from the restored tag of 0.3.0');
cmp_ok($node->safe_psql('new040', q{INSERT INTO x (v) VALUES (0) RETURNING id}), '>', $old_snow,
	'and snowflake IDs above the restored ones');

# DROP EXTENSION of 0.3.0 leaves its schema: CREATE EXTENSION (0.4.0)
# refuses it until it is dropped; the tags are kept meanwhile
$node->safe_psql('old030', 'DROP EXTENSION idgen CASCADE');
($ret, $out, $err) = try_sql($node, 'CREATE EXTENSION idgen', db => 'old030');
like($err, qr/42P06: schema "idgen" already exists/,
	'after DROP EXTENSION of 0.3.0, CREATE EXTENSION meets its empty schema (42P06)');
$node->safe_psql('old030', 'DROP SCHEMA idgen; CREATE EXTENSION idgen');
($ret, $out, $err) = try_sql($node, q{SELECT idgen.segment_create('t', 1, 10)}, db => 'old030');
like($err, qr/22023: segment tag "t" cannot start at 1/,
	'after DROP SCHEMA idgen it installs, and the 0.3.0 tag is kept');

$node->stop;
done_testing();
