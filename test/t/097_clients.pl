# Every client example of docs/clients.md runs as shown, against a test
# server: each block marked <!-- client: NAME --> is written to a file and
# run, with its language's Debian package (psycopg 3, psycopg2, SQLAlchemy
# 1.4 or 2.x, Django, pgJDBC, Hibernate 3.6, node-postgres) or, on
# IDGEN_NEIGHBOURS_MAJOR only, the npm packages of test/npm/package.json
# that test/setup.sh installs into /var/cache/idgen-npm (Knex, Sequelize,
# TypeORM, Drizzle).  The page's setup block makes the application's role
# (no superuser), its schema and the segment tags, in the database "app"
# (its "runuser -u postgres --" is a no-op here: the test runs as the
# server user, a superuser); the examples run as that role, with the
# page's Django settings and its commands for Django and pgJDBC.  Asserts for each (check_example): a snowflake table and a segment
# table owned by the role, each with one row and a batch of three whose IDs
# come back in the order of the rows, every printed ID in its table with
# its row, snowflake IDs of this server, and the time printed is the ID's.
# Django's migration runs as that role and adopts its two key columns,
# which then have the snowflake and the segment default and no sequence
# left (Django 3.2 with psycopg2, 4.2 and later with either driver);
# Drizzle's tables come from the page's schema through drizzle-kit generate
# (the migration it writes is the page's) and drizzle-orm's migrator run as
# that role, whose migrations table in its schema records the migration;
# drizzle-orm's migrate() as it is fails there with 42501, as the page says.
# Hibernate inserts without the key (IDENTITY), and fails as
# docs/clients.md says with generated keys off and with AUTO or SEQUENCE;
# node-postgres and the ORMs give IDs as strings (Drizzle: BigInt), never
# numbers; JSON.stringify throws on a BigInt and the page's replacer and
# string IDs stay exact; the parseInt pitfall rounds an ID so that a lookup
# finds no row.  A client whose package is missing is skipped with a line.
use strict;
use warnings;
use Digest::SHA qw(sha256_hex);
use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# The examples, by name: { lang, code }
my %block;
{
	my @lines = split /\n/, slurp_file(repo_file('docs/clients.md'));
	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /^<!--\s*client:\s*(\S+)\s*-->\s*$/;
		my $name = $1;
		$lines[ $i + 1 ] =~ /^```(\w+)$/ or die "docs/clients.md: no code block after client $name";
		my $lang = $1;
		my @code;
		for ($i += 2; $lines[$i] ne '```'; $i++) { push @code, $lines[$i]; }
		$block{$name} = { lang => $lang, code => join("\n", @code) . "\n" };
	}
}
# (other languages' sections, with their own tests, may follow: only these
# are required here)
my @mine = qw(setup env psycopg psycopg2 sqlalchemy django-settings django-model django-makemigrations django-migration
  django-migrate django django-db-default django-db-default-use django-db-default-bulk
  jdbc jdbc-run hibernate-entity hibernate-invoice hibernate-xml hibernate hibernate-run hibernate-no-keys
  node node-json node-pitfall knex-migration knex sequelize typeorm
  drizzle-schema drizzle-config drizzle-generate drizzle-migration drizzle);
is(join(',', grep { !$block{$_} } @mine), '', 'docs/clients.md has the client examples of this test');

