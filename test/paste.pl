#!/usr/bin/perl
# The pages pasted as a user does (issue 39, point 5), on a stock Debian
# cluster with the package postgresql-N-idgen installed (test/package.sh
# runs this after installing it, as root, in a chroot of its own):
#   1. the cluster N/main is made anew with pg_createcluster, as the
#      package postgresql-N makes it (its pg_hba.conf: peer over the
#      socket, scram-sha-256 over TCP), on PORT instead of 5432 (a chroot
#      shares the host's network, where 5432 may be taken): nothing else of
#      its configuration differs
#   2. README.md's commands from where the package is installed: the line
#      of Installation that sets N, Configuration's blocks (the cluster is
#      not running: restart starts it), then Getting started and every
#      other ```sql block of the README, in the README's order, typed into
#      "runuser -u postgres -- psql -d app" (blocks marked "not run" are
#      left out), all in one bash session that stops at the first error
#   3. docs/clients.md's setup block, twice (the second run changes nothing
#      and fails at nothing), then each client of the page that the machine
#      has the tools for, in the page's order, as the role webapp with the
#      page's connection (its env block, PGPORT=5432 read as PORT), the
#      page's files and commands; a client whose tool is missing is
#      skipped with a line.  Each must print, for its two tables, alice's
#      ID and then bob's, carol's and dave's, exactly the IDs its tables
#      hold, owned by webapp
#   4. docs/monitoring.md: its SQL and peer map, both exporters installed,
#      set up and started as it says without systemd, scraped for every
#      metric its table lists; its promtool block where promtool is
#      installed
#   5. docs/install.md's Uninstalling (where the README's points): its
#      shell blocks in order, the package removed, the server running
#      without idgen, the rows kept
#   6. the cluster is dropped and made anew as the package made it (port
#      5432, not running), so the chroot is as before
# Prints "ok: ..." or "FAILED: ..." per check and "paste: N passed, M
# failed"; exits non-zero if any failed.
#   perl test/paste.pl PORT
use strict;
use warnings;
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use FindBin;

my $port = shift // die "usage: $0 PORT\n";
my $top = "$FindBin::Bin/..";
chdir $top or die "$top: $!";
$top = `pwd`;
chomp $top;
die "$0: needs root (the system's cluster, runuser)\n" unless $> == 0;

my ($passed, $failed) = (0, 0);
sub pass { $passed++; print "ok: paste: $_[0]\n"; }
sub fail { $failed++; print "FAILED: paste: $_[0]\n"; }
# A check; on failure its diagnostics' last 25 lines, each after "  | "
sub check
{
	my ($ok, $what, $diag) = @_;
	return pass($what) || 1 if $ok;
	fail($what);
	my @l = split /\n/, $diag // '';
	print map { "  | $_\n" } @l > 25 ? @l[ -25 .. -1 ] : @l;
	return 0;
}

sub slurp
{
	open my $fh, '<', $_[0] or die "$_[0]: $!";
	local $/;
	return scalar <$fh>;
}

sub spew
{
	my ($path, $text) = @_;
	(my $dir = $path) =~ s{/[^/]*$}{};
	make_path($dir) if $dir ne $path;
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text;
	close $fh;
	return $path;
}

# Run a bash script; returns (exit code, its output: stdout and stderr).
# Its input is empty, or with $yes the "y" a reader types where apt asks
# "Do you want to continue?"
sub bash
{
	my ($script, $dir, $yes) = @_;
	my $file = spew("$dir/.paste-step.sh", $script);
	my $out = $yes ? `cd '$dir' && yes y | bash '$file' 2>&1` : `cd '$dir' && bash '$file' </dev/null 2>&1`;
	return ($? >> 8, $out);
}

# A page's fenced blocks in order: { lang, code, marker (the HTML comment
# just before), section (the last ## heading) }
sub blocks
{
	my ($file) = @_;
	my @lines = split /\n/, slurp($file);
	my (@b, $section, $i);
	for ($i = 0; $i < @lines; $i++)
	{
		$section = $1 if $lines[$i] =~ /^## (.*)$/;
		next unless $lines[$i] =~ /^```(\S*)\s*$/;
		my ($lang, $start, @code) = ($1, $i);
		for ($i++; $i < @lines && $lines[$i] !~ /^```\s*$/; $i++) { push @code, $lines[$i]; }
		my $marker = $start > 0 && $lines[ $start - 1 ] =~ /^<!--\s*(.*?)\s*-->$/ ? $1 : '';
		push @b, { lang => $lang, code => join("\n", @code) . "\n", marker => $marker,
			section => $section // '', line => $start + 1 };
	}
	return @b;
}

