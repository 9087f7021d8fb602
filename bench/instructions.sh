#!/bin/sh
# SPDX-License-Identifier: MIT
# User-space instructions per request of canal-demo in router and controller mode, counted by
# valgrind's callgrind (repeatable to a fraction of a percent, unlike req/s on a shared machine).
# Each endpoint is loaded twice (N1 and N2 requests, h2load --h1, 10 connections) and the
# difference divided by N2 - N1, so start-up and shutdown cancel out.
#
# The demo's request IDs are off, as in bench/run (the peers send none); EXTRA="--request-id on"
# counts them.
#
#   sh bench/instructions.sh [N1 N2]     (default 2000 12000)   needs valgrind, h2load
# Environment: BIN (the demo binary), DEMO_ARGS (more flags for it, e.g. "--metrics off"),
# PATHS (the endpoints, space-separated), MODES ("router controller").
set -euf
N1=${1:-2000}
N2=${2:-12000}
BIN=${BIN:-build/bin/canal-demo}
EXTRA=${EXTRA:-}
OUT=${OUT:-build/bench}
mkdir -p "$OUT"
for t in valgrind h2load; do command -v $t >/dev/null || { echo "bench/instructions.sh: $t is missing (make deps)" >&2; exit 1; }; done

count() { # mode path n -> Ir
    log="$OUT/cg.$$.log"
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$$.out" "$BIN" --mode "$1" --threads 1 --port 0 \
        --access-log off --request-id off $EXTRA ${DEMO_ARGS:-} 2>"$log" &
    pid=$!
    port=""
    while [ -z "$port" ]; do
        sleep 0.2
        port=$(sed -n 's|.*listening on http://[^ ]*:\([0-9][0-9]*\).*|\1|p' "$log" | head -n 1)
    done
    h2load --h1 -n "$3" -c 10 "http://127.0.0.1:$port$2" >"$OUT/h2load.$$.log" 2>&1
    grep -q "succeeded, 0 failed" "$OUT/h2load.$$.log" || echo "warning: failed requests: $(grep 'requests:' "$OUT/h2load.$$.log")" >&2
    kill -TERM $pid
    wait $pid || true
    sed -n 's/^summary: //p' "$OUT/cg.$$.out"
    rm -f "$OUT/cg.$$.out" "$log" "$OUT/h2load.$$.log"
}

PATHS=${PATHS:-/home/plaintext /home/json /home/employee/3 /home/orders/3?index=0&size=5 /api/woo}
MODES=${MODES:-router controller}
if [ "$MODES" = "router controller" ]; then
    printf '| endpoint | router mode (instr/req) | controller mode (instr/req) | controller/router |\n'
    printf '|---|---:|---:|---:|\n'
else
    printf '| endpoint | %s mode (instr/req) |\n|---|---:|\n' "$MODES"
fi
for path in $PATHS; do
    if [ "$MODES" != "router controller" ]; then
        a=$(count "$MODES" "$path" "$N1"); b=$(count "$MODES" "$path" "$N2")
        printf '| `%s` | %d |\n' "$path" $(( (b - a) / (N2 - N1) ))
        continue
    fi
    r1=$(count router "$path" "$N1"); r2=$(count router "$path" "$N2")
    c1=$(count controller "$path" "$N1"); c2=$(count controller "$path" "$N2")
    r=$(( (r2 - r1) / (N2 - N1) )); c=$(( (c2 - c1) / (N2 - N1) ))
    printf '| `%s` | %d | %d | %s |\n' "$path" "$r" "$c" "$(awk -v a="$c" -v b="$r" 'BEGIN{printf "%.3f", a/b}')"
done
