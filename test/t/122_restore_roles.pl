# 122_restore_roles.pl
#	A restore gives no role what another role had: the owners and
#	grantees of segment tags and of keys of public IDs, their roles renamed
#	or dropped while connected to another database and new roles given the
#	old names, survive pg_dump and pg_restore as PostgreSQL's own owners
#	and grants do.
#
# Asserts:
#  - pg_dump of a database whose rows name such a stale role refuses with
#    the documented error (the message, the role's name now, the hint
#    naming idgen.role_names_refresh), and dumps once it has run;
#  - a dump made before the renames, restored into another database of
#    the same cluster: every row names the role of its OID under its name
#    now (the renamed owner and grantee keep the tag and the key, the new
#    roles of the old names get nothing), a dropped owner leaves no owner
#    and a dropped grantee no grant; the new roles are refused (42501);
#  - the refreshed dump restored into a fresh cluster (roles made as
#    pg_dumpall --globals-only would): the same owners and grants, by name.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('roles');
start_node($node);
my @roles = qw(own_r own_d gr_r gr_d);
$node->safe_psql('postgres', join('', map { "CREATE ROLE $_ LOGIN; " } @roles)
	  . 'CREATE DATABASE db1');
$node->safe_psql('db1', q{
	CREATE EXTENSION idgen;
	GRANT EXECUTE ON FUNCTION idgen.id_key_create(text, int),
		idgen.id_key_grant(text, text, text) TO own_r;
	SELECT idgen.segment_create('tr', 1, 10), idgen.segment_create('td', 1, 10);
	SELECT idgen.segment_set_owner('tr', 'own_r'), idgen.segment_set_owner('td', 'own_d');
	SELECT idgen.segment_grant('tr', 'draw', 'gr_r'), idgen.segment_grant('tr', 'draw', 'gr_d');
});
$node->safe_psql('db1', q{
	SELECT idgen.id_key_create('kr');
	SELECT idgen.id_key_grant('kr', 'use', 'gr_r'), idgen.id_key_grant('kr', 'use', 'gr_d');
}, extra_params => [ '-U', 'own_r' ]);

# Who holds what, by role (OID) and by the name kept for pg_dump
my $holders = q{
	SELECT string_agg(x, ' ' ORDER BY x) FROM (
	  SELECT 'tag:' || biz_tag || '=' || coalesce(owner_id::regrole::text, '-') || '/' || owner AS x
	    FROM idgen.segment_alloc
	  UNION ALL SELECT 'draw:' || biz_tag || '=' || grantee_id::regrole || '/' || grantee
	    FROM idgen.segment_privilege
	  UNION ALL SELECT 'key:' || name || '=' || coalesce(owner_id::regrole::text, '-') || '/' || owner
	    FROM idgen.id_key
	  UNION ALL SELECT 'use:' || key_name || '=' || grantee_id::regrole || '/' || grantee
	    FROM idgen.id_key_privilege) s};
my $before = 'draw:tr=gr_d/gr_d draw:tr=gr_r/gr_r key:kr=own_r/own_r tag:td=own_d/own_d '
  . 'tag:tr=own_r/own_r use:kr=gr_d/gr_d use:kr=gr_r/gr_r';
is($node->safe_psql('db1', $holders), $before, 'db1: the owners and grantees');

my $dir = $PostgreSQL::Test::Utils::tmp_check;
my @conn = ('-h', $node->host, '-p', $node->port);
command_ok([ 'pg_dump', '-Fc', '-f', "$dir/before.dump", @conn, 'db1' ],
	'pg_dump before the roles change');

# Renamed and dropped while connected to database postgres, where the hook
# sees none of db1's rows; new roles take the old names
$node->safe_psql('postgres', q{
	ALTER ROLE own_r RENAME TO own_r2;
	ALTER ROLE gr_r RENAME TO gr_r2;
	DROP ROLE own_d;
	DROP ROLE gr_d;
	CREATE ROLE own_r LOGIN; CREATE ROLE gr_r LOGIN;
	CREATE ROLE own_d LOGIN; CREATE ROLE gr_d LOGIN;
});

