# 119_promotions.pl
#	Two standbys of one primary both promoted, with node ids that follow
#	the timeline (idgen.node_timeline_bits = 2, issue 48, point 1):
#
# 1. Every node archives to one WAL archive and every standby restores
#    from it: the second promotion sees the first one's history file in
#    the archive and takes timeline 3, so the two new primaries issue under
#    node ids 5 * 4 + 2 and 5 * 4 + 3: none of the snowflake IDs drawn from
#    both is the other's.  No WARNING of a promotion without an archive.
#    Segment IDs: both continue above the max_id of the tag they replayed,
#    and each takes only IDs congruent to its timeline modulo 4, so none of
#    the segment IDs drawn from both is the other's either, and all are
#    above the old primary's (which were congruent to 1).
# 2. No archive (restore_command empty): both promotions take timeline 2,
#    so node id 22 on both, and each server says so in a WARNING at its
#    promotion, naming the node id and the remedies.  Their IDs may repeat
#    (docs/high-availability.md): not drawn here.
# The old primary is stopped before the promotions; each standby has
# replayed all of its WAL.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $conf = "idgen.node_timeline_bits = 2\n";
my $warning = qr/WARNING:  idgen: this server was promoted to timeline (\d+) without a WAL archive, and its snowflake IDs carry node id (\d+)/;

# A primary with its standbys a and b, made from one base backup
sub pair
{
	my ($name, $archive) = @_;
	my $primary = idgen_node("${name}_p", node_id => 5, allows_streaming => 1,
		conf => $conf);
	$primary->enable_archiving if $archive;
	start_node($primary);
	$primary->safe_psql('postgres', 'CREATE EXTENSION idgen');
	wait_ready($primary);
	$primary->safe_psql('postgres', q{
		SELECT idgen.snowflake_nextval() FROM generate_series(1, 100);
		SELECT idgen.segment_create('orders', 1, 100);
		CREATE TABLE old_seg AS SELECT idgen.segment_nextval('orders') AS id FROM generate_series(1, 250);
	});
	$primary->backup("${name}_backup");
	my @standbys;
	for my $s ('a', 'b')
	{
		my $n = PostgreSQL::Test::Cluster->new("${name}_$s");
		$n->init_from_backup($primary, "${name}_backup", has_streaming => 1,
			has_restoring => $archive ? 1 : 0);
		# after a promotion, into the same archive
		$n->append_conf('postgresql.conf',
			"archive_mode = on\narchive_command = 'cp \"%p\" \"" . $primary->archive_dir . "/%f\"'\n")
		  if $archive;
		start_node($n);
		push @standbys, $n;
	}
	$primary->safe_psql('postgres', 'CHECKPOINT');
	$primary->wait_for_catchup($_) for @standbys;
	$primary->stop;
	return ($primary, @standbys);
}

sub timeline
{
	my ($n) = @_;
	return $n->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()');
}

# --- 1. one archive ---
my ($p1, $a1, $b1) = pair('arch', 1);
$a1->promote;
$a1->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
# the second promotion once the first one's history file is archived
wait_until('the first promotion\'s history file in the archive',
	sub { -e $p1->archive_dir . '/00000002.history' });
$b1->promote;
$b1->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
$_->safe_psql('postgres', 'CHECKPOINT') for $a1, $b1;
is(timeline($a1) . ' ' . timeline($b1), '2 3',
	'one archive: the two promotions took timelines 2 and 3');
my %ids;
my %node;
for my $n ($a1, $b1)
{
	wait_ready($n);
	$n->safe_psql('postgres',
		'CREATE TABLE drawn AS SELECT idgen.snowflake_nextval() AS id FROM generate_series(1, 5000)');
	$ids{ $n->name } = [ split /\n/, $n->safe_psql('postgres', 'SELECT id FROM drawn') ];
	$n->safe_psql('postgres',
		q{CREATE TABLE seg AS SELECT idgen.segment_nextval('orders') AS id FROM generate_series(1, 5000)});
	$node{ $n->name } = $n->safe_psql('postgres',
		'SELECT string_agg(DISTINCT d.node_id::text, \',\') FROM drawn, LATERAL idgen.id_decode(drawn.id) d');
}
is("$node{arch_a} $node{arch_b}", '22 23', 'one archive: node ids 22 and 23');
my %seen;
$seen{$_}++ for @{ $ids{arch_a} }, @{ $ids{arch_b} };
is(scalar(grep { $seen{$_} > 1 } keys %seen), 0,
	'one archive: no snowflake ID of the 10,000 drawn from both came from both');
my %seg;
for my $n ($a1, $b1)
{
	$seg{$_}++ for split /\n/, $n->safe_psql('postgres', 'SELECT id FROM seg');
}
is(scalar(keys %seg), 10000, 'one archive: no segment ID of the 10,000 drawn from both came from both');
is($a1->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE id % 4 = 2) || '|' || count(*) FILTER (WHERE id <= (SELECT max(id) FROM old_seg))
	FROM seg}) . ' ' . $b1->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE id % 4 = 3) || '|' || count(*) FILTER (WHERE id <= (SELECT max(id) FROM old_seg))
	FROM seg}), '5000|0 5000|0',
	'each took only IDs of its timeline modulo 4, all above the old primary\'s');
is($a1->safe_psql('postgres', q{SELECT count(*) FILTER (WHERE id % 4 = 1) FROM old_seg}), '250',
	'and the old primary, on timeline 1, took IDs congruent to 1');
for my $n ($a1, $b1)
{
	unlike(slurp_file($n->logfile), $warning,
		$n->name . ': no WARNING of a promotion without an archive');
}
$_->stop for $a1, $b1;

# --- 2. no archive ---
my ($p2, $a2, $b2) = pair('plain', 0);
for my $n ($a2, $b2)
{
	$n->promote;
	$n->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
	wait_ready($n);
	wait_until('the WARNING of ' . $n->name,
		sub { slurp_file($n->logfile) =~ $warning });
	pass($n->name . ': promoted without an archive, a WARNING says so');
	my ($tli, $node) = slurp_file($n->logfile) =~ $warning;
	is("$tli $node", '2 22', $n->name . ': it names timeline 2 and node id 22');
}
like(slurp_file($a2->logfile),
	qr/another standby of the same primary promoted the same way also takes timeline 2 and node id 22.*\n.*HINT:  Archive WAL from every node to one archive/,
	'the WARNING says what repeats and what to do');
$_->stop for $a2, $b2;

done_testing();
