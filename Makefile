# SPDX-License-Identifier: MIT
# canal: an embeddable C11 web framework on libh2o and jansson.
#
#   make            library (shared + static), tools and examples under build/
#   make deps       install the library's missing Debian packages (deps-test, deps-bench: extras)
#   make run        install the library's missing Debian packages, build, serve the demo on 127.0.0.1:8080
#   make npm        the npm packages of /docs and of the OpenAPI and browser tests, into build/npm
#   make test       install the test tools (make deps-test), build and run every test (unit,
#                   end-to-end, exports, install); T=NAME one test, F=PATTERN cmocka's filter
#   make check      the same with what is installed: installs nothing; an end-to-end test
#                   whose tools are missing prints a SKIP line
#   make exports-update   rewrite the pinned exports (test/exports*.txt) after an API change
#   make docs       the API reference (Doxygen) into build/docs/html; fails on any warning
#   make test SANITIZE=1   the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test SANITIZE=thread   the same under ThreadSanitizer
#   make fuzz       the libFuzzer targets, FUZZ_SECS (60) seconds each
#   make scaleout   nginx in front of two demo instances under wrk: a SIGTERM and a same-port
#                   restart with no failed request (docs/deploy.md)
#   make valgrind   the unit tests under valgrind (memcheck, full leak check)
#   make soak       wrk against the demo at 200, 1,000 and 10,000 connections, twice (bench/soak.sh)
#   make install    PREFIX=/usr/local DESTDIR= honoured; make uninstall undoes it

VERSION   = 0.1.0
SOVERSION = 0

PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
BINDIR       ?= $(PREFIX)/bin
MANDIR       ?= $(PREFIX)/share/man
# the sanitizer and valgrind suppression files for apps built on canal (docs/testing.md)
SUPPDIR      ?= $(PREFIX)/share/canal
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

CC       ?= cc
SANITIZE ?= 0
WERROR   ?= 0

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
       -Wno-unused-parameter -fno-common
OPT  = -O2 -g
ifeq ($(WERROR),1)
WARN += -Werror
endif

ifeq ($(SANITIZE),1)
B    = build/asan
OPT  = -O1 -g -fno-omit-frame-pointer
SAN  = -fsanitize=address,undefined -fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),thread)
B    = build/tsan
OPT  = -O1 -g -fno-omit-frame-pointer
SAN  = -fsanitize=thread
else
B    = build
SAN  =
endif

# The router and the common code see only libc and canal's own headers: a stray h2o or jansson
# include there fails to compile, which is the point.
BASE_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(OPT) $(SAN) -fPIC -fvisibility=hidden -Iinclude
# WebSockets: canal calls wslay (libwslay-dev, which ships no .pc file) beside libh2o
DEP_CFLAGS  = $(shell pkg-config --cflags libh2o-evloop jansson libpq sqlite3) -DH2O_USE_LIBUV=0
# The router's regex constraints use PCRE2 (libpcre2-dev): its flags and library are the only
# ones the router and the tools get.
PCRE2_CFLAGS := $(shell pkg-config --cflags libpcre2-8)
PCRE2_LIBS   := $(shell pkg-config --libs libpcre2-8)
# Password hashing (canal/password.h) is libargon2's Argon2id (libargon2-dev); the database
# client (lib/db/) is libpq's and SQLite's; the Redis client (lib/redis/) hiredis's
DEP_LIBS    = $(shell pkg-config --libs libh2o-evloop jansson libargon2 libpq sqlite3) $(PCRE2_LIBS) -lwslay -lhiredis -lssl -lcrypto -lpthread
ALL_CFLAGS  = $(BASE_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SAN) $(LDFLAGS)