my $node = idgen_node('clients', node_id => 5,
	conf => "listen_addresses = '127.0.0.1'\nidgen.database = 'app'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION idgen;');
$node->poll_query_until('app', 'SELECT idgen.snowflake_nextval() > 0') or die 'no snowflake ID';

my $dir = $PostgreSQL::Test::Utils::tmp_check . '/clients';
make_path($dir);
my $user = getpwuid($<);
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'app';
local $ENV{PGUSER} = $user;

# The reason a client is skipped, also shown where test/run.sh prints it
sub why
{
	my ($reason) = @_;
	diag("skipped: $reason");
	return $reason;
}

# The application's role of the page's setup block, run as a superuser;
# the examples connect as that role (the role owns its tables, in its schema)
my $app = 'webapp';
{
	my ($ok, $out, $err) = run_page_setup($dir, $block{setup}{code});
	ok($ok, 'the setup block makes the role, its schema and the tags') or diag($out . $err);
	# again: it changes nothing, and fails at nothing
	($ok, $out, $err) = run_page_setup($dir);
	ok($ok, 'the setup block runs again without error') or diag($out . $err);
}
# The page's connection (its env block), to this server's port
my ($password) = $block{setup}{code} =~ /^password='([^']+)'/m or die 'no password in the setup block';
$block{env}{code} =~ /^export PGHOST=127\.0\.0\.1 PGPORT=5432 PGDATABASE=app PGUSER=$app PGPASSWORD="\$password"$/m
  or die 'the env block is not the one this test knows';
my $app_jdbc = 'jdbc:postgresql://127.0.0.1:' . $node->port . "/app?user=$app&password=$password";
my %as_app = (env => { PGUSER => $app, PGPASSWORD => $password, JDBC_URL => $app_jdbc });

