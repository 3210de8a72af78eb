# 092_monitoring.pl
#	The monitoring files of monitoring/ run by Debian's exporters against a
#	server with idgen (issue 41, docs/monitoring.md).
#
# A role with only pg_monitor reads every status function, view and column
# the files query.  prometheus-postgres-exporter, given
# monitoring/postgres-exporter-queries.yaml and connected as that role,
# listening on loopback only, serves every idgen metric with its HELP line
# and the values snowflake_status() and segment_status give at the same
# moment: the node id, the worker, the IDs issued (and more after draws),
# a tag's fetches (more after a new segment) and, for a tag near the largest
# bigint, the IDs it has left; no refusal on the original, and the refusal
# of a base backup started beside it (a restored copy) as reason
# "restored"; a healthy streaming standby refusing as reason "standby"
# with its worker running; fed to promtool with monitoring/idgen-rules.yml,
# the scrapes of the primary and the standby fire only the alert of the tag
# near its end, the copy's also IdgenSnowflakeRefused; as the registry of a server with idgen.node_id = 'auto',
# the lease's time left and the namespace's free node ids, and on that
# server its lease.  prometheus-sql-exporter, given monitoring/sql-exporter.yml,
# serves the same values under its own names.  The alert rules are tested by
# promtool in test/run.sh.  Outcomes only, never durations.
use strict;
use warnings;

use HTTP::Tiny;
use POSIX qw(WNOHANG);
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

neighbours_version();
my $pg_exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all =>
  'prometheus-postgres-exporter not found: install Debian\'s prometheus-postgres-exporter'
  unless -x $pg_exporter;

my $top = 9223372036854775807;
my $http = HTTP::Tiny->new(timeout => 5);
my $tmp = PostgreSQL::Test::Utils::tempdir();

# Exporters started, killed at the end whatever happens
my @exporters;
END { kill 'KILL', @exporters if @exporters; }

# Start an exporter (a command built for a free port, environment added),
# its output in $tmp/$name.log; wait until it serves /metrics.  Returns
# (pid, port).
sub start_exporter
{
	my ($name, $cmd, $env) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $log = "$tmp/$name.log";
	my @cmd = @{ $cmd->($port) };
	my $pid = fork // die "fork: $!";
	if ($pid == 0)
	{
		%ENV = (%ENV, %$env);
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or die "$log: $!";
		open STDERR, '>&', \*STDOUT;
		exec @cmd or POSIX::_exit(127);
	}
	push @exporters, $pid;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	until ($http->get("http://127.0.0.1:$port/metrics")->{success})
	{
		die "$name did not serve /metrics: " . slurp_file($log)
		  if time() > $deadline || waitpid($pid, WNOHANG) == $pid;
		usleep(100_000);
	}
	return ($pid, $port);
}

# Stop an exporter
sub stop_exporter
{
	my ($pid) = @_;
	kill 'TERM', $pid;
	waitpid($pid, 0);
	@exporters = grep { $_ != $pid } @exporters;
	return;
}