# As the server's superuser, over the socket (peer)
sub psql
{
	my ($sql) = @_;
	my $out = `cd / && runuser -u postgres -- psql -X -At -p $port -d app -c "$sql" 2>&1`;
	chomp $out;
	return $out;
}

# 1. The cluster, as the package makes it, on $port
my $N = `pg_buildext supported-versions 2>/dev/null`;
chomp $N;
die "$0: pg_buildext supported-versions gives \"$N\", not one version\n" unless $N =~ /^\d+$/;
sub fresh_cluster
{
	my ($p) = @_;
	system("pg_dropcluster --stop $N main >/dev/null 2>&1");
	return system("pg_createcluster -p $p $N main >/dev/null") == 0;
}
check(fresh_cluster($port), "pg_createcluster -p $port $N main (the stock cluster, on port $port)") or exit 1;
my $work = tempdir('/tmp/idgen-paste.XXXXXX', CLEANUP => 1);
chmod 0755, $work;

# 2. README.md: N, Configuration, Getting started and every SQL example
my @readme = blocks('README.md');
my ($n_line) = map { $_->{code} =~ /^(N=.*)$/m ? $1 : () } grep { $_->{section} eq 'Installation' } @readme;
check(defined $n_line, 'README: Installation sets N') or exit 1;
my $script = "set -e\ncd '$top'\n# README, Installation\n$n_line\n";
$script .= "[ \"\$N\" = $N ] || { echo \"N is \$N, not $N\"; exit 1; }\n";
# the port of the cluster, for every later command (libpq reads PGPORT)
$script .= "export PGPORT=$port\n";
for my $b (grep { $_->{section} eq 'Configuration' && $_->{lang} eq 'sh' } @readme)
{
	$script .= "# README.md:$b->{line}\n$b->{code}";
}
my $sql = 0;
for my $b (grep { $_->{lang} eq 'sql' } @readme)
{
	next if $b->{marker} =~ /^example: not run/;
	$sql++;
	$script .= "# README.md:$b->{line}\nrunuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -d app <<'PASTE_SQL'\n$b->{code}PASTE_SQL\n";
}
my ($rc, $out) = bash($script, $work);
check($rc == 0, "README: Configuration, Getting started and its $sql SQL examples, in one database", $out);
check(psql('SELECT idgen.snowflake_nextval() > 0') eq 't', 'README: app draws snowflake IDs');
check(`cd / && runuser -u postgres -- psql -X -At -p $port -c 'SELECT 1' 2>&1` eq "1\n", 'README: the cluster runs (pg_ctlcluster restart started it)');

