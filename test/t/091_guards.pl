# 091_guards.pl
#	Guards of a running server against table edits and running out.
#
# Asserts:
#  - a segment tag whose row is put back to an older copy while the server
#    runs (DELETE and INSERT with triggers off, as pg_restore -a
#    --disable-triggers of an older dump does) never hands out an ID again:
#    the worker logs a WARNING with the tag, the table's max_id and the one
#    it remembers, goes on above the remembered one and writes it back;
#    after a restart (nothing remembered), a row deleted and put back
#    the same way goes on above its tombstone in idgen.segment_dropped;
#    an issuer of a central segment server whose row goes back the same
#    way draws no ID again and logs it.
#  - a tag allocated within 1% of the largest bigint logs a WARNING;
#  - a layout that runs out within idgen.layout_end_warning (default one
#    year) makes the idgen worker log a WARNING naming the end, which
#    snowflake_status().layout_end shows; the default layout does neither.
# Outcomes only: no ID twice, the log lines, the table; never durations.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# Steps that stay at 100 and Leaf's double buffer: after the edit, at most
# two segments are ready, so the draws below need new allocations
my $node = idgen_node('guards', conf => qq{
idgen.segment_step_grow_after = 0
idgen.segment_chain_max = 1
});
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

# After a restart the worker no longer remembers; the tag's tombstone does
# (issue 37, point 4): the row deleted (the trigger keeps its max_id in
# idgen.segment_dropped), the server restarted, the old row restored with
# triggers disabled (pg_restore -a --disable-triggers of an older dump)
push @ids, @after;
$drawn_max = max_of(@ids);
$node->safe_psql('postgres', q{DELETE FROM idgen.segment_alloc WHERE biz_tag = 'orders'});
$node->restart;
$log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL session_replication_role = replica;
	INSERT INTO idgen.segment_alloc SELECT * FROM old_row;
	COMMIT;
});
@after = @{ draw_tag('orders', 3000) };
%seen = map { $_ => 1 } @ids;
is(scalar(grep { $seen{$_} } @after), 0,
	'after a restart and an old row restored with triggers disabled, no ID is drawn again');
cmp_ok(min_of(@after), '>', $drawn_max, 'every new ID is above every one drawn before the restart');
like(slurp_file($node->logfile, $log_offset),
	qr/WARNING:  idgen: segment tag "orders" went back: idgen.segment_alloc says max_id $restored, but idgen.segment_dropped says the tag allocated up to \d+/,
	'the worker logs the row below its tombstone');

# With a central segment server whose row goes back, an issuer never
# hands out again what it had from the central server
my $central = idgen_node('central', node_id => 0);
start_node($central);
$central->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('central', 1, 100);
	CREATE ROLE issuer LOGIN;
	GRANT EXECUTE ON FUNCTION idgen.segment_allocate(text, bigint, bigint) TO issuer;
});
my $issuer = idgen_node('issuer', node_id => 1, conf => "idgen.segment_server = 'host="
	  . $central->host . ' port=' . $central->port . " dbname=postgres user=issuer'\n"
	  . "idgen.segment_step_grow_after = 0\n");
start_node($issuer);
$issuer->safe_psql('postgres', 'CREATE EXTENSION idgen');
my $draw_issuer = sub {
	return [ map { $_ + 0 } split /\n/, $issuer->safe_psql('postgres',
		"SELECT idgen.segment_nextval('central') FROM generate_series(1, $_[0])") ];
};
my @cids = @{ $draw_issuer->(300) };
$central->safe_psql('postgres',
	q{CREATE TABLE old_row AS SELECT * FROM idgen.segment_alloc WHERE biz_tag = 'central'});
push @cids, @{ $draw_issuer->(1500) };
$log_offset = -s $issuer->logfile;
$central->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL session_replication_role = replica;
	DELETE FROM idgen.segment_alloc WHERE biz_tag = 'central';
	INSERT INTO idgen.segment_alloc SELECT * FROM old_row;
	COMMIT;
});
my @cafter = @{ $draw_issuer->(1500) };
my %cseen = map { $_ => 1 } @cids;
is(scalar(grep { $cseen{$_} } @cafter), 0,
	'an issuer whose central row went back draws no ID again');
like(slurp_file($issuer->logfile, $log_offset),
	qr/WARNING:  idgen: segment tag "central" went back: the central segment server says max_id \d+, but this server already allocated up to \d+/,
	'and logs the disagreement');
$issuer->stop;
$central->stop;

# --- Warnings before the end ---------------------------------------------

# A tag within 1% of the largest bigint: its allocation warns
$log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{SELECT idgen.segment_create('top', 9200000000000000000, 100)});
draw_tag('top', 1);
like(slurp_file($node->logfile, $log_offset),
	qr/WARNING:  idgen: segment tag "top" is within 1% of the largest bigint: max_id is 92000000000000000\d\d/,
	'a tag within 1% of the largest bigint warns');
# The default layout runs out decades from now: no warning, its end shown
unlike(slurp_file($node->logfile), qr/snowflake layout .* (runs|ran) out/,
	'the default layout does not warn');
is($node->safe_psql('postgres',
		q{SELECT layout_end > now() + interval '10 years' FROM idgen.snowflake_status()}),
	't', 'snowflake_status shows when the default layout runs out');
$node->stop;

# A layout of 2^25 one-second ticks whose epoch was 200 days ago runs out
# in about 188 days, within the default idgen.layout_end_warning (1 year)
my @t = gmtime(time - 200 * 86400);
my $epoch = sprintf('%04d-%02d-%02d', $t[5] + 1900, $t[4] + 1, $t[3]);
my $end = idgen_node('end',
	conf => "idgen.layout = 'ts=25,node=10,seq=12,unit=1s,epoch=$epoch'\n");
start_node($end);
$end->safe_psql('postgres', 'CREATE EXTENSION idgen');
ok(eval {
		$end->wait_for_log(
			qr/WARNING:  idgen: snowflake layout "[^"]+" runs out at \d{4}-\d\d-\d\d [^,]+, in 1[89]\d days/);
		1;
	}, 'the idgen worker warns that a layout runs out within a year');
is($end->safe_psql('postgres', qq{
		SELECT layout_end = ('$epoch'::date::timestamp AT TIME ZONE 'UTC') + interval '33554432 s'
		FROM idgen.snowflake_status()}),
	't', 'snowflake_status shows the end: the epoch plus 2^25 ticks');
$end->stop;

done_testing();
