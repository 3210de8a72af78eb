# 061_restored_copy.pl
#	Servers started from an older copy of a data directory never issue an
#	ID their original issued, where idgen can see the copy.
#
# Fixed node id:
#  - PITR to a restore point (recovery.signal) with the clock 40 s behind:
#    snowflake IDs are refused (55000, the hint names snowflake_resume),
#    still after a restart, and after accepting a change of layout on
#    top of it (snowflake_accept_layout: true, with a NOTICE); a
#    superuser's snowflake_resume(max of the
#    original's IDs) lifts it, and every new ID is above every ID of the
#    original, also after a crash right after it, for gene IDs too, and
#    after a clean restart with the clock further back; an advance beyond
#    idgen.max_lead is refused at once (22023) with a hint naming the
#    max_lead that would allow it;
#  - a base backup started as a plain server (backup_label) beside the
#    running original, its clock 40 s behind: refused the same way;
#    snowflake_advance(-1) and (0) are 22023, snowflake_advance(1), of the
#    copy's own last ID and adopt_column of a table holding the original's
#    latest ID leave the refusal in place (55000); snowflake_resume lifts it
#    and no ID of the original comes again.
# idgen.node_id = 'auto':
#  - a base backup of the running original started beside it: another
#    node id, no ID of the original's;
#  - PITR from that backup with the clock a minute behind, beside the
#    running original: no ID of the original's;
#  - a stopped copy put back in place of its original's data directory and
#    started with the clock a minute behind, while the original's lease is
#    live (another node id, where the registry shows the lease was still
#    live afterwards) and again after every lease has run out: no ID equals
#    one of the original's.
# Outcomes only: errors, order and duplicates, never durations.
use strict;
use warnings;
use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $archive = PostgreSQL::Test::Utils::tempdir();

# A copy of a stopped node's data directory, as "cp -a" makes it
sub copy_datadir
{
	my ($from, $to) = @_;
	rmtree($to);
	system('cp', '-a', $from, $to) == 0 or die "cp -a $from $to failed";
	return;
}

# Every ID of $ids that is also in $old
sub repeated
{
	my ($old, $ids) = @_;
	my %seen = map { $_ => 1 } @$old;
	return grep { $seen{$_} } @$ids;
}

# A server made from backup $backup of $from that recovers from $archive to
# restore point $target and is promoted, its clock at $offset, with
# postgresql.conf text $conf; returned once recovery has ended
sub start_pitr
{
	my ($name, $from, $backup, $archive, $target, $offset, $conf) = @_;
	my $n = PostgreSQL::Test::Cluster->new($name);

	$n->init_from_backup($from, $backup);
	$n->append_conf('postgresql.conf', ($conf // '') . qq{
restore_command = 'cp "$archive/%f" %p'
recovery_target_name = '$target'
recovery_target_action = 'promote'
archive_mode = off
});
	$n->set_recovery_mode;
	enable_faketime($n);
	set_clock($n, $offset);
	start_node($n);
	$n->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "PITR of $name did not end";
	return $n;
}

# --- Fixed node id: PITR and a base backup -------------------------------

my $orig = idgen_node('orig', allows_streaming => 1, faketime => 1, conf => qq{
archive_mode = on
archive_command = 'cp %p "$archive/%f"'
idgen.max_lead = '2min'
});
start_node($orig);
$orig->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($orig);
my $before = draw_ids($orig, 20000);
$orig->backup('base');
$orig->safe_psql('postgres', "SELECT pg_create_restore_point('rp')");
# The original goes on after the restore point and the backup
my $after = draw_ids($orig, 20000);
$orig->safe_psql('postgres', 'SELECT pg_switch_wal()');
$orig->stop('fast');
my @orig_ids = (@$before, @$after);

my $pitr = start_pitr('pitr', $orig, 'base', $archive, 'rp', '-40');

my ($ret, $out, $err) = try_sql($pitr, 'SELECT idgen.snowflake_nextval()');
isnt($ret, 0, 'after PITR with a fixed node id, snowflake IDs are refused');
like($err, qr/55000: snowflake IDs are refused because this server was started from a backup or after archive recovery/,
	'with 55000 saying why');
like($err, qr/snowflake_resume/, 'and the hint names snowflake_resume');
($ret, $out, $err) = try_sql($pitr, q{SELECT idgen.gene_id('alice', 3)});
like($err, qr/55000: snowflake IDs are refused/, 'gene IDs too');

