# Three servers with distinct idgen.node_id are loaded at the same time with
# snowflake and gene IDs, and each is replicated (logical replication) into
# one aggregator table whose primary key is the ID.  Asserts: no apply
# conflict (subscriptions stop on the first error and none did), every row of
# every server arrived, the servers really generated in the same ticks, and
# id_decode names each row's true origin server.  That the servers shared
# ticks is the precondition that makes the merge meaningful; the load is
# run again (a bounded number of times) until it holds, rather than assumed
# from how long the load ran.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my %node_id = (pub1 => 1, pub2 => 2, pub3 => 3);
my @pubs;

# The rows each publisher makes; origin is stamped by the publisher itself
sub table_ddl
{
	my ($origin) = @_;
	return qq{
		CREATE TABLE events (
			id bigint PRIMARY KEY,
			kind text NOT NULL,
			username text,
			origin text NOT NULL DEFAULT '$origin'
		);
	};
}

for my $name (sort keys %node_id)
{
	my $n = idgen_node($name, node_id => $node_id{$name},
		allows_streaming => 'logical', conf => qq{
shared_buffers = 16MB
max_connections = 20
});
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION idgen;' . table_ddl($name)
		  . 'CREATE PUBLICATION merge_pub FOR TABLE events;');
	push @pubs, $n;
}

# The aggregator: idgen loaded only for id_decode (its own node id is unused)
my $agg = idgen_node('agg', node_id => 100, conf => q{
shared_buffers = 16MB
max_logical_replication_workers = 6
max_worker_processes = 12
});
$agg->start;
$agg->safe_psql('postgres', 'CREATE EXTENSION idgen;' . table_ddl('unknown'));
for my $p (@pubs)
{
	my $name = $p->name;
	my $conn = 'host=' . $p->host . ' port=' . $p->port . ' dbname=postgres';
	$agg->safe_psql('postgres', qq{
		CREATE SUBSCRIPTION sub_$name CONNECTION '$conn'
			PUBLICATION merge_pub WITH (disable_on_error = true);
	});
}
for my $p (@pubs)
{
	$agg->wait_for_subscription_sync($p, 'sub_' . $p->name);
}

# Load all three at once: snowflake IDs and gene IDs (3 gene bits)
my $dir = $PostgreSQL::Test::Utils::tmp_check;
append_to_file("$dir/snow.sql", q{
INSERT INTO events (id, kind) SELECT idgen.snowflake_nextval(), 'snowflake' FROM generate_series(1, 50);
});
append_to_file("$dir/gene.sql", q{
INSERT INTO events (id, kind, username)
	SELECT idgen.gene_id(u, 3), 'gene', u
	FROM (SELECT 'user' || (random() * 1000000)::int AS u FROM generate_series(1, 50)) s;
});

# Ticks that carry IDs from all three servers, once the aggregator has
# everything
sub shared_ticks
{
	$_->wait_for_catchup('sub_' . $_->name) for @pubs;
	return $agg->safe_psql('postgres', q{
		SELECT count(*) FROM (
			SELECT (idgen.id_decode(id)).tick FROM events
			GROUP BY 1 HAVING count(DISTINCT origin) = 3) s});
}

my $shared_ticks = 0;
for my $round (1 .. 10)
{
	my @runs;
	for my $p (@pubs)
	{
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start(
			[
				'pgbench', '-n', '-c', '2', '-j', '2', '-T', '5',
				'-f', "$dir/snow.sql", '-f', "$dir/gene.sql",
				'-h', $p->host, '-p', $p->port, 'postgres'
			],
			'>', \$out, '2>', \$err);
		push @runs, [ $p, $h, \$out, \$err ];
	}
	for my $r (@runs)
	{
		my ($p, $h, $out, $err) = @$r;
		ok($h->finish, $p->name . ": pgbench load (round $round) finished without error")
		  or diag($$err);
		like($$out, qr/number of failed transactions: 0 /,
			$p->name . ": no failed transactions (round $round)");
	}
	$shared_ticks = shared_ticks();
	last if $shared_ticks > 0;
	note "round $round: no tick shared by all three servers yet; load again";
}

# Everything each server made reaches the aggregator
my %made;
for my $p (@pubs)
{
	$p->wait_for_catchup('sub_' . $p->name);
	$made{ $p->name } = $p->safe_psql('postgres',
		q{SELECT count(*), sum(id::numeric), count(*) FILTER (WHERE kind = 'gene') FROM events});
	my ($rows, undef, $genes) = split /\|/, $made{ $p->name };
	cmp_ok($genes, '>', 0, $p->name . ": made $rows rows, $genes of them gene IDs");
	diag($p->name . ": $rows rows, $genes gene IDs");
}

is($agg->safe_psql('postgres',
		q{SELECT count(*) FROM pg_subscription WHERE subenabled}),
	'3', 'no subscription was disabled by an apply error');
# Every error counter: apply_error_count and sync_error_count (15 to 18),
# apply_error_count, sync_table_error_count and sync_seq_error_count (19)
is($agg->safe_psql('postgres',
		q{SELECT count(DISTINCT e.key) >= 2, coalesce(sum(e.value::bigint), 0)
		  FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) e
		  WHERE e.key LIKE '%error_count'}),
	't|0', 'zero apply or sync errors: no primary key conflict');
for my $p (@pubs)
{
	my $name = $p->name;
	is($agg->safe_psql('postgres', qq{
			SELECT count(*), sum(id::numeric), count(*) FILTER (WHERE kind = 'gene')
			FROM events WHERE origin = '$name'}),
		$made{$name}, "aggregator holds exactly the rows made on $name");
}

# The servers really generated at the same time: some ticks hold IDs of all
# three, which differ only in their node bits
cmp_ok($shared_ticks, '>', 0,
	"$shared_ticks ticks carry IDs from all three servers");
diag('same (tick, sequence) on two servers: ' . $agg->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT d.tick, d.sequence FROM events e, idgen.id_decode(e.id) d
		GROUP BY 1, 2 HAVING count(DISTINCT e.origin) > 1) s}));

# id_decode shows each row's true origin
is($agg->safe_psql('postgres', q{
	SELECT count(*) FROM events e
	JOIN (VALUES ('pub1', 1), ('pub2', 2), ('pub3', 3)) o(origin, node)
		USING (origin)
	WHERE (idgen.id_decode(e.id)).node_id = o.node}),
	$agg->safe_psql('postgres', 'SELECT count(*) FROM events'),
	'id_decode(id).node_id is the origin server of every row');
is($agg->safe_psql('postgres', q{
	SELECT count(*) FROM events
	WHERE kind = 'gene' AND id % 8 <> idgen.gene_of(username, 3)}),
	'0', 'every gene ID still carries its username\'s gene');

$agg->stop;
$_->stop for @pubs;
done_testing();
