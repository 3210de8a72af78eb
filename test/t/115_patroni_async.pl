# 115_patroni_async.pl
#	Patroni's default, asynchronous replication, with node ids that follow
#	the timeline (issue 38, point 3): t/110_patroni.pl in its mode
#	"timeline", three hard failovers (see its header).  PostgreSQL 15
#	lane only, as t/110.
use strict;
use warnings;
use FindBin;
# Loaded here, at compile time, so that their INIT blocks run
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{IDGEN_HA_MODE} = 'timeline';
do "$FindBin::Bin/110_patroni.pl" or die($@ || "could not run t/110_patroni.pl: $!");