$pitr->stop;
start_node($pitr);
($ret, $out, $err) = try_sql($pitr, 'SELECT idgen.snowflake_nextval()');
like($err, qr/55000: snowflake IDs are refused because this server was started from a backup/,
	'the refusal outlives a restart');

# A change of layout on top of it (a 1-second tick, whose IDs are smaller):
# accepting the change answers true with a NOTICE, and the refusal of the
# restored copy stays, also once the layout is set back
$pitr->append_conf('postgresql.conf',
	"idgen.layout = 'ts=41,node=10,seq=12,unit=1s,epoch=2024-01-01'\n");
$pitr->stop;
start_node($pitr);
($ret, $out, $err) = try_sql($pitr, 'SELECT idgen.snowflake_accept_layout()');
is($out, 't', 'a superuser accepts a change of layout of the restored copy');
like($err, qr/NOTICE:  00000: snowflake IDs stay refused until idgen\.snowflake_resume\(\) is called/,
	'with a NOTICE that the refusal stays');
($ret, $out, $err) = try_sql($pitr, 'SELECT idgen.snowflake_nextval()');
like($err, qr/55000: snowflake IDs are refused because this server was started from a backup/,
	'accepting the change does not lift the refusal of the restored copy');
$pitr->adjust_conf('postgresql.conf', 'idgen.layout', "'idgen'");
$pitr->stop;
start_node($pitr);
($ret, $out, $err) = try_sql($pitr, 'SELECT idgen.snowflake_nextval()');
like($err, qr/55000: snowflake IDs are refused because this server was started from a backup/,
	'nor does setting the layout back');

