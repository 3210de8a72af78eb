# 080_java_gene.pl
#	A real Java client agrees with idgen.gene_of (issue 4, point 7).
#
# Compiles and runs a small Java program that prints hashCode() & mask of
# a set of keys: ASCII, Latin-1, CJK, characters outside the BMP (surrogate
# pairs in Java), boundary code points, the empty string, a long string and
# random strings.  idgen.gene_of must return the same gene for every key and
# width, in a UTF8 database and, for keys Latin-1 can hold, in a LATIN1 one
# (in a SQL_ASCII one a key that is not UTF-8 is refused, 22021);
# gene_id(origin, key, bits) and snowflake IDs from gene_id(key, bits) must
# carry the same gene in their low bits.
#
# Keys travel as hex of their UTF-8 bytes both to Java and to PostgreSQL, so
# no client or terminal encoding can change them on the way.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my ($javac, $java) = require_jdk();

my @bits = (1, 3, 8, 16, 31);

# The keys, as Perl character strings
my @keys = (
	'', 'a', 'hello', 'testroy', 'user_123', 'Aa', 'BB',
	'polygenelubricants',
	"Jos\x{e9}", "Z\x{fc}rich", "na\x{ef}ve caf\x{e9}", "\x{ff}", "\x{a0}\x{a9}\x{ae}",
	"\x{65e5}\x{672c}\x{8a9e}", "\x{7528}\x{6237}42", "\x{d55c}\x{ad6d}\x{c5b4}",
	"\x{41f}\x{440}\x{438}\x{432}\x{435}\x{442}", "\x{645}\x{631}\x{62d}\x{628}\x{627}",
	"\x{928}\x{92e}\x{938}\x{94d}\x{924}\x{947}",
	"\x{1f600}", "a\x{1f600}b", "\x{1f600}\x{1f600}",
	"\x{1f468}\x{200d}\x{1f469}\x{200d}\x{1f467}",
	"\x{1d518}\x{1d52b}\x{1d526}\x{1d520}\x{1d52c}\x{1d521}\x{1d522}",
	"\x{80}", "\x{7ff}", "\x{800}", "\x{fffd}", "\x{ffff}", "\x{10000}",
	"\x{10ffff}", "\x{e000}",
	('x' x 1000) . "\x{1f600}",
	join('', map { chr(0x4e00 + $_) } 0 .. 499),
);

# Random strings, the same on every run
srand(4242);
for my $i (1 .. 300)
{
	my $len = int(rand(12));
	my $s = '';
	for (1 .. $len)
	{
		my $r = rand();
		my $cp =
			$r < 0.4 ? 0x20 + int(rand(0x5f))
		  : $r < 0.6 ? 0x80 + int(rand(0x780))
		  : $r < 0.8 ? 0x800 + int(rand(0xd000 - 0x800))
		  : $r < 0.85 ? 0xe000 + int(rand(0x10000 - 0xe000))
		  :             0x10000 + int(rand(0x100000));
		$s .= chr($cp);
	}
	push @keys, $s;
}

my @hex = map { my $b = $_; utf8::encode($b); unpack('H*', $b) } @keys;

# The Java program: keys from a file of hex lines, genes to stdout
my $dir = PostgreSQL::Test::Utils::tempdir();
my $bits_list = join(', ', @bits);
open(my $src, '>', "$dir/Genes.java") or die "$dir/Genes.java: $!";
print $src <<"EOJ";
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

public class Genes {
    public static void main(String[] args) throws Exception {
        int[] bits = {$bits_list};
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.US_ASCII);
        for (int i = 0; i < lines.size(); i++) {
            String hex = lines.get(i);
            byte[] utf8 = new byte[hex.length() / 2];
            for (int j = 0; j < utf8.length; j++)
                utf8[j] = (byte) Integer.parseInt(hex.substring(2 * j, 2 * j + 2), 16);
            String key = new String(utf8, StandardCharsets.UTF_8);
            for (int b : bits) {
                int mask = (int) ((1L << b) - 1);
                System.out.println(i + " " + b + " " + (key.hashCode() & mask));
            }
        }
    }
}
EOJ
close($src);
open(my $kf, '>', "$dir/keys.hex") or die "$dir/keys.hex: $!";
print $kf "$_\n" for @hex;
close($kf);

command_ok([ $javac, '-encoding', 'UTF-8', '-d', $dir, "$dir/Genes.java" ],
	'javac compiles the Java client');
my ($out, $err) = ('', '');
ok(IPC::Run::run([ $java, '-cp', $dir, 'Genes', "$dir/keys.hex" ],
		'>', \$out, '2>', \$err),
	'the Java client ran') or diag($err);

my %java;
for my $line (split /\n/, $out)
{
	my ($i, $b, $g) = split / /, $line;
	$java{"$i/$b"} = $g;
}
is(scalar(keys %java), @keys * @bits, 'Java printed a gene for every key and width');

