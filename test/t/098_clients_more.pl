# The Go, Ruby, PHP and Rust examples of docs/clients.md run as shown: each
# block marked <!-- client-more: NAME --> is written to a file and built or
# run with its language's Debian package, by an ordinary role "app" that
# owns its tables, the segment tags made by a tag administrator with the
# grants of README.md.  Asserts, per client: its two tables (snowflake and
# segment key) belong to app and have no sequence; it printed alice's ID
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

neighbours_version();

# The examples, by name: { lang, code }
my %block;
{
	my @lines = split /\n/, slurp_file(repo_file('docs/clients.md'));
	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /^<!--\s*client-more:\s*(\S+)\s*-->\s*$/;
		my $name = $1;
		$lines[ $i + 1 ] =~ /^```(\w+)$/ or die "docs/clients.md: no code block after client-more $name";
		my $lang = $1;
		my @code;
		for ($i += 2; $lines[$i] ne '```'; $i++) { push @code, $lines[$i]; }
		$block{$name} = { lang => $lang, code => join("\n", @code) . "\n" };
	}
}
is(join(',', sort keys %block),
	'activerecord,go-build,go-pgx,go-pq,php,php-lastinsertid,ruby-pg,rust,rust-build,rust-cargo,rust-config',
	'docs/clients.md has its Go, Ruby, PHP and Rust examples');

my $node = idgen_node('clients_more', node_id => 5);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen;');
wait_ready($node);

# The owner role and its schema; the tag administrator of README.md, who
# makes one tag per client, starting at 2^53 + 1
my $first = '9007199254740993';
$node->safe_psql(
	'postgres', q{
CREATE ROLE app LOGIN;
CREATE SCHEMA app AUTHORIZATION app;
CREATE ROLE tag_admin LOGIN;
GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int),
    idgen.segment_drop(text) TO tag_admin;
});
for my $tag (qw(go_pq_invoice pgx_invoice ruby_pg_invoice ar_invoice php_invoice rust_invoice))
{
	$node->safe_psql('postgres', "SELECT idgen.segment_create('$tag', start => $first);",
		extra_params => [ '-U', 'tag_admin' ]);
}

my $dir = $PostgreSQL::Test::Utils::tmp_check . '/clients_more';
make_path($dir);
# Build caches (Go's, cargo's target): kept between runs, outside the checkout
my $cache = ($ENV{IDGEN_CLIENT_CACHE} // ($ENV{TMPDIR} // '/tmp') . "/idgen-098-cache-$<");
make_path($cache);
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'postgres';
local $ENV{PGUSER} = 'app';

sub psql { return $node->safe_psql('postgres', $_[0]); }

# What a client printed for its tables and the time, checked against the server
sub check_client
{
	my ($what, $prefix, $out) = @_;
	for my $table ("${prefix}_orders", "${prefix}_invoices")
	{
		is( psql(
				"SELECT count(*) FROM pg_class WHERE oid = 'app.$table'::regclass"
				  . " AND relowner = 'app'::regrole"
				  . " AND pg_get_serial_sequence('app.$table', 'id') IS NULL"),
			'1',
			"$what: app owns $table, whose key has no sequence");
		my @rows = $out =~ /^\Q$table\E (\d+) (\w+)$/mg;
		my (@ids, @names);
		while (my ($id, $name) = splice(@rows, 0, 2)) { push @ids, $id; push @names, $name; }
		is(join(',', @names), 'alice,bob,carol,dave', "$what: $table: one insert, then a batch of three, in order");
		ok(!grep({ $ids[$_] <= $ids[ $_ - 1 ] } 1 .. $#ids), "$what: $table: each ID above the one before")
		  or diag("@ids");
		is(psql("SELECT string_agg(id::text || ' ' || customer, ',' ORDER BY id) FROM app.$table"),
			join(',', map { "$ids[$_] $names[$_]" } 0 .. $#ids),
			"$what: the IDs it printed are exactly those of $table");
	}
	like($out, qr/^${prefix}_invoices $first alice$/m, "$what: the segment IDs start at 2^53 + 1, exact");
	is(psql("SELECT count(*) FROM app.${prefix}_orders t, idgen.id_decode(t.id) d WHERE d.node_id <> 5"),
		'0', "$what: every snowflake ID is of this server");
	my ($id, $at) = $out =~ /^time (\d+) (.+)$/m;
	is(psql("SELECT idgen.id_timestamp(id) = '$at'::timestamptz FROM app.${prefix}_orders WHERE id = $id"),
		't', "$what: the time it printed is the ID's ($at)");
	return;
}

# Run one example's file with a command; checks it, unless skipped
sub client
{
	my (%c) = @_;
	SKIP:
	{
		if (!works($c{have}, dir => $dir))
		{
			diag("skipped: $c{why}");
			skip $c{why}, 1;
		}
		my $sub = "$dir/$c{prefix}";
		make_path($sub);
		write_file("$sub/$_", $c{files}{$_}) for keys %{ $c{files} };
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
		files => { 'example.rb' => $block{activerecord}{code} },
		run => [ 'ruby', 'example.rb' ]))
{
	is(psql("SELECT string_agg(version, ',') FROM app.schema_migrations"),
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
	is($got, psql('SELECT max(n) FROM app.php_audit'), 'after an identity insert, lastInsertId() is its number');
	is(psql("SELECT count(*) FROM app.php_orders WHERE id = " . ($got // 0)), '0', '... which is no order ID');
	is(psql("SELECT count(*) FROM app.php_orders WHERE customer IN ('erin', 'frank')"),
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
