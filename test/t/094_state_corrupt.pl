# A corrupt state file (issue 40, point 3: coverage showed this refusal
# untested).  $PGDATA/idgen.state holds the durable high-water mark of
# snowflake IDs.  Asserts:
#  - with one byte of it changed, cut short or with another magic number
#    the server refuses to start, FATAL "idgen state file ... is corrupt"
#    (starting without it could repeat IDs); unreadable, FATAL "could not
#    open file", with the reason;
#  - with the file moved away, as the hint says, the server starts and its
#    new IDs are above every ID issued before (idgen.snowflake_reservation,
#    WAL-logged, is the other copy of the mark);
#  - the file that keeps a database's segment tags when the extension is
#    dropped ($PGDATA/idgen.tags.<database oid>), cut short (in its
#    header or in a tag), of another version, with a count or a tag length
#    it cannot hold, or failing its CRC: CREATE EXTENSION and DROP EXTENSION fail with XX001 "idgen file
#    ... is corrupt" and change nothing (a tag's floor could be lost); the
#    file intact, the tag is created again only above its floor; the file
#    unreadable, CREATE EXTENSION fails with the reason; the file cannot be
#    written, DROP EXTENSION fails and the extension stays; the file cannot
#    be removed, DROP DATABASE goes through with a WARNING naming it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# Write $bytes as the whole file $path
sub write_file
{
	my ($path, $bytes) = @_;
	open(my $out, '>', $path) or die "open $path: $!";
	binmode $out;
	print $out $bytes;
	close($out) or die;
}

my $node = idgen_node('main');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
my $before = draw_ids($node, 1000);
$node->stop;

my $state = $node->data_dir . '/idgen.state';
ok(-s $state, 'the state file exists');
my $size = -s $state;

# Cut short, or with another magic number: the same refusal; unreadable:
# FATAL, naming the file and why.  The file intact again, the server starts
{
	my $orig = slurp_file($state);
	my %broken = (
		'cut short' => substr($orig, 0, int($size / 2)),
		'with another magic number' => chr(ord(substr($orig, 0, 1)) ^ 0xff) . substr($orig, 1),
	);
	for my $what (sort keys %broken)
	{
		write_file($state, $broken{$what});
		my $from = -s $node->logfile;
		ok(!$node->start(fail_ok => 1), "the state file $what: the server does not start");
		like(substr(slurp_file($node->logfile), $from),
			qr/FATAL:  idgen state file "idgen\.state" is corrupt/, "FATAL: the state file ($what) is corrupt");
	}
	write_file($state, $orig);
	chmod(0, $state) or die "chmod: $!";
	my $from = -s $node->logfile;
	ok(!$node->start(fail_ok => 1), 'the state file unreadable: the server does not start');
	like(substr(slurp_file($node->logfile), $from),
		qr/FATAL:  could not open file "idgen\.state": Permission denied/,
		'FATAL: it could not open the file, and why');
	chmod(0600, $state) or die "chmod: $!";
}
open(my $fh, '+<', $state) or die "open $state: $!";
binmode $fh;
my $pos = int($size / 2);
seek($fh, $pos, 0) or die;
read($fh, my $byte, 1) == 1 or die;
seek($fh, $pos, 0) or die;
print $fh chr(ord($byte) ^ 0xff);
close($fh) or die;

my $log_start = -s $node->logfile;
ok(!$node->start(fail_ok => 1), 'with a corrupt state file the server does not start');
my $log = substr(slurp_file($node->logfile), $log_start);
like($log, qr/FATAL:  idgen state file "idgen\.state" is corrupt/,
	'FATAL: the state file is corrupt');

rename($state, "$state.corrupt") or die "rename: $!";
$node->start;
my $after = draw_ids($node, 1000);
ok(min_of(@$after) > max_of(@$before),
	'with the file moved away, every new ID is above every earlier one');
ok(-s $state, 'and the worker wrote a new state file');


# The file of kept segment tags: one tag, 'k' (magic, version, count, then
# max_id, length and name per tag, then the CRC: 29 bytes)
$node->safe_psql('postgres', 'CREATE DATABASE kept');
$node->safe_psql('kept', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('k', 1, 100);
	SELECT idgen.segment_nextval('k') FROM generate_series(1, 250);
});
my $kept_max = $node->safe_psql('kept', q{SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'k'});
$node->safe_psql('kept', 'DROP EXTENSION idgen');
my $dboid = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'kept'});
my $tags = $node->data_dir . "/idgen.tags.$dboid";
my $good = slurp_file($tags);
is(length($good), 29, 'the file keeps the one tag');