$pitr->safe_psql('postgres', q{CREATE ROLE plain LOGIN; GRANT USAGE ON SCHEMA idgen TO plain});
($ret, $out, $err) = $pitr->psql('postgres',
	'SELECT idgen.snowflake_advance(1)',
	extra_params => [ '-U', 'plain', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501/, 'a role that is not a superuser cannot advance (42501)');

my $orig_max = max_of(@orig_ids);
$pitr->safe_psql('postgres', "SELECT idgen.snowflake_resume($orig_max)");
my $pitr_ids = draw_ids($pitr, 20000);
cmp_ok(min_of(@$pitr_ids), '>', $orig_max,
	'after snowflake_resume every ID is above every ID of the original');
is(scalar(repeated(\@orig_ids, $pitr_ids)), 0, 'no ID of the original again');

# A crash right after an advance: still above it
my $far = $pitr->safe_psql('postgres',
	q{SELECT idgen.id_make(now() + interval '30 s', 1023, 4095)});
$pitr->safe_psql('postgres', "SELECT idgen.snowflake_advance($far)");
crash_node($pitr);
start_node($pitr);
wait_ready($pitr);
my $crashed = draw_ids($pitr, 1000);
cmp_ok(min_of(@$crashed), '>', $far,
	'a crash right after snowflake_advance still starts above its ID');
my $gene = $pitr->safe_psql('postgres', q{SELECT idgen.gene_id('alice', 3)});
cmp_ok($gene, '>', max_of(@$crashed), 'gene IDs too are above it');

# A clean restart with the clock 20 s further back: still above
$far = $pitr->safe_psql('postgres',
	q{SELECT idgen.id_make(now() + interval '20 s', 1023, 4095)});
$pitr->safe_psql('postgres', "SELECT idgen.snowflake_advance($far)");
$pitr->stop('fast');
set_clock($pitr, '-60');
start_node($pitr);
wait_ready($pitr);
my $restarted = draw_ids($pitr, 1000);
cmp_ok(min_of(@$restarted), '>', $far,
	'a clean restart with the clock back after snowflake_advance starts above its ID');

# An ID further ahead than idgen.max_lead (2 min) is refused at once,
# saying what would allow it
($ret, $out, $err) = try_sql($pitr,
	q{SELECT idgen.snowflake_advance(idgen.id_make(now() + interval '1 hour', 1, 0))});
like($err, qr/22023: cannot advance the snowflake generator past ID/,
	'an advance beyond idgen.max_lead is refused (22023)');
like($err, qr/HINT:  Set idgen.max_lead to at least \d+ ms/, 'and the hint says what max_lead would allow it');
$pitr->stop;

# A base backup started as a plain server (backup_label, no signal file)
# beside the running original, its clock 40 s behind: refused the same way,
# and no call but snowflake_resume lifts the refusal
start_node($orig);
my $clone = PostgreSQL::Test::Cluster->new('clone');
$clone->init_from_backup($orig, 'base');
$clone->append_conf('postgresql.conf', "archive_mode = off\n");
enable_faketime($clone);
set_clock($clone, '-40');
start_node($clone);
my $beside = draw_ids($orig, 20000);
push @orig_ids, @$beside;
my $refused = qr/55000: snowflake IDs are refused because this server was started from a backup/;
($ret, $out, $err) = try_sql($clone, 'SELECT idgen.snowflake_nextval()');
like($err, $refused, 'a base backup started beside the running original refuses IDs too');
like($err, qr/HINT:  .*snowflake_resume\(N\)/, 'and the hint names snowflake_resume');
for my $n (-1, 0)
{
	($ret, $out, $err) = try_sql($clone, "SELECT idgen.snowflake_advance($n)");
	like($err, qr/22023: cannot advance the snowflake generator past ID $n/,
		"snowflake_advance($n) is refused (22023)");
}
# 1, the copy's own last ID, and a column whose maximum is the original's
# latest ID: the refusal stays, with its own error
$clone->safe_psql('postgres', qq{
	CREATE TABLE orders (id bigint PRIMARY KEY);
	INSERT INTO orders VALUES ($beside->[-1]);
});
for my $call ('SELECT idgen.snowflake_advance(1)',
	"SELECT idgen.snowflake_advance($before->[-1])",
	q{SELECT idgen.adopt_column('orders', 'id')})
{
	($ret, $out, $err) = try_sql($clone, $call);
	like($err, $refused, "$call leaves the refusal in place (55000)");
}
($ret, $out, $err) = try_sql($clone, 'SELECT idgen.snowflake_nextval()');
like($err, $refused, 'and IDs are still refused after all of them');
# The original stops; the copy takes over once a superuser vouches for its
# last ID
$orig->stop('fast');
$orig_max = max_of(@orig_ids);
is($clone->safe_psql('postgres', "SELECT idgen.snowflake_resume($orig_max)"), 't',
	'snowflake_resume lifts the refusal (true)');
my $clone_ids = draw_ids($clone, 5000);
cmp_ok(min_of(@$clone_ids), '>', $orig_max, 'and every ID is above the original once resumed');
is(scalar(repeated(\@orig_ids, $clone_ids)), 0, 'no ID of the original again');
$clone->stop;

# --- idgen.node_id = 'auto': copies put back in place, a live clone ----

my $guard = 3;
my $registry = idgen_node('registry', preload => 0,
	conf => "idgen.node_lease_guard = '${guard}s'\n");
$registry->start;
$registry->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE ROLE leaser LOGIN;
	GRANT EXECUTE ON FUNCTION
		idgen.node_lease_acquire(text, text, int, int, int, bigint),
		idgen.node_lease_renew(text, int, text, int, bigint) TO leaser;
});
my $regconn = 'host=' . $registry->host . ' port=' . $registry->port
  . ' dbname=postgres user=leaser';
my $auto_conf = qq{
idgen.node_registry = '$regconn'
idgen.node_lease_time = '10s'
idgen.max_lead = '2min'
};
my $auto_archive = PostgreSQL::Test::Utils::tempdir();
my $auto = idgen_node('auto', node_id => 'auto', faketime => 1, allows_streaming => 1,
	conf => $auto_conf . qq{
archive_mode = on
archive_command = 'cp %p "$auto_archive/%f"'
});

# Draw IDs on a valid lease; returns them
sub draw_leased
{
	my ($n, $count) = @_;
	$n->poll_query_until('postgres',
		'SELECT coalesce(valid, false) FROM idgen.node_lease_status()')
	  or die 'no lease';
	return draw_ids($n, $count);
}

# The node id an ID carries
sub node_of
{
	my ($n, $id) = @_;
	return $n->safe_psql('postgres', "SELECT (idgen.id_decode($id)).node_id");
}


