# The Go, Ruby, PHP and Rust examples of docs/clients.md run as shown: each
# block marked <!-- client-more: NAME --> is written to a file and built or
# run with its language's Debian package, by the page's role "webapp" that
# owns its tables, in the database "app", the role and the segment tags made
# by the page's setup block (<!-- client: setup -->, run as a superuser;
# its "runuser -u postgres --" is a no-op here, the test runs as the server
# user).  All of them on IDGEN_NEIGHBOURS_MAJOR; on
# IDGEN_CLIENTS_SECOND_MAJOR only Ruby's (Active Record 7.2 in trixie
# against bookworm's 6.1: test/pg_major.sh).  Asserts, per client: its two tables (snowflake and
# segment key) belong to webapp and have no sequence; it printed alice's ID
# and then bob's, carol's and dave's in that order, rising, and exactly the
# IDs of its tables (the segment tags start at 2^53 + 1, which a double
# cannot hold); the snowflake IDs carry this server's node id; the time it
# printed is idgen.id_timestamp of the ID.  Active Record's migration is
# recorded; PDO's lastInsertId() fails with 55000, and after an identity
# insert returns that number.  A client whose package is missing is
# skipped with a line that names it.
use strict;
use warnings;
use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $lane = clients_lane();

# The examples, by name: { lang, code }
my %block;
{
	my @lines = split /\n/, slurp_file(repo_file('docs/clients.md'));
	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /^<!--\s*client(?:-more)?:\s*(\S+)\s*-->\s*$/;
		my $name = $1;
		$lines[ $i + 1 ] =~ /^```(\w+)$/ or die "docs/clients.md: no code block after client $name";
		my $lang = $1;
		my @code;
		for ($i += 2; $lines[$i] ne '```'; $i++) { push @code, $lines[$i]; }
		$block{$name} = { lang => $lang, code => join("\n", @code) . "\n" };
	}
}
my @mine = qw(setup activerecord activerecord-migration go-build go-pgx go-pq php php-lastinsertid
  ruby-pg rust rust-build rust-cargo rust-config);
is(join(',', grep { !$block{$_} } @mine), '', 'docs/clients.md has its Go, Ruby, PHP and Rust examples');

