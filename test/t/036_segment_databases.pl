# Segment IDs in every database: idgen.database (served by the idgen
# worker) and two others (each served by an "idgen segment worker" of its
# own) each have a tag 'order', and they are three tags.  pgbench clients
# draw from all three databases at once, with the step held at 10 so every
# database's worker allocates thousands of segments: no errors, no
# duplicate within a database, each client's IDs increase, the status view
# shows each database its own tag.  After its segment worker is killed,
# after a restart and after an immediate shutdown, every database continues
# above its own old max.  DROP DATABASE, CREATE DATABASE ... TEMPLATE, ALTER
# DATABASE ... RENAME TO and ... SET TABLESPACE succeed right after draws in
# the database, and draws there continue above the old IDs.  A server
# without a free background worker slot refuses segment IDs in a database
# other than idgen.database with SQLSTATE 53400, and serves idgen.database.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('segment_databases', conf => qq{
idgen.segment_max_step = 10
idgen.segment_wait_timeout = '60s'
max_connections = 40
max_worker_processes = 8
});
$node->start;

my @dbs = ('postgres', 'db_two', 'db_three');
for my $db (@dbs)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db") if $db ne 'postgres';
	$node->safe_psql($db, q{
		CREATE EXTENSION idgen;
		SELECT idgen.segment_create('order', step => 10);
		CREATE TABLE drawn (n bigserial, client int, id bigint);
	});
}

# 3 databases x 3 clients x 300 transactions x 20 IDs, all at once
my %bench;
for my $db (@dbs)
{
	$bench{$db} = start_pgbench($node,
		q{INSERT INTO drawn (client, id) SELECT :client_id, idgen.segment_nextval('order') FROM generate_series(1, 20);},
		clients => 3, jobs => 1, transactions => 300, db => $db);
}
for my $db (@dbs)
{
	my ($out, $err) = finish_pgbench($bench{$db});
	like($out, qr{processed: 900/900}, "$db: every transaction ran");
	is($err, '', "$db: no error");
}

my %max;
for my $db (@dbs)
{
	is($node->safe_psql($db, 'SELECT count(*), count(DISTINCT id) FROM drawn'),
		'18000|18000', "$db: 18,000 IDs, all distinct");
	is($node->safe_psql($db, q{
		SELECT count(*) FROM (
			SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM drawn) s
		WHERE id <= prev}),
		'0', "$db: each client's IDs strictly increase");
	is($node->safe_psql($db, q{
		SELECT min(d.id) = 1 AND max(d.id) <= a.max_id
		  FROM drawn d, idgen.segment_alloc a WHERE a.biz_tag = 'order'
		 GROUP BY a.max_id}),
		't', "$db: its own tag, from 1 up to its own max_id");
	is($node->safe_psql($db, q{
		SELECT string_agg(biz_tag, ',') || ' ' || bool_and(fetches >= 1800)
		  FROM idgen.segment_status}),
		'order true', "$db: the status view shows its own tag and allocations");
	$max{$db} = $node->safe_psql($db, 'SELECT max(id) FROM drawn');
}
# (Each exits after a while without work, so some may have gone already)
is($node->safe_psql('postgres', q{
	SELECT count(*) = count(DISTINCT datname) AND count(*) <= 2
	  AND bool_and(datname IN ('db_two', 'db_three'))
	  FROM pg_stat_activity
	 WHERE backend_type = 'idgen segment worker'}),
	't', 'at most one segment worker for each database other than idgen.database');

# A segment worker that dies is started again by the next call that needs
# it; a clean restart, then an immediate shutdown: every database continues
# above its own old max
for my $how ('killed', 'fast', 'immediate')
{
	if ($how eq 'killed')
	{
		is($node->safe_psql('postgres', q{
			SELECT bool_and(pg_terminate_backend(pid)) IS NOT FALSE FROM pg_stat_activity
			 WHERE backend_type = 'idgen segment worker'}),
			't', 'the running segment workers terminated');
	}
	else
	{
		$node->stop($how);
		$node->start;
	}
	for my $db (@dbs)
	{
		my $ids = $node->safe_psql($db, q{
			INSERT INTO drawn (client, id)
			SELECT 0, idgen.segment_nextval('order') FROM generate_series(1, 1000)
			RETURNING id});
		my @ids = split /\n/, $ids;
		is(scalar @ids, 1000, "$db, workers $how: 1000 IDs");
		cmp_ok(min_of(@ids), '>', $max{$db},
			"$db, workers $how: every ID above the old max");
		$max{$db} = max_of(@ids);
		is($node->safe_psql($db, 'SELECT count(*) = count(DISTINCT id) FROM drawn'),
			't', "$db, workers $how: still no duplicate");
	}
}