my ($ret, $out, $err) = run_cmd([ 'pg_dump', '-Fc', '-f', "$dir/stale.dump", @conn, 'db1' ]);
ok(!$ret, 'pg_dump of rows that name stale roles fails');
like($err, qr/cannot dump (segment tag|key) "\w+": its (owner|grantee of \w+) is recorded as role "\w+", which is not that role now/,
	'with the documented message');
like($err, qr/HINT:  Have a superuser run SELECT idgen\.role_names_refresh\(\); in database db1, then dump again/,
	'and the hint');

# A dump from before, restored into another database of the same cluster:
# by OID
$node->safe_psql('postgres', 'CREATE DATABASE same');
command_ok([ 'pg_restore', '-d', 'same', @conn, "$dir/before.dump" ],
	'the dump from before restored into another database of the cluster');
my $after = 'draw:tr=gr_r2/gr_r2 key:kr=own_r2/own_r2 tag:td=-/ tag:tr=own_r2/own_r2 use:kr=gr_r2/gr_r2';
is($node->safe_psql('same', $holders), $after,
	'same cluster: the renamed roles keep their rights under their new names; the dropped ones leave none; the new roles of the old names get nothing');
$node->safe_psql('same', 'GRANT EXECUTE ON FUNCTION idgen.segment_alter(text, int, text, bigint, int) TO own_r, own_d');
($ret, $out, $err) = $node->psql('same', q{SELECT idgen.segment_alter('tr', step => 20)},
	extra_params => [ '-U', 'own_r', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501: must be owner of segment tag "tr"/, 'the new own_r cannot alter tag tr (42501)');
($ret, $out, $err) = $node->psql('same', q{SELECT idgen.segment_alter('td', step => 20)},
	extra_params => [ '-U', 'own_d', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501: must be owner of segment tag "td"\n.*DETAIL:  Segment tag "td" has no owner: its role is gone/,
	'the new own_d cannot alter tag td, which has no owner (42501)');
$node->safe_psql('same', q{SELECT idgen.segment_revoke('tr', 'draw', 'public')});
($ret, $out, $err) = $node->psql('same', q{SELECT idgen.segment_nextval('tr')},
	extra_params => [ '-U', 'gr_r', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501/, 'the new gr_r cannot draw from tr once public may not (42501)');
($ret, $out, $err) = $node->psql('same', q{SELECT idgen.segment_nextval('tr')},
	extra_params => [ '-U', 'gr_r2', '-v', 'VERBOSITY=verbose' ]);
is($ret, 0, 'the renamed gr_r2 still draws from tr') or diag $err;
($ret, $out, $err) = $node->psql('same', q{SELECT idgen.id_encrypt(1, 'kr')},
	extra_params => [ '-U', 'gr_r', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501/, 'the new gr_r cannot use key kr (42501)');

# The names refreshed, the dump goes through
is($node->safe_psql('db1', 'SELECT idgen.role_names_refresh()'), '7',
	'role_names_refresh changes the seven stale rows');
is($node->safe_psql('db1', $holders), $after, 'db1 now names what the same-cluster restore named');
command_ok([ 'pg_dump', '-Fc', '-f', "$dir/fresh.dump", @conn, 'db1' ],
	'pg_dump once the names are refreshed');

# Into a fresh cluster, with the roles as pg_dumpall --globals-only makes
# them: by name
my $other = idgen_node('roles_other');
start_node($other);
$other->safe_psql('postgres', join('', map { "CREATE ROLE $_ LOGIN; " }
	  qw(own_r own_r2 gr_r gr_r2 own_d gr_d)) . 'CREATE DATABASE db1');
command_ok([ 'pg_restore', '-d', 'db1', '-h', $other->host, '-p', $other->port,
	"$dir/fresh.dump" ], 'the refreshed dump restored into a fresh cluster');
is($other->safe_psql('db1', $holders), $after,
	'fresh cluster: the same owners and grants, by name');
isnt($other->safe_psql('db1', 'SELECT DISTINCT cluster_id FROM idgen.segment_alloc'),
	$node->safe_psql('db1', 'SELECT DISTINCT cluster_id FROM idgen.segment_alloc'),
	'and its rows record the fresh cluster');

$other->stop;
$node->stop;
done_testing();
