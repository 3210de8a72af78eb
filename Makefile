# idgen: build with PGXS.  "make", "make install"; tests (README.md, Tests):
#   make installcheck        pg_regress and isolation tests against the running
#                            server (idgen preloaded, idgen.node_id set)
#   make check               the same against a temporary instance configured
#                            with test/regress.conf
#   make prove_installcheck  TAP tests (test/t); each starts its own servers
#   make prove_check         the same (PGXS has no temporary installation)
#   PROVE_TESTS="test/t/001_misuse.pl ..."  only these TAP tests
# "make dist": idgen-<version>.zip for PGXN.  Debian packages: debian/.
EXTENSION = idgen
EXTVERSION = $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" idgen.control)
MODULE_big = idgen
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c))
# The install script of the current version is built from one source,
# src/idgen.sql; older versions are reached through the update scripts
# idgen--A--B.sql.  The control files of released versions (idgen--0.1.control
# ...) keep their schema.
DATA_built = idgen--$(EXTVERSION).sql
DATA = $(filter-out $(DATA_built),$(wildcard idgen--*.sql)) $(wildcard idgen--*.control)

# pg_regress (sql/, expected/) and isolation tests (test/specs,
# test/expected).  installcheck runs them against the running server in
# databases contrib_regression and isolation_regression.
REGRESS = snowflake decode gene codec segment segment_cache segment_privilege arrivals currval adopt adopt_matrix partitions bad_input refusals public_id
ISOLATION = snowflake_concurrent segment_privilege adopt_concurrent segment_status_revoke id_key_revoke
ISOLATION_OPTS = --inputdir=$(srcdir)/test
EXTRA_CLEAN = tmp_check/ tmp_instance/ $(DATA_built) src/*.gcno src/*.gcda

# Warnings are errors
PG_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare

# COVERAGE=1: built for gcov (-O0 --coverage), each process writing its
# counts (.gcda) next to the objects when it exits; test/run.sh builds its
# scratch copy so on IDGEN_NEIGHBOURS_MAJOR and test/coverage.sh reports
# (CONTRIBUTING.md, Coverage)
ifeq ($(COVERAGE),1)
PG_CFLAGS += -O0 --coverage
SHLIB_LINK += --coverage
endif

# The remote worker leases node ids from a registry database and reaches a
# central segment server over libpq (src/pqconn.c), linked the way
# contrib/postgres_fdw does
PG_CPPFLAGS += -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL += $(libpq)

# The FF1 cipher of public IDs (src/ff1.c) runs on AES from OpenSSL's
# libcrypto, which PostgreSQL on Debian links already
SHLIB_LINK += -lcrypto

# No LLVM bitcode: JIT inlining of these small functions is not worth a
# clang dependency at build time
override with_llvm = no

# TAP tests are not part of installcheck (see prove_installcheck below):
# TAP_TESTS from the environment (test/run.sh's knob) must not turn them on
override undefine TAP_TESTS

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifeq ($(PGXS),)
$(error cannot run "$(PG_CONFIG) --pgxs": install the server's development files (Debian: postgresql-server-dev-N) or name pg_config, e.g. make PG_CONFIG=/usr/lib/postgresql/N/bin/pg_config (see docs/install.md))
endif
include $(PGXS)

$(DATA_built): src/idgen.sql
	cp $< $@

# Every object is rebuilt when a header changes (PGXS tracks no header
# dependencies unless PostgreSQL was configured with --enable-depend): a
# shared-memory struct laid out differently in two objects crashes the server
$(OBJS): $(wildcard src/*.h)

# TAP tests live in test/t and use test/IdgenTest.pm.  They are not part of
# installcheck (TAP_TESTS stays unset): they need no running server, as each
# starts its own, but take minutes, and some need a C compiler (the fake
# clock, test/fakeclock.c) or a JDK.
PROVE_TESTS ?= $(sort $(wildcard test/t/*.pl))
PG_PROVE_FLAGS += -I $(abspath $(srcdir))/test

.PHONY: prove_installcheck prove_check
prove_installcheck:
	$(prove_installcheck)

# PGXS's own prove_check wants a temporary installation, which an extension
# built outside the source tree has not: use the installed server, like
# prove_installcheck (so "make install" first)
prove_check: prove_installcheck

# "make check": PGXS refuses it; here it starts a temporary instance with
# test/regress.conf (port TEMP_PORT), runs installcheck against it (the
# pg_regress and the isolation tests each, so that a failure of one does not
# skip the other) and stops it.  Only defined when asked for, so that other goals do not print make's
# warning about the overridden recipe.
TEMP_PORT ?= 58432
ifneq ($(filter check,$(MAKECMDGOALS)),)
check:
	rm -rf ./tmp_instance
	$(MKDIR_P) ./tmp_instance
	'$(bindir)/initdb' -D ./tmp_instance/data --auth=trust --no-sync --no-instructions -E UTF8 --locale=C >./tmp_instance/initdb.log
	cat $(srcdir)/test/regress.conf >>./tmp_instance/data/postgresql.conf
	printf "port = $(TEMP_PORT)\nlisten_addresses = ''\nunix_socket_directories = '$(abspath .)/tmp_instance'\nfsync = off\n" >>./tmp_instance/data/postgresql.conf
	'$(bindir)/pg_ctl' -D ./tmp_instance/data -l ./tmp_instance/postmaster.log -w start
	PGHOST='$(abspath .)/tmp_instance' PGPORT=$(TEMP_PORT) $(MAKE) installcheck ISOLATION=; \
	rc=$$?; \
	PGHOST='$(abspath .)/tmp_instance' PGPORT=$(TEMP_PORT) $(MAKE) installcheck REGRESS= || rc=1; \
	'$(bindir)/pg_ctl' -D ./tmp_instance/data -m fast -w stop; exit $$rc
endif

.PHONY: unit
unit:
	$(MAKE) -C test/unit

# The release zip for PGXN: idgen-<version>.zip of the committed tree (HEAD)
# under idgen-<version>/, without what .gitattributes marks export-ignore.
# Needs a git checkout.  (PGXS has no "dist" target of its own.)
DISTNAME = $(EXTENSION)-$(EXTVERSION)
DIST_ZIP ?= $(DISTNAME).zip
.PHONY: dist
dist:
	git archive --format zip --prefix $(DISTNAME)/ -o $(DIST_ZIP) HEAD

# The extension image for CloudNativePG (PostgreSQL 18+): an OCI archive
# built with buildah, FROM scratch (image/build.sh, docs/install.md)
.PHONY: image
image: all
	PG_CONFIG='$(PG_CONFIG)' bash image/build.sh

# Benchmark against sequences, bigserial and UUIDs (not a test): test/bench/
.PHONY: bench
bench:
	bash test/bench/run.sh

# The pg_regress and isolation tests, for test/run.sh
.PHONY: print-tests
print-tests:
	@echo $(REGRESS) $(ISOLATION)
