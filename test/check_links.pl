#!/usr/bin/perl
# The documentation (README.md, CONTRIBUTING.md, CHANGELOG.md, docs/*.md)
# links where it means and says what is true now.
#
# Links: every relative link leads somewhere: its file or folder exists in
# the checkout, and its anchor (#...) is one that GitHub makes in the
# target page: a heading's (GitHub's slugs: the heading's text lower-cased,
# punctuation other than "-" and "_" dropped, each space a "-", "-1",
# "-2" ... after repeats) or an HTML anchor (<a id="..."> or name=).
# Links inside code blocks and code spans are not links.  Links to other
# sites (http:, mailto: ...) are not checked.
#
# The pages' text (code blocks included), which says how things are, not
# when or where they were decided (that is git's and the CHANGELOG's):
#   - no word of 7 to 40 hex digits that git knows as a commit
#     (git cat-file -e WORD^{commit}); left out, with a line, outside a git
#     checkout (the release zip)
#   - no "issue N" or "issues N" (this project's tracker is no page a
#     reader can open)
#   - README.md names no test (t/NNN..., test/t/..., NNN_name.pl,
#     sql/NAME.sql, test/specs/): the map from guarantees to tests is
#     docs/guarantees.md, which the README links instead
#   - docs/guarantees.md names every TAP file test/t/*.pl, and every test
#     file it names (NNN_name.pl, sql/NAME.sql, test/specs/NAME.spec)
#     exists
# Each alert's runbook annotation in monitoring/idgen-rules.yml (and its
# test file) names a page and one of its sections that exist.
#   perl test/check_links.pl [FILE.md ...]   (default: the pages above)
# Prints "ok: FILE" or each problem as FILE:LINE: TARGET: why, then
# "N links checked, M broken, P other problems"; exits non-zero if there
# is any.
use strict;
use warnings;
use File::Basename qw(dirname);
use FindBin;

chdir "$FindBin::Bin/.." or die "$FindBin::Bin/..: $!";
my @files = @ARGV ? @ARGV : ('README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', sort glob('docs/*.md'));

