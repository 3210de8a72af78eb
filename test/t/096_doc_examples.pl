# 096_doc_examples.pl
#	Every SQL example of the documentation runs as shown (issue 12, point 6;
#	issue 29, point 3: all pages in one database, in the README's order).
#
# Each ```sql block of README.md and docs/*.md is run with psql on ONE
# server that has idgen preloaded (idgen.node_id = 1, TimeZone UTC, its
# idgen.database a UTF8 database "docs"), all in that one database, as a
# user who reads the pages in order would: README.md first, then each
# docs/*.md page in the order README.md first links it, then the pages
# reached only from other pages, in the order those link them (links are
# read from the pages at run time, breadth first).  A docs/*.md page that
# no link from README.md reaches fails the test, naming it.  So a block
# may use what earlier blocks made, and no page may reuse a name an
# earlier page made (or dropped a tag of: tags outlive their rows).
#
# A block must run without error.  When a plain ``` block follows it
# directly (only blank lines between), that block is psql's output and
# must match what psql prints (aligned, without the "(N rows)" footer;
# trailing spaces and blank lines do not count).  An HTML comment on the
# line just before the ```sql line changes that:
#
#	<!-- example: output varies -->   IDs or times differ from run to run:
#		only each result's column names and row count are compared
#	<!-- example: not run (reason) -->   the block needs another server,
#		a change of the server's configuration or a package; the reason
#		is required, and the block is counted and listed as skipped
use strict;
use warnings;

use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use IdgenTest;

my $top = "$FindBin::Bin/../..";

# The pages in reading order: README.md, then docs/*.md breadth first
# along their links (inline [text](path) and reference [label]: path)
sub links_of
{
	my ($file) = @_;
	my $text = PostgreSQL::Test::Utils::slurp_file("$top/$file");
	$text =~ s/^```.*?^```\s*$//gms;    # no links inside code blocks
	(my $dir = $file) =~ s{[^/]*$}{};
	my @links;
	while ($text =~ /\]\(\s*<?([^)#\s>]+\.md)>?(?:#[^)\s]*)?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*<?([^#\s>]+\.md)/gm)
	{
		my $target = $1 // $2;
		next if $target =~ m{^[a-z][a-z0-9+.-]*:}i;    # another site
		my $path = $target =~ m{^/} ? substr($target, 1) : "$dir$target";
		1 while $path =~ s{(^|/)\./}{$1} || $path =~ s{[^/]+/\.\./}{};
		push @links, $path;
	}
	return @links;
}

my @files = ('README.md');
my %seen = ('README.md' => 'README.md');
for (my $k = 0; $k < @files; $k++)
{
	for my $page (links_of($files[$k]))
	{
		next unless $page =~ m{^docs/[^/]+\.md$} && !$seen{$page};
		die "$files[$k] links $page, which does not exist\n" unless -f "$top/$page";
		$seen{$page} = $files[$k];
		push @files, $page;
	}
}
my @unreached = grep { !$seen{$_} } map { s{^\Q$top\E/}{}r } sort glob("$top/docs/*.md");
is(join(', ', @unreached), '', 'every docs/*.md page is reached by links from README.md')
  or diag 'not reached from README.md: ' . join(', ', @unreached);
note 'reading order: ' . join(', ', map { "$_ (from $seen{$_})" } @files);

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
my $node = idgen_node('docs', conf => "idgen.database = 'docs'\n");
start_node($node);
$node->safe_psql('postgres',
	q{CREATE DATABASE docs ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0});
for my $file (@files)
{
	my @blocks = examples_of($file);
	cmp_ok(scalar(@blocks), '>=', 10, "$file has its SQL examples")
	  if $file eq 'README.md';

	for my $b (@blocks)
	{
		my $where = "$file:$b->{line}";
		my $marker = $b->{marker} // '';
		if ($marker =~ /^not run/)
		{
			die "$where: \"not run\" without its reason in parentheses\n"
			  unless $marker =~ /^not run \(\S.*\)$/;
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
}
$node->stop;
note "$run examples run, $compared outputs compared, $skipped not run";
# (9: the two pg_partman recipes of docs/partitions.md, run by t/065; the
# pgEdge recipe of docs/coming-from.md, run by t/068; the setups of
# docs/many-servers.md that need other servers (t/070, t/071, t/077, t/078,
# t/100 run them) or change the server's configuration)
cmp_ok($skipped, '<=', 9, 'few examples are not run');

done_testing();
