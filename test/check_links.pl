#!/usr/bin/perl
# Every relative link of README.md, CONTRIBUTING.md, CHANGELOG.md and
# docs/*.md leads somewhere (issue 39, point 4): its file or folder exists
# in the checkout, and its anchor (#...) is one that GitHub makes in the
# target page: a heading's (GitHub's slugs: the heading's text lower-cased,
# punctuation other than "-" and "_" dropped, each space a "-", "-1",
# "-2" ... after repeats) or an HTML anchor (<a id="..."> or name=).
# Links inside code blocks and code spans are not links.  Links to other
# sites (http:, mailto: ...) are not checked.
#   perl test/check_links.pl [FILE.md ...]   (default: the pages above)
# Prints "ok: FILE" or each broken link as FILE:LINE: TARGET: why, then
# "N links checked, M broken"; exits non-zero if any is broken.
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

my ($checked, $broken) = (0, 0);
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
			my $why;
			if (!-e $target)
			{
				$why = "$target does not exist";
			}
			elsif (defined $anchor && $anchor ne '')
			{
				if ($target !~ /\.md$/ || -d $target)
				{
					$why = "an anchor into $target, which is no Markdown page";
				}
				elsif (!anchors_of($target)->{$anchor})
				{
					$why = "$target has no heading or anchor #$anchor";
				}
			}
			next unless $why;
			$broken++;
			$bad++;
			print "$file:" . ($i + 1) . ": $t: $why\n";
		}
	}
	print "ok: $file\n" unless $bad;
}
print "$checked links checked, $broken broken\n";
exit($broken ? 1 : 0);
