# 069_tag_owners.pl
#	Segment tags have owners, as sequences do (issue 30, points 6 and 9).
#
# Asserts:
#  - the role that creates a tag owns it; another role with the same
#    EXECUTE grants cannot alter, drop, export, import over or hand on the
#    tag (42501 with a hint), and the tag's max_id and IDs are unchanged:
#    the issue's move to 9223372036854775000 fails, and so does
#    adopt_column of app_b's table for app_a's tag;
#  - a member of the owning role can; a superuser can;
#  - segment_set_owner hands a tag on (by a superuser; by the owner only to
#    a role it is a member of), and the old owner is then refused;
#  - a tag whose owner role does not exist is a superuser's only;
#  - DROP ROLE of an owner is refused (2BP01, after PostgreSQL's own
#    checks, and rolled back); ALTER ROLE ... RENAME TO,
#    REASSIGN OWNED and DROP OWNED keep the owner defined (DROP OWNED drops
#    the tag, remembering its max_id);
#  - pg_dump and pg_restore into another database keep the owner;
#  - the owner is a role, not a name (issue 37, point 5): a role renamed
#    from another database keeps its tags; a role dropped from another
#    database leaves them to superusers, and a new role of its name owns
#    nothing; a restored row whose owner_id is another role takes the role
#    of its name when it comes from another cluster, and keeps its
#    owner_id's role (its name refreshed) when from this one.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('owners');
start_node($node);
my $grants = q{idgen.segment_create(text, bigint, int, text, int),
	    idgen.segment_alter(text, int, text, bigint, int), idgen.segment_drop(text),
	    idgen.segment_import_leaf(text, bigint, int, text),
	    idgen.segment_export_leaf(text, boolean),
	    idgen.segment_set_owner(text, regrole)};
$node->safe_psql('postgres', qq{
	CREATE EXTENSION idgen;
	CREATE ROLE app_a LOGIN;
	CREATE ROLE app_b LOGIN;
	CREATE ROLE app_c LOGIN;
	CREATE ROLE app_d LOGIN;
	GRANT EXECUTE ON FUNCTION $grants TO app_a, app_b, app_c, app_d;
});
wait_ready($node);

sub as_role
{
	my ($role, $sql) = @_;
	return $node->psql('postgres', $sql,
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
}

sub owner_of
{
	my ($tag, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		"SELECT owner FROM idgen.segment_alloc WHERE biz_tag = '$tag'");
}

sub max_id_of
{
	return $node->safe_psql('postgres',
		"SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = '$_[0]'");
}

my ($ret, $out, $err) = as_role('app_a', "SELECT idgen.segment_create('a', 1, 10)");
is($ret, 0, 'app_a creates tag a') or diag $err;
is(owner_of('a'), 'app_a', 'and owns it');
my $ids = [ split /\n/, $node->safe_psql('postgres',
	"SELECT idgen.segment_nextval('a') FROM generate_series(1, 25)") ];
my $max_before = max_id_of('a');

# Another application's administrator, with the same grants
my %attempts = (
	'alter max_id' => "SELECT idgen.segment_alter('a', max_id => 9223372036854775000)",
	'alter step' => "SELECT idgen.segment_alter('a', step => 5)",
	'drop' => "SELECT idgen.segment_drop('a')",
	'export and drop' => "SELECT * FROM idgen.segment_export_leaf('a')",
	'export' => "SELECT * FROM idgen.segment_export_leaf('a', false)",
	'import over' => "SELECT idgen.segment_import_leaf('a', 9223372036854775000, 10)",
	'hand on' => "SELECT idgen.segment_set_owner('a', 'app_b')");
for my $what (sort keys %attempts)
{
	($ret, $out, $err) = as_role('app_b', $attempts{$what});
	like($err, qr/ERROR:  42501: must be owner of segment tag "a"\n.*DETAIL:  Segment tag "a" is owned by role "app_a"\.\n.*HINT:  Ask a superuser to grant you role "app_a"/s,
		"app_b cannot $what app_a's tag (42501, with a hint)");
}
# ... nor through adopt_column, with the grants its hint asks for
$node->safe_psql('postgres', q{
	GRANT EXECUTE ON FUNCTION idgen.adopt_column(regclass, name, text) TO app_b;
	CREATE TABLE tb (id serial PRIMARY KEY);
	ALTER TABLE tb OWNER TO app_b;
	INSERT INTO tb VALUES (1000)});
($ret, $out, $err) = as_role('app_b', "SELECT idgen.adopt_column('tb', 'id', 'segment:a')");
like($err, qr/ERROR:  42501: must be owner of segment tag "a"/,
	'app_b cannot adopt its column for app_a\'s tag (42501)');
is(max_id_of('a'), $max_before, 'max_id of the tag is unchanged');
is(owner_of('a'), 'app_a', 'and so is its owner');
cmp_ok($node->safe_psql('postgres', "SELECT idgen.segment_nextval('a')"), '>',
	max_of(@$ids), 'the tag goes on above its IDs');

# A member of the owning role may; a superuser may
$node->safe_psql('postgres', 'GRANT app_a TO app_b');
($ret, $out, $err) = as_role('app_b',
	"SELECT idgen.segment_alter('a', step => 20); SELECT max_id FROM idgen.segment_export_leaf('a', false)");
is($ret, 0, 'a member of app_a alters and exports the tag') or diag $err;
is($node->safe_psql('postgres', "SELECT step FROM idgen.segment_alloc WHERE biz_tag = 'a'"),
	'20', 'the member\'s change is made');
$node->safe_psql('postgres', 'REVOKE app_a FROM app_b');
$node->safe_psql('postgres', "SELECT idgen.segment_alter('a', step => 7)");
is($node->safe_psql('postgres', "SELECT step FROM idgen.segment_alloc WHERE biz_tag = 'a'"),
	'7', 'a superuser alters it');

# Handing a tag on
($ret, $out, $err) = as_role('app_a', "SELECT idgen.segment_set_owner('a', 'app_c')");
like($err, qr/42501: must be member of role "app_c" to hand segment tag "a" to it/,
	'the owner cannot hand the tag to a role it is not a member of');
$node->safe_psql('postgres', 'GRANT app_c TO app_a');
($ret, $out, $err) = as_role('app_a', "SELECT idgen.segment_set_owner('a', 'app_c')");
is($ret, 0, 'it can once a member') or diag $err;
$node->safe_psql('postgres', 'REVOKE app_c FROM app_a');
is(owner_of('a'), 'app_c', 'app_c owns the tag');
($ret, $out, $err) = as_role('app_a', "SELECT idgen.segment_alter('a', step => 5)");
like($err, qr/42501: must be owner of segment tag "a"/, 'the old owner is refused');
($ret, $out, $err) = as_role('app_c', "SELECT idgen.segment_alter('a', step => 5)");
is($ret, 0, 'the new owner alters it') or diag $err;

# An owner that does not exist: a superuser's tag only
$node->safe_psql('postgres', q{
	CREATE ROLE app_e LOGIN;
	GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int) TO app_e;
	SET ROLE app_e;
	SELECT idgen.segment_create('e');
	RESET ROLE;
	UPDATE idgen.segment_alloc SET owner = 'ghost' WHERE biz_tag = 'e'});