# 3. docs/clients.md
my %c;
for my $b (blocks('docs/clients.md'))
{
	$c{$1} = $b->{code} if $b->{marker} =~ /^client(?:-more)?: (\S+)$/;
}
my $env = $c{env} // '';
check($env =~ s/\bPGPORT=5432\b/PGPORT=$port/, 'docs/clients.md: the env block sets PGPORT=5432 (read here as ' . $port . ')');
my ($password_line) = ($c{setup} // '') =~ /^(password=.*)$/m;
($rc, $out) = bash("set -e\nexport PGPORT=$port\n$c{setup}", $work);
check($rc == 0, 'docs/clients.md: the setup runs after the README\'s examples', $out);
($rc, $out) = bash("set -e\nexport PGPORT=$port\n$c{setup}", $work);
check($rc == 0, 'docs/clients.md: the setup runs again without error', $out);
($rc, $out) = bash("set -e\n$password_line\n$env\npsql -X -At -c 'SELECT current_user'", $work);
# (on failure, the server's log too: another server of this machine that
# took 127.0.0.1:PORT after test/package.sh found it free shows there as
# "could not bind IPv4 address")
check($rc == 0 && $out eq "webapp\n", 'docs/clients.md: psql logs in as webapp with the password over TCP',
	$out . `tail -15 /var/log/postgresql/postgresql-$N-main.log 2>&1`);
($rc, $out) = bash("set -e\n$password_line\n$env\nPGHOST= PGPASSWORD= psql -X -At -h /var/run/postgresql -c 'SELECT 1' </dev/null", $work);
check($rc != 0, 'docs/clients.md: without the password, over the socket, webapp is refused (peer)', $out);

# The clients: name, the test of its tool, files, commands, tables' prefix
my $django_files = {
	'settings.py' => $c{'django-settings'}, 'shop/__init__.py' => '', 'shop/migrations/__init__.py' => '',
	'shop/models.py' => $c{'django-model'}, 'orders.py' => $c{django} };
my @clients = (
	[ 'psycopg', 'python3 -c "import psycopg"', { 'orders.py' => $c{psycopg} }, 'python3 orders.py', 'py' ],
	[ 'psycopg2', 'python3 -c "import psycopg2"', { 'orders.py' => $c{psycopg2} }, 'python3 orders.py', 'pg2' ],
	[ 'SQLAlchemy', 'python3 -c "import sqlalchemy, psycopg2"', { 'orders.py' => $c{sqlalchemy} },
		'python3 orders.py', 'sa' ],
	[ 'Django', 'python3 -c "import django"', $django_files,
		"$c{'django-makemigrations'}cat > shop/migrations/0002_idgen_keys.py <<'PASTE_PY'\n$c{'django-migration'}PASTE_PY\n"
		  . "$c{'django-migrate'}python3 orders.py\n", 'dj' ],
	[ 'pgJDBC', 'javac -version && test -e /usr/share/java/postgresql.jar', { 'Orders.java' => $c{jdbc} },
		$c{'jdbc-run'}, 'j' ],
	[ 'Hibernate', 'javac -version && test -e /usr/share/java/hibernate-entitymanager.jar',
		{ 'Order.java' => $c{'hibernate-entity'}, 'Invoice.java' => $c{'hibernate-invoice'},
			'HibernateOrders.java' => $c{hibernate}, 'persistence.xml' => $c{'hibernate-xml'} },
		$c{'hibernate-run'}, 'h' ],
	[ 'node-postgres', 'node -e "require(\'pg\')"', { 'orders.js' => $c{node} }, 'node orders.js', 'js' ],
	[ 'Go lib/pq', 'command -v go && test -d /usr/share/gocode/src/github.com/lib/pq', { 'main.go' => $c{'go-pq'} },
		"$c{'go-build'}./orders\n", 'go_pq' ],
	[ 'Go pgx', 'command -v go && test -d /usr/share/gocode/src/github.com/jackc/pgx/v4', { 'main.go' => $c{'go-pgx'} },
		"$c{'go-build'}./orders\n", 'pgx' ],
	[ 'Ruby pg', 'ruby -e "require \'pg\'"', { 'example.rb' => $c{'ruby-pg'} }, 'ruby example.rb', 'ruby_pg' ],
	[ 'Active Record', 'ruby -e "require \'pg\'; require \'active_record\'"',
		{ 'example.rb' => $c{activerecord}, 'db/migrate/20261127000000_create_ar_tables.rb' => $c{'activerecord-migration'} },
		'ruby example.rb', 'ar' ],
	[ 'PHP PDO', 'php -r "exit(in_array(\'pgsql\', PDO::getAvailableDrivers()) ? 0 : 1);"',
		{ 'example.php' => $c{php} }, 'php example.php', 'php' ],
	[ 'Rust tokio-postgres', 'command -v cargo && ls -d /usr/share/cargo/registry/tokio-postgres-0.7*',
		{ 'Cargo.toml' => $c{'rust-cargo'}, '.cargo/config.toml' => $c{'rust-config'}, 'src/main.rs' => $c{rust} },
		"$c{'rust-build'}./target/debug/idgen-example\n", 'rust' ],
);
my $ran = 0;
for my $client (@clients)
{
	my ($what, $have, $files, $cmds, $prefix) = @$client;
	my $dir = "$work/$prefix";
	make_path($dir);
	if (system("cd '$dir' && ($have) >/dev/null 2>&1") != 0)
	{
		print "  skipped: $what: its tool is not installed here\n";
		next;
	}
	if (grep { !defined } values %$files, $cmds)
	{
		fail("$what: docs/clients.md has its blocks");
		next;
	}
	spew("$dir/$_", $files->{$_}) for keys %$files;
	($rc, $out) = bash("set -e\n$password_line\n$env\n$cmds", $dir);
	$ran++;
	next unless check($rc == 0, "$what: runs as the page says, as webapp", $out);
	my $ok = 1;
	for my $table ("${prefix}_orders", "${prefix}_invoices")
	{
		my @rows = $out =~ /^\Q$table\E (\d+) (\w+)$/mg;
		my (@ids, @names);
		while (my ($id, $name) = splice(@rows, 0, 2)) { push @ids, $id; push @names, $name; }
		my $held = psql("SELECT string_agg(id || ' ' || customer, ',' ORDER BY id) FROM webapp.$table"
			  . " WHERE pg_get_userbyid((SELECT relowner FROM pg_class WHERE oid = 'webapp.$table'::regclass)) = 'webapp'");
		my $printed = join(',', map { "$ids[$_] $names[$_]" } sort { $ids[$a] <=> $ids[$b] } 0 .. $#ids);
		$ok &&= check(join(',', @names) eq 'alice,bob,carol,dave' && $held eq $printed,
			"$what: $table, owned by webapp, holds exactly the IDs printed (alice, then bob, carol, dave)",
			"printed: $printed\nheld: $held\n$out");
	}
}
check($ran > 0, "clients run: $ran");

# 4. docs/monitoring.md as the page says, without systemd (a chroot has
# none): its SQL, the peer map of its pg_hba.conf and pg_ident.conf lines,
# then each exporter installed, its file copied, its settings written
# where the page says, started with the page's command and scraped with
# its curl command until the metrics come: pg_up 1 (postgres-exporter) and
# every metric of the page's table, but those of a node registry and of
# idgen.node_id = 'auto' (this server has neither); promtool's block where
# promtool is installed.  The exporters are stopped after, and what this
# installed is purged
# End the exporters started here (a chroot may have no pkill): every
# process whose program is one of them, then wait until they are gone
sub stop_exporters
{
	my $exporters = qr{^/usr/bin/prometheus-(?:postgres|sql)-exporter\0};
	my @pids = grep { (eval { slurp("/proc/$_/cmdline") } // '') =~ $exporters }
	  map { m{^/proc/(\d+)$} ? $1 : () } glob('/proc/[0-9]*');
	kill 'TERM', @pids;
	my $deadline = time() + 60;
	sleep 1 while (@pids = grep { kill 0, $_ } @pids) && time() < $deadline;
	return check(!@pids, 'the exporters started here have ended');
}
my @mon = blocks('docs/monitoring.md');
my $montext = slurp('docs/monitoring.md');
my %msec;
push @{ $msec{ $_->{section} } }, $_ for @mon;
sub mon_blocks
{
	my ($section, $lang) = @_;
	return grep { $_->{lang} eq $lang } @{ $msec{$section} // [] };
}
# The metrics of the table of "## Metrics" this server serves
my @metrics;
{
	my ($table) = $montext =~ /^## Metrics\n(.*?)^## /ms;
	for my $row (split /\n/, $table // '')
	{
		next unless $row =~ /^\| `(idgen_\w+)` \|[^|]*\| (.*) \|$/;
		my ($name, $meaning) = ($1, $2);
		next if $meaning =~ /^(?:with `idgen\.node_id = 'auto'`|in a node registry)/;
		push @metrics, $name;
	}
}
check(@metrics >= 15, 'docs/monitoring.md: its table lists ' . scalar(@metrics) . ' metrics a server without a registry serves');
my @mon_sql = mon_blocks('A role for the exporter', 'sql');
my ($hba) = grep { $_->{lang} eq '' && $_->{code} =~ /^# pg_hba\.conf/ } @{ $msec{'A role for the exporter'} // [] };
my @pgx = mon_blocks('prometheus-postgres-exporter', 'sh');
my @sqlx = mon_blocks('prometheus-sql-exporter', 'sh');
my ($url) = $montext =~ /Change\s+the\s+connection\s+URL\s+in\s+the\s+file\s+to\s+your\s+database\s+\(`(postgres:\/\/[^`]+)`\)/;
my ($sqlx_args) = $montext =~ /in `\/etc\/default\/prometheus-sql-exporter` add\s+`(ARGS='[^`]*')`/;
my %curl;
$curl{$1} = $& while $montext =~ /curl -s 127\.0\.0\.1:(\d+)\/metrics/g;
if (check(@mon_sql == 2 && $hba && @pgx == 3 && @sqlx == 2 && $url && $sqlx_args && $curl{9187} && $curl{9237},
		'docs/monitoring.md: its blocks (2 SQL, the peer map, 3 + 2 shell), the sql-exporter URL and ARGS, the curl commands',
		sprintf("SQL %d, peer map %s, shell %d + %d, URL %s, ARGS %s, curl %s", scalar @mon_sql, $hba ? 'found' : 'missing',
			scalar @pgx, scalar @sqlx, $url // 'missing', $sqlx_args // 'missing', join(' ', sort keys %curl))))
{
	my @ours = grep { system("dpkg -s $_ >/dev/null 2>&1") != 0 }
	  qw(prometheus-postgres-exporter prometheus-sql-exporter curl);
	my %saved = map { -e $_ ? ($_ => slurp($_)) : () }
	  qw(/etc/default/prometheus-postgres-exporter /etc/default/prometheus-sql-exporter /etc/prometheus-sql-exporter.yml);
	MON: {
	for my $b (@mon_sql)
	{
		($rc, $out) = bash("set -e\nexport PGPORT=$port\nrunuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -d app <<'PASTE_SQL'\n$b->{code}PASTE_SQL\n", $work);
		check($rc == 0, "docs/monitoring.md:$b->{line}: runs", $out) or last MON;
	}
	# the peer map, where its comments say: the pg_hba.conf line above the
	# other "local" lines, the pg_ident.conf lines at the end
	my ($hba_line) = $hba->{code} =~ /^# pg_hba\.conf.*\n(.*)\n/;
	my ($ident) = $hba->{code} =~ /^# pg_ident\.conf[^\n]*\n(.*)\z/ms;
	check($hba_line && $ident, 'docs/monitoring.md: its peer map has a pg_hba.conf line and pg_ident.conf lines',
		$hba->{code}) or last MON;
	my $conf = "/etc/postgresql/$N/main";
	my $h = slurp("$conf/pg_hba.conf");
	$h =~ s/^(local\s)/$hba_line\n$1/m;
	spew("$conf/pg_hba.conf", $h);
	spew("$conf/pg_ident.conf", slurp("$conf/pg_ident.conf") . $ident);
	psql('SELECT pg_reload_conf()');
	# postgres-exporter: install and copy; the settings; the start
	($rc, $out) = bash("set -e\ncd '$top'\n$n_line\n$pgx[0]{code}", $work, 1);
	check($rc == 0, "docs/monitoring.md:$pgx[0]{line}: prometheus-postgres-exporter installed, the queries copied", $out)
	  or last MON;
	my $d = slurp('/etc/default/prometheus-postgres-exporter');
	for my $set (grep { /^\w+=/ } split /\n/, $pgx[1]{code})
	{
		my ($k) = $set =~ /^(\w+)=/;
		$d =~ s/^\Q$k\E=.*$/$set/m or $d .= "$set\n";
	}
	spew('/etc/default/prometheus-postgres-exporter', $d);
	# the sql-exporter's: the URL in its file, ARGS in /etc/default
	($rc, $out) = bash("set -e\ncd '$top'\n$n_line\n$sqlx[0]{code}", $work, 1);
	check($rc == 0, "docs/monitoring.md:$sqlx[0]{line}: prometheus-sql-exporter installed, its file copied", $out)
	  or last MON;
	my $y = slurp('/etc/prometheus-sql-exporter.yml');
	check($y =~ s/'postgres:\/\/[^']*'/'$url'/, 'docs/monitoring.md: the sql-exporter file has a connection URL to change')
	  or last MON;
	spew('/etc/prometheus-sql-exporter.yml', $y);
	spew('/etc/default/prometheus-sql-exporter', slurp('/etc/default/prometheus-sql-exporter') . "$sqlx_args\n");
	for my $x ([ 'prometheus-postgres-exporter', $pgx[2], 9187, '' ], [ 'prometheus-sql-exporter', $sqlx[1], 9237, 'sql_' ])
	{
		my ($what, $start, $p, $prefix) = @$x;
		# another process on the page's port would answer the scrapes
		next unless check(system("$curl{$p} >/dev/null 2>&1") != 0, "nothing listens on 127.0.0.1:$p, the page's port for $what");
		($rc, $out) = bash("set -e\nexport PGPORT=$port\n$start->{code}", $work);
		next unless check($rc == 0, "docs/monitoring.md:$start->{line}: $what started as the page says", $out);
		# its metrics, once it has connected and run its queries
		my ($scrape, @missing);
		my $deadline = time() + 180;
		do
		{
			sleep 1;
			$scrape = `$curl{$p} 2>&1`;
			@missing = grep { $scrape !~ /^\Q$prefix$_\E[{ ]/m } @metrics;
			push @missing, 'pg_up 1' if $prefix eq '' && $scrape !~ /^pg_up 1$/m;
		} while (@missing && time() < $deadline);
		check(!@missing, "docs/monitoring.md: $curl{$p} serves " . ($prefix ? "" : "pg_up 1 and ") . "the " . scalar(@metrics) . ' metrics'
			. ($prefix ? ", prefixed $prefix" : ''),
			'missing: ' . join(', ', @missing) . "\n" . join("\n", grep { /idgen|pg_up|error/i } split /\n/, $scrape));
	}
	}
	stop_exporters();
	my ($promtool) = mon_blocks('Alerts', 'sh');
	if (system('command -v promtool >/dev/null') != 0)
	{
		print "  skipped: docs/monitoring.md: promtool's block: promtool is not installed here\n";
	}
	elsif (check($promtool, 'docs/monitoring.md: Alerts has its promtool block'))
	{
		($rc, $out) = bash("set -e\ncd '$top'\n$n_line\n$promtool->{code}", $work);
		check($rc == 0, "docs/monitoring.md:$promtool->{line}: promtool checks the rules and passes their tests", $out);
	}
	psql('DROP ROLE IF EXISTS idgen_monitor');
	spew($_, $saved{$_}) for keys %saved;
	unlink '/etc/prometheus/idgen-queries.yaml';
	if (@ours)
	{
		($rc, $out) = bash("apt-get -y -q purge @ours", $work);
		check($rc == 0, "what the page installed here is purged (@ours)", $out);
	}
}

# 5. Uninstalling as docs/install.md says (the README's Uninstalling
# points there): its shell blocks, in order; the rows and their IDs stay
my @uninstall;
{
	my @lines = split /\n/, slurp('docs/install.md');
	my $in = 0;
	for (my $i = 0; $i < @lines; $i++)
	{
		$in = $lines[$i] eq '## Uninstalling' if $lines[$i] =~ /^## /;
		next unless $in && $lines[$i] =~ /^(\s*)```sh\s*$/;
		my ($indent, @code) = ($1);
		for ($i++; $lines[$i] !~ /^\s*```\s*$/; $i++) { push @code, $lines[$i] =~ s/^\Q$indent\E//r; }
		push @uninstall, join("\n", @code) . "\n";
	}
}
my $before = psql("SELECT count(*) FROM webapp.py_orders");
($rc, $out) = bash("set -e\ncd '$top'\n$n_line\nexport PGPORT=$port\n" . join('', @uninstall), $work, 1);
check(@uninstall == 3 && $rc == 0, 'docs/install.md: Uninstalling\'s ' . scalar(@uninstall) . ' blocks run', $out);
check(system("dpkg -s postgresql-$N-idgen >/dev/null 2>&1") != 0, "docs/install.md: postgresql-$N-idgen is removed");
check(psql("SELECT current_setting('shared_preload_libraries') || ':' || count(*) FROM webapp.py_orders") eq ":$before",
	'docs/install.md: the server runs without idgen, the rows stay');

# 6. The cluster as the package made it
check(fresh_cluster(5432) && system("pg_ctlcluster $N main stop >/dev/null 2>&1; true") == 0,
	"the cluster $N/main made anew as the package makes it");
print "paste: $passed passed, $failed failed\n";
exit($failed ? 1 : 0);
