# 118_restored_segments.pl
#	A restored copy, and a former standby started without promotion, hand
#	out no segment ID until a superuser vouches (segment_resume).
#
#  - a base backup of a running primary started as a plain server beside
#    it (backup_label), after the primary has handed out 1,000 more
#    segment IDs: segment_nextval fails with 55000 naming segment_resume,
#    still after a restart; a role that is not a superuser cannot resume
#    (42501); once the tag's max_id is raised above the original's last ID
#    (segment_alter) and a superuser has resumed (true, then false), the
#    copy draws, and none of its IDs is one the original handed out;
#  - a standby stopped, its standby.signal removed and started beside its
#    primary: segment IDs (55000) and snowflake IDs (55000, restored) are
#    refused.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# A step held at 10 (no growth, a chain of one), so that the original's
# allocations after the backup pass the copy's max_id
my $orig = idgen_node('orig', allows_streaming => 1, conf => q{
idgen.segment_step_grow_after = 0
idgen.segment_chain_max = 1
});
$orig->start;
$orig->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('t', 1, 10);
	CREATE ROLE plain LOGIN;
});
wait_ready($orig);
my $draw = q{SELECT idgen.segment_nextval('t') FROM generate_series(1, 1000)};
$orig->safe_psql('postgres', $draw);
$orig->backup('base');
my @orig_ids = split /\n/, $orig->safe_psql('postgres', $draw);
is(scalar(@orig_ids), 1000, 'the original draws after the backup');

# The copy, beside the running original
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($orig, 'base');
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'recovery';
my ($rc, $out, $err) = try_sql($copy, q{SELECT idgen.segment_nextval('t')});
isnt($rc, 0, 'the restored copy hands out no segment ID');
like($err, qr/55000: segment IDs are refused because this server was started from a backup/,
	'55000, the refusal');
like($err, qr/HINT:  Once the original server issues no more segment IDs, have a superuser run SELECT idgen.segment_resume\(\)\. Two copies resumed from one backup still repeat each other's segment IDs\./,
	'the hint names segment_resume and what it cannot do');
$copy->restart;
($rc, $out, $err) = try_sql($copy, q{SELECT idgen.segment_nextval('t')});
like($err, qr/55000: segment IDs are refused/, 'still after a restart');
($rc, $out, $err) = try_sql($copy, q{SET ROLE plain; SELECT idgen.segment_resume()});
like($err, qr/42501/, 'a role that is not a superuser cannot resume');

# The documented way: the tag above the original's last ID, then resume
my $last = (sort { $b <=> $a } @orig_ids)[0];
$copy->safe_psql('postgres', "SELECT idgen.segment_alter('t', max_id => $last)");
is($copy->safe_psql('postgres', 'SELECT idgen.segment_resume()'), 't', 'a superuser resumes');
is($copy->safe_psql('postgres', 'SELECT idgen.segment_resume()'), 'f', 'then nothing is refused');
my @copy_ids = split /\n/, $copy->safe_psql('postgres', $draw);
is(scalar(@copy_ids), 1000, 'the copy draws');
my %orig = map { $_ => 1 } @orig_ids;
is(scalar(grep { $orig{$_} } @copy_ids), 0, "none of the copy's IDs is one the original handed out");
$copy->restart;
is($copy->safe_psql('postgres', q{SELECT count(idgen.segment_nextval('t')) FROM generate_series(1, 10)}),
	10, 'and a restart keeps it resumed');
$copy->stop;

# A standby started as a primary without promotion
my $standby = idgen_standby($orig, 'standby');
$standby->start;
$orig->wait_for_catchup($standby);
$standby->stop;
unlink($standby->data_dir . '/standby.signal') or die "standby.signal: $!";
$standby->start;
($rc, $out, $err) = try_sql($standby, q{SELECT idgen.segment_nextval('t')});
like($err, qr/55000: segment IDs are refused because .* from a standby's data directory without promotion/,
	'a former standby started without promotion: segment IDs refused');
$standby->poll_query_until('postgres', 'SELECT restored FROM idgen.snowflake_refusal()')
  or die 'snowflake IDs are not refused';
($rc, $out, $err) = try_sql($standby, q{SELECT idgen.snowflake_nextval()});
like($err, qr/55000: snowflake IDs are refused/, 'and snowflake IDs too');

$standby->stop;
$orig->stop;
done_testing();