my $node = idgen_node('clients_more', node_id => 5, conf => "idgen.database = 'app'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION idgen;');
$node->poll_query_until('app', 'SELECT idgen.snowflake_nextval() > 0') or die 'no snowflake ID';
my $first = '9007199254740993';

my $dir = $PostgreSQL::Test::Utils::tmp_check . '/clients_more';
make_path($dir);
# Build caches (Go's, cargo's target): kept between runs, outside the checkout
my $cache = ($ENV{IDGEN_CLIENT_CACHE} // ($ENV{TMPDIR} // '/tmp') . "/idgen-098-cache-$<");
make_path($cache);
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'app';

# The page's setup, as a superuser (this user): "runuser -u postgres --"
# runs the command as it is
{
	my ($ok, $out, $err) = run_page_setup($dir, $block{setup}{code});
	ok($ok, "the page's setup makes the role, its schema and every tag") or diag($out . $err);
	is($node->safe_psql('app', q{SELECT string_agg(biz_tag || ' ' || max_id, ',' ORDER BY biz_tag)
		FROM idgen.segment_alloc WHERE biz_tag <> 'webapp_invoice'}),
		join(',', map { "$_ " . ($first - 1) } qw(ar_invoice go_pq_invoice pgx_invoice php_invoice ruby_pg_invoice rust_invoice)),
		"the page's setup makes every tag of this test, from 2^53 + 1");
}
local $ENV{PGUSER} = 'webapp';
local $ENV{PGPASSWORD} = 'change-me';

sub psql { return $node->safe_psql('app', $_[0]); }

# What a client printed for its tables and the time, checked against the server
sub check_client
{
	my ($what, $prefix, $out) = @_;
	for my $table ("${prefix}_orders", "${prefix}_invoices")
	{
		is( psql(
				"SELECT count(*) FROM pg_class WHERE oid = 'webapp.$table'::regclass"
				  . " AND relowner = 'webapp'::regrole"
				  . " AND pg_get_serial_sequence('webapp.$table', 'id') IS NULL"),
			'1',
			"$what: webapp owns $table, whose key has no sequence");
		my @rows = $out =~ /^\Q$table\E (\d+) (\w+)$/mg;
		my (@ids, @names);
		while (my ($id, $name) = splice(@rows, 0, 2)) { push @ids, $id; push @names, $name; }
		is(join(',', @names), 'alice,bob,carol,dave', "$what: $table: one insert, then a batch of three, in order");
		ok(!grep({ $ids[$_] <= $ids[ $_ - 1 ] } 1 .. $#ids), "$what: $table: each ID above the one before")
		  or diag("@ids");
		is(psql("SELECT string_agg(id::text || ' ' || customer, ',' ORDER BY id) FROM webapp.$table"),
			join(',', map { "$ids[$_] $names[$_]" } 0 .. $#ids),
			"$what: the IDs it printed are exactly those of $table");
	}
	like($out, qr/^${prefix}_invoices $first alice$/m, "$what: the segment IDs start at 2^53 + 1, exact");
	is(psql("SELECT count(*) FROM webapp.${prefix}_orders t, idgen.id_decode(t.id) d WHERE d.node_id <> 5"),
		'0', "$what: every snowflake ID is of this server");
	my ($id, $at) = $out =~ /^time (\d+) (.+)$/m;
	is(psql("SELECT idgen.id_timestamp(id) = '$at'::timestamptz FROM webapp.${prefix}_orders WHERE id = $id"),
		't', "$what: the time it printed is the ID's ($at)");
	return;
}

# Run one example's file with a command; checks it, unless skipped
sub client
{
	my (%c) = @_;
	SKIP:
	{
		if ($lane ne 'all' && $c{what} !~ /^(Ruby|Active Record)/)
		{
			skip "$c{what}: tested on PostgreSQL " . ($ENV{IDGEN_NEIGHBOURS_MAJOR} // 15) . ' only', 1;
		}
		if (!works($c{have}, dir => $dir))
		{
			diag("skipped: $c{why}");
			skip $c{why}, 1;
		}
		my $sub = "$dir/$c{prefix}";
		make_path($sub);
		write_files($sub, %{ $c{files} });
		for my $step (@{ $c{build} // [] })
		{
			my ($ok, $out, $err) = run_cmd($step, dir => $sub, env => $c{env});
			ok($ok, "$c{what}: builds: " . ($step->[-1] =~ s/\s+/ /gr)) or diag($err);
			return unless $ok;
		}
		# IPC::Run finds the program before it changes folder
		my @run = @{ $c{run} };
		$run[0] =~ s{^\./}{$sub/};
		my ($ok, $out, $err) = run_cmd(\@run, dir => $sub, env => $c{env});
		ok($ok, "$c{what}: example runs") or diag($err);
		return unless $ok;
		check_client($c{what}, $c{prefix}, $out);
		return $out;
	}
	return;
}

# Go: GOPATH mode over Debian's sources, the build line of the page
my $go_env = { GOCACHE => "$cache/go", GOFLAGS => '', HOME => $cache };
for my $go ([ 'go-pq', 'go_pq', 'lib/pq', 'github.com/lib/pq', 'golang-github-lib-pq-dev' ],
	[ 'go-pgx', 'pgx', 'pgx', 'github.com/jackc/pgx/v4', 'golang-github-jackc-pgx-v4-dev' ])
{
	my ($name, $prefix, $what, $pkg, $deb) = @$go;
	client(
		what => "Go $what",
		prefix => $prefix,
		have => [ 'sh', '-c', "command -v go && test -d /usr/share/gocode/src/$pkg" ],
		why => "Go $what: golang-go or $deb is not installed",
		files => { 'main.go' => $block{$name}{code} },
		build => [ [ 'sh', '-ec', $block{'go-build'}{code} ] ],
		env => $go_env,
		run => ['./orders']);
}

client(
	what => 'Ruby pg',
	prefix => 'ruby_pg',
	have => [ 'ruby', '-e', 'require "pg"' ],
	why => 'Ruby pg: ruby-pg is not installed',
	files => { 'example.rb' => $block{'ruby-pg'}{code} },
	run => [ 'ruby', 'example.rb' ]);

if (client(
		what => 'Active Record',
		prefix => 'ar',
		have => [ 'ruby', '-e', 'require "pg"; require "active_record"' ],
		why => 'Active Record: ruby-activerecord or ruby-pg is not installed',
		files => {
			'example.rb' => $block{activerecord}{code},
			'db/migrate/20261127000000_create_ar_tables.rb' => $block{'activerecord-migration'}{code} },
		run => [ 'ruby', 'example.rb' ]))
{
	is(psql("SELECT string_agg(version, ',') FROM webapp.schema_migrations"),
		'20261127000000', 'Active Record: the migration is recorded');
}

if (client(
		what => 'PHP PDO',
		prefix => 'php',
		have => [ 'php', '-r', 'exit(in_array("pgsql", PDO::getAvailableDrivers()) ? 0 : 1);' ],
		why => 'PHP PDO: php-cli or php-pgsql is not installed',
		files => { 'example.php' => $block{php}{code} },
		run => [ 'php', 'example.php' ]))
{
	my ($ok, $out, $err) = run_cmd([ 'php', write_file("$dir/php/lastinsertid.php", $block{'php-lastinsertid'}{code}) ],
		dir => $dir);
	ok($ok, 'PHP lastInsertId example runs') or diag($err);
	like($out, qr/^lastInsertId error 55000$/m, 'lastInsertId() of an idgen key: SQLSTATE 55000');
	my ($got) = $out =~ /^lastInsertId after identity (\d+)$/m;
	is($got, psql('SELECT max(n) FROM webapp.php_audit'), 'after an identity insert, lastInsertId() is its number');
	is(psql("SELECT count(*) FROM webapp.php_orders WHERE id = " . ($got // 0)), '0', '... which is no order ID');
	is(psql("SELECT count(*) FROM webapp.php_orders WHERE customer IN ('erin', 'frank')"),
		'2', '... while both orders were inserted');
}

# Rust: cargo over Debian's crates, offline, target kept in the cache
client(
	what => 'Rust tokio-postgres',
	prefix => 'rust',
	have => [ 'sh', '-c', 'command -v cargo && ls -d /usr/share/cargo/registry/tokio-postgres-0.7*' ],
	why => 'Rust tokio-postgres: cargo or librust-tokio-postgres-dev is not installed',
	files => {
		'Cargo.toml' => $block{'rust-cargo'}{code},
		'main.rs' => $block{rust}{code},
		'config.toml' => $block{'rust-config'}{code} },
	build => [
		[ 'sh', '-ec', 'mkdir -p src .cargo; mv main.rs src/; mv config.toml .cargo/' ],
		[ 'sh', '-ec', $block{'rust-build'}{code} ] ],
	# (no debug info and no incremental build: the cold build in CI's
	# fresh chroot is the test's longest step; the program is the same)
	env => {
		CARGO_HOME => "$cache/cargo-home",
		CARGO_TARGET_DIR => "$cache/cargo-target",
		CARGO_PROFILE_DEV_DEBUG => '0',
		CARGO_INCREMENTAL => '0',
		HOME => $cache },
	run => ["$cache/cargo-target/debug/idgen-example"]);

$node->stop;
done_testing();
