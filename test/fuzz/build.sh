#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds canal's libFuzzer targets into build/fuzz/ with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs them:
#   test/fuzz/build.sh              build every target
#   test/fuzz/build.sh run [SECS]   build, then run each target for SECS seconds (default 60),
#                                   one after the other, on a working corpus build/fuzz/corpus/NAME
#                                   seeded from test/fuzz/corpus/NAME, with its dictionary; one
#                                   summary line per target; exits 1 if any found something
#   test/fuzz/build.sh replay       run every reproducer in test/fuzz/crashes/ (TARGET-N) through
#                                   its target, strictly; exits 1 while any still fails
# FUZZ_TARGETS="json link" limits either to some targets.
#
# The targets:
#   template  route templates (router only)             match    matching (router only)
#   link      link generation and its round trip        json     canal__json_write and canal_jw_t vs jansson
#   binding   whole requests through the in-process server: binding, validation, statuses
#   query     the query string through the in-process server, against a reference parser
#   proxy     trusted proxy lists and the X-Forwarded-For / Forwarded walk (lib/core/proxy.c)
#   ws        canal's WebSocket frame scan and UTF-8 check (lib/realtime/ws_frame.c), whole vs chunked
#   cookie    the Cookie field parser and the signed-value verifier (lib/models/cookie.c, signed.c)
#   acclog    the access log's CLF and JSON line formatters (lib/observability/acclog_line.c) on hostile bytes
#   form      the urlencoded form iterator against a reference decoder (lib/models/form.c)
#   multipart the multipart/form-data reader: any body, and a round trip of parts (lib/models/form.c)
#   model     a struct written by its schema against jansson's dump of the same object (schema.c)
#   trace     the traceparent and tracestate parsers (lib/core/trace.c)
#   jwt       the JWT verifier and the base64 decoders (lib/security/jwt.c)
#   authz     the Authorization field parsers: scheme split, Bearer b64token, Basic's base64 and
#             colon split, the API key's trim (lib/security/auth.c)
#   view      the Mustache compiler and renderer, and {{x}}'s escaping (lib/views/mustache.c)
# binding and query start the app on 127.0.0.1 and an ephemeral port. They run with
# LSAN_OPTIONS=suppressions=test/lsan.supp: libh2o's per-thread free lists look leaked once
# the worker thread has ended.
#
# Known findings (reproducers in test/fuzz/crashes/) are skipped while fuzzing
# (CANAL_FUZZ_SKIP_KNOWN=1, unless set otherwise) so that a run looks for new ones; replay
# checks them.
# A crash leaves its input in build/fuzz/artifacts/ (NAME-crash-*, -leak-*, -timeout-*) and the
# whole output in build/fuzz/NAME.log; replay one with build/fuzz/fuzz_NAME FILE.
set -eu
cd "$(dirname "$0")/../.."
CLANG=${CLANG:-clang}
OUT=build/fuzz
ALL="template match link json binding query proxy ws cookie jwt acclog form multipart trace authz model view"
TARGETS=${FUZZ_TARGETS:-$ALL}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Iinclude -Ilib"
DEP_CFLAGS="$(pkg-config --cflags libh2o-evloop jansson libpq sqlite3) -DH2O_USE_LIBUV=0"
# the router's regex constraints (and the match oracle) use PCRE2
PCRE2_CFLAGS="$(pkg-config --cflags libpcre2-8)"
PCRE2_LIBS="$(pkg-config --libs libpcre2-8)"
DEP_LIBS="$(pkg-config --libs libh2o-evloop jansson libargon2 libpq sqlite3) $PCRE2_LIBS -lwslay -lhiredis -lssl -lcrypto -lpthread -lm"
mkdir -p "$OUT/obj" "$OUT/artifacts"

