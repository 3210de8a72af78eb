# 064_tags_survive.pl
#	Segment tags outlive the extension: after DROP EXTENSION idgen CASCADE
#	or DROP SCHEMA idgen CASCADE, and CREATE EXTENSION idgen, a tag that
#	had issued IDs is created again only above them.
#
# Asserts:
#  - DROP EXTENSION idgen CASCADE, a crash right after it, CREATE
#    EXTENSION: segment_create of the tag below its old max_id fails with
#    22023 naming the smallest allowed start; created above, its IDs are
#    above every earlier one;
#  - the same for a tag dropped before (segment_dropped); DROP SCHEMA idgen
#    CASCADE is refused (the schema belongs to the extension);
#  - pg_restore --clean of a dump older than the tags' last allocations:
#    the restored tags continue above every ID handed out, none repeats;
#  - DROP DATABASE removes the database's kept tags;
#  - DROP EXTENSION in idgen.database warns that snowflake IDs stop; created
#    again while the same idgen worker runs (it allocated from the old
#    table), a tag created again there continues above every earlier ID;
#  - on a central segment server without the preload, tags outlive DROP
#    EXTENSION CASCADE made by a session that never loaded the library
#    (the extension's event trigger loads it).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('tags');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION idgen');

# Draw n IDs of a tag in database db
sub draw_tag
{
	my ($db, $tag, $n) = @_;
	return [ map { $_ + 0 } split /\n/, $node->safe_psql($db,
		"SELECT idgen.segment_nextval('$tag') FROM generate_series(1, $n)") ];
}

$node->safe_psql('app', q{
	SELECT idgen.segment_create('u', 1, 10);
	SELECT idgen.segment_create('gone', 1, 10);
});
my @u = @{ draw_tag('app', 'u', 3) };
is_deeply(\@u, [ 1, 2, 3 ], 'tag u hands out 1, 2, 3');
push @u, @{ draw_tag('app', 'u', 500) };
my @gone = @{ draw_tag('app', 'gone', 50) };
$node->safe_psql('app', q{SELECT idgen.segment_drop('gone')});
my $u_max = $node->safe_psql('app', q{SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'u'});

# DROP EXTENSION ... CASCADE, then a crash before anything else
my ($ret, $out, $err) = try_sql($node, 'DROP EXTENSION idgen CASCADE', db => 'app');
is($ret, 0, 'DROP EXTENSION idgen CASCADE succeeds') or diag $err;
crash_node($node);
$node->start;
$node->safe_psql('app', 'CREATE EXTENSION idgen');
($ret, $out, $err) = try_sql($node, q{SELECT idgen.segment_create('u', 1, 10)}, db => 'app');
like($err, qr/22023: segment tag "u" cannot start at 1/,
	'after DROP EXTENSION, a crash and CREATE EXTENSION, the tag cannot start at 1 again');
my $min_start = $u_max + 1;
like($err, qr/start of $min_start or more/, 'the hint names the smallest start');
($ret, $out, $err) = try_sql($node, q{SELECT idgen.segment_create('gone', 1, 10)}, db => 'app');
like($err, qr/22023: segment tag "gone" cannot start at 1/, 'nor can a tag dropped before');
$node->safe_psql('app', "SELECT idgen.segment_create('u', $min_start, 10)");
my $u2 = draw_tag('app', 'u', 200);
cmp_ok(min_of(@$u2), '>', max_of(@u), 'created above, the tag continues above every earlier ID');
push @u, @$u2;

# DROP SCHEMA idgen CASCADE: the schema belongs to the extension, so it is
# refused and nothing is lost
($ret, $out, $err) = try_sql($node, 'DROP SCHEMA idgen CASCADE', db => 'app');
like($err, qr/2BP01: cannot drop schema idgen because extension idgen requires it/,
	'DROP SCHEMA idgen CASCADE is refused: the schema is the extension\'s');
