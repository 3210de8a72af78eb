# 059_pg_upgrade.pl
#	pg_upgrade carries the snowflake high-water mark and the segment tags
#	(issue 11, point 6).
#
# A cluster issues snowflake and segment IDs, then pg_upgrade moves it to a
# new cluster (of the same major version, as PostgreSQL's own pg_upgrade
# tests do: Debian ships one major version per release).  The new server
# starts with its clock 30 s behind the old one: every snowflake ID it
# issues is still above every old one (the reservation row comes over with
# the table files), and every tag continues above its old max_id.  During
# pg_upgrade no idgen worker runs (binary upgrade), so nothing is written
# into tables pg_upgrade is about to carry over.
use strict;
use warnings;

use Cwd;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $old = idgen_node('upgrade_old');
start_node($old);
$old->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('order', 1, 100);
	SELECT idgen.segment_create('invoice', 5000, 10);
});
wait_ready($old);
my $snow = draw_ids($old, 20000);
my %seg;
for my $tag ('order', 'invoice')
{
	$seg{$tag} = [ map { $_ + 0 } split /\n/, $old->safe_psql('postgres',
		"SELECT idgen.segment_nextval('$tag') FROM generate_series(1, 250)") ];
}
my %max_id = map { split /\|/ } split /\n/, $old->safe_psql('postgres',
	'SELECT biz_tag, max_id FROM idgen.segment_alloc');
$old->stop;

# The new cluster: same settings, its clock 30 s behind
my $new = idgen_node('upgrade_new', faketime => 1,
	conf => "idgen.max_lead = '10min'\n");
set_clock($new, '-30');
my $bindir = $old->config_data('--bindir');
my $cwd = getcwd();
chdir $PostgreSQL::Test::Utils::tmp_check;
{
	local %ENV = (%ENV, fakeclock_env($new->{idgen_clock}));
	command_ok(
		[
			'pg_upgrade', '--no-sync',
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-s', $new->host,
			'-p', $old->port, '-P', $new->port
		],
		'pg_upgrade of a cluster that issued IDs');
}
chdir $cwd;

start_node($new);
wait_ready($new);
is($new->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	default_version(), 'the extension came over at its default version');
my $snow2 = draw_ids($new, 20000);
is(first_disorder($snow2), -1, 'the upgraded server\'s IDs increase');
cmp_ok(min_of(@$snow2), '>', max_of(@$snow),
	'every snowflake ID of the upgraded server is above every old one, with its clock 30 s behind');
is(scalar(duplicates($snow, $snow2)), 0, 'no snowflake ID twice');
for my $tag ('order', 'invoice')
{
	is($new->safe_psql('postgres',
			"SELECT max_id >= $max_id{$tag} FROM idgen.segment_alloc WHERE biz_tag = '$tag'"),
		't', "tag $tag keeps its max_id");
	my $ids = [ map { $_ + 0 } split /\n/, $new->safe_psql('postgres',
		"SELECT idgen.segment_nextval('$tag') FROM generate_series(1, 250)") ];
	cmp_ok(min_of(@$ids), '>', $max_id{$tag},
		"tag $tag continues above its old max_id");
	is(scalar(duplicates($seg{$tag}, $ids)), 0, "tag $tag: no ID twice");
}

$new->stop;
done_testing();