sub slurp
{
	my ($file) = @_;
	open my $fh, '<:encoding(UTF-8)', $file or die "$file: $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

# The page's lines with fenced code blocks blanked (line numbers kept)
sub prose_lines
{
	my ($text) = @_;
	my @lines = split /\n/, $text, -1;
	my $fence;
	for my $l (@lines)
	{
		if (defined $fence)
		{
			$fence = undef if $l =~ /^\s*\Q$fence\E\s*$/;
			$l = '';
		}
		elsif ($l =~ /^\s*(```+|~~~+)/)
		{
			$fence = $1;
			$l = '';
		}
	}
	return @lines;
}

# GitHub's anchor of a heading's text
sub slug
{
	my ($h) = @_;
	$h =~ s/`//g;
	$h =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;    # a link's text
	$h =~ s/<[^>]+>//g;                     # HTML tags
	$h = lc $h;
	$h =~ s/[^\p{L}\p{M}\p{N}\p{Pc} \-]//g;
	$h =~ s/ /-/g;
	return $h;
}

# Why a link's target (a path from the top of the checkout) and its
# anchor (undef or '' for none) lead nowhere; undef when they resolve
sub target_problem
{
	my ($target, $anchor) = @_;
	return "$target does not exist" unless -e $target;
	return undef unless defined $anchor && $anchor ne '';
	return "an anchor into $target, which is no Markdown page"
	  if $target !~ /\.md$/ || -d $target;
	return "$target has no heading or anchor #$anchor"
	  unless anchors_of($target)->{$anchor};
	return undef;
}

my %anchors_cache;
sub anchors_of
{
	my ($file) = @_;
	return $anchors_cache{$file} if $anchors_cache{$file};
	my (%a, %count);
	my $text = slurp($file);
	for my $l (prose_lines($text))
	{
		$a{$1} = 1 while $l =~ /<a\s+(?:id|name)="([^"]+)"/g;
		next unless $l =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
		my $s = slug($1);
		my $n = $count{$s}++;
		$a{ $n ? "$s-$n" : $s } = 1;
	}
	return $anchors_cache{$file} = \%a;
}

# The commits git knows among the pages' hex words (a hash of this
# repository names a moment of its history, which git and the CHANGELOG
# keep); undef outside a git checkout
sub known_commits
{
	my (@words) = @_;
	return undef
	  unless system('git rev-parse --is-inside-work-tree >/dev/null 2>&1') == 0;
	my %known;
	return \%known unless @words;
	require IPC::Open2;
	my $pid = IPC::Open2::open2(my $out, my $in, 'git', 'cat-file', '--batch-check');
	print $in "$_^{commit}\n" for @words;
	close $in;
	my @answers = <$out>;
	waitpid $pid, 0;
	for my $k (0 .. $#words)
	{
		$known{ $words[$k] } = 1 if ($answers[$k] // '') =~ /^[0-9a-f]{40,64} commit /;
	}
	return \%known;
}

# The words of a text that rule $re finds, each as [line number, match]
sub matches
{
	my ($text, $re) = @_;
	my @m;
	my @lines = split /\n/, $text, -1;
	for my $i (0 .. $#lines)
	{
		push @m, [ $i + 1, $1 ] while $lines[$i] =~ /$re/g;
	}
	return @m;
}

my ($checked, $broken, $other) = (0, 0, 0);
my %bad_file;
sub problem
{
	my ($file, $line, $what, $why) = @_;
	$other++;
	$bad_file{$file}++;
	print "$file:$line: $what: $why\n";
}

# What the pages say: no commit, no issue number; README names no test
my %hex;
for my $file (@files)
{
	$hex{$_->[1]} = 1 for matches(slurp($file), qr/\b([0-9a-f]{7,40})\b/);
}
my $commits = known_commits(sort keys %hex);
print "(not a git checkout: the pages' hex words are not looked up as commits)\n"
  unless $commits;
for my $file (@files)
{
	my $text = slurp($file);
	if ($commits)
	{
		problem($file, $_->[0], $_->[1], 'a commit of this repository (its history belongs in git and CHANGELOG.md)')
		  for grep { $commits->{ $_->[1] } } matches($text, qr/\b([0-9a-f]{7,40})\b/);
	}
	problem($file, $_->[0], $_->[1], 'an issue number (say what is true, not which issue made it so)')
	  for matches($text, qr/\b(issues?\s+#?[0-9]+)/i);
	next unless $file eq 'README.md';
	problem($file, $_->[0], $_->[1], 'a test named in the README (link docs/guarantees.md, which maps guarantees to tests)')
	  for matches($text, qr{((?:\btest/)?\bt/[0-9]{3}\w*(?:\.pl)?|\btest/t/|\b[0-9]{3}_\w+\.pl\b|\bsql/\w+\.sql\b|\btest/specs/\S*)});
}

# docs/guarantees.md: every TAP file, and only tests that exist
{
	my $map = 'docs/guarantees.md';
	if (!-f $map)
	{
		problem($map, 0, $map, 'missing: the map from guarantees to tests');
	}
	else
	{
		my $text = slurp($map);
		my %named = map { $_->[1] => 1 } matches($text, qr/\b([0-9]{3}_\w+\.pl)\b/);
		for my $t (sort glob('test/t/*.pl'))
		{
			(my $base = $t) =~ s{.*/}{};
			problem($map, 0, $t, 'a TAP file the map does not name') unless $named{$base};
		}
		for my $m (matches($text, qr/\b([0-9]{3}_\w+\.pl)\b/))
		{
			problem($map, $m->[0], $m->[1], 'no such file in test/t/') unless -f "test/t/$m->[1]";
		}
		for my $m (matches($text, qr{\b(sql/[a-z0-9_]+\.sql|test/specs/[a-z0-9_]+\.spec)\b}))
		{
			problem($map, $m->[0], $m->[1], 'no such file') unless -f $m->[1];
		}
	}
}

# The alert rules' runbook annotations (paths from the top of the
# checkout, as the package's copy of the page is named in
# docs/monitoring.md): each names a page and one of its sections
for my $rules (grep { -f } 'monitoring/idgen-rules.yml', 'monitoring/idgen-rules-test.yml')
{
	for my $m (matches(slurp($rules), qr/\brunbook:\s*"([^"]*)"/))
	{
		$checked++;
		my ($path, $anchor) = $m->[1] =~ /^([^#]*)(?:#(.*))?$/;
		my $why = !defined $anchor || $anchor eq '' ? 'no section named'
		  : target_problem($path, $anchor);
		next unless $why;
		$broken++;
		print "$rules:$m->[0]: $m->[1]: $why\n";
	}
}

for my $file (@files)
{
	my $dir = dirname($file);
	my @lines = prose_lines(slurp($file));
	my $bad = 0;
	for my $i (0 .. $#lines)
	{
		(my $l = $lines[$i]) =~ s/``[^`]*``|`[^`]*`//g;    # code spans
		my @targets;
		# [text](target), also across a line break inside the text
		push @targets, $1 while $l =~ /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
		push @targets, $1 if $l =~ /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/;
		push @targets, $1 while $l =~ /<a\s[^>]*href="([^"]+)"/g;
		for my $t (@targets)
		{
			next if $t =~ m{^[a-z][a-z0-9+.-]*:}i;    # another site
			$checked++;
			my ($path, $anchor) = $t =~ /^([^#]*)(?:#(.*))?$/;
			my $target = $path eq '' ? $file : "$dir/$path";
			1 while $target =~ s{(^|/)\./}{$1} || $target =~ s{(^|/)(?!\.\./)[^/]+/\.\./}{$1};
			my $why = target_problem($target, $anchor);
			next unless $why;
			$broken++;
			$bad++;
			print "$file:" . ($i + 1) . ": $t: $why\n";
		}
	}
	print "ok: $file\n" unless $bad || $bad_file{$file};
}
print "$checked links checked, $broken broken, $other other problems\n";
exit($broken || $other ? 1 : 0);