my %bad = (
	'cut short in its header' => substr($good, 0, 8),
	'of another version' => substr($good, 0, 4) . pack('L', 99) . substr($good, 8),
	'with a count it cannot hold' => substr($good, 0, 8) . pack('L', 0xffffffff) . substr($good, 12),
	'with a tag of length 0' => substr($good, 0, 20) . pack('L', 0) . substr($good, 24),
	'with a tag longer than any' => substr($good, 0, 20) . pack('L', 200) . substr($good, 24),
	'cut short in a tag\'s max_id' => substr($good, 0, 16),
	'cut short in a tag\'s length' => substr($good, 0, 22),
	'cut short in a tag\'s name' => substr($good, 0, 20) . pack('L', 8) . substr($good, 24),
	'failing its CRC' => substr($good, 0, 28) . chr(ord(substr($good, 28, 1)) ^ 0xff),
	'without its CRC' => substr($good, 0, 25),
);
for my $what (sort keys %bad)
{
	write_file($tags, $bad{$what});
	my ($ret, $out, $err) = try_sql($node, 'CREATE EXTENSION idgen', db => 'kept');
	like($err, qr/ERROR:  XX001: idgen file "idgen\.tags\.$dboid" is corrupt/,
		"the kept tags $what: CREATE EXTENSION fails with XX001");
}
is($node->safe_psql('kept', q{SELECT count(*) FROM pg_extension WHERE extname = 'idgen'}),
	'0', 'and the extension was not created');

# Unreadable: CREATE EXTENSION fails with the reason (as the file is not
# known to be absent, a floor could be lost)
write_file($tags, $good);
chmod(0, $tags) or die "chmod $tags: $!";
{
	my ($ret, $out, $err) = try_sql($node, 'CREATE EXTENSION idgen', db => 'kept');
	like($err, qr/ERROR:  42501: could not open file "idgen\.tags\.$dboid": Permission denied/,
		'the kept tags unreadable: CREATE EXTENSION fails with 42501');
}
chmod(0600, $tags) or die "chmod $tags: $!";

# Intact again: the tag comes back only above its floor
$node->safe_psql('kept', 'CREATE EXTENSION idgen');
my ($ret, $out, $err) = try_sql($node, q{SELECT idgen.segment_create('k', 1, 100)}, db => 'kept');
like($err, qr/22023: segment tag "k" cannot start at 1/, 'with the file intact the floor of the tag holds');

# DROP EXTENSION merges what the file keeps: with the file corrupt it fails
# and the extension stays
write_file($tags, $bad{'failing its CRC'});
($ret, $out, $err) = try_sql($node, 'DROP EXTENSION idgen', db => 'kept');
like($err, qr/ERROR:  XX001: idgen file "idgen\.tags\.$dboid" is corrupt/,
	'with the file corrupt, DROP EXTENSION fails with XX001');
is($node->safe_psql('kept', q{SELECT count(*) FROM pg_extension WHERE extname = 'idgen'}),
	'1', 'and the extension stays');
write_file($tags, $good);
$node->safe_psql('kept', 'SELECT idgen.segment_create(\'k\', ' . ($kept_max + 1) . ', 100)');
cmp_ok($node->safe_psql('kept', q{SELECT idgen.segment_nextval('k')}), '>', $kept_max,
	'the tag created again above its floor draws above every earlier ID');

# The tags cannot be saved (the temporary file cannot be created: a
# directory has its name): DROP EXTENSION fails and the extension stays
mkdir("$tags.tmp") or die "mkdir $tags.tmp: $!";
($ret, $out, $err) = try_sql($node, 'DROP EXTENSION idgen', db => 'kept');
like($err, qr/ERROR:  42809: could not create file "idgen\.tags\.$dboid\.tmp": Is a directory/,
	'the kept tags cannot be written: DROP EXTENSION fails');
is($node->safe_psql('kept', q{SELECT count(*) FROM pg_extension WHERE extname = 'idgen'}),
	'1', 'and the extension stays');
rmdir("$tags.tmp") or die "rmdir $tags.tmp: $!";
$node->safe_psql('kept', 'DROP EXTENSION idgen');
$node->safe_psql('kept', 'CREATE EXTENSION idgen');
($ret, $out, $err) = try_sql($node, q{SELECT idgen.segment_create('k', 1, 100)}, db => 'kept');
like($err, qr/22023: segment tag "k" cannot start at 1/,
	'once it can be written, DROP EXTENSION keeps the floor of the tag');

# DROP DATABASE removes the database's kept tags; when it cannot (here a
# directory has the file's name), the database is dropped all the same
# and a WARNING names the file
$node->safe_psql('postgres', 'CREATE DATABASE gone');
my $gone = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'gone'});
mkdir($node->data_dir . "/idgen.tags.$gone/") or die "mkdir: $!";
($ret, $out, $err) = try_sql($node, 'DROP DATABASE gone');
is($ret, 0, 'DROP DATABASE goes through when its kept tags cannot be removed');
like($err, qr/WARNING:  .*could not remove file "idgen\.tags\.$gone": Is a directory/,
	'and a WARNING names the file');
rmdir($node->data_dir . "/idgen.tags.$gone") or die "rmdir: $!";

$node->stop;
done_testing();