start_node($auto);
$auto->safe_psql('postgres', 'CREATE EXTENSION idgen');
my $a1 = draw_leased($auto, 20000);
$auto->stop('fast');
my $saved = $PostgreSQL::Test::Utils::tmp_check . '/auto_copy';
copy_datadir($auto->data_dir, $saved);
start_node($auto);
my $a2 = draw_leased($auto, 20000);

# A base backup of the running original, started beside it as a second
# server (a cloned VM): both lease at once, never the same node id, and
# neither repeats an ID of the other or of before
$auto->backup('auto_base');
$auto->safe_psql('postgres', "SELECT pg_create_restore_point('auto_rp')");
my $twin = PostgreSQL::Test::Cluster->new('twin');
$twin->init_from_backup($auto, 'auto_base');
$twin->append_conf('postgresql.conf', $auto_conf . "archive_mode = off\n");
$twin->start;
my $t1 = draw_leased($twin, 20000);
my $a2b = draw_leased($auto, 20000);
my ($node_orig, $node_twin) = (node_of($auto, $a2b->[-1]), node_of($twin, $t1->[-1]));
isnt($node_twin, $node_orig,
	"'auto': a base backup started beside its running original leases another node id");
is(scalar(repeated([ @$a1, @$a2, @$a2b ], $t1)), 0,
	'and repeats none of its IDs');
$twin->stop('fast');

# PITR from that backup to the restore point made just after it, with the
# clock a minute behind, beside the running original: no ID of the
# original's, before or after
$auto->safe_psql('postgres', 'SELECT pg_switch_wal()');
my $apitr = start_pitr('auto_pitr', $auto, 'auto_base', $auto_archive, 'auto_rp', '-60',
	$auto_conf);
my $p1 = draw_leased($apitr, 20000);
my $a2c = draw_leased($auto, 20000);
is(scalar(repeated([ @$a1, @$a2, @$a2b, @$t1, @$a2c ], $p1)), 0,
	"'auto': PITR with the clock a minute behind, beside its running original, repeats no ID");
isnt(node_of($apitr, $p1->[-1]), $node_orig,
	'and leased another node id than the running original');
$apitr->stop('fast');
$auto->stop('fast');
my @auto_ids = (@$a1, @$a2, @$a2b, @$a2c, @$t1, @$p1);
my $node2 = $node_orig;

# The stopped copy in place of the original, its clock a minute behind,
# while the original's last lease is live.  When that lease ends (with the
# registry's guard), on the registry's clock:
my $live_until = $registry->safe_psql('postgres',
	"SELECT expires_at + interval '$guard s' FROM idgen.node_lease WHERE node_id = $node2");
copy_datadir($saved, $auto->data_dir);
set_clock($auto, '-60');
start_node($auto);
my $a3 = draw_leased($auto, 20000);
is(scalar(repeated(\@auto_ids, $a3)), 0,
	"'auto': a copy started in place with its clock a minute behind repeats no ID");
my $node3 = node_of($auto, $a3->[-1]);
SKIP:
{
	# The copy's lease began at or before its row's last heartbeat: if that
	# is before the original's lease ended, the copy leased while it was live
	# (on a slow start it may have come later, and may then take that id)
	my $during = $registry->safe_psql('postgres',
		"SELECT heartbeat < '$live_until' FROM idgen.node_lease WHERE node_id = $node3");
	skip "the copy leased after the original's lease had ended (a slow start)", 1
	  unless $during eq 't';
	isnt($node3, $node2, "and it leased another node id than the original's live one ($node2)");
}
$auto->stop('fast');
push @auto_ids, @$a3;

# Once every lease has run out (lease time plus the registry's guard), the
# copy may take over the original's node id: above what its holder promised
$registry->poll_query_until('postgres',
	qq{SELECT bool_and(expires_at + interval '$guard s' < now()) FROM idgen.node_lease})
  or die 'leases did not run out';
# (its generator then runs ahead of its clock, a minute behind, up to that
# promise: the previous holder's lease time and max_lead past its clock)
copy_datadir($saved, $auto->data_dir);
$auto->append_conf('postgresql.conf', "idgen.max_lead = '4min'\n");
start_node($auto);
my $a4 = draw_leased($auto, 20000);
is(scalar(repeated(\@auto_ids, $a4)), 0,
	"'auto': the copy started after every lease ran out repeats no ID");
$auto->stop;
$registry->stop;

done_testing();