($ret, $out, $err) = as_role('app_b', "SELECT idgen.segment_drop('e')");
like($err, qr/42501: must be owner of segment tag "e"\n.*DETAIL:  Segment tag "e" is owned by role "ghost", which does not exist\.\n.*HINT:  A superuser can hand the tag to an existing role with idgen\.segment_set_owner\(\)/s,
	'a tag whose owner is gone is refused to other roles');
$node->safe_psql('postgres', "SELECT idgen.segment_set_owner('e', 'app_b')");
is(owner_of('e'), 'app_b', 'a superuser hands it on');

# Role commands keep the owner defined
($ret, $out, $err) = as_role('app_b', 'DROP ROLE app_a');
like($err, qr/ERROR:  42501: permission denied to drop role/,
	'a role that may not drop the owner gets PostgreSQL\'s refusal, not the tags');
$node->safe_psql('postgres', "REVOKE EXECUTE ON FUNCTION $grants FROM app_c");
($ret, $out, $err) = $node->psql('postgres', 'DROP ROLE app_c',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/2BP01: role "app_c" cannot be dropped because some objects depend on it\n.*DETAIL:  Role "app_c" owns segment tag "a" in database "postgres"\.\n.*HINT:  .*REASSIGN OWNED BY app_c/s,
	'DROP ROLE of a tag owner is refused (2BP01)');
$node->safe_psql('postgres', 'ALTER ROLE app_c RENAME TO app_c2');
is(owner_of('a'), 'app_c2', 'the owner follows a rename');
$node->safe_psql('postgres', 'REASSIGN OWNED BY app_c2 TO app_a; DROP OWNED BY app_c2; DROP ROLE app_c2');
is(owner_of('a'), 'app_a', 'REASSIGN OWNED hands the tag on, and the role can go');
as_role('app_d', "SELECT idgen.segment_create('d', 1, 10)");
$node->safe_psql('postgres', "SELECT idgen.segment_nextval('d')");
my $d_max = max_id_of('d');
$node->safe_psql('postgres', 'DROP OWNED BY app_d; DROP ROLE app_d');
# (at least the max_id read before: the worker may have allocated the
# tag's next segment in between, ahead of the draws)
is($node->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM idgen.segment_alloc WHERE biz_tag = 'd')
	  || '|' || (SELECT max_id >= $d_max FROM idgen.segment_dropped WHERE biz_tag = 'd')}),
	"0|true", 'DROP OWNED drops the tag and remembers its max_id');

