# META.json follows PGXN's META spec 1.0.0 (https://pgxn.org/spec/), and
# its versions are the control file's.  No server: the spec's rules are
# checked here (required keys, SemVer versions, the license and
# release_status values the spec allows, the prereqs structure, provides
# pointing at files that exist), and each rule is shown to reject a
# META.json that breaks it.
use strict;
use warnings;

use IO::Uncompress::Unzip;
use JSON::PP;
use Test::More;
use IdgenTest;

# SemVer 2.0.0 (the spec says "Semantic Version")
my $semver = qr/(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)
	(?:-(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?
	(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?/x;
# A version range: 0, or comma-separated versions with an optional operator
my $range = qr/^(?:0|(?:(?:[=!]=|[<>]=?)\s*)?$semver(?:,\s*(?:(?:[=!]=|[<>]=?)\s*)?$semver)*)$/;
my %license = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1
  artistic_2 bsd freebsd gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1
  lgpl_3_0 mit mozilla_1_0 mozilla_1_1 openssl perl_5 postgresql qpl_1_0
  ssleay sun zlib open_source restricted unrestricted unknown);
my %top = map { $_ => 1 } qw(name version abstract maintainer license
  provides meta-spec description generated_by tags no_index prereqs
  release_status resources);
my %phase = map { $_ => 1 } qw(configure build test runtime develop);
my %relation = map { $_ => 1 } qw(requires recommends suggests conflicts);

sub is_custom { return $_[0] =~ /^[xX]_./; }
sub is_term { return !ref $_[0] && defined $_[0] && $_[0] =~ /^[^\/\\\s[:cntrl:]]{2,}$/; }
sub is_version { return !ref $_[0] && defined $_[0] && $_[0] =~ /^$semver$/; }
sub is_text { return !ref $_[0] && defined $_[0] && length $_[0] > 0; }
sub is_uri { return is_text($_[0]) && $_[0] =~ /^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$/; }
sub is_path { return is_text($_[0]) && $_[0] !~ /^\// && $_[0] !~ /\\/; }

# The problems of a META.json (decoded), as a list of messages
sub problems
{
	my ($m) = @_;
	my @p;

	return ('not a JSON object') unless ref $m eq 'HASH';
	for my $k (qw(name version abstract maintainer license provides meta-spec))
	{
		push @p, "required key $k is missing" unless exists $m->{$k};
	}
	for my $k (sort keys %$m)
	{
		push @p, "unknown key $k" unless $top{$k} || is_custom($k);
	}
	push @p, 'name is not a term' if exists $m->{name} && !is_term($m->{name});
	push @p, 'version is not a semantic version'
	  if exists $m->{version} && !is_version($m->{version});
	for my $k (qw(abstract description generated_by))
	{
		push @p, "$k is not a non-empty string"
		  if exists $m->{$k} && !is_text($m->{$k});
	}
	if (exists $m->{maintainer})
	{
		my $v = $m->{maintainer};
		push @p, 'maintainer is not a string or a list of strings'
		  unless is_text($v)
		  || (ref $v eq 'ARRAY' && @$v && !grep { !is_text($_) } @$v);
	}
	if (exists $m->{license})
	{
		my $v = $m->{license};
		my $ok =
			!ref $v ? defined $v && $license{$v}
		  : ref $v eq 'ARRAY' ? @$v && !grep { ref $_ || !$license{$_} } @$v
		  : ref $v eq 'HASH' ? %$v && !grep { !is_uri($_) } values %$v
		  : 0;
		push @p, 'license is not a value the spec allows' unless $ok;
	}
	if (exists $m->{'meta-spec'})
	{
		my $v = $m->{'meta-spec'};
		if (ref $v ne 'HASH') { push @p, 'meta-spec is not an object'; }
		else
		{
			push @p, 'meta-spec version is not 1.0.x'
			  unless defined $v->{version} && $v->{version} =~ /^1\.0\.\d+$/;
			push @p, 'meta-spec url is not the spec\'s'
			  if exists $v->{url}
			  && $v->{url} !~ m{^https?://pgxn\.org/meta/spec\.txt$};
			push @p, "meta-spec has unknown key $_"
			  for grep { $_ ne 'version' && $_ ne 'url' && !is_custom($_) } sort keys %$v;
		}
	}
	if (exists $m->{provides})
	{
		my $v = $m->{provides};
		if (ref $v ne 'HASH' || !%$v) { push @p, 'provides is not a non-empty object'; }
		else
		{
			for my $ext (sort keys %$v)
			{
				my $e = $v->{$ext};
				push @p, "provides: $ext is not a term" unless is_term($ext);
				if (ref $e ne 'HASH') { push @p, "provides.$ext is not an object"; next; }
				push @p, "provides.$ext.file is missing or not a relative path"
				  unless is_path($e->{file});
				push @p, "provides.$ext.file $e->{file} does not exist"
				  if is_path($e->{file}) && !-f repo_file($e->{file});
				push @p, "provides.$ext.docfile $e->{docfile} does not exist"
				  if exists $e->{docfile}
				  && !(is_path($e->{docfile}) && -f repo_file($e->{docfile}));
				push @p, "provides.$ext.version is missing or not a semantic version"
				  unless is_version($e->{version});
				push @p, "provides.$ext.abstract is not a non-empty string"
				  if exists $e->{abstract} && !is_text($e->{abstract});
				push @p, "provides.$ext has unknown key $_" for grep {
					!/^(file|version|abstract|docfile)$/ && !is_custom($_)
				} sort keys %$e;
			}
		}
	}
	if (exists $m->{tags})
	{
		my $v = $m->{tags};
		push @p, 'tags is not a non-empty list of tags'
		  unless ref $v eq 'ARRAY' && @$v
		  && !grep { ref $_ || !defined $_ || !/^[^\/\\[:cntrl:]]{2,255}$/ } @$v;
	}
	if (exists $m->{release_status})
	{
		push @p, 'release_status is not stable, testing or unstable'
		  unless defined $m->{release_status}
		  && $m->{release_status} =~ /^(stable|testing|unstable)$/;
	}
	if (exists $m->{prereqs})
	{
		my $v = $m->{prereqs};
		if (ref $v ne 'HASH' || !%$v) { push @p, 'prereqs is not a non-empty object'; }
		else
		{
			for my $ph (sort keys %$v)
			{
				next if is_custom($ph);
				unless ($phase{$ph}) { push @p, "prereqs: unknown phase $ph"; next; }
				my $rels = $v->{$ph};
				if (ref $rels ne 'HASH' || !%$rels)
				{
					push @p, "prereqs.$ph is not a non-empty object";
					next;
				}
				for my $rel (sort keys %$rels)
				{
					next if is_custom($rel);
					unless ($relation{$rel})
					{
						push @p, "prereqs.$ph: unknown relationship $rel";
						next;
					}
					my $deps = $rels->{$rel};
					if (ref $deps ne 'HASH') { push @p, "prereqs.$ph.$rel is not an object"; next; }
					for my $d (sort keys %$deps)
					{
						push @p, "prereqs.$ph.$rel: $d is not a term" unless is_term($d);
						my $r = $deps->{$d};
						push @p, "prereqs.$ph.$rel.$d is not a version range"
						  unless defined $r && !ref $r && "$r" =~ $range;
					}
				}
			}
		}
	}
	if (exists $m->{resources})
	{
		my $v = $m->{resources};
		if (ref $v ne 'HASH' || !%$v) { push @p, 'resources is not a non-empty object'; }
		else
		{
			for my $k (sort keys %$v)
			{
				next if is_custom($k);
				if ($k eq 'homepage') { push @p, 'resources.homepage is not a URI' unless is_uri($v->{$k}); }
				elsif ($k eq 'bugtracker' || $k eq 'repository')
				{
					my $o = $v->{$k};
					if (ref $o ne 'HASH' || !%$o) { push @p, "resources.$k is not a non-empty object"; next; }
					for my $f (sort keys %$o)
					{
						next if is_custom($f);
						my $okf = $k eq 'bugtracker' ? $f =~ /^(web|mailto)$/ : $f =~ /^(url|web|type)$/;
						push @p, "resources.$k has unknown key $f" unless $okf;
						push @p, "resources.$k.$f is not a URI"
						  if $okf && $f =~ /^(web|url)$/ && !is_uri($o->{$f});
					}
				}
				else { push @p, "resources has unknown key $k"; }
			}
		}
	}
	if (exists $m->{no_index})
	{
		my $v = $m->{no_index};
		if (ref $v ne 'HASH') { push @p, 'no_index is not an object'; }
		else
		{
			for my $k (sort keys %$v)
			{
				next if is_custom($k);
				push @p, "no_index has unknown key $k" unless $k =~ /^(file|directory)$/;
			}
		}
	}
	return @p;
}

my $json = JSON::PP->new->canonical;
my $text = PostgreSQL::Test::Utils::slurp_file(repo_file('META.json'));
my $meta = eval { $json->decode($text) };
ok($meta, 'META.json is valid JSON') or diag $@;
my @p = problems($meta);
is(scalar @p, 0, 'META.json follows PGXN META spec 1.0.0') or diag join("\n", @p);

my $control = PostgreSQL::Test::Utils::slurp_file(repo_file('idgen.control'));
my ($default) = $control =~ /^default_version\s*=\s*'([^']*)'/m;
ok(defined $default, 'the control file has a default_version');
is($meta->{version}, $default, 'META.json version is the control file\'s default_version');
is($meta->{provides}{idgen}{version}, $default,
	'provides.idgen.version is the control file\'s default_version');
ok((grep { -f $_ } repo_file("idgen--$default.sql"), glob(repo_file("idgen--*--$default.sql"))),
	"an install or update script reaches $default");

# "make dist": the release zip (git archive of HEAD) has every file
# provides names, everything under idgen-<version>/, and nothing that
# .gitattributes marks export-ignore
SKIP:
{
	my $top = repo_file('');
	skip 'not a git checkout (make dist archives the committed tree)', 4
	  unless -e "$top/.git"
	  && system("git -C '$top' rev-parse --verify -q HEAD >/dev/null 2>&1") == 0;
	my $tmp = PostgreSQL::Test::Utils::tempdir();
	my $zip = "$tmp/idgen-$default.zip";
	my $out = `make -s -C '$top' dist DIST_ZIP='$zip' 2>&1`;
	is($?, 0, 'make dist succeeds') or diag $out;
	my %names;
	my $u = IO::Uncompress::Unzip->new($zip);
	if ($u)
	{
		for (my $status = 1; $status > 0; $status = $u->nextStream)
		{
			$names{ $u->getHeaderInfo->{Name} } = 1;
		}
	}
	my @missing = grep { !$names{"idgen-$default/$_"} }
	  map { ($_->{file}, $_->{docfile} // ()) } values %{ $meta->{provides} };
	is(join(', ', @missing), '', "every provides file is in idgen-$default.zip");
	is(join(', ', grep { !m{^idgen-\Q$default\E/} } sort keys %names), '',
		"every entry is under idgen-$default/");
	is(join(', ', grep { m{^idgen-[^/]+/(\.ci/|\.git)} } sort keys %names), '',
		'no .ci/ and no git files in the zip');
}

# Each rule rejects a META.json that breaks it
my @broken = (
	[ 'no license', sub { delete $_[0]{license} }, qr/required key license/ ],
	[ 'no meta-spec', sub { delete $_[0]{'meta-spec'} }, qr/required key meta-spec/ ],
	[ 'version 0.3', sub { $_[0]{version} = '0.3' }, qr/^version is not/ ],
	[ 'version v0.3.0', sub { $_[0]{version} = 'v0.3.0' }, qr/^version is not/ ],
	[ 'provides version 1.0', sub { $_[0]{provides}{idgen}{version} = '1.0' }, qr/provides\.idgen\.version/ ],
	[ 'license GPL', sub { $_[0]{license} = 'GPL' }, qr/^license/ ],
	[ 'license list with a bad one', sub { $_[0]{license} = [ 'mit', 'gpl' ] }, qr/^license/ ],
	[ 'release_status beta', sub { $_[0]{release_status} = 'beta' }, qr/^release_status/ ],
	[ 'prereqs phase runtim', sub { $_[0]{prereqs} = { runtim => { requires => { PostgreSQL => '15.0.0' } } } }, qr/unknown phase/ ],
	[ 'prereqs relationship needs', sub { $_[0]{prereqs} = { runtime => { needs => { PostgreSQL => '15.0.0' } } } }, qr/unknown relationship/ ],
	[ 'prereqs range >= 15', sub { $_[0]{prereqs} = { runtime => { requires => { PostgreSQL => '>= 15' } } } }, qr/not a version range/ ],
	[ 'prereqs as a list', sub { $_[0]{prereqs} = { runtime => { requires => [ 'PostgreSQL' ] } } }, qr/not an object/ ],
	[ 'provides file missing', sub { $_[0]{provides}{idgen}{file} = 'sql/idgen.sql' }, qr/does not exist/ ],
	[ 'provides without file', sub { delete $_[0]{provides}{idgen}{file} }, qr/file is missing/ ],
	[ 'meta-spec 2.0.0', sub { $_[0]{'meta-spec'}{version} = '2.0.0' }, qr/meta-spec version/ ],
	[ 'unknown top-level key', sub { $_[0]{homepage} = 'https://example.org/' }, qr/unknown key homepage/ ],
	[ 'resources key', sub { $_[0]{resources} = { issues => 'https://example.org/' } }, qr/resources has unknown key/ ],
	[ 'tag with a slash', sub { $_[0]{tags} = [ 'a/b' ] }, qr/^tags/ ],
	[ 'name with a space', sub { $_[0]{name} = 'id gen' }, qr/^name/ ],
);
for my $b (@broken)
{
	my ($name, $break, $expect) = @$b;
	my $copy = $json->decode($json->encode($meta));
	$break->($copy);
	my @bp = problems($copy);
	ok((grep { $_ =~ $expect } @bp), "rejected: $name") or diag join("\n", @bp);
}
# and accepts what the spec allows
my $copy = $json->decode($json->encode($meta));
$copy->{license} = { PostgreSQL => 'https://www.postgresql.org/about/licence' };
$copy->{prereqs} = { runtime => { requires => { PostgreSQL => '15.0.0', plpgsql => 0 } } };
$copy->{x_anything} = [1];
is(join("\n", problems($copy)), '', 'accepted: a license object, a plain version, 0 and a custom key');

done_testing();
