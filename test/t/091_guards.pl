# 091_guards.pl
#	Guards of a running server against table edits and running out.
#
# Asserts:
#  - a segment tag whose row is put back to an older copy while the server
#    runs (DELETE and INSERT with triggers off, as pg_restore -a
#    --disable-triggers of an older dump does) never hands out an ID again:
#    the worker logs a WARNING with the tag, the table's max_id and the one
#    it remembers, goes on above the remembered one and writes it back.
# Outcomes only: no ID twice, the log line, the table; never durations.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('guards');
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

# Draw n IDs of a tag
sub draw_tag
{
	my ($tag, $n) = @_;
	return [ map { $_ + 0 } split /\n/, $node->safe_psql('postgres',
		"SELECT idgen.segment_nextval('$tag') FROM generate_series(1, $n)") ];
}

# --- A tag never goes back while the server runs -------------------------

$node->safe_psql('postgres', q{SELECT idgen.segment_create('orders', 1, 100)});
my @ids = @{ draw_tag('orders', 300) };
# The "dump": the row as it is now
$node->safe_psql('postgres',
	q{CREATE TABLE old_row AS SELECT * FROM idgen.segment_alloc WHERE biz_tag = 'orders'});
push @ids, @{ draw_tag('orders', 3000) };
my $drawn_max = max_of(@ids);
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL session_replication_role = replica;
	DELETE FROM idgen.segment_alloc WHERE biz_tag = 'orders';
	INSERT INTO idgen.segment_alloc SELECT * FROM old_row;
	COMMIT;
});
my $restored = $node->safe_psql('postgres',
	q{SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'orders'});
cmp_ok($restored, '<', $drawn_max, "the restored row's max_id is below IDs already drawn");
my @after = @{ draw_tag('orders', 3000) };
my %seen = map { $_ => 1 } @ids;
is(scalar(grep { $seen{$_} } @after), 0, 'after the row went back, no ID is drawn again');
cmp_ok(min_of(@after), '>', $drawn_max, 'every new ID is above every earlier one');
my $log = slurp_file($node->logfile, $log_offset);
like($log,
	qr/WARNING:  idgen: segment tag "orders" went back: idgen.segment_alloc says max_id $restored, but this server already allocated up to \d+/,
	'the worker logs the disagreement with the tag and both values');
cmp_ok($node->safe_psql('postgres',
		q{SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'orders'}),
	'>=', max_of(@after), 'and wrote the higher value back');

$node->stop;
done_testing();
