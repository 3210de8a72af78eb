# 121_extension_image.pl
#	The extension image of CloudNativePG (make image, docs/install.md)
#	holds exactly idgen's library, control and SQL files and its license,
#	and a server that finds idgen only in that tree, through PostgreSQL
#	18's extension_control_path and dynamic_library_path, runs it:
#	preloaded from the tree, CREATE EXTENSION of the previous version,
#	ALTER EXTENSION UPDATE, snowflake and segment IDs with the worker
#	running, DROP EXTENSION.
#
# test/run.sh builds the archive (as root: buildah makes no user namespace
# inside a chroot) and names it in IDGEN_IMAGE_ARCHIVE; run alone, the test
# runs make image itself.
use strict;
use warnings;

use File::Compare;
use File::Path qw(make_path);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $major = `pg_config --version` // '';
$major = $major =~ /PostgreSQL (\d+)/ ? $1 : 0;
plan skip_all => "extension_control_path came with PostgreSQL 18; this is $major"
  if $major < 18;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $archive = $ENV{IDGEN_IMAGE_ARCHIVE};
unless ($archive)
{
	plan skip_all => 'buildah is not installed (Debian package buildah)'
	  unless works([ 'buildah', '--version' ]);
	$archive = "$tmp/idgen.oci.tar";
	my ($ok, $out, $err) = run_cmd([ 'make', '-s', '-C', repo_file('.'), 'image',
		"IMAGE_OUT=$archive" ]);
	ok($ok, 'make image') or diag($out . $err);
}
ok(-s $archive, "the archive $archive is there");

# The OCI layout: index.json names the tag, its manifest one layer
my $oci = "$tmp/oci";
make_path($oci);
system('tar', '-xf', $archive, '-C', $oci) == 0 or die "tar -xf $archive failed";
my $json = JSON::PP->new;
my $blob = sub { "$oci/blobs/" . join('/', split(/:/, $_[0])) };
my $index = $json->decode(slurp_file("$oci/index.json"));
is(scalar @{ $index->{manifests} }, 1, 'one manifest');
my $version = default_version();
like($index->{manifests}[0]{annotations}{'org.opencontainers.image.ref.name'},
	qr/^idgen:$major-\Q$version\E-[a-z]+$/, 'tagged idgen:<major>-<version>-<codename>');
my $manifest = $json->decode(slurp_file($blob->($index->{manifests}[0]{digest})));
is(scalar @{ $manifest->{layers} }, 1, 'one layer (FROM scratch)');
my $config = $json->decode(slurp_file($blob->($manifest->{config}{digest})));
ok(!$config->{config}{Entrypoint} && !$config->{config}{Cmd}, 'nothing to run: files only');

# Exactly idgen's files: the ones "make install" put into this PostgreSQL
my $layer = $blob->($manifest->{layers}[0]{digest});
my @files = sort grep { !m{/$} } split /\n/, `tar -tf $layer`;
my $libdir = `pg_config --pkglibdir`;
my $sharedir = `pg_config --sharedir`;
chomp($libdir, $sharedir);
opendir(my $dh, "$sharedir/extension") or die "$sharedir/extension: $!";
my @ext = grep { /^idgen(\.control|--.*\.(sql|control))$/ } readdir($dh);
closedir($dh);
my @want = sort('lib/idgen.so', 'licenses/idgen/LICENSE', map { "share/extension/$_" } @ext);
is_deeply(\@files, \@want, 'the layer holds idgen.so, the control and SQL files and the license, nothing else');

my $tree = "$tmp/image";
make_path($tree);
system('tar', '-xf', $layer, '-C', $tree) == 0 or die "tar -xf $layer failed";
is(compare("$tree/$_", "$sharedir/extension/" . (split m{/}, $_)[-1]), 0, "$_ as installed")
  for grep { m{^share/} } @want;
is(compare("$tree/lib/idgen.so", "$libdir/idgen.so"), 0, 'lib/idgen.so as installed');

# A server that finds extension control files only in the image's tree,
# and libraries there first: $libdir stays on the path, as CloudNativePG
# keeps it, for PostgreSQL's own (PostgreSQL 18 looks up plpgsql's
# '$libdir/plpgsql' through dynamic_library_path too)
my $node = idgen_node('image', conf => <<"EOC");
extension_control_path = '$tree/share'
dynamic_library_path = '$tree/lib:\$libdir'
EOC
start_node($node);
is($node->safe_psql('postgres', 'SELECT string_agg(name, \',\') FROM pg_available_extensions'),
	'idgen', 'idgen is the only extension the server finds');
# The postmaster's own mappings (it preloaded idgen; a backend that
# psql ran in may have exited by the time its maps are read)
my ($pid) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
my $maps = slurp_file("/proc/$pid/maps");
ok(index($maps, "$tree/lib/idgen.so") >= 0, 'the idgen.so loaded is the image\'s');
ok(index($maps, "$libdir/idgen.so") < 0, 'not the one in $libdir');

my ($prev) = sort { $b cmp $a } map { /^idgen--([\d.]+)--\Q$version\E\.sql$/ ? $1 : () } @ext;
$node->safe_psql('postgres', "CREATE EXTENSION idgen VERSION '$prev'");
$node->safe_psql('postgres', 'ALTER EXTENSION idgen UPDATE');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	$version, "CREATE EXTENSION idgen VERSION '$prev', then ALTER EXTENSION UPDATE to $version");
wait_ready($node);

my ($n, $distinct, $ordered) = split /\|/, $node->safe_psql('postgres', q{
SELECT count(*), count(DISTINCT id), bool_and(id > prev)
FROM (SELECT id, lag(id, 1, 0) OVER (ORDER BY n) AS prev
      FROM (SELECT n, idgen.snowflake_nextval() AS id FROM generate_series(1, 10000) AS n) s) t});
is("$n $distinct $ordered", '10000 10000 t', 'snowflake IDs: 10,000, distinct, increasing');

$node->safe_psql('postgres', "SELECT idgen.segment_create('image', start => 1, step => 1000)");
is($node->safe_psql('postgres',
	"SELECT count(DISTINCT idgen.segment_nextval('image')) FROM generate_series(1, 5000)"),
	'5000', 'segment IDs: 5,000 distinct, segments fetched by the worker');
is($node->safe_psql('postgres', 'SELECT worker_running FROM idgen.snowflake_status()'),
	't', 'the worker runs from the image\'s library');

$node->safe_psql('postgres', 'DROP EXTENSION idgen');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_extension WHERE extname = 'idgen'"),
	'0', 'DROP EXTENSION idgen');
$node->stop;

# No idgen file stays behind in the test's output (test/package.sh looks
# for strays after the suite)
File::Path::rmtree([ $tree, $oci ]);

done_testing();
