#!/bin/sh
# SPDX-License-Identifier: MIT
# Only canal's public API leaves the library: every dynamic symbol libcanal.so defines starts
# with canal_, and every global symbol of libcanal.a starts with canal_ (canal__ for internals
# shared between files).
B=${1:-build}
so=$(ls "$B"/lib/libcanal.so.*.*.* 2>/dev/null | head -n 1)
if [ -z "$so" ]; then
    echo "not ok - $B/lib/libcanal.so.* exists"
    exit 0
fi
bad=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^canal_' | grep -v '^_init$\|^_fini$')
if [ -z "$bad" ]; then echo "ok - every exported symbol of $so starts with canal_"; else echo "not ok - exported without the canal_ prefix: $bad"; fi
n=$(nm -D --defined-only "$so" | grep -c ' T canal_')
if [ "$n" -gt 50 ]; then echo "ok - $n functions exported"; else echo "not ok - only $n functions exported"; fi
bad=$(nm -g --defined-only "$B/lib/libcanal.a" | awk 'NF == 3 {print $3}' | grep -v '^canal_')
if [ -z "$bad" ]; then echo "ok - every global symbol of libcanal.a starts with canal_"; else echo "not ok - global without the canal_ prefix in libcanal.a: $bad"; fi
internal=$(nm -D --defined-only "$so" | awk '{print $3}' | grep '^canal__')
if [ -z "$internal" ]; then echo "ok - no canal__ internal is exported"; else echo "not ok - internals exported: $internal"; fi
soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
if [ "$soname" = "libcanal.so.0" ]; then echo "ok - SONAME libcanal.so.0"; else echo "not ok - SONAME is [$soname]"; fi