PURE_SRC   = $(wildcard lib/common/*.c lib/router/*.c)
# The server: the core (lib/core/, which names no feature), the features, a folder each, and
# lib/app/ above them: canal_app_create(), which switches on the features the configuration
# names (docs/architecture.md; test/check-layers.sh keeps the direction).
FEATURES    = models redis security db files realtime observability views cache openapi
SERVER_DIRS = core $(FEATURES) app
SERVER_SRC  = $(foreach d,$(SERVER_DIRS),$(wildcard lib/$(d)/*.c))
CTRL_SRC   = $(wildcard lib/controller/*.c)
LIB_SRC    = $(PURE_SRC) $(SERVER_SRC) $(CTRL_SRC)
PURE_OBJ   = $(PURE_SRC:%.c=$(B)/obj/%.o)
SERVER_OBJ = $(SERVER_SRC:%.c=$(B)/obj/%.o)
CTRL_OBJ   = $(CTRL_SRC:%.c=$(B)/obj/%.o)
LIB_OBJ    = $(PURE_OBJ) $(SERVER_OBJ) $(CTRL_OBJ)
# The test client (canal/testing.h) is a library of its own, libcanal-testing, on top of
# libcanal: production programs do not carry it.
TESTING_SRC = $(wildcard lib/testing/*.c)
TESTING_OBJ = $(TESTING_SRC:%.c=$(B)/obj/%.o)

SONAME   = libcanal.so.$(SOVERSION)
SHARED   = $(B)/lib/libcanal.so.$(VERSION)
STATIC   = $(B)/lib/libcanal.a
TESTING_SONAME = libcanal-testing.so.$(SOVERSION)
TESTING_SHARED = $(B)/lib/libcanal-testing.so.$(VERSION)
TESTING_STATIC = $(B)/lib/libcanal-testing.a
# the test client and then canal, for the programs linked against both statically
TEST_LIBS      = $(TESTING_STATIC) $(STATIC)

TOOLS    = $(patsubst lib/tools/%.c,$(B)/bin/%,$(wildcard lib/tools/*.c))
EXAMPLES = $(patsubst examples/%/,$(B)/bin/canal-%,$(filter-out examples/techempower/,$(wildcard examples/*/)))
# examples/techempower is canal-tfb, the name TechEmpower's entries go by
TFB      = $(B)/bin/canal-tfb
UNIT_SRC = $(wildcard test/unit/*_test.c)
UNITS    = $(UNIT_SRC:test/unit/%.c=$(B)/test/%)
# An example may have tests of its own in examples/NAME/test/*.c: they are linked with the
# example's sources but main.c, into $(B)/test/example-NAME_test, which test/run runs.
EXAMPLE_TESTS = $(patsubst examples/%/test/,$(B)/test/example-%_test,$(wildcard examples/*/test/))
E2E_APPS = $(patsubst test/e2e/%.c,$(B)/test/canal-%,$(wildcard test/e2e/*.c))

.PHONY: all lib tools examples tests deps deps-test deps-bench npm run test check exports-update fuzz scaleout valgrind soak install uninstall clean
all: lib tools examples

lib: $(SHARED) $(STATIC) $(B)/lib/canal.pc $(TESTING_SHARED) $(TESTING_STATIC) $(B)/lib/canal-testing.pc

$(B)/obj/lib/common/%.o: CFLAGS_EXTRA =
$(B)/obj/lib/router/%.o: CFLAGS_EXTRA = $(PCRE2_CFLAGS)
$(foreach d,$(SERVER_DIRS),$(B)/obj/lib/$(d)/%.o): CFLAGS_EXTRA = $(DEP_CFLAGS) -Ilib
# The controller layer sees only the public headers (include/), like any app would.
$(B)/obj/lib/controller/%.o: CFLAGS_EXTRA = $(DEP_CFLAGS)
# So does the test client.
$(B)/obj/lib/testing/%.o: CFLAGS_EXTRA = $(DEP_CFLAGS)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CFLAGS_EXTRA) -DCANAL_BUILDING -MMD -MP -c $< -o $@

$(SHARED): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(SONAME) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)
	ln -sf libcanal.so.$(VERSION) $(B)/lib/$(SONAME)
	ln -sf $(SONAME) $(B)/lib/libcanal.so

$(STATIC): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(TESTING_SHARED): $(TESTING_OBJ) $(SHARED)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(TESTING_SONAME) $(ALL_LDFLAGS) -o $@ $(TESTING_OBJ) -L$(B)/lib -lcanal \
	    $(shell pkg-config --libs jansson)
	ln -sf libcanal-testing.so.$(VERSION) $(B)/lib/$(TESTING_SONAME)
	ln -sf $(TESTING_SONAME) $(B)/lib/libcanal-testing.so

$(TESTING_STATIC): $(TESTING_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# canal.pc and canal-testing.pc, from their templates
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
             -e 's|@VERSION@|$(VERSION)|' -e 's|@SUPPDIR@|$(SUPPDIR)|'
$(B)/lib/%.pc: pkgconfig/%.pc.in Makefile
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# The tools use the router alone: no h2o or jansson flags, only the router's objects (and PCRE2);
# canal-view, the template engine's, links the library (public headers only).
tools: $(TOOLS)
$(filter-out $(B)/bin/canal-view,$(TOOLS)): $(B)/bin/%: lib/tools/%.c $(PURE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(PURE_OBJ) $(ALL_LDFLAGS) $(PCRE2_LIBS)
$(B)/bin/canal-view: lib/tools/canal-view.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) -o $@ $< $(STATIC) $(ALL_LDFLAGS) $(DEP_LIBS)

# Examples link the static library, so they run from the build tree as they are.

# Libraries an example needs beyond canal's own (EXAMPLE_LIBS_name), and flags.
# The demo's /docs page finds Swagger UI where `make npm` installs it.
EXAMPLE_CFLAGS_demo = -DDEMO_SWAGGER_UI='"$(NPM_DIR)/node_modules/swagger-ui-dist"'

examples: $(EXAMPLES) $(TFB)
$(TFB): $(wildcard examples/techempower/*.c) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) -o $@ $(filter %.c,$^) $(STATIC) $(ALL_LDFLAGS) $(DEP_LIBS)
.SECONDEXPANSION:
$(EXAMPLES): $(B)/bin/canal-%: $$(wildcard examples/%/*.c) $$(wildcard examples/%/*.h) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(EXAMPLE_CFLAGS_$*) -o $@ $(filter %.c,$^) $(STATIC) $(ALL_LDFLAGS) $(DEP_LIBS) $(EXAMPLE_LIBS_$*)

# Unit tests. Those named router_* and common_* are built with no h2o or jansson flags at all.
# Each finds its data under CANAL_SRCDIR, so it runs from any directory, and links
# test/unit/filter.c, which takes cmocka's test filter from CANAL_TEST_FILTER (make check F=).
UNIT_CFLAGS = -DCANAL_SRCDIR='"$(CURDIR)"'
FILTER_OBJ  = $(B)/test/filter.o
$(FILTER_OBJ): test/unit/filter.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
tests: $(UNITS) $(E2E_APPS)
$(E2E_APPS): $(B)/test/canal-%: test/e2e/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) -o $@ $< $(STATIC) $(ALL_LDFLAGS) $(DEP_LIBS)
$(B)/test/router_%: test/unit/router_%.c $(PURE_OBJ) $(FILTER_OBJ) test/unit/test.h test/unit/counting_malloc.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PCRE2_CFLAGS) $(UNIT_CFLAGS) -o $@ $< $(FILTER_OBJ) $(PURE_OBJ) $(ALL_LDFLAGS) $(PCRE2_LIBS) -lcmocka
$(B)/test/%_test: test/unit/%_test.c $(TEST_LIBS) $(FILTER_OBJ) test/unit/test.h test/unit/client.h test/unit/counting_malloc.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(UNIT_CFLAGS) -Ilib -o $@ $< $(FILTER_OBJ) $(TEST_LIBS) $(ALL_LDFLAGS) $(DEP_LIBS) -lcmocka

# The tests of an example (examples/NAME/test/*.c) link its sources but main.c.
tests: $(EXAMPLE_TESTS)
$(EXAMPLE_TESTS): $(B)/test/example-%_test: $$(wildcard examples/%/test/*.c) \
                  $$(filter-out examples/%/main.c,$$(wildcard examples/%/*.c)) \
                  $$(wildcard examples/%/*.h) $(TEST_LIBS) $(FILTER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(UNIT_CFLAGS) -Iexamples/$* -o $@ $(filter %.c,$^) $(FILTER_OBJ) $(TEST_LIBS) $(ALL_LDFLAGS) $(DEP_LIBS) $(EXAMPLE_LIBS_$*) -lcmocka

# The Debian packages: the library's own (deps), and the extras of the tests (deps-test) and of
# the load runs (deps-bench), each installed by the targets that need them. make check
# installs nothing.
deps:
	@sh .ci/install-deps
deps-test:
	@sh .ci/install-deps test
deps-bench:
	@sh .ci/install-deps bench

# npm packages (test/npm/package.json, locked): swagger-ui-dist for the demo's /docs page, an
# OpenAPI validator and playwright-core for the tests. Installed into build/npm (never
# committed) once per change of the lock file; without npm, or offline, the build goes on and
# /docs and those tests say what is missing.
NPM_DIR = $(CURDIR)/build/npm
npm: $(NPM_DIR)/.installed
$(NPM_DIR)/.installed: test/npm/package.json test/npm/package-lock.json
	@mkdir -p $(NPM_DIR)
	@if command -v npm >/dev/null 2>&1; then \
	    cp test/npm/package.json test/npm/package-lock.json $(NPM_DIR)/ && \
	    (cd $(NPM_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >npm.log 2>&1) && touch $@ || \
	    echo "canal: npm ci failed (see $(NPM_DIR)/npm.log): /docs and the browser tests will say so" >&2; \
	else echo "canal: npm not found: /docs and the OpenAPI/browser tests need it (make deps-test)" >&2; fi

run: deps
	@$(MAKE) --no-print-directory all npm
	$(B)/bin/canal-demo --host 127.0.0.1 --port 8080

# T=NAME runs one test: a unit test binary (router_match, testing, example-todo) or a script
# (an end-to-end test such as todo, or a check such as check-exports); F=PATTERN runs only the
# cmocka tests of that name (* and ? wildcards).
test: deps-test
	@$(MAKE) --no-print-directory all tests npm
	@B=$(B) SANITIZE=$(SANITIZE) T='$(T)' F='$(F)' sh test/run

# The tests with what is on this machine, installing nothing: an end-to-end test whose tools
# are missing prints "SKIP name: tool missing" and counts as skipped.
check:
	@$(MAKE) --no-print-directory all tests
	@B=$(B) SANITIZE=$(SANITIZE) CHECK=1 T='$(T)' F='$(F)' sh test/run

# The exported symbols are pinned in test/exports.txt and test/exports-testing.txt, which
# test/check-exports.sh diffs against the built libraries. After a deliberate API change:
exports-update: lib
	sh test/check-exports.sh --update $(B)

# The table of canal's settings in docs/server.md is generated from lib/core/config.c;
# config_test fails when the two differ. This writes the generated one into the docs.
.PHONY: config-table
config-table: $(B)/test/config_test
	$(B)/test/config_test --markdown >$(B)/config-table.md
	awk -v t=$(B)/config-table.md '/^<!-- end of config-table -->/ { skip = 0 } !skip { print } \
	    /^<!-- config-table:/ { while ((getline l < t) > 0) print l; skip = 1 }' docs/server.md >$(B)/server.md
	mv $(B)/server.md docs/server.md

# The API reference. Doxygen is told to fail on any warning (docs/Doxyfile), an undocumented
# public symbol included; test/check-docs.sh runs it in make test too.
.PHONY: docs
docs:
	@rm -rf build/docs && mkdir -p build/docs
	doxygen docs/Doxyfile
	@echo "API reference: build/docs/html/index.html"

# libFuzzer targets (clang): each runs FUZZ_SECS seconds, then the known reproducers must pass
FUZZ_SECS ?= 60
fuzz: deps-test
	sh test/fuzz/build.sh run $(FUZZ_SECS)
	sh test/fuzz/build.sh replay

# nginx (docs/deploy/nginx-canal.conf) in front of two canal-demo instances, loaded by wrk
scaleout: deps-bench
	@$(MAKE) --no-print-directory all
	@B=$(B) sh test/scaleout/run.sh

# The unit tests under valgrind: a plain build only (sanitizers and valgrind do not mix)
valgrind: deps-test
	@test "$(SANITIZE)" = 0 || { echo "make valgrind: without SANITIZE"; exit 1; }
	@$(MAKE) --no-print-directory all tests
	sh test/valgrind.sh $(B)

# Load: SOAK_SECS (10) per run; fails on socket errors, non-2xx or RSS growth (bench/soak.sh)
soak: deps-bench
	@$(MAKE) --no-print-directory all
	B=$(B) sh bench/soak.sh

install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/canal $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 644 include/canal.h $(DESTDIR)$(INCLUDEDIR)/canal.h
	install -m 644 include/canal/*.h $(DESTDIR)$(INCLUDEDIR)/canal/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libcanal.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcanal.so
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(TESTING_SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libcanal-testing.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(TESTING_SONAME)
	ln -sf $(TESTING_SONAME) $(DESTDIR)$(LIBDIR)/libcanal-testing.so
	install -m 644 $(TESTING_STATIC) $(DESTDIR)$(LIBDIR)/
	@# written from the templates now: the prefix is the one given to make install, even
	@# when the library was built earlier with another (make && make install PREFIX=~/.local)
	for pc in canal canal-testing; do \
	    $(PC_SED) pkgconfig/$$pc.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc && \
	    chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc || exit 1; \
	done
	for t in $(TOOLS); do install -m 755 $$t $(DESTDIR)$(BINDIR)/; done
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 docs/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -d $(DESTDIR)$(SUPPDIR)
	install -m 644 test/lsan.supp test/tsan.supp test/valgrind.supp $(DESTDIR)$(SUPPDIR)/

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/canal.h
	rm -rf $(DESTDIR)$(INCLUDEDIR)/canal
	rm -f $(DESTDIR)$(LIBDIR)/libcanal.so $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/libcanal.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libcanal.a
	rm -f $(DESTDIR)$(LIBDIR)/libcanal-testing.so $(DESTDIR)$(LIBDIR)/$(TESTING_SONAME) \
	      $(DESTDIR)$(LIBDIR)/libcanal-testing.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libcanal-testing.a
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/canal.pc $(DESTDIR)$(PKGCONFIGDIR)/canal-testing.pc
	for t in $(notdir $(TOOLS)); do rm -f $(DESTDIR)$(BINDIR)/$$t; done
	for m in $(notdir $(wildcard docs/man/*.1)); do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done
	rm -f $(DESTDIR)$(SUPPDIR)/lsan.supp $(DESTDIR)$(SUPPDIR)/tsan.supp $(DESTDIR)$(SUPPDIR)/valgrind.supp
	-rmdir $(DESTDIR)$(SUPPDIR) 2>/dev/null

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
