#!/bin/sh
# SPDX-License-Identifier: MIT
# Soak test (make soak): wrk against the demo (router mode, 2 workers) at 200, 1,000 and
# 10,000 connections, SOAK_SECS seconds each (10), the whole series twice on one server.
# For each run it reports requests/s, socket errors, non-2xx answers and the server's RSS
# before and after. It fails on any socket error or non-2xx answer, and when the RSS after
# the second series is more than SOAK_RSS_PCT percent (10) plus 4 MiB above the RSS after the
# first: memory that keeps growing under the same load is a leak or an unbounded cache.
#
#   B=build SOAK_SECS=10 SOAK_CONNS="200 1000 10000" SOAK_PATH=/home/json sh bench/soak.sh
set -u
B=${B:-build}
SECS=${SOAK_SECS:-10}
CONNS=${SOAK_CONNS:-"200 1000 10000"}
URLPATH=${SOAK_PATH:-/home/json}
PCT=${SOAK_RSS_PCT:-10}
DEMO=$B/bin/canal-demo

command -v wrk >/dev/null 2>&1 || { echo "soak: wrk is not installed (sh .ci/install-deps)"; exit 1; }
[ -x "$DEMO" ] || { echo "soak: $DEMO is missing (make)"; exit 1; }
# 10,000 connections need as many descriptors in wrk and in the server (each its own process),
# plus a few of their own
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 10100 ]; then
    echo "soak: cannot raise the descriptor limit to 10,100 (have $(ulimit -n), hard $(ulimit -Hn))"
    exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/canal-soak.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT

"$DEMO" --mode router --threads 2 --port 0 --access-log off >"$TMP/demo.out" 2>"$TMP/demo.err" &
PID=$!
PORT=""
i=0
while [ -z "$PORT" ] && [ $i -lt 200 ]; do
    PORT=$(sed -n 's|.*listening on http://[^ ]*:\([0-9][0-9]*\).*|\1|p' "$TMP/demo.err" | head -n 1)
    sleep 0.05
    i=$((i + 1))
done
[ -n "$PORT" ] || { echo "soak: the demo did not start"; cat "$TMP/demo.err"; exit 1; }

rss_kib() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\) kB/\1/p' "/proc/$PID/status"; }

failed=0
printf '%-6s %-7s %12s %8s %8s %10s %10s\n' series conns "req/s" errors non2xx "RSS before" "RSS after"
for series in 1 2; do
    for c in $CONNS; do
        before=$(rss_kib)
        wrk -t 2 -c "$c" -d "${SECS}s" --timeout 10s "http://127.0.0.1:$PORT$URLPATH" >"$TMP/wrk" 2>&1
        after=$(rss_kib)
        rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$TMP/wrk")
        errs=$(sed -n 's/.*Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1+\2+\3+\4/p' "$TMP/wrk")
        non2xx=$(sed -n 's/.*Non-2xx or 3xx responses: \([0-9]*\).*/\1/p' "$TMP/wrk")
        nerr=$((${errs:-0}))
        printf '%-6s %-7s %12s %8s %8s %7s MiB %7s MiB\n' "$series" "$c" "${rps:-?}" "$nerr" "${non2xx:-0}" \
            $((before / 1024)) $((after / 1024))
        if [ -z "$rps" ] || [ "$nerr" -ne 0 ] || [ "${non2xx:-0}" -ne 0 ]; then
            echo "soak: FAIL at $c connections (series $series): socket errors ${errs:-?}, non-2xx ${non2xx:-0}"
            sed 's/^/    /' "$TMP/wrk"
            failed=1
        fi
        if ! kill -0 "$PID" 2>/dev/null; then
            echo "soak: FAIL: the server died"
            exit 1
        fi
    done
    eval "rss_$series=\$after"
done

limit=$((rss_1 + rss_1 * PCT / 100 + 4096))
echo "RSS after series 1: $rss_1 KiB; after series 2: $rss_2 KiB; allowed: $limit KiB"
if [ "$rss_2" -gt "$limit" ]; then
    echo "soak: FAIL: RSS grew from $rss_1 KiB to $rss_2 KiB under the same load"
    failed=1
fi

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=""
if [ "$rc" -ne 0 ]; then
    echo "soak: FAIL: the demo exited $rc on SIGTERM"
    tail -n 20 "$TMP/demo.err"
    failed=1
fi
[ "$failed" -eq 0 ] && echo "soak: passed"
exit "$failed"
