#!/bin/sh
# SPDX-License-Identifier: MIT
# What the operations features cost per request: instructions per request (callgrind, through
# bench/instructions.sh) of canal-demo in router mode with everything off, with the static
# folder mounted, with metrics too, and as the demo ships (static, metrics, gzip, CORS).
# BEFORE=path/to/an/older/canal-demo adds a column for that binary (the same endpoints, no
# flags), to compare with the code before the features existed.
#
#   sh bench/ops.sh [N1 N2]        needs valgrind, h2load
set -eu
export PATHS="${PATHS:-/home/plaintext /home/json}" MODES=router
# each table goes to stderr too, so a run is never lost
off=$(DEMO_ARGS="--metrics off --compress off --cors off --static-dir off" sh bench/instructions.sh "$@")
static=$(DEMO_ARGS="--metrics off --compress off --cors off" sh bench/instructions.sh "$@")
metrics=$(DEMO_ARGS="--metrics on --compress off --cors off" sh bench/instructions.sh "$@")
all=$(DEMO_ARGS="" sh bench/instructions.sh "$@")
printf 'off:\n%s\nstatic:\n%s\nmetrics:\n%s\nall:\n%s\n' "$off" "$static" "$metrics" "$all" >&2
before=""
if [ -n "${BEFORE:-}" ]; then before=$(BIN="$BEFORE" DEMO_ARGS="" sh bench/instructions.sh "$@"); fi
# the number in the row of endpoint $2 of table $1
val() { printf '%s\n' "$1" | awk -F'|' -v p="\`$2\`" '{ gsub(/ /, "", $2); gsub(/ /, "", $3) } $2 == p { print $3 }'; }
printf '| endpoint |%s all off | static mounted | + metrics | + gzip + CORS (demo default) |\n' "${BEFORE:+ before |}"
printf '|---|%s---:|---:|---:|---:|\n' "${BEFORE:+---:|}"
for p in $PATHS; do
    printf '| `%s` |%s %s | %s | %s | %s |\n' "$p" "${BEFORE:+ $(val "$before" "$p") |}" "$(val "$off" "$p")" \
        "$(val "$static" "$p")" "$(val "$metrics" "$p")" "$(val "$all" "$p")"
done