# pg_dump and pg_restore keep the owner, by name
my $dump = $PostgreSQL::Test::Utils::tmp_check . '/owners.dump';
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-h', $node->host, '-p', $node->port, 'postgres' ],
	'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok([ 'pg_restore', '-d', 'restored', '-h', $node->host, '-p', $node->port, $dump ],
	'pg_restore into another database');
is(owner_of('a', 'restored') . '|' . owner_of('e', 'restored'), 'app_a|app_b',
	'the restored tags keep their owners');
($ret, $out, $err) = $node->psql('restored', "SELECT idgen.segment_drop('a')",
	extra_params => [ '-U', 'app_b', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501: must be owner of segment tag "a"/, 'and their refusals');

# Owners are roles, not names (issue 37, point 5): tags of database db2,
# their roles renamed and dropped from database postgres, where the hook
# sees none of them
$node->safe_psql('postgres', 'CREATE DATABASE db2');
$node->safe_psql('db2', qq{
	CREATE EXTENSION idgen;
	CREATE ROLE app_x LOGIN;
	CREATE ROLE app_y LOGIN;
	GRANT EXECUTE ON FUNCTION $grants TO app_x, app_y;
});
my $in_db2 = sub {
	my ($role, $sql) = @_;
	return $node->psql('db2', $sql, extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
};
($ret, $out, $err) = $in_db2->('app_x', "SELECT idgen.segment_create('x', 1, 10)");
is($ret, 0, 'app_x creates tag x in db2') or diag $err;
($ret, $out, $err) = $in_db2->('app_y', "SELECT idgen.segment_create('y', 1, 10)");
is($ret, 0, 'app_y creates tag y in db2') or diag $err;
$node->safe_psql('postgres', 'ALTER ROLE app_x RENAME TO app_x2');
($ret, $out, $err) = $in_db2->('app_x2', "SELECT idgen.segment_alter('x', step => 20)");
is($ret, 0, 'a role renamed from another database keeps its tag') or diag $err;
is(owner_of('x', 'db2'), 'app_x2', 'and the name kept for pg_dump follows once the tag is administered');
# (its grants in db2 would keep PostgreSQL from dropping it)
$node->safe_psql('db2', "REVOKE EXECUTE ON FUNCTION $grants FROM app_y");
$node->safe_psql('postgres', 'DROP ROLE app_y');
$node->safe_psql('postgres', 'CREATE ROLE app_y LOGIN');
$node->safe_psql('db2', "GRANT EXECUTE ON FUNCTION $grants TO app_y");
($ret, $out, $err) = $in_db2->('app_y', "SELECT idgen.segment_drop('y')");
like($err, qr/42501: must be owner of segment tag "y"\n.*DETAIL:  Segment tag "y" is owned by role "app_y", which does not exist/,
	'a new role with the name of a dropped owner owns nothing: refused (42501)');
is($node->safe_psql('db2', "SELECT count(*) FROM idgen.segment_alloc WHERE biz_tag = 'y'"),
	'1', 'and the tag is still there');
$node->safe_psql('db2', "SELECT idgen.segment_set_owner('y', 'app_y')");
($ret, $out, $err) = $in_db2->('app_y', "SELECT idgen.segment_drop('y')");
is($ret, 0, 'once a superuser hands it to the new role, that role owns it') or diag $err;
# A row restored whose owner_id is another role than its name's: from
# another cluster, the role of its name; from this one, the role of its
# owner_id, under that role's name
$node->safe_psql('db2', q{
	CREATE TABLE old_row AS SELECT * FROM idgen.segment_alloc WHERE biz_tag = 'x';
	UPDATE old_row SET biz_tag = 'x_restored', owner_id = 10, cluster_id = cluster_id # 1;
	INSERT INTO idgen.segment_alloc SELECT * FROM old_row;
	UPDATE old_row SET biz_tag = 'x_same', cluster_id = idgen.cluster_id();
	INSERT INTO idgen.segment_alloc SELECT * FROM old_row;
});
is($node->safe_psql('db2', q{SELECT owner_id::regrole FROM idgen.segment_alloc WHERE biz_tag = 'x_restored'}),
	'app_x2', 'a restored row of another cluster whose owner_id is not its named role takes the role of its name');
is($node->safe_psql('db2', q{SELECT owner_id::regrole || '|' || owner FROM idgen.segment_alloc WHERE biz_tag = 'x_same'}),
	$node->safe_psql('db2', 'SELECT 10::regrole || \'|\' || 10::regrole'),
	'a restored row of this cluster keeps the role of its owner_id, under that role\'s name');

$node->stop;
done_testing();
