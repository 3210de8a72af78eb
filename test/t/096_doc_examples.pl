# 096_doc_examples.pl
#	Every SQL example of the documentation runs as shown (issue 12, point 6).
#
# Each ```sql block of README.md and docs/*.md is run, in the order of its
# file, with psql on a server that has idgen preloaded (one new server per
# file, idgen.node_id = 1, TimeZone UTC, its idgen.database a UTF8 database
# "docs"), so a block may use what earlier blocks of its file made.  A block
# must run without error.  When a plain ``` block follows it directly (only
# blank lines between), that block is psql's output and must match what
# psql prints (aligned, without the "(N rows)" footer; trailing spaces and
# blank lines do not count).  An HTML comment on the line just before the
# ```sql line changes that:
#
#	<!-- example: output varies -->   IDs or times differ from run to run:
#		only each result's column names and row count are compared
#	<!-- example: not run (reason) -->   the block needs more than one
#		server; it is counted and listed as skipped
use strict;
use warnings;

use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use IdgenTest;

my $top = "$FindBin::Bin/../..";
my @files = ('README.md', map { s{^\Q$top\E/}{}r } sort glob("$top/docs/*.md"));

# The examples of one file: a list of { line, sql, marker, output }
sub examples_of
{
	my ($file) = @_;
	open my $fh, '<:raw', "$top/$file" or die "$file: $!";
	my @lines = <$fh>;
	close $fh;
	chomp @lines;

	my (@blocks, $i);
	for ($i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /^```(\S*)\s*$/;
		my $lang = $1;
		my $start = $i;
		my @body;
		for ($i++; $i < @lines && $lines[$i] !~ /^```\s*$/; $i++)
		{
			push @body, $lines[$i];
		}
		die "$file:" . ($start + 1) . ": fence not closed\n" if $i >= @lines;
		next unless $lang eq 'sql';

		my %b = (line => $start + 1, sql => join("\n", @body) . "\n");
		$b{marker} = $1
		  if $start > 0 && $lines[ $start - 1 ] =~ /^<!--\s*example:\s*(.*?)\s*-->\s*$/;

		# A plain block right after it is its output
		my $j = $i + 1;
		$j++ while $j < @lines && $lines[$j] =~ /^\s*$/;
		if ($j < @lines && $lines[$j] =~ /^```(text)?\s*$/)
		{
			my @out;
			for ($j++; $j < @lines && $lines[$j] !~ /^```\s*$/; $j++)
			{
				push @out, $lines[$j];
			}
			$b{output} = join("\n", @out) . "\n";
			$i = $j;
		}
		push @blocks, \%b;
	}
	return @blocks;
}

# psql output without trailing spaces, blank lines and row-count footers
sub normalize
{
	my ($text) = @_;
	my @l = grep { !/^\s*$/ && !/^\(\d+ rows?\)$/ } map { s/\s+$//r } split /\n/, $text;
	return join("\n", @l) . "\n";
}

# The shape of psql output: each result's column names and row count
sub shape
{
	my @l = split /\n/, normalize($_[0]);
	my @shape;
	for (my $i = 0; $i < @l; $i++)
	{
		next unless $i + 1 < @l && $l[ $i + 1 ] =~ /^-+(\+-+)*$/;
		my $cols = join ',', map { s/^\s+|\s+$//gr } split /\|/, $l[$i];
		my $rows = 0;
		for ($i += 2; $i < @l; $i++)
		{
			last if $i + 1 < @l && $l[ $i + 1 ] =~ /^-+(\+-+)*$/;
			$rows++;
		}
		$i--;
		push @shape, "($cols): $rows rows";
	}
	return join("\n", @shape) . "\n";
}

# Run one block; returns (exit code, stdout, stderr)
sub run_block
{
	my ($node, $sql) = @_;
	my ($out, $err) = ('', '');
	local $ENV{PGTZ} = 'UTC';
	local $ENV{PGCLIENTENCODING} = 'UTF8';
	IPC::Run::run(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-P', 'footer=off',
			'-h', $node->host, '-p', $node->port, '-d', 'docs', '-f', '-'
		],
		'<', \$sql, '>', \$out, '2>', \$err);
	return ($? >> 8, $out, $err);
}

my ($run, $skipped, $compared) = (0, 0, 0);
for my $file (@files)
{
	my @blocks = examples_of($file);
	cmp_ok(scalar(@blocks), '>=', 10, "$file has its SQL examples")
	  if $file eq 'README.md';
	next unless grep { ($_->{marker} // q{}) !~ /^not run/ } @blocks;

	(my $name = $file) =~ s/\W/_/g;
	my $node = idgen_node("doc_$name", conf => "idgen.database = 'docs'\n");
	start_node($node);
	$node->safe_psql('postgres',
		q{CREATE DATABASE docs ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0});

	for my $b (@blocks)
	{
		my $where = "$file:$b->{line}";
		my $marker = $b->{marker} // '';
		if ($marker =~ /^not run/)
		{
			$skipped++;
		  SKIP: { skip "$where: $marker", 1; }
			next;
		}
		die "$where: unknown example marker \"$marker\"\n"
		  if $marker ne '' && $marker ne 'output varies';

		my ($rc, $out, $err) = run_block($node, $b->{sql});
		$run++;
		is($rc, 0, "$where runs") or diag "stderr:\n$err\nstdout:\n$out";

		# The worker makes its first reservation once the extension exists
		$node->poll_query_until('docs', 'SELECT idgen.snowflake_nextval() > 0')
		  or die "$where: no snowflake ID after CREATE EXTENSION\n"
		  if $b->{sql} =~ /CREATE EXTENSION\b.*\bidgen\b/i;

		next unless defined $b->{output};
		$compared++;
		if ($marker eq 'output varies')
		{
			is(shape($out), shape($b->{output}), "$where: output has the shown columns and rows");
		}
		else
		{
			is(normalize($out), normalize($b->{output}), "$where: output as shown");
		}
	}
	$node->stop;
}
note "$run examples run, $compared outputs compared, $skipped not run";
# (8: the pg_partman recipe and the two-master setups of docs/partitions.md
# and docs/many-servers.md need an extension or a second server; t/065,
# t/077 and t/078 run them)
cmp_ok($skipped, '<=', 8, 'few examples are not run');

done_testing();
