# Two masters replicating to each other with PostgreSQL's own logical
# replication (16 and later: CREATE SUBSCRIPTION ... WITH (origin = none,
# copy_data = false)), the setup of docs/many-servers.md, "Several masters":
# idgen.node_id 1 and 2, snowflake defaults on both, a segment tag with a
# disjoint range on each.  4 pgbench clients on each master insert at once;
# both end with the same rows, no ID twice, no apply error.  Skipped before
# PostgreSQL 16 (no origin option).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;
use TwoMasters;

my $major = PostgreSQL::Test::Cluster->new('probe')->pg_version->major;
plan skip_all => "PostgreSQL $major has no origin = none for subscriptions (16 and later)"
  if $major < 16;

my ($m1, $m2) = make_masters(plugins => [ 'pgoutput', 'test_decoding' ]);

$_->safe_psql('postgres', 'CREATE PUBLICATION masters FOR TABLE orders, invoices;')
  for $m1, $m2;
for my $pair ([ $m1, $m2 ], [ $m2, $m1 ])
{
	my ($sub, $pub) = @$pair;
	$sub->safe_psql('postgres', 'CREATE SUBSCRIPTION from_' . $pub->name
		  . " CONNECTION '" . dsn($pub) . "' PUBLICATION masters"
		  . ' WITH (origin = none, copy_data = false, disable_on_error = true);');
}
for my $pair ([ $m1, $m2 ], [ $m2, $m1 ])
{
	my ($sub, $pub) = @$pair;
	$pub->wait_for_catchup('from_' . $pub->name);
}

load_both($m1, $m2);
check_converged($m1, $m2);
for my $m ($m1, $m2)
{
	is($m->safe_psql('postgres', q{SELECT count(*) FROM pg_subscription WHERE subenabled}),
		'1', $m->name . ': its subscription was not disabled by an apply error');
	# Every error counter: apply_error_count and sync_error_count (15 to
	# 18), apply_error_count, sync_table_error_count and
	# sync_seq_error_count (19)
	is($m->safe_psql('postgres',
			q{SELECT count(DISTINCT e.key) >= 2, coalesce(sum(e.value::bigint), 0)
			  FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) e
			  WHERE e.key LIKE '%error_count'}),
		't|0', $m->name . ': zero apply errors');
}

$_->stop for $m1, $m2;
done_testing();