# The library, instrumented for the fuzzers once: router and common code without h2o or
# jansson flags (as in the Makefile), the server and the controller layer with them.
compile() { # SRC
    o="$OUT/obj/$(echo "$1" | tr / _ | sed 's/\.c$/.o/')"
    case $1 in
    lib/common/*) extra= ;;
    lib/router/*) extra=$PCRE2_CFLAGS ;;
    *) extra=$DEP_CFLAGS ;;
    esac
    # shellcheck disable=SC2086
    "$CLANG" $CFLAGS $extra $SAN -fsanitize=fuzzer-no-link -c "$1" -o "$o" || exit 1
    echo "$o"
}
ROUTER_OBJ=
LIB_OBJ=
need_lib=0
for t in $TARGETS; do
    case $t in binding | query | proxy | cookie | form | multipart | trace | authz | model | view) need_lib=1 ;; esac
done
for src in lib/common/*.c lib/router/*.c; do
    ROUTER_OBJ="$ROUTER_OBJ $(compile "$src")"
done
LIB_OBJ=$ROUTER_OBJ
if [ "$need_lib" = 1 ]; then
    # every folder of the server (the Makefile's SERVER_DIRS) and the controller layer
    for src in lib/core/*.c lib/models/*.c lib/redis/*.c lib/security/*.c lib/db/*.c lib/files/*.c lib/realtime/*.c \
               lib/observability/*.c lib/views/*.c lib/cache/*.c lib/openapi/*.c lib/app/*.c lib/controller/*.c; do
        LIB_OBJ="$LIB_OBJ $(compile "$src")"
    done
fi

for t in $TARGETS; do
    case $t in
    template | match | link)
        # shellcheck disable=SC2086
        "$CLANG" $CFLAGS $PCRE2_CFLAGS $SAN -fsanitize=fuzzer "test/fuzz/fuzz_$t.c" $ROUTER_OBJ $PCRE2_LIBS -o "$OUT/fuzz_$t" ;;
    jwt)
        # jwt.c alone, with the error helpers and the keyed HMAC (signed.c)
        # shellcheck disable=SC2086
        "$CLANG" $CFLAGS $DEP_CFLAGS $SAN -fsanitize=fuzzer test/fuzz/fuzz_jwt.c lib/security/jwt.c lib/models/signed.c \
            lib/common/error.c lib/common/text.c \
            $DEP_LIBS -o "$OUT/fuzz_jwt" ;;
    json)
        # json.c and the common text helpers it uses; its pool allocations are wrapped (see
        # fuzz_json.c)
        # shellcheck disable=SC2086
        "$CLANG" $CFLAGS $DEP_CFLAGS $SAN -fsanitize=fuzzer test/fuzz/fuzz_json.c lib/core/json.c lib/common/text.c \
            -Wl,--wrap=h2o_mem_alloc_pool $DEP_LIBS -o "$OUT/fuzz_json" ;;
    ws)
        # ws_frame.c and the router's values.c (canal_utf8_valid): libc only
        # shellcheck disable=SC2086
        "$CLANG" $CFLAGS $SAN -fsanitize=fuzzer test/fuzz/fuzz_ws.c lib/realtime/ws_frame.c lib/router/values.c -o "$OUT/fuzz_ws" ;;
    acclog)
        # acclog_line.c and the router's values.c (canal_utf8_valid), jansson to read the JSON
        # shellcheck disable=SC2086
        "$CLANG" $CFLAGS $DEP_CFLAGS $SAN -fsanitize=fuzzer test/fuzz/fuzz_acclog.c lib/observability/acclog_line.c \
            lib/router/values.c $DEP_LIBS -o "$OUT/fuzz_acclog" ;;
    binding | query | proxy | cookie | form | multipart | trace | authz | model | view)
        # shellcheck disable=SC2086
        "$CLANG" $CFLAGS $DEP_CFLAGS $SAN -fsanitize=fuzzer "test/fuzz/fuzz_$t.c" $LIB_OBJ $DEP_LIBS \
            -o "$OUT/fuzz_$t" ;;
    *)
        echo "unknown fuzz target '$t' (known: $ALL)" >&2
        exit 2 ;;
    esac
    echo "built $OUT/fuzz_$t"
done

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
LSAN_OPTIONS="suppressions=$(pwd)/test/lsan.supp:print_suppressions=0"
export LSAN_OPTIONS

# libFuzzer flags per target: dictionary and limits
flags_of() {
    case $1 in
    template | match) echo "-dict=test/fuzz/router.dict" ;;
    link) echo "-dict=test/fuzz/link.dict" ;;
    json) echo "-dict=test/fuzz/json.dict" ;;
    binding) echo "-dict=test/fuzz/binding.dict -max_len=8192 -timeout=30" ;;
    query) echo "-dict=test/fuzz/query.dict -max_len=4096 -timeout=30" ;;
    proxy) echo "-dict=test/fuzz/proxy.dict -max_len=2048" ;;
    ws) echo "-dict=test/fuzz/ws.dict -max_len=8192" ;;
    cookie) echo "-dict=test/fuzz/cookie.dict -max_len=4096" ;;
    jwt) echo "-dict=test/fuzz/jwt.dict -max_len=8192" ;;
    acclog) echo "-dict=test/fuzz/acclog.dict -max_len=4096" ;;
    form) echo "-dict=test/fuzz/form.dict -max_len=4096" ;;
    multipart) echo "-dict=test/fuzz/multipart.dict -max_len=16384" ;;
    model) echo "-max_len=2048" ;;
    trace) echo "-dict=test/fuzz/trace.dict -max_len=1024" ;;
    authz) echo "-dict=test/fuzz/authz.dict -max_len=4096" ;;
    view) echo "-dict=test/fuzz/view.dict -max_len=4096" ;;
    esac
}

count() { # DIR [PREFIX]: the files in DIR (whose names start with PREFIX)
    find "$1" -maxdepth 1 -type f -name "${2:-}*" | wc -l
}

case ${1:-} in
run)
    secs=${2:-60}
    summary=
    status=0
    for t in $TARGETS; do
        mkdir -p "$OUT/corpus/$t"
        before=$(count "$OUT/artifacts" "$t-")
        start=$(date +%s)
        set +e
        # shellcheck disable=SC2046
        CANAL_FUZZ_SKIP_KNOWN=${CANAL_FUZZ_SKIP_KNOWN:-1} "./$OUT/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 \
            -artifact_prefix="$OUT/artifacts/$t-" $(flags_of "$t") \
            "$OUT/corpus/$t" "test/fuzz/corpus/$t" >"$OUT/$t.log" 2>&1
        rc=$?
        set -e
        end=$(date +%s)
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$t.log" | tail -n 1)
        after=$(count "$OUT/artifacts" "$t-")
        found=$((after - before))
        if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then
            found=1 # it stopped on something that left no file: see the log
        fi
        if [ "$found" -ne 0 ]; then
            status=1
            echo "== fuzz_$t stopped (exit $rc); the end of $OUT/$t.log:"
            grep -v '^#[0-9]' "$OUT/$t.log" | tail -n 40
        fi
        line=$(printf 'fuzz %-9s %10s execs %6ss corpus %6s crashes %s' "$t" "${execs:-?}" \
            "$((end - start))" "$(count "$OUT/corpus/$t")" "$found")
        echo "$line"
        summary="$summary$line
"
    done
    echo "== summary"
    printf '%s' "$summary"
    exit $status
    ;;
replay)
    status=0
    for f in test/fuzz/crashes/*; do
        [ -f "$f" ] || continue
        t=$(basename "$f")
        t=${t%-*}
        case " $TARGETS " in *" $t "*) ;; *) continue ;; esac
        if CANAL_FUZZ_SKIP_KNOWN=0 "./$OUT/fuzz_$t" "$f" >"$OUT/replay.log" 2>&1; then
            echo "fixed:       $f"
        else
            echo "reproduces:  $f ($(grep -m 1 -E 'invariant failed|different bytes|refuses|^link |^GET / with|ERROR: [A-Z]' "$OUT/replay.log" || echo 'see the log'))"
            status=1
        fi
    done
    exit $status
    ;;
"") ;;
*)
    echo "usage: $0 [run [SECS] | replay]" >&2
    exit 2
    ;;
esac
