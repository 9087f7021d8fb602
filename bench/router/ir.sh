#!/bin/sh
# SPDX-License-Identifier: MIT
# Instructions per lookup (valgrind callgrind), canal against libr3, on each table: each engine
# runs N1 and then N2 lookups; (Ir(N2) - Ir(N1)) / (N2 - N1) cancels the set-up. Repeatable,
# unlike ns on a shared machine.   sh bench/router/ir.sh [N1 N2]
set -eu
N1=${1:-20000}
N2=${2:-120000}
B=${B:-build/bench/router-bench}
# the binary from the sources as they are now (a stale one would measure an older router)
[ "$B" != build/bench/router-bench ] || make -s -C "$(dirname "$0")" >/dev/null
ir() {
    f=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$f" "$B" --profile "$1" --runs 1 --lookups "$2" >/dev/null 2>&1
    sed -n 's/^summary: //p' "$f"
    rm -f "$f"
}
printf '| table | canal instr/lookup | r3 instr/lookup | r3 reused entry | r3/canal |\n|---|---:|---:|---:|---:|\n'
for t in static github generated; do
    line="| $t"
    for e in canal r3 r3reuse; do
        a=$(ir "$e:$t" "$N1"); b=$(ir "$e:$t" "$N2")
        v=$(( (b - a) / (N2 - N1) ))
        eval "v_$e=$v"
        line="$line | $v"
    done
    printf '%s | %s |\n' "$line" "$(awk -v a="$v_r3" -v b="$v_canal" 'BEGIN{printf "%.2fx", a/b}')"
done
