#!/bin/sh
# SPDX-License-Identifier: MIT
# make valgrind: every unit test in $B/test under valgrind's memcheck with --leak-check=full;
# any error or leak (definite, indirect or possible) fails. Suppressed: libh2o's per-thread
# free lists only (test/valgrind.supp says why). The tests that count allocations with their
# own malloc skip themselves here (valgrind's allocator replaces theirs).
# Ends with "N passed, N failed" like test/run.
B=${1:-build}
passed=0
failed=0
command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed (sh .ci/install-deps)"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$B"/test/*_test; do
    [ -x "$t" ] || continue
    echo "== valgrind $t"
    # PCRE2's JIT code (route regexes, schema patterns) is opaque to memcheck, which takes its
    # stack reads for uninitialised ones: the interpreter runs here instead (CANAL_NO_JIT)
    CANAL_NO_JIT=1 timeout 1200 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
        --show-leak-kinds=definite,indirect,possible --error-exitcode=99 \
        --suppressions=test/valgrind.supp "$t" >"$log" 2>&1
    rc=$?
    grep -E '^\[ +(PASSED|FAILED|SKIPPED|ERROR|LINE) +\]|^==[0-9]+==' "$log" | head -n 60
    if [ "$rc" -eq 0 ]; then
        echo "ok - valgrind $t"
        passed=$((passed + 1))
    else
        echo "not ok - valgrind $t (exit $rc: 99 is a valgrind error or leak)"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
