#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/acclog-writes.sh: requests per write() of canal's access log under load (issue 19's
# goal: at least 50). canal-demo in router mode with its access log on (CLF, to a file:
# bench/servers.sh's canal-acclog) runs under strace, which records every write(); wrk loads
# /home/plaintext; after a graceful stop (SIGTERM: the last buffers are written too) the lines
# in the log are divided by the write() calls made on the log's descriptor.
#
#   bench/acclog-writes.sh [--secs 5] [--conns 64] [--threads 2] [--port 18290]
#
# strace slows every system call down, so the server answers fewer requests than it would
# without it; the count of lines per write() is what is measured, not the rate. Prints one
# line, "requests N writes W requests/write R", and fails if R < 50.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOP/build/bench
# shellcheck source=bench/servers.sh
. "$TOP/bench/servers.sh"

SECS=5
CONNS=64
THREADS=2
PORT=18290
while [ $# -gt 0 ]; do
    case $1 in
    --secs) SECS=$2; shift ;;
    --conns) CONNS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --port) PORT=$2; shift ;;
    -h | --help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "acclog-writes: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
for tool in strace wrk; do
    command -v "$tool" >/dev/null 2>&1 || { echo "acclog-writes: $tool is not installed (sh .ci/install-deps bench)" >&2; exit 1; }
done
[ -x "$TOP/build/bin/canal-demo" ] || make -C "$TOP" -j2 all >/dev/null

TMP=$(mktemp -d "${TMPDIR:-/tmp}/canal-acclog-writes.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
LOG=$OUT/access-$PORT.log
rm -f "$LOG"
mkdir -p "$OUT"
start_server canal-acclog "$PORT" "$THREADS" strace -f -qq -e trace=write -e signal=none -o "$TMP/strace.out"
demo=$(pgrep -P "$SERVER_PID" | head -n 1)
fd=""
for f in /proc/"$demo"/fd/*; do
    [ "$(readlink "$f")" = "$LOG" ] && fd=${f##*/}
done
[ -n "$fd" ] || { stop_server "$SERVER_PID"; echo "acclog-writes: the server has no descriptor on $LOG" >&2; exit 1; }
wrk -t 2 -c "$CONNS" -d "${SECS}s" "http://127.0.0.1:$PORT/home/plaintext" >"$TMP/wrk.out" 2>&1 || true
stop_server "$SERVER_PID"

requests=$(wc -l <"$LOG" | tr -d ' ')
writes=$(grep -c "write($fd, " "$TMP/strace.out" || true)
rm -f "$LOG"
[ "$writes" -gt 0 ] || { echo "acclog-writes: no write() to the log (requests $requests)" >&2; exit 1; }
per=$((requests / writes))
echo "requests $requests writes $writes requests/write $per (wrk $CONNS connections, $SECS s, $THREADS workers)"
[ "$per" -ge 50 ] || { echo "acclog-writes: below the goal of 50 requests per write()" >&2; exit 1; }
