# idgen: build with PGXS.  "make", "make install"; tests: see README.md.
EXTENSION = idgen
EXTVERSION = $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" idgen.control)
MODULE_big = idgen
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c))
DATA = $(wildcard idgen--*.sql)

# pg_regress tests, run against a temporary instance with idgen preloaded
REGRESS = snowflake decode gene codec segment arrivals currval
REGRESS_OPTS = --temp-config=$(srcdir)/test/regress.conf --temp-instance=./tmp_check_regress
ISOLATION = snowflake_concurrent
ISOLATION_OPTS = --inputdir=$(srcdir)/test --temp-config=$(srcdir)/test/regress.conf --temp-instance=./tmp_check_iso

# Warnings are errors
PG_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare

# The remote worker leases node ids from a registry database and reaches a
# central segment server over libpq (src/pqconn.c), linked the way
# contrib/postgres_fdw does
PG_CPPFLAGS += -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL += $(libpq)

# No LLVM bitcode: JIT inlining of these small functions is not worth a
# clang dependency at build time
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

.PHONY: unit
unit:
	$(MAKE) -C test/unit

# Benchmark against sequences, bigserial and UUIDs (not a test): test/bench/
.PHONY: bench
bench:
	bash test/bench/run.sh
