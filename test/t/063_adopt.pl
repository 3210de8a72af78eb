# 063_adopt.pl
#	idgen.adopt_column on a real server, then restarts with the clock behind
#	(issue 21, point 4).
#
# A bigserial column holds rows whose largest value lies 20 s ahead of the
# clock (IDs another node of the same layout made, say).  adopt_column moves
# it to snowflake IDs, advancing the generator above that value; the server
# is then killed at once, restarted with its clock 30 s behind (within
# idgen.max_lead, 1 min here, so IDs flow at once), and restarted cleanly:
# every ID inserted after the adoption is above the column's old maximum,
# and none is issued twice.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('adopt', faketime => 1,
	conf => "idgen.max_lead = '1min'\n");
start_node($node);
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION idgen;
	CREATE TABLE items (id bigserial PRIMARY KEY, src text NOT NULL);
	INSERT INTO items (src) SELECT 'sequence' FROM generate_series(1, 1000);
	SELECT setval('items_id_seq',
		idgen.id_make(clock_timestamp() + interval '20 s', 1023, 4000));
	INSERT INTO items (src) SELECT 'ahead' FROM generate_series(1, 100);
});
wait_ready($node);

my $old_max = $node->safe_psql('postgres', 'SELECT max(id) FROM items') + 0;
my @all = map { $_ + 0 } split /\n/,
  $node->safe_psql('postgres', 'SELECT id FROM items');

$node->safe_psql('postgres', "SELECT idgen.adopt_column('items', 'id')");
is( $node->safe_psql(
		'postgres',
		"SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'items'::regclass"
	),
	'idgen.snowflake_nextval()',
	'the column draws snowflake IDs');
is($node->safe_psql('postgres', "SELECT to_regclass('items_id_seq') IS NULL"),
	't', "the bigserial's sequence is gone");

# Insert rows; every new ID is above every ID before
my $max = $old_max;

sub insert_checked
{
	my ($label) = @_;
	my $ids = [ map { $_ + 0 } split /\n/,
		  $node->safe_psql('postgres',
			"INSERT INTO items (src) SELECT '$label' FROM generate_series(1, 500) RETURNING id"
		  ) ];

	is(scalar @$ids, 500, "$label: 500 rows inserted");
	cmp_ok(min_of(@$ids), '>', $old_max,
		"$label: every new ID is above the column's old maximum");
	cmp_ok(min_of(@$ids), '>', $max,
		"$label: every new ID is above every ID before");
	$max = max_of($max, @$ids);
	push @all, @$ids;
	return;
}

# Killed right after the adoption, restarted with the clock 30 s behind
crash_node($node, all => 1);
set_clock($node, '-30');
start_node($node);
wait_ready($node);
is( $node->safe_psql('postgres',
		"SELECT clock_timestamp() < idgen.id_timestamp($old_max)"),
	't',
	'after the crash the wall clock is below the old maximum');
insert_checked('after a crash, clock 30 s back');

# Clean restart, the clock still behind
$node->stop;
start_node($node);
wait_ready($node);
insert_checked('after a clean restart, clock 30 s back');

my @dups = duplicates(\@all);
is(scalar @dups, 0, 'no ID issued twice');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM items'),
	't', 'the table holds no duplicate');
note scalar(@all) . " IDs checked";

$node->stop;
no_unexpected_errors($node);
done_testing();