# Sanity: Java agrees with the documented vectors
is($java{'2/31'}, 99162322, 'Java: "hello".hashCode() is 99162322');
is($java{'3/3'}, 2, 'Java: "testroy" has gene 2 in 3 bits');

my $node = idgen_node('java_gene');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

# The genes PostgreSQL computes for keys @$idx in database $db, as "i/b" => g
sub pg_genes
{
	my ($db, $idx) = @_;
	my $values = join(",\n",
		map { "($_, decode('$hex[$_]', 'hex'))" } @$idx);
	my $res = $node->safe_psql(
		$db, qq{
		SELECT i || '/' || b || ' ' || idgen.gene_of(convert_from(k, 'UTF8'), b)
		FROM (VALUES $values) AS v(i, k), unnest(ARRAY[$bits_list]) AS b
		ORDER BY i, b});
	my %pg;
	for my $line (split /\n/, $res)
	{
		my ($k, $g) = split / /, $line;
		$pg{$k} = $g;
	}
	return \%pg;
}

# Compare, naming the first few disagreements
sub compare
{
	my ($pg, $idx, $what) = @_;
	my @bad;
	for my $i (@$idx)
	{
		for my $b (@bits)
		{
			my $k = "$i/$b";
			push @bad, "key $i (hex '$hex[$i]') bits $b: java $java{$k}, pg "
			  . ($pg->{$k} // 'none')
			  unless defined $pg->{$k} && $pg->{$k} eq $java{$k};
		}
	}
	is(scalar(@bad), 0, $what) or diag(join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]));
	return;
}

my @all = (0 .. $#keys);
compare(pg_genes('postgres', \@all), \@all,
	scalar(@keys) . ' keys x ' . scalar(@bits) . ' widths: idgen.gene_of equals Java hashCode() & mask (UTF8 database)');

# A LATIN1 database converts keys to UTF-8 before hashing
$node->safe_psql('postgres',
	"CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
$node->safe_psql('latin1', 'CREATE EXTENSION idgen');
my @latin1 = grep { $keys[$_] !~ /[^\x{00}-\x{ff}]/ } @all;
cmp_ok(scalar(@latin1), '>=', 10, 'some keys fit Latin-1');
compare(pg_genes('latin1', \@latin1), \@latin1,
	scalar(@latin1) . ' Latin-1 keys: idgen.gene_of equals Java in a LATIN1 database too');

# A SQL_ASCII database holds text that need not be UTF-8: a key that is not
# is refused (22021, by PostgreSQL's conversion to UTF-8 before hashing), an
# ASCII key hashes as in a UTF8 database
$node->safe_psql('postgres',
	"CREATE DATABASE ascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
$node->safe_psql('ascii', 'CREATE EXTENSION idgen');
{
	my ($ret, $out, $err) = try_sql($node,
		q{SELECT idgen.gene_of(convert_from('\\xff41'::bytea, 'SQL_ASCII'), 3)}, db => 'ascii');
	like($err, qr/ERROR:  22021: invalid byte sequence for encoding "UTF8": 0xff/,
		'a key that is not UTF-8 in a SQL_ASCII database: 22021');
	is($node->safe_psql('ascii', q{SELECT idgen.gene_of('testroy', 8)}),
		$node->safe_psql('postgres', q{SELECT idgen.gene_of('testroy', 8)}),
		'an ASCII key has the same gene in a SQL_ASCII database');
}

# gene_id(origin, key, bits) = (origin << bits) | Java's gene
my @bad;
for my $i (@all[ 0 .. 40 ])
{
	my $id = $node->safe_psql('postgres',
		"SELECT idgen.gene_id(12394846, convert_from(decode('$hex[$i]', 'hex'), 'UTF8'), 3)");
	push @bad, "key $i: $id" unless $id == 12394846 * 8 + $java{"$i/3"};
}
is(scalar(@bad), 0, 'gene_id(origin, key, 3) carries Java\'s gene') or diag("@bad");

# Snowflake IDs from gene_id(key, bits) carry Java's gene in their low bits
$node->poll_query_until('postgres',
	"SELECT worker_running AND reserved_until IS NOT NULL FROM idgen.snowflake_status()")
  or die 'the idgen worker made no reservation';
my $values = join(",\n",
	map { "($_, decode('$hex[$_]', 'hex'))" } @all);
my $res = $node->safe_psql(
	'postgres', qq{
	SELECT i || ' ' || idgen.gene_id(convert_from(k, 'UTF8'), 8) % 256
	FROM (VALUES $values) AS v(i, k) ORDER BY i});
@bad = ();
for my $line (split /\n/, $res)
{
	my ($i, $low) = split / /, $line;
	my $want = $java{"$i/8"};
	push @bad, "key $i: low bits $low, java $want" unless $low == $want;
}
is(scalar(@bad), 0,
	'snowflake IDs from gene_id(key, 8) end in Java\'s 8-bit gene')
  or diag(join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]));

$node->stop;
done_testing();
