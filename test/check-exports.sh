#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: nm objdump
# Only canal's public API leaves the library: every dynamic symbol libcanal.so defines starts
# with canal_, and every global symbol of libcanal.a starts with canal_ (canal__ for internals
# shared between files). The test client's libcanal-testing.so exports canal_test_* only.
#
# The exports are pinned, as jansson pins its own in src/jansson.def: the sorted
# `nm -D --defined-only` (type and name) of libcanal.so is committed in test/exports.txt and
# that of libcanal-testing.so in test/exports-testing.txt. Any difference fails, with the
# diff. After a deliberate change of the API, `make exports-update` (this script with
# --update) rewrites both lists; commit them with the change.
#
# Under AddressSanitizer (SANITIZE=1) every exported variable (the route option kinds) gets an
# ODR indicator, __odr_asan.NAME, beside it: instrumentation, not API, left out here.
#
#   sh test/check-exports.sh [--update] [B]      B: the build directory (build)
update=0
if [ "${1:-}" = "--update" ]; then
    update=1
    shift
fi
B=${1:-build}
so=$(ls "$B"/lib/libcanal.so.*.*.* 2>/dev/null | head -n 1)
testing_so=$(ls "$B"/lib/libcanal-testing.so.*.*.* 2>/dev/null | head -n 1)
if [ -z "$so" ] || [ -z "$testing_so" ]; then
    echo "not ok - $B/lib/libcanal.so.* and $B/lib/libcanal-testing.so.* exist (make lib)"
    exit 0
fi

# defined SO...: its defined dynamic symbols ("ADDRESS TYPE NAME"), ASan's indicators left out
defined() {
    nm -D --defined-only "$@" | awk '$3 !~ /^__odr_asan\./'
}

# exports SO: its defined dynamic symbols, "TYPE NAME" a line, sorted
exports() {
    defined "$1" | awk 'NF == 3 && $3 != "_init" && $3 != "_fini" {print $2, $3}' | LC_ALL=C sort
}

if [ "$update" = 1 ]; then
    exports "$so" >test/exports.txt
    exports "$testing_so" >test/exports-testing.txt
    echo "test/exports.txt: $(wc -l <test/exports.txt) symbols of $so"
    echo "test/exports-testing.txt: $(wc -l <test/exports-testing.txt) symbols of $testing_so"
    exit 0
fi

# pinned LIST SO: the exports of SO are those listed in LIST
pinned() {
    out=$(exports "$2" | diff -u "$1" - | tail -n +3)
    if [ -z "$out" ]; then
        echo "ok - the $(wc -l <"$1") exports of $2 are those of $1"
    else
        echo "not ok - the exports of $2 differ from $1 (- pinned, + built; make exports-update rewrites it):"
        printf '%s\n' "$out" | sed 's/^/#   /'
    fi
}
pinned test/exports.txt "$so"
pinned test/exports-testing.txt "$testing_so"

bad=$(defined "$so" | awk '{print $3}' | grep -v '^canal_' | grep -v '^_init$\|^_fini$')
if [ -z "$bad" ]; then echo "ok - every exported symbol of $so starts with canal_"; else echo "not ok - exported without the canal_ prefix: $bad"; fi
bad=$(defined "$testing_so" | awk '{print $3}' | grep -v '^canal_test_' | grep -v '^_init$\|^_fini$')
if [ -z "$bad" ]; then echo "ok - every exported symbol of $testing_so starts with canal_test_"; else echo "not ok - exported by the test client without canal_test_: $bad"; fi
bad=$(nm -D --defined-only "$so" | awk '{print $3}' | grep '^canal_test_')
if [ -z "$bad" ]; then echo "ok - the test client is not in $so"; else echo "not ok - $so exports the test client: $bad"; fi
bad=$(nm -g --defined-only "$B/lib/libcanal.a" "$B/lib/libcanal-testing.a" | awk 'NF == 3 && $3 !~ /^__odr_asan\./ {print $3}' |
    grep -v '^canal_')
if [ -z "$bad" ]; then echo "ok - every global symbol of libcanal.a and libcanal-testing.a starts with canal_"; else echo "not ok - global without the canal_ prefix in a static library: $bad"; fi
internal=$(nm -D --defined-only "$so" "$testing_so" | awk '{print $3}' | grep '^canal__')
if [ -z "$internal" ]; then echo "ok - no canal__ internal is exported"; else echo "not ok - internals exported: $internal"; fi
for f in "$so:libcanal.so.0" "$testing_so:libcanal-testing.so.0"; do
    soname=$(objdump -p "${f%%:*}" | awk '/SONAME/ {print $2}')
    if [ "$soname" = "${f#*:}" ]; then echo "ok - SONAME ${f#*:}"; else echo "not ok - SONAME of ${f%%:*} is [$soname]"; fi
done
