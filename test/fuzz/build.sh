#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the router's libFuzzer targets into build/fuzz/ with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer:
#   test/fuzz/build.sh              build fuzz_template and fuzz_match
#   test/fuzz/build.sh run [SECS]   build, then run each for SECS seconds (default 60) on a
#                                   working corpus in build/fuzz/corpus/NAME, seeded from
#                                   test/fuzz/corpus/NAME, with test/fuzz/router.dict
# A crash leaves its input in build/fuzz/ (crash-*, leak-*, timeout-*); replay one with
#   build/fuzz/fuzz_match build/fuzz/crash-...
set -eu
cd "$(dirname "$0")/../.."
CLANG=${CLANG:-clang}
OUT=build/fuzz
mkdir -p "$OUT"
for t in template match; do
    "$CLANG" -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -Iinclude lib/common/*.c lib/router/*.c "test/fuzz/fuzz_$t.c" -o "$OUT/fuzz_$t"
    echo "built $OUT/fuzz_$t"
done
if [ "${1:-}" = run ]; then
    secs=${2:-60}
    for t in template match; do
        mkdir -p "$OUT/corpus/$t"
        (cd "$OUT" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "./fuzz_$t" \
            -max_total_time="$secs" -dict=../../test/fuzz/router.dict -print_final_stats=1 \
            "corpus/$t" "../../test/fuzz/corpus/$t")
    done
fi