push @u, @{ draw_tag('app', 'u', 100) };
cmp_ok(min_of(@u[-100 .. -1]), '>', max_of(@u[0 .. $#u - 100]), 'and the tag goes on');

# pg_restore --clean of a dump older than the tag's last allocations
my $dump = $PostgreSQL::Test::Utils::tmp_check . '/app.dump';
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-h', $node->host, '-p', $node->port, 'app' ],
	'pg_dump of the database');
push @u, @{ draw_tag('app', 'u', 2000) };
command_ok([ 'pg_restore', '--clean', '--if-exists', '-d', 'app', '-h', $node->host,
		'-p', $node->port, $dump ], 'pg_restore --clean of the older dump');
my $u3 = draw_tag('app', 'u', 500);
cmp_ok(min_of(@$u3), '>', max_of(@u),
	'after restoring the older dump, the tag continues above every ID handed out');
is(scalar(duplicates(\@u, $u3)), 0, 'no ID of the tag twice');

# DROP DATABASE removes the database's kept tags
my $dboid = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'app'});
ok(-e $node->data_dir . "/idgen.tags.$dboid", 'the kept tags are in the data directory');
$node->safe_psql('postgres', 'DROP DATABASE app');
ok(!-e $node->data_dir . "/idgen.tags.$dboid", 'DROP DATABASE removes them');

# A tag of idgen.database, whose segments the idgen worker allocates
$node->safe_psql('postgres', q{SELECT idgen.segment_create('p', 1, 10)});
my @p = @{ draw_tag('postgres', 'p', 300) };
my $p_max = $node->safe_psql('postgres', q{SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'p'});

# DROP EXTENSION in idgen.database stops snowflake IDs of the whole server:
# it says so, with a hint
($ret, $out, $err) = try_sql($node, 'DROP EXTENSION idgen');
is($ret, 0, 'DROP EXTENSION idgen in idgen.database goes through');
like($err, qr/WARNING:  01000: snowflake IDs of every database of this server stop until extension idgen is created again in database "postgres"/,
	'with a warning that snowflake IDs stop');
like($err, qr/HINT:  Run CREATE EXTENSION idgen in this database again/, 'and a hint');

# Created again while the same idgen worker runs: the worker finds a new
# idgen.segment_alloc and forgets every segment it buffered from the old
# one; the tag created again continues above every earlier ID
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
$node->safe_psql('postgres', 'SELECT idgen.segment_create(\'p\', ' . ($p_max + 1) . ', 10)');
my $p2 = draw_tag('postgres', 'p', 300);
cmp_ok(min_of(@$p2), '>', max_of(@p),
	'in idgen.database too, the tag created again continues above every earlier ID');
is(scalar(duplicates(\@p, $p2)), 0, 'no ID of it twice');

$node->stop;

# A central segment server, idgen installed but not preloaded: its tags are
# rows, and issuers draw through segment_allocate
my $central = idgen_node('central', preload => 0);
$central->start;
$central->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	INSERT INTO idgen.segment_alloc (biz_tag, max_id, step) VALUES ('order', 0, 100)});
my $alloc = q{SELECT first_id, first_id + len - 1 FROM idgen.segment_allocate('order', 100, 0)};
$central->safe_psql('postgres', $alloc) for 1 .. 5;
my ($first, $last) = split /\|/, $central->safe_psql('postgres', $alloc);
is("$first|$last", '501|600', 'the central server has handed out 1 to 600');
# A new session that has called nothing of idgen's drops the extension
is($central->safe_psql('postgres', q{
	SELECT count(*) FROM pg_extension WHERE extname = 'idgen'}), '1', 'extension present');
($ret, $out, $err) = try_sql($central, 'DROP EXTENSION idgen CASCADE');
is($ret, 0, 'DROP EXTENSION idgen CASCADE without the preload succeeds') or diag $err;
$central->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	INSERT INTO idgen.segment_alloc (biz_tag, max_id, step) VALUES ('order', 0, 100)});
($first) = split /\|/, $central->safe_psql('postgres', $alloc);
cmp_ok($first, '>', 600,
	'without the preload too, a tag created again after DROP EXTENSION continues above every ID handed out');
$central->stop;
done_testing();