# One scrape: { name => [ [ {labels}, value ], ... ] }, and the HELP lines
sub scrape
{
	my ($port) = @_;
	my $res = $http->get("http://127.0.0.1:$port/metrics");
	die "scrape failed: $res->{status}" unless $res->{success};
	# One metric's lines in the log, showing the labels an exporter adds
	note join("\n", grep { /^(sql_)?idgen_snowflake_node_id/ } split /\n/, $res->{content});
	my (%m, %help);
	for (split /\n/, $res->{content})
	{
		$help{$1} = $2 if /^# HELP (\S+) (.*)$/;
		$help{"$1 type"} = $2 if /^# TYPE (\S+) (\S+)$/;
		next unless /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
		my ($name, $l, $v) = ($1, $2 // '', $3);
		my %labels = $l =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
		push @{ $m{$name} }, [ \%labels, $v + 0 ];
	}
	return (\%m, \%help);
}

# The value of metric $name whose labels include %want; undef if none
sub value
{
	my ($m, $name, %want) = @_;
	for my $s (@{ $m->{$name} // [] })
	{
		return $s->[1]
		  unless grep { ($s->[0]{$_} // '') ne $want{$_} } keys %want;
	}
	return undef;
}

my $node = idgen_node('mon', allows_streaming => 1);
start_node($node);
$node->safe_psql('postgres', q{
CREATE EXTENSION idgen;
CREATE ROLE idgen_monitor LOGIN IN ROLE pg_monitor;
SELECT idgen.segment_create('near_end', 9223372036854775807 - 1000, 100);
SELECT idgen.segment_create('orders');
SELECT idgen.segment_create('idle');
});
wait_ready($node);
$node->safe_psql('postgres', q{
SELECT idgen.segment_nextval('near_end') FROM generate_series(1, 10);
SELECT idgen.segment_nextval('orders');
});
draw_ids($node, 500);

# A role with only pg_monitor reads what the files query
my ($ret, $out, $err) = $node->psql('postgres', q{
SELECT count(*) FROM idgen.snowflake_status(), idgen.snowflake_refusal(),
    idgen.node_lease_status(), idgen.serving_settings(),
    idgen.id_decode(9223372036854775807);
SELECT count(*) FROM idgen.segment_status;
SELECT count(biz_tag) + count(max_id) + count(step) + count(cache) FROM idgen.segment_alloc;
SELECT count(namespace) + count(node_id) + count(heartbeat) + count(expires_at) FROM idgen.node_lease;
SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'idgen worker';
}, extra_params => [ '-U', 'idgen_monitor', '-v', 'ON_ERROR_STOP=1' ]);
is($ret, 0, 'a role with only pg_monitor reads every status surface the files query')
  or diag($err);
($ret, $out, $err) = $node->psql('postgres',
	'SELECT instance FROM idgen.node_lease',
	extra_params => [ '-U', 'idgen_monitor' ]);
like($err, qr/permission denied/, 'but not the lease holders\' instance names');

# --- prometheus-postgres-exporter ------------------------------------------

my $queries = repo_file('monitoring/postgres-exporter-queries.yaml');
sub pg_exporter_of
{
	my ($n) = @_;
	return start_exporter('postgres-exporter-' . $n->name,
		sub {
			[ $pg_exporter, "--web.listen-address=127.0.0.1:$_[0]",
			  "--extend.query-path=$queries", '--disable-default-metrics',
			  '--disable-settings-metrics', '--no-collector.database' ]
		},
		{ DATA_SOURCE_NAME => 'host=' . $n->host . ' port=' . $n->port
			  . ' user=idgen_monitor dbname=postgres sslmode=disable' });
}

my $status_sql = q{SELECT node_id, issued, clock_back_events, clock_waits,
    reservation_waits, worker_running::int,
    extract(epoch FROM layout_end - clock_timestamp()) FROM idgen.snowflake_status()};
my $tag_sql = q{SELECT 9223372036854775807 - cur_value + 1, fetches, waits,
    chain_length, step FROM idgen.segment_status WHERE biz_tag = 'near_end'};

# A scrape between two reads of the status: the values that do not move
# with the clock equal both, those that do lie between them
sub check_scrape
{
	my ($port, $what) = @_;
	my @s0 = split /\|/, $node->safe_psql('postgres', $status_sql);
	my ($m, $help) = scrape($port);
	my @s1 = split /\|/, $node->safe_psql('postgres', $status_sql);
	my @t = split /\|/, $node->safe_psql('postgres', $tag_sql);
	is(value($m, 'pg_exporter_last_scrape_error'), 0, "$what: no query failed");
	my %want = (
		idgen_snowflake_node_id => $s1[0],
		idgen_snowflake_issued_ids_total => $s1[1],
		idgen_snowflake_clock_back_events_total => $s1[2],
		idgen_snowflake_clock_waits_total => $s1[3],
		idgen_snowflake_reservation_waits_total => $s1[4],
		idgen_snowflake_worker_running => $s1[5]);
	is(value($m, $_), $want{$_}, "$what: $_ is snowflake_status()'s") for sort keys %want;
	is($s0[1], $s1[1], "$what: (no ID issued during the scrape)");
	my $left = value($m, 'idgen_snowflake_layout_remaining_seconds');
	ok($left <= $s0[6] && $left >= $s1[6],
		"$what: idgen_snowflake_layout_remaining_seconds is layout_end's ($left)");
	is(value($m, 'idgen_worker_processes'), 1, "$what: one idgen worker in pg_stat_activity");
	is(value($m, 'idgen_segment_ids_left', tag => 'near_end'), $t[0],
		"$what: the tag near its end has $t[0] IDs left, as segment_status says");
	is(value($m, 'idgen_segment_fetches_total', tag => 'near_end'), $t[1],
		"$what: its fetches are segment_status's");
	is(value($m, 'idgen_segment_waits_total', tag => 'near_end'), $t[2],
		"$what: its waits are segment_status's");
	is(value($m, 'idgen_segment_chain_segments', tag => 'near_end'), $t[3],
		"$what: its chain length is segment_status's");
	is(value($m, 'idgen_segment_step_ids', tag => 'near_end'), $t[4],
		"$what: its step is segment_status's");
	return ($m, $help);
}

my ($exp, $port) = pg_exporter_of($node);
my ($m, $help) = check_scrape($port, 'first scrape');
my $first_m = $m;
for my $name (qw(idgen_snowflake_node_id idgen_snowflake_lead_seconds
	idgen_snowflake_issued_ids_total idgen_snowflake_clock_back_events_total
	idgen_snowflake_clock_waits_total idgen_snowflake_reservation_waits_total
	idgen_snowflake_reservation_headroom_seconds
	idgen_snowflake_layout_remaining_seconds idgen_snowflake_worker_running
	idgen_snowflake_refused idgen_worker_processes idgen_segment_ids_left
	idgen_segment_step_ids idgen_segment_cache_ids idgen_segment_chain_segments
	idgen_segment_fetches_total idgen_segment_waits_total
	idgen_segment_standby_timeouts_total idgen_segment_unprotected_total))
{
	ok(defined $m->{$name} && length($help->{$name} // ''),
		"$name is served, with its HELP");
	is($help->{"$name type"}, $name =~ /_total$/ ? 'counter' : 'gauge',
		"$name is a " . ($name =~ /_total$/ ? 'counter' : 'gauge'));
}
is(value($m, 'idgen_segment_cache_ids', tag => 'orders'), 1, 'a tag\'s cache is served');
my @per_tag = qw(chain_segments fetches_total waits_total standby_timeouts_total unprotected_total);
is(value($m, "idgen_segment_$_", tag => 'idle'), 0, "a tag never drawn: idgen_segment_$_ is 0")
  for @per_tag;
is(value($m, 'idgen_snowflake_refused', reason => $_), 0, "not refused: $_")
  for qw(restored layout_changed standby lease_expired);
my $issued = value($m, 'idgen_snowflake_issued_ids_total');
my $fetches = value($m, 'idgen_segment_fetches_total', tag => 'near_end');

# Counters go up with draws: 300 snowflake IDs, and past every segment of
# 100 the tag near its end has fetched so far (10 of its IDs are drawn
# already, so fetches x 100 more need a fetch after the scrape's: the worker
# may have prefetched the next segment before it, and draws within that
# one need none)
draw_ids($node, 300);
$node->safe_psql('postgres',
	"SELECT idgen.segment_nextval('near_end') FROM generate_series(1, "
	  . ($fetches * 100) . ")");
($m) = check_scrape($port, 'after draws');
is(value($m, 'idgen_snowflake_issued_ids_total'), $issued + 300,
	'the IDs issued went up by the 300 drawn');
cmp_ok(value($m, 'idgen_segment_fetches_total', tag => 'near_end'), '>', $fetches,
	'the tag\'s fetches went up past its segment');
my $currval = $node->safe_psql('postgres',
	q{SELECT idgen.segment_nextval('near_end')});
($m) = scrape($port);
is(value($m, 'idgen_segment_ids_left', tag => 'near_end'), $top - $currval,
	'the tag near its end has the largest bigint minus its last ID left');

# --- leased node ids: this node is the registry of a server with 'auto' ---

$node->safe_psql('postgres', q{
CREATE ROLE leaser LOGIN;
GRANT EXECUTE ON FUNCTION
    idgen.node_lease_acquire(text, text, int, int, int, bigint),
    idgen.node_lease_renew(text, int, text, int, bigint) TO leaser;
});
# A lease of 10 minutes, renewed every 200 s: none during the test, so its
# time left only goes down
my $leaser = idgen_node('leaser', node_id => 'auto', conf => "idgen.node_registry = 'host="
	  . $node->host . ' port=' . $node->port . " dbname=postgres user=leaser'\n"
	  . "idgen.node_namespace = 'mon'\nidgen.node_lease_time = '10min'\n");
$leaser->start;
$leaser->safe_psql('postgres', q{
CREATE EXTENSION idgen;
CREATE ROLE idgen_monitor LOGIN IN ROLE pg_monitor;
});
$leaser->poll_query_until('postgres',
	'SELECT coalesce(valid, false) FROM idgen.node_lease_status()')
  or die 'the leaser did not lease a node id';
my $leased = $leaser->safe_psql('postgres', 'SELECT node_id FROM idgen.node_lease_status()');

my $reg_sql = q{SELECT extract(epoch FROM expires_at - clock_timestamp()),
    least((SELECT d.node_id FROM idgen.id_decode(9223372036854775807) d), 1048574) + 1
    FROM idgen.node_lease WHERE namespace = 'mon'};
my @r0 = split /\|/, $node->safe_psql('postgres', $reg_sql);
($m) = scrape($port);
my @r1 = split /\|/, $node->safe_psql('postgres', $reg_sql);
my $exp_s = value($m, 'idgen_registry_lease_expires_seconds',
	namespace => 'mon', node_id => $leased);
ok(defined $exp_s && $exp_s <= $r0[0] && $exp_s >= $r1[0],
	"registry: node id ${leased}'s lease runs out when node_lease says (in $exp_s s)");
is(value($m, 'idgen_registry_pool_leased_ids', namespace => 'mon'), 1,
	'registry: one node id of the namespace is leased');
is(value($m, 'idgen_registry_pool_free_ids', namespace => 'mon'), $r1[1] - 1,
	'registry: the other ' . ($r1[1] - 1) . ' node ids are free');
stop_exporter($exp);

my ($lexp, $lport) = pg_exporter_of($leaser);
my $lease_sql = 'SELECT valid_for_ms / 1000.0 FROM idgen.node_lease_status()';
my $l0 = $leaser->safe_psql('postgres', $lease_sql);
($m) = scrape($lport);
my $l1 = $leaser->safe_psql('postgres', $lease_sql);
is(value($m, 'idgen_node_lease_valid', node_id => $leased), 1,
	'the leasing server: its lease is valid');
my $lexp_s = value($m, 'idgen_node_lease_expires_seconds', node_id => $leased);
ok(defined $lexp_s && $lexp_s <= $l0 && $lexp_s >= $l1,
	"the leasing server: its lease runs out when node_lease_status() says (in $lexp_s s)");
is(value($m, 'idgen_snowflake_node_id'), $leased, 'and its node id is the leased one');
is(value($m, 'idgen_snowflake_refused', reason => 'lease_expired'), 0,
	'and it does not refuse');
stop_exporter($lexp);
$leaser->stop;

# --- a restored copy: a base backup started beside the original ----------

$node->backup('base');
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($node, 'base');
$copy->start;
$copy->poll_query_until('postgres', 'SELECT restored FROM idgen.snowflake_refusal()')
  or die 'the copy does not refuse';
my ($cexp, $cport) = pg_exporter_of($copy);
($m) = scrape($cport);
is(value($m, 'idgen_snowflake_refused', reason => 'restored'), 1,
	'a restored copy shows as refusing, reason restored');
is(value($m, 'idgen_snowflake_refused', reason => $_), 0, "and not $_")
  for qw(layout_changed standby lease_expired);
my $copy_m = $m;
stop_exporter($cexp);
$copy->stop('fast');

# --- a healthy streaming standby ------------------------------------------

my $standby = idgen_standby($node, 'standby');
start_node($standby);
$node->wait_for_catchup($standby);
$standby->poll_query_until('postgres',
	q{SELECT worker_running FROM idgen.snowflake_status()})
  or die 'the standby\'s idgen worker does not run';
my ($sbexp, $sbport) = pg_exporter_of($standby);
($m) = scrape($sbport);
is(value($m, 'pg_exporter_last_scrape_error'), 0, 'standby: no query failed');
is(value($m, 'idgen_snowflake_refused', reason => 'standby'), 1,
	'standby: refusing, reason standby (by design)');
is(value($m, 'idgen_snowflake_refused', reason => $_), 0, "standby: and not $_")
  for qw(restored layout_changed lease_expired);
is(value($m, 'idgen_snowflake_worker_running'), 1, 'standby: its worker runs');
is(value($m, 'idgen_worker_processes'), 1, 'standby: one idgen worker in pg_stat_activity');
my $standby_m = $m;
stop_exporter($sbexp);
$standby->stop('fast');

# --- the alert rules on these scrapes ---------------------------------------
#
# Each scrape, held for 20 minutes, is fed to promtool with the shipped
# rules: the healthy primary and its standby fire only the alert of their
# tag near its end; the restored copy also fires IdgenSnowflakeRefused.

SKIP:
{
	my $promtool = '/usr/bin/promtool';
	skip 'promtool not found: install Debian\'s prometheus', 1 unless -x $promtool;
	my $rules_file = repo_file('monitoring/idgen-rules.yml');
	my $rules = slurp_file($rules_file);
	my (%block, @alerts);
	while ($rules =~ /- alert: (\w+)\n(.*?)(?=\n  - alert:|\z)/sg)
	{
		push @alerts, $1;
		$block{$1} = $2;
	}
	my $q = sub { my ($s) = @_; $s =~ s/'/''/g; "'$s'" };
	my $labels = sub {
		my ($l) = @_;
		'{' . join(', ', map { "$_: " . $q->($l->{$_}) } sort keys %$l) . '}';
	};
	my (@series, %expect);
	for my $case ([ primary => $first_m ], [ restored_copy => $copy_m ],
		[ standby => $standby_m ])
	{
		my ($name, $cm) = @$case;
		for my $metric (sort grep { /^idgen_/ } keys %$cm)
		{
			for my $s (@{ $cm->{$metric} })
			{
				my %l = (%{ $s->[0] }, case => $name);
				push @series, "      - series: "
				  . $q->($metric . '{' . join(',', map { "$_=\"$l{$_}\"" } sort keys %l) . '}')
				  . "\n        values: '$s->[1]+0x20'\n";
			}
		}
		my @fire = ([ IdgenSegmentTagNearEnd => idgen_segment_ids_left => tag => 'near_end' ]);
		push @fire, [ IdgenSnowflakeRefused => idgen_snowflake_refused => reason => 'restored' ]
		  if $name eq 'restored_copy';
		for my $f (@fire)
		{
			my ($alert, $metric, %want) = @$f;
			my ($s) = grep {
				my $l = $_->[0];
				!grep { ($l->{$_} // '') ne $want{$_} } keys %want
			} @{ $cm->{$metric} };
			die "$name: no series $metric" unless $s;
			my ($sev) = $block{$alert} =~ /severity: (\w+)/;
			my ($sum) = $block{$alert} =~ /summary: (".*")/;
			my ($run) = $block{$alert} =~ /runbook: (".*")/;
			push @{ $expect{$alert} }, '          - exp_labels: '
			  . $labels->({ %{ $s->[0] }, case => $name, severity => $sev })
			  . "\n            exp_annotations: {summary: $sum, runbook: $run}\n";
		}
	}
	my $test = "rule_files:\n  - $rules_file\nevaluation_interval: 1m\ntests:\n"
	  . "  - interval: 1m\n    input_series:\n" . join('', @series)
	  . "    alert_rule_test:\n";
	for my $alert (@alerts)
	{
		$test .= "      - eval_time: 15m\n        alertname: $alert\n";
		$test .= $expect{$alert}
		  ? "        exp_alerts:\n" . join('', @{ $expect{$alert} })
		  : "        exp_alerts: []\n";
	}
	write_file("$tmp/scraped-rules-test.yml", $test);
	my $out = `$promtool test rules $tmp/scraped-rules-test.yml 2>&1`;
	is($?, 0, 'the rules on real scrapes: the healthy primary and standby fire only '
		  . 'the tag near its end, the restored copy also IdgenSnowflakeRefused')
	  or diag("$out\n$test");
}

# --- prometheus-sql-exporter ----------------------------------------------

SKIP:
{
	my $sql_exporter = '/usr/bin/prometheus-sql-exporter';
	skip 'prometheus-sql-exporter not found: install Debian\'s prometheus-sql-exporter', 8
	  unless -x $sql_exporter;
	# The shipped file, connected to this node and run every second
	my $conf = slurp_file(repo_file('monitoring/sql-exporter.yml'));
	my $url = 'postgres://idgen_monitor@/postgres?host=' . $node->host
	  . '&port=' . $node->port . '&sslmode=disable';
	$conf =~ s{'postgres://[^']*'}{'$url'} or die 'no connection in sql-exporter.yml';
	$conf =~ s/interval: '15s'/interval: '1s'/ or die 'no interval in sql-exporter.yml';
	write_file("$tmp/sql-exporter.yml", $conf);
	my ($sexp, $sport) = start_exporter('sql-exporter',
		sub { [ $sql_exporter, "-web.listen-address=127.0.0.1:$_[0]",
				"-config.file=$tmp/sql-exporter.yml" ] }, {});
	my @s = split /\|/, $node->safe_psql('postgres', $status_sql);
	my @t = split /\|/, $node->safe_psql('postgres', $tag_sql);
	my %want = (
		sql_idgen_snowflake_node_id => [ $s[0] ],
		sql_idgen_snowflake_issued_ids_total => [ $s[1] ],
		sql_idgen_segment_ids_left => [ $t[0], tag => 'near_end' ],
		sql_idgen_segment_fetches_total => [ $t[1], tag => 'near_end' ]);
	# Its queries run every second, not at the scrape: wait for a run
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my %got;
	while (1)
	{
		($m) = scrape($sport);
		%got = map { $_ => value($m, $_, @{ $want{$_} }[ 1 .. $#{ $want{$_} } ]) } keys %want;
		last unless grep { ($got{$_} // -1) != $want{$_}[0] } keys %want;
		last if time() > $deadline;
		usleep(200_000);
	}
	is($got{$_}, $want{$_}[0], "sql-exporter: $_ is the status's") for sort keys %want;
	is(value($m, "sql_idgen_segment_$_", tag => 'idle'), 0,
		"sql-exporter: a tag never drawn: sql_idgen_segment_$_ is 0, as postgres-exporter's")
	  for @per_tag;
	stop_exporter($sexp);
}

$node->stop;
done_testing();
