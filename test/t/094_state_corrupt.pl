# A corrupt state file (issue 40, point 3: coverage showed this refusal
# untested).  $PGDATA/idgen.state holds the durable high-water mark of
# snowflake IDs.  Asserts:
#  - with one byte of it changed the server refuses to start, FATAL "idgen
#    state file ... is corrupt" (starting without it could repeat IDs);
#  - with the file moved away, as the hint says, the server starts and its
#    new IDs are above every ID issued before (idgen.snowflake_reservation,
#    WAL-logged, is the other copy of the mark).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('main');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
my $before = draw_ids($node, 1000);
$node->stop;

my $state = $node->data_dir . '/idgen.state';
ok(-s $state, 'the state file exists');
my $size = -s $state;
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

$node->stop;
done_testing();
