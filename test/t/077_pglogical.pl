# Two masters replicating to each other with pglogical (Debian's
# postgresql-N-pglogical), the setup of docs/many-servers.md, "Several
# masters": idgen.node_id 1 and 2, snowflake defaults on both, a segment tag
# with a disjoint range on each, subscriptions both ways with
# forward_origins '{}'.  4 pgbench clients on each master insert at once;
# both end with the same rows, no ID twice, no duplicate key error.  Skipped
# where pglogical is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;
use TwoMasters;

# The installation's own pg_config (not PATH's) says where extensions are
my $probe = PostgreSQL::Test::Cluster->new('probe');
my $major = $probe->pg_version->major;
my $sharedir = $probe->config_data('--sharedir');
plan skip_all => "pglogical is not installed (Debian: postgresql-$major-pglogical)"
  unless -e "$sharedir/extension/pglogical.control";

my ($m1, $m2) = make_masters(
	libraries => ['pglogical'],
	plugins => [ 'pgoutput', 'test_decoding', 'pglogical_output' ]);

for my $m ($m1, $m2)
{
	my $name = $m->name;
	$m->safe_psql('postgres', qq{
		CREATE EXTENSION pglogical;
		SELECT pglogical.create_node(node_name := '$name', dsn := '} . dsn($m) . q{');
		SELECT pglogical.replication_set_add_table('default', 'orders');
		SELECT pglogical.replication_set_add_table('default', 'invoices');
	});
}
for my $pair ([ $m1, $m2 ], [ $m2, $m1 ])
{
	my ($sub, $prov) = @$pair;
	my $name = 'from_' . $prov->name;
	$sub->safe_psql('postgres', qq{
		SELECT pglogical.create_subscription(
			subscription_name := '$name',
			provider_dsn := '} . dsn($prov) . q{',
			replication_sets := ARRAY['default'],
			synchronize_data := false,
			forward_origins := '{}');
	});
}
for my $pair ([ $m1, 'from_m2' ], [ $m2, 'from_m1' ])
{
	my ($m, $name) = @$pair;
	ok($m->poll_query_until('postgres',
			"SELECT status FROM pglogical.show_subscription_status('$name')", 'replicating'),
		$m->name . ": subscription $name is replicating")
	  or BAIL_OUT('pglogical did not start replicating');
}

load_both($m1, $m2);
check_converged($m1, $m2);
for my $pair ([ $m1, 'from_m2' ], [ $m2, 'from_m1' ])
{
	my ($m, $name) = @$pair;
	is($m->safe_psql('postgres',
			"SELECT status FROM pglogical.show_subscription_status('$name')"),
		'replicating', $m->name . ": subscription $name still replicating after the load");
}

$_->stop for $m1, $m2;
done_testing();