# DROP DATABASE right after draws: the database's segment worker is stopped
# first, so the drop is not refused for it; a database made again under
# the same name starts with no tags
my $last = $dbs[-1];
$node->safe_psql('postgres', "CREATE DATABASE db_drop");
$node->safe_psql('db_drop', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('order', 1, 100);
});
is($node->safe_psql('db_drop', q{SELECT count(idgen.segment_nextval('order')) FROM generate_series(1, 500)}),
	'500', 'db_drop: 500 IDs');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE backend_type = 'idgen segment worker' AND datname = 'db_drop'}),
	'1', 'db_drop has its segment worker');
my ($rc, $out, $err) = $node->psql('postgres', 'DROP DATABASE db_drop');
is($rc, 0, 'DROP DATABASE succeeds right after draws');
is($err, '', 'and says nothing');
$node->safe_psql('postgres', "CREATE DATABASE db_drop");
$node->safe_psql('db_drop', 'CREATE EXTENSION idgen');
($rc, $out, $err) = $node->psql('db_drop', q{SELECT idgen.segment_nextval('order')});
like($err, qr/segment tag "order" does not exist/, 'the new db_drop has no tag order');
# The other databases go on
my $ids = $node->safe_psql($last, q{
	SELECT idgen.segment_nextval('order') FROM generate_series(1, 10)});
cmp_ok(min_of(split /\n/, $ids), '>', $max{$last}, "$last continues above its max");

# CREATE DATABASE ... TEMPLATE, ALTER DATABASE ... RENAME TO and ... SET
# TABLESPACE right after draws in the database: its segment worker is
# stopped first, as for DROP DATABASE; draws there work again afterwards,
# above the IDs drawn before
my $tsdir = $node->basedir . '/ts_moved';
mkdir $tsdir or die "mkdir $tsdir: $!";
$node->safe_psql('postgres', "CREATE TABLESPACE ts_moved LOCATION '$tsdir'");
$node->safe_psql('postgres', 'CREATE DATABASE db_cmd');
$node->safe_psql('db_cmd', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('order', 1, 100);
	CREATE TABLE drawn (id bigint);
});
my $db = 'db_cmd';
my $cmd_max = 0;
for my $step (
	[ 'CREATE DATABASE db_copy TEMPLATE db_cmd', 'db_cmd' ],
	[ 'ALTER DATABASE db_cmd RENAME TO db_renamed', 'db_renamed' ],
	[ 'ALTER DATABASE db_renamed SET TABLESPACE ts_moved', 'db_renamed' ])
{
	my ($sql, $next) = @$step;
	my $drawn = $node->safe_psql($db, q{
		INSERT INTO drawn SELECT idgen.segment_nextval('order')
		  FROM generate_series(1, 500) RETURNING id});
	my @drawn = split /\n/, $drawn;
	cmp_ok(min_of(@drawn), '>', $cmd_max, "$db: 500 IDs above the earlier ones before: $sql");
	$cmd_max = max_of(@drawn);
	($rc, $out, $err) = $node->psql('postgres', $sql);
	is($rc, 0, "$sql succeeds right after draws");
	is($err, '', "$sql says nothing");
	$db = $next;
}
$ids = $node->safe_psql($db, q{
	INSERT INTO drawn SELECT idgen.segment_nextval('order')
	  FROM generate_series(1, 500) RETURNING id});
cmp_ok(min_of(split /\n/, $ids), '>', $cmd_max,
	"$db: draws work again after the three commands, above the earlier IDs");
is($node->safe_psql($db, 'SELECT count(*), count(DISTINCT id) FROM drawn'),
	'2000|2000', "$db: 2,000 IDs, all distinct");
is($node->safe_psql('postgres',
		"SELECT spcname FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace WHERE datname = '$db'"),
	'ts_moved', "$db is in the new tablespace");
$ids = $node->safe_psql('db_copy', q{
	SELECT idgen.segment_nextval('order') FROM generate_series(1, 100)});
is(scalar(my @c = split /\n/, $ids), 100, 'the copy draws from its own copy of the tag');

$node->stop;

# No background worker slot left for a segment worker: the idgen worker
# takes the only one (and no logical replication launcher runs)
my $full = idgen_node('segment_databases_full', conf => qq{
max_worker_processes = 1
max_logical_replication_workers = 0
});
$full->start;
$full->safe_psql('postgres', 'CREATE DATABASE db_full');
for my $db ('postgres', 'db_full')
{
	$full->safe_psql($db, q{
		CREATE EXTENSION idgen;
		SELECT idgen.segment_create('t');
	});
}
my $ret;
($ret, $out, $err) = try_sql($full, q{SELECT idgen.segment_nextval('t')},
	db => 'db_full');
isnt($ret, 0, 'no free worker slot: a draw in another database fails');
like($err,
	qr/ERROR:  53400: could not start the idgen segment worker of database "db_full"/,
	'no free worker slot: the error names the database, SQLSTATE 53400');
like($err, qr/HINT:  Raise max_worker_processes/,
	'no free worker slot: the hint says what to raise');
is($full->safe_psql('postgres', q{SELECT idgen.segment_nextval('t')}), '1',
	'no free worker slot: idgen.database is served by the idgen worker');
$full->stop;

done_testing();