# What an example printed, checked against the tables it made in the
# application's schema: lines "TABLE ID CUSTOMER" (a single row of alice,
# then the batch bob, carol, dave, for ORDERS then INVOICES) and
# "time ID TIMESTAMP".  Every ID is in its table with its customer, the
# batch's IDs increase in the order of its rows, the orders' IDs are
# snowflake IDs of this server, the tables are the role's own, and the
# time printed is the ID's.  Tests: 10 (4 per table, 2 more).
sub check_example
{
	my ($what, $out, $orders, $invoices) = @_;
	for my $table ($orders, $invoices)
	{
		my @rows = $out =~ /^\Q$table\E (\d+) (\w+)$/mg;
		my (@ids, @names);
		while (my ($id, $name) = splice(@rows, 0, 2)) { push @ids, $id; push @names, $name; }
		is(join(',', @names), 'alice,bob,carol,dave', "$what: $table, one row then a batch of three")
		  or diag($out);
		is($node->safe_psql('app',
				"SELECT string_agg(id || ' ' || customer, ',' ORDER BY id) FROM $app.$table"),
			join(',', map { "$ids[$_] $names[$_]" } sort { $ids[$a] <=> $ids[$b] } 0 .. $#ids),
			"$what: $table holds exactly the IDs printed, each with its row");
		ok(@ids == 4 && $ids[1] < $ids[2] && $ids[2] < $ids[3],
			"$what: $table, the batch's IDs come back in the order of its rows");
		is($node->safe_psql('app',
				"SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = '$app.$table'::regclass"),
			$app, "$what: $table is owned by the application's role");
	}
	is($node->safe_psql('app',
			"SELECT count(*) FROM $app.$orders t, idgen.id_decode(t.id) d WHERE d.node_id <> 5"),
		'0', "$what: every order ID is a snowflake ID of this server");
	my ($id, $time) = $out =~ /^time (\d+) (\S+)$/m;
	is($node->safe_psql('app',
			defined $id ? "SELECT idgen.id_timestamp($id) = '$time'::timestamptz" : 'SELECT false'),
		't', "$what: the time printed ($time) is the ID's");
	return;
}

# The defaults of the key columns "id" of the application's tables named,
# in the order of their names
sub id_defaults
{
	my @tables = map { "'$app.$_'::regclass" } @_;
	return $node->safe_psql('app', qq{
			SELECT string_agg(pg_get_expr(d.adbin, d.adrelid), ', ' ORDER BY d.adrelid::regclass::text)
			FROM pg_attrdef d
			JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			WHERE d.adrelid IN (@{[ join(', ', @tables) ]}) AND a.attname = 'id'});
}

# Debian's Python, whose packages the examples use (not one earlier in PATH)
my $py = -x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3';
my $have_python = works([ $py, '-c', 'pass' ]);

SKIP:
{
	skip why('psycopg: python3-psycopg is not installed'), 10
	  unless $have_python && works([ $py, '-c', 'import psycopg' ]);
	my ($ok, $out, $err) =
	  run_cmd([ $py, write_file("$dir/psycopg_example.py", $block{psycopg}{code}) ], %as_app);
	ok($ok, 'psycopg example runs') or diag($err);
	check_example('psycopg', $out, 'py_orders', 'py_invoices');
}

SKIP:
{
	skip why('psycopg2: python3-psycopg2 is not installed'), 10
	  unless $have_python && works([ $py, '-c', 'import psycopg2' ]);
	my ($ok, $out, $err) =
	  run_cmd([ $py, write_file("$dir/psycopg2_example.py", $block{psycopg2}{code}) ], %as_app);
	ok($ok, 'psycopg2 example runs') or diag($err);
	check_example('psycopg2', $out, 'pg2_orders', 'pg2_invoices');
}

SKIP:
{
	my $v = $have_python && works([ $py, '-c', 'import psycopg2, sqlalchemy' ])
	  ? (run_cmd([ $py, '-c', 'import sqlalchemy; print(sqlalchemy.__version__)' ]))[1] : '';
	chomp $v;
	skip why('SQLAlchemy: python3-sqlalchemy or python3-psycopg2 is not installed'), 12 if $v eq '';
	diag("SQLAlchemy $v");
	my ($ok, $out, $err) =
	  run_cmd([ $py, write_file("$dir/sqlalchemy_example.py", $block{sqlalchemy}{code}) ], %as_app);
	ok($ok, "SQLAlchemy $v example runs") or diag($err);
	check_example("SQLAlchemy $v", $out, 'sa_orders', 'sa_invoices');

	# The page: psycopg 3's URL works the same on 2.x, and 1.4 cannot load it
	skip why("SQLAlchemy $v with psycopg 3: python3-psycopg is not installed"), 10
	  unless works([ $py, '-c', 'import psycopg' ]);
	(my $code = $block{sqlalchemy}{code}) =~ s/"postgresql\+psycopg2:/"postgresql+psycopg:/
	  or die 'no psycopg2 URL in the SQLAlchemy example';
	$code =~ s/"sa_(orders|invoices)"/"sa3_$1"/g == 2 or die 'no table names in the SQLAlchemy example';
	($ok, $out, $err) = run_cmd([ $py, write_file("$dir/sqlalchemy_psycopg3.py", $code) ], %as_app);
	if ($v =~ /^1\./)
	{
		ok(!$ok, "SQLAlchemy $v with postgresql+psycopg:// fails");
		like($err, qr/Can't load plugin: sqlalchemy\.dialects:postgresql\.psycopg$/m,
			"SQLAlchemy $v: Can't load plugin: sqlalchemy.dialects:postgresql.psycopg");
	}
	else
	{
		ok($ok, "SQLAlchemy $v example runs with postgresql+psycopg://") or diag($err);
		check_example("SQLAlchemy $v with psycopg 3", $out, 'sa3_orders', 'sa3_invoices');
	}
}

# The settings of the Django projects below (the page's examples are the app)
my $django_settings = $block{'django-settings'}{code};
my $django_version = '';

SKIP:
{
	my $v = $have_python && works([ $py, '-c', 'import django' ])
	  ? (run_cmd([ $py, '-c', 'import django; print(django.get_version())' ]))[1] : '';
	chomp $v;
	skip why('Django: python3-django is not installed'), 16 if $v eq '';
	# Django 4.2 and later use psycopg 3 where it is installed, else
	# psycopg2; earlier ones (Debian 12's 3.2) only psycopg2
	my $new = $v =~ /^(\d+)\.(\d+)/ && ($1 > 4 || ($1 == 4 && $2 >= 2));
	skip why("Django $v: python3-psycopg2 is not installed"), 16
	  unless works([ $py, '-c', 'import psycopg2' ])
	  || ($new && works([ $py, '-c', 'import psycopg' ]));
	$django_version = $v;
	my $proj = "$dir/django";
	make_path("$proj/shop/migrations");
	write_file("$proj/settings.py", $django_settings);
	write_file("$proj/shop/__init__.py", '');
	write_file("$proj/shop/migrations/__init__.py", '');
	write_file("$proj/shop/models.py", $block{'django-model'}{code});
	# As the application's role: it owns the tables and adopts the column
	my %env = (env => { %{ $as_app{env} }, DJANGO_SETTINGS_MODULE => 'settings',
			PYTHONPATH => join(':', $proj, $ENV{PYTHONPATH} // ()) });
	# the page's commands, in the project's folder
	my ($ok, $out, $err) = run_cmd([ 'bash', '-e', write_file("$proj/makemigrations.sh", $block{'django-makemigrations'}{code}) ],
		%env, dir => $proj);
	ok($ok && -e "$proj/shop/migrations/0001_initial.py", "Django $v: makemigrations wrote 0001_initial")
	  or diag($out . $err);
	write_file("$proj/shop/migrations/0002_idgen_keys.py", $block{'django-migration'}{code});
	($ok, $out, $err) = run_cmd([ 'bash', '-e', write_file("$proj/migrate.sh", $block{'django-migrate'}{code}) ],
		%env, dir => $proj);
	ok($ok, 'Django: migrate applies 0001 and 0002 (adopt_column)') or diag($out . $err);
	is(id_defaults('dj_orders', 'dj_invoices'),
		"idgen.segment_nextval('webapp_invoice'::text), idgen.snowflake_nextval()",
		'Django: the key columns default to segment_nextval and snowflake_nextval');
	is($node->safe_psql('app', q{
			SELECT c.relowner::regrole || ' ' || r.rolsuper FROM pg_class c
			JOIN pg_roles r ON r.oid = c.relowner WHERE c.oid = 'webapp.dj_orders'::regclass}),
		'webapp false', 'Django: the migration ran as webapp, the owner, no superuser');
	is($node->safe_psql('app', q{
			SELECT count(*) FROM pg_depend
			WHERE refobjid IN ('webapp.dj_orders'::regclass, 'webapp.dj_invoices'::regclass)
			AND classid = 'pg_class'::regclass
			AND objid IN (SELECT oid FROM pg_class WHERE relkind = 'S')}),
		'0', 'Django: no sequence of the tables is left');
	my $script = write_file("$proj/orders.py", $block{django}{code});
	($ok, $out, $err) = run_cmd([ $py, $script ], %env);
	ok($ok, 'Django example runs') or diag($err);
	check_example('Django', $out, 'dj_orders', 'dj_invoices');
}

# Django 5.0 and later: the keys' database defaults from the models
# (db_default), made by makemigrations' own migration
SKIP:
{
	my $v = $django_version;
	skip why($v eq '' ? 'Django db_default: Django did not run above'
		  : "Django $v has no db_default (5.0 and later)"), 15
	  unless $v =~ /^(\d+)\./ && $1 >= 5;
	my $proj = "$dir/django5";
	make_path("$proj/shop/migrations");
	# The same package "shop" under its own label, so that its migrations
	# are not taken for those of the project above (same database)
	write_file("$proj/settings.py",
		$django_settings . qq{INSTALLED_APPS = ["shop.apps.Shop5"]\n});
	write_file("$proj/shop/apps.py",
		qq{from django.apps import AppConfig\n\n\nclass Shop5(AppConfig):\n    name = "shop"\n    label = "shop5"\n});
	write_file("$proj/shop/__init__.py", '');
	write_file("$proj/shop/migrations/__init__.py", '');
	write_file("$proj/shop/models.py", $block{'django-db-default'}{code});
	my %env = (env => { %{ $as_app{env} }, DJANGO_SETTINGS_MODULE => 'settings',
			PYTHONPATH => join(':', $proj, $ENV{PYTHONPATH} // ()) });
	my ($ok, $out, $err) = run_cmd([ $py, '-m', 'django', 'makemigrations', 'shop5' ], %env);
	ok($ok && -e "$proj/shop/migrations/0001_initial.py", "Django $v db_default: makemigrations wrote 0001_initial")
	  or diag($out . $err);
	($ok, $out, $err) = run_cmd([ $py, '-m', 'django', 'migrate', 'shop5' ], %env);
	ok($ok, 'Django db_default: migrate applies 0001') or diag($out . $err);
	is(id_defaults('dj5_orders', 'dj5_invoices'),
		"idgen.segment_nextval('webapp_invoice'::text), idgen.snowflake_nextval()",
		'Django db_default: the key columns default to segment_nextval and snowflake_nextval');
	my $script = write_file("$proj/use_orders.py", $block{'django-db-default-use'}{code});
	($ok, $out, $err) = run_cmd([ $py, $script ], %env);
	ok($ok, 'Django db_default example runs') or diag($err);
	check_example('Django db_default', $out, 'dj5_orders', 'dj5_invoices');
	# What the page says of bulk_create: the key is not read back
	$script = write_file("$proj/bulk.py", $block{'django-db-default-bulk'}{code});
	($ok, $out, $err) = run_cmd([ $py, $script ], %env);
	like($out, qr/^bulk_create key: DatabaseDefault$/m,
		'Django db_default: bulk_create leaves the key unset, as the page says') or diag($out . $err);
}

SKIP:
{
	my $jar = '/usr/share/java/postgresql.jar';
	skip why('pgJDBC: libpostgresql-jdbc-java is not installed'), 11 unless -e $jar;
	skip why('pgJDBC: no javac (default-jdk-headless)'), 11 unless works([ 'javac', '-version' ]);
	my $jdir = "$dir/jdbc";
	make_path($jdir);
	write_file("$jdir/Orders.java", $block{jdbc}{code});
	# the page's javac and java lines, in the folder of Orders.java
	my ($ok, $out, $err) = run_cmd([ 'bash', '-e', write_file("$jdir/run.sh", $block{'jdbc-run'}{code}) ],
		%as_app, dir => $jdir);
	ok($ok, 'pgJDBC example compiles and runs (getGeneratedKeys)') or diag($err);
	check_example('pgJDBC', $out, 'j_orders', 'j_invoices');
}

SKIP:
{
	my $j = '/usr/share/java';
	skip why('Hibernate: libhibernate3-java is not installed'), 25
	  unless -e "$j/hibernate-entitymanager.jar";
	skip why('Hibernate: libpostgresql-jdbc-java is not installed'), 25 unless -e "$j/postgresql.jar";
	skip why('Hibernate: no javac (default-jdk-headless)'), 25 unless works([ 'javac', '-version' ]);
	my $hdir = "$dir/hibernate";
	make_path($hdir);
	write_file("$hdir/Order.java", $block{'hibernate-entity'}{code});
	write_file("$hdir/Invoice.java", $block{'hibernate-invoice'}{code});
	write_file("$hdir/HibernateOrders.java", $block{hibernate}{code});
	write_file("$hdir/persistence.xml", $block{'hibernate-xml'}{code});
	write_file("$hdir/run.sh", $block{'hibernate-run'}{code});
	# the classpath of the run block, then the run without generated keys
	write_file("$hdir/no_keys.sh",
		join('', grep { /^(J|CP)=/ } split /^/m, $block{'hibernate-run'}{code})
		  . $block{'hibernate-no-keys'}{code});
	# the statements of its sessions in the server's log
	$node->safe_psql('app', "ALTER ROLE $app SET log_statement = 'all'");
	local $ENV{JDBC_URL} = $app_jdbc;
	my $log_from = -s $node->logfile;
	my ($ok, $out, $err) = run_cmd([ 'bash', '-c', "cd '$hdir' && bash run.sh" ]);
	ok($ok, 'Hibernate example compiles and runs (IDENTITY, generated keys)') or diag($out . $err);
	my $log = substr(slurp_file($node->logfile), $log_from);
	for my $table ('h_orders', 'h_invoices')
	{
		is(scalar(() = $log =~ /execute [^:]*: insert into $table \(customer\) values \(\$1\)\n\s*RETURNING \*$/mg),
			4, "Hibernate: pgJDBC sends each INSERT into $table with RETURNING * (generated keys)")
		  or diag($log);
		is(scalar(() = $out =~ /^Hibernate: insert into $table \(customer\) values \(\?\)$/mg),
			4, "Hibernate: each INSERT into $table leaves the key to the column default") or diag($out);
	}
	$node->safe_psql('app', "ALTER ROLE $app RESET log_statement");
	check_example('Hibernate', $out, 'h_orders', 'h_invoices');

	($ok, $out, $err) = run_cmd([ 'bash', '-c', "cd '$hdir' && bash no_keys.sh" ]);
	ok(!$ok, 'Hibernate with use_get_generated_keys=false: the example fails');
	like($out, qr/^Hibernate: insert into h_orders \(customer\) values \(\?\)\nHibernate: select currval\('h_orders_id_seq'\)$/m,
		'Hibernate without generated keys: the INSERT, then select currval(\'h_orders_id_seq\')')
	  or diag($out);
	like($err,
		qr/javax\.persistence\.PersistenceException: org\.hibernate\.exception\.SQLGrammarException: could not retrieve generated id after insert: \[Order\].*ERROR: relation "h_orders_id_seq" does not exist/s,
		'Hibernate without generated keys: could not retrieve generated id, relation "h_orders_id_seq" does not exist'
	) or diag($err);
	is($node->safe_psql('app', "SELECT count(*) FROM $app.h_orders"), '4',
		'Hibernate without generated keys: the failed insert kept no row');

	# AUTO and SEQUENCE: the entity changed, nothing else
	for my $strategy ('AUTO', 'SEQUENCE')
	{
		my $sdir = "$hdir/" . lc $strategy;
		make_path($sdir);
		(my $entity = $block{'hibernate-entity'}{code}) =~
		  s/GenerationType\.IDENTITY/GenerationType.$strategy/ or die 'no IDENTITY in the entity';
		write_file("$sdir/Order.java", $entity);
		write_file("$sdir/$_", slurp_file("$hdir/$_"))
		  for qw(Invoice.java HibernateOrders.java persistence.xml run.sh);
		($ok, $out, $err) = run_cmd([ 'bash', '-c', "cd '$sdir' && bash run.sh" ]);
		ok(!$ok, "Hibernate with GenerationType.$strategy: the example fails");
		like($out, qr/^Hibernate: select nextval \('hibernate_sequence'\)$/m,
			"Hibernate with GenerationType.$strategy asks for the ID before the INSERT")
		  or diag($out);
		like($err, qr/ERROR: relation "hibernate_sequence" does not exist/,
			"Hibernate with GenerationType.$strategy: relation \"hibernate_sequence\" does not exist")
		  or diag($err);
	}
	is($node->safe_psql('app', "SELECT count(*) FROM $app.h_orders"), '4',
		'Hibernate with AUTO or SEQUENCE: no row inserted');
}

my $nodejs = works([ 'node', '-e', '1' ]) ? 'node' : works([ 'nodejs', '-e', '1' ]) ? 'nodejs' : undef;
diag('Node.js ' . (run_cmd([ $nodejs, '--version' ]))[1]) if $nodejs;

SKIP:
{
	skip why('node-postgres: nodejs is not installed'), 21 unless $nodejs;
	skip why('node-postgres: node-pg is not installed'), 21 unless works([ $nodejs, '-e', "require('pg')" ]);
	my ($ok, $out, $err) =
	  run_cmd([ $nodejs, write_file("$dir/node_example.js", $block{node}{code}) ], %as_app);
	ok($ok, 'node-postgres example runs') or diag($err);
	check_example('node-postgres', $out, 'js_orders', 'js_invoices');
	like($out, qr/^type string true$/m, 'node-postgres: an ID comes as a string, above 2^53');
	my ($last) = $out =~ /^js_orders (\d+) dave$/m;
	like($out, qr/^found \Q$last\E dave$/m, 'node-postgres: the ID as a string finds its row');

	($ok, $out, $err) =
	  run_cmd([ $nodejs, write_file("$dir/node_json.js", $block{'node-json'}{code}) ]);
	ok($ok, 'JSON example runs') or diag($err);
	like($out, qr/^without a replacer: TypeError: Do not know how to serialize a BigInt$/m,
		'JSON.stringify of a BigInt throws the TypeError the page names');
	is(join(',', $out =~ /^(?:string|replacer) (.*)$/mg),
		'{"id":"384537964710989825"},{"id":"384537964710989825"}',
		'JSON: the ID as a string, and a BigInt through the replacer, are exact');
	like($out, qr/^parsed true$/m, 'JSON: the string ID comes back from JSON.parse unchanged');

	($ok, $out, $err) =
	  run_cmd([ $nodejs, write_file("$dir/node_pitfall.js", $block{'node-pitfall'}{code}) ], %as_app);
	ok($ok, 'node-postgres pitfall example runs') or diag($err);
	my ($exact) = $out =~ /^exact (\d+)$/m;
	is($node->safe_psql('app', "SELECT customer FROM $app.js_orders WHERE id = $exact"),
		'carol', "the pitfall's row exists with its exact ID $exact");
	like($out, qr/^parseInt \S+ false$/m, 'setTypeParser(20, parseInt) rounds the ID');
	like($out, qr/^json \S+ false$/m, 'an ID in JSON as a number is rounded too');
	like($out, qr/^rows found with the parsed ID 0$/m, 'a lookup with the rounded ID finds no row')
	  or diag($out);
}

# The JavaScript ORMs from npm (test/npm/package.json, installed by
# test/setup.sh into /var/cache/idgen-npm), on the neighbours' version only
my $npm = $ENV{IDGEN_NPM_CACHE} // '/var/cache/idgen-npm';
my $pg_major = (`pg_config --version` // '') =~ /PostgreSQL (\d+)/ ? $1 : 0;
my $neighbours_major = $ENV{IDGEN_NEIGHBOURS_MAJOR} // 15;
for my $orm (
	[ 'knex', 'knex_orders', 'knex_invoices', 'string' ],
	[ 'sequelize', 'sq_orders', 'sq_invoices', 'string' ],
	[ 'typeorm', 'to_orders', 'to_invoices', 'string' ],
	[ 'drizzle', 'dz_orders', 'dz_invoices', 'bigint' ])
{
	my ($name, $orders, $invoices, $type) = @$orm;
	my $package = $name eq 'drizzle' ? 'drizzle-orm' : $name;
	# run, check_example's 10, the ID's type; Drizzle's migration 4 more
	my $tests = $name eq 'drizzle' ? 16 : 12;
  SKIP:
	{
		skip why("$name: the npm ORMs are tested on PostgreSQL $neighbours_major only"), $tests
		  unless $pg_major == $neighbours_major;
		skip why("$name: nodejs is not installed"), $tests unless $nodejs;
		for my $need ($package, $name eq 'sequelize' ? ('umzug') : (), $name eq 'drizzle' ? ('drizzle-kit') : ())
		{
			skip why("$name: $npm/node_modules has no $need (test/setup.sh installs it with npm)"), $tests
			  unless -e "$npm/node_modules/$need/package.json";
		}
		my ($version) = slurp_file("$npm/node_modules/$package/package.json") =~ /"version"\s*:\s*"([^"]+)"/;
		my $jdir = "$dir/$name";
		make_path("$jdir/migrations");
		write_file("$jdir/migrations/20261127000000_orders.js", $block{'knex-migration'}{code})
		  if $name eq 'knex';
		my %js_env = (%{ $as_app{env} }, NODE_PATH => "$npm/node_modules");
		my ($migration, $journal) = ('', '');
		if ($name eq 'drizzle')
		{
			# The page's schema, drizzle-kit's configuration and command, in a
			# project whose node_modules is the npm cache's (npx finds
			# drizzle-kit there, offline)
			my ($kit) = slurp_file("$npm/node_modules/drizzle-kit/package.json") =~ /"version"\s*:\s*"([^"]+)"/;
			write_file("$jdir/schema.js", $block{'drizzle-schema'}{code});
			write_file("$jdir/drizzle.config.js", $block{'drizzle-config'}{code});
			write_file("$jdir/generate.sh", $block{'drizzle-generate'}{code});
			symlink("$npm/node_modules", "$jdir/node_modules") or die "symlink $jdir/node_modules: $!";
			my ($ok, $out, $err) = run_cmd([ 'bash', '-c', "cd '$jdir' && bash generate.sh" ],
				env => { npm_config_offline => 'true', npm_config_update_notifier => 'false',
					npm_config_cache => "$jdir/npm-cache" });
			ok($ok, "drizzle-kit $kit generates the migration") or diag($out . $err);
			my ($file) = glob("$jdir/drizzle/0000_*.sql");
			$migration = defined $file ? slurp_file($file) : '';
			$journal = -e "$jdir/drizzle/meta/_journal.json" ? slurp_file("$jdir/drizzle/meta/_journal.json") : '';
			is($migration, $block{'drizzle-migration'}{code},
				"drizzle-kit $kit: the migration is the one docs/clients.md shows");

			# drizzle-orm's migrate() as it is, for a role without CREATE on
			# the database: refused, as the page says (nothing applied)
			write_file("$jdir/plain_migrate.js", <<'JS');
const { Pool } = require('pg');
const { drizzle } = require('drizzle-orm/node-postgres');
const { migrate } = require('drizzle-orm/node-postgres/migrator');
const pool = new Pool();
migrate(drizzle(pool), { migrationsFolder: './drizzle', migrationsSchema: 'webapp' })
  .then(() => console.log('migrated'), (e) => {
    const cause = e.cause ?? e;  // drizzle-orm's error wraps node-postgres'
    console.log('error', cause.code, cause.message);
  })
  .finally(() => pool.end());
JS
			($ok, $out, $err) = run_cmd([ 'bash', '-c', "cd '$jdir' && exec '$nodejs' plain_migrate.js" ],
				env => \%js_env);
			like($out, qr/^error 42501 permission denied for database app$/m,
				"drizzle-orm $version: migrate() as it is fails for a role without CREATE on the database")
			  or diag($out . $err);
		}
		write_file("$jdir/$name.js", $block{$name}{code});
		my ($ok, $out, $err) = run_cmd([ 'bash', '-c', "cd '$jdir' && exec '$nodejs' $name.js" ],
			env => \%js_env);
		ok($ok, "$name $version example runs") or diag($out . $err);
		check_example("$name $version", $out, $orders, $invoices);
		like($out, qr/^type $type$/m, "$name $version: an ID comes as a $type");
		if ($name eq 'drizzle')
		{
			# Drizzle's migrations table, the role's own, records the
			# migration once: its file's SHA-256 and its journal's "when"
			my ($when) = $journal =~ /"when"\s*:\s*(\d+)/;
			is($node->safe_psql('app',
					"SELECT count(*) || ' ' || min(hash) || ' ' || min(created_at) || ' '"
					  . " || pg_get_userbyid(min(c.relowner)) FROM $app.__drizzle_migrations,"
					  . " pg_class c WHERE c.oid = '$app.__drizzle_migrations'::regclass"),
				'1 ' . sha256_hex($migration) . ' ' . ($when // 'none') . " $app",
				"drizzle-orm $version: $app.__drizzle_migrations, the role's own, records the migration");
		}
	}
}

$node->stop;
done_testing();
