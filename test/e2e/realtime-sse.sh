#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 gunzip
# Streamed answers and server-sent events: examples/realtime's GET /sse/ticks held to the
# contract of issue 16 (framing over HTTP/1.1, HTTP/1.0 and HTTP/2, the event format,
# Last-Event-ID, the 400s, keep-alive comments, loose timing, clients that leave, 50 streams
# at once), then canal-streamapp for the rest of canal/stream.h: backpressure against a client
# that stops reading (the writer is refused, the server's memory stays flat, others are
# served), the idle limit, borrowed writes, NDJSON and JSON arrays, writes posted from another
# thread, a controller action's stream, gzip, and graceful shutdown with streams open.
# Timing checks are loose on purpose (a loaded 2-core machine, sanitizers).
. test/e2e-lib.sh

PY="python3 test/e2e/sse_client.py"

start rt "$BIN/canal-realtime" --threads 2 || exit 0
P=$PORT

# ---- framing ----
out=$($PY $P chunked "/sse/ticks?count=3&interval_ms=50")
check "HTTP/1.1: valid chunked framing ending with the last-chunk, no Content-Length" \
    "status 200 te chunked cl None events 3" "$(echo "$out" | head -n 1)"
check "HTTP/1.1: the connection serves the next request after the stream" "reused 200 1" "$(echo "$out" | tail -n 1)"
check "HTTP/1.0: close-delimited, never chunked" "status 200 te None cl None connection close events 2" \
    "$($PY $P http10 "/sse/ticks?count=2&interval_ms=10")"
h2=$(curl -s --http2-prior-knowledge -D "$TMP/h2.h" "$URL/sse/ticks?count=2&interval_ms=10")
check "HTTP/2: the events in DATA frames" 2 "$(printf '%s\n' "$h2" | grep -c '^data: ')"
check "HTTP/2: the answer was HTTP/2" "HTTP/2 200" "$(head -n 1 "$TMP/h2.h" | tr -d '\r' | sed 's/ *$//')"
check "HTTP/2: no Content-Length" "" "$(grep -i '^content-length' "$TMP/h2.h")"

# ---- the events ----
out=$($PY $P events "/sse/ticks?count=3&interval_ms=0")
check "event stream headers" "status 200 type text/event-stream cache no-cache" "$(echo "$out" | head -n 1)"
check "events 1..3 with id, type tick and JSON data" '1 tick {"i":1}|2 tick {"i":2}|3 tick {"i":3}' \
    "$(echo "$out" | sed -n '2,4p' | paste -sd '|')"
check "raw event format" "$(printf 'id: 1\nevent: tick\ndata: {"i":1}\n')" \
    "$(curl -s "$URL/sse/ticks?count=1&interval_ms=0" | head -n 3)"
check "default count is 10" 10 "$(curl -s "$URL/sse/ticks?interval_ms=0" | grep -c '^data: ')"
check "Last-Event-ID: 7 resumes at 8" "8 9 10" \
    "$($PY $P events "/sse/ticks?count=10&interval_ms=0" 7 | sed -n '2,4p' | cut -d' ' -f1 | paste -sd ' ')"
check "Last-Event-ID that is not a decimal integer is ignored" 1 \
    "$($PY $P events "/sse/ticks?count=2&interval_ms=0" "-3" | sed -n '2p' | cut -d' ' -f1)"
check "Last-Event-ID past N: 200 with an empty stream" "status 200 type text/event-stream cache no-cache|comments 0" \
    "$($PY $P events "/sse/ticks?count=3&interval_ms=0" 3 | paste -sd '|')"
check "count=0: 200 with an empty stream" "" "$(curl -s "$URL/sse/ticks?count=0")"
check "HEAD: the head only" "200 0" "$(curl -s -I -o /dev/null -w '%{http_code} %{size_download}' "$URL/sse/ticks?count=3")"

# ---- bad parameters ----
for q in count=-1 count=10001 count=abc count= count=1.5 interval_ms=60001 interval_ms=-5 interval_ms=x \
    "count=1&count=2"; do
    check "400 for $q" "400 application/problem+json" \
        "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$URL/sse/ticks?$q")"
done
check "count=10000 and interval_ms=60000 are in range" 200 \
    "$(curl -s -o /dev/null -w '%{http_code}' -H 'Last-Event-ID: 10000' "$URL/sse/ticks?count=10000&interval_ms=60000")"

# ---- timing (loose: -40 % / +1 s) and keep-alive comments ----
t=$($PY $P timing "/sse/ticks?count=3&interval_ms=500" | paste -sd ' ')
check "three events timed ($t)" yes "$(echo "$t" | awk '{ok = NF == 3 && $1 < 1.0 && $2 - $1 >= 0.3 && $2 - $1 <= 1.5 &&
    $3 - $2 >= 0.3 && $3 - $2 <= 1.5; print ok ? "yes" : "no"}')"
out=$($PY $P events "/sse/ticks?count=2&interval_ms=2600")
c=$(echo "$out" | tail -n 1 | cut -d' ' -f2)
check "keep-alive comments while nothing is written for 1000 ms ($c in 2.6 s)" yes \
    "$([ "$c" -ge 1 ] && [ "$c" -le 3 ] && echo yes || echo no)"
check "no keep-alive comment when events come faster" "comments 0" \
    "$($PY $P events "/sse/ticks?count=4&interval_ms=200" | tail -n 1)"

# ---- clients that leave, many clients ----
check "a client that closes (FIN) mid-stream" "left after 1 event(s)" \
    "$($PY $P leave fin "/sse/ticks?count=1000&interval_ms=20")"
check "a client that resets (RST) mid-stream" "left after 1 event(s)" \
    "$($PY $P leave rst "/sse/ticks?count=1000&interval_ms=20")"
# HTTP/2: curl gives up after a second (RST_STREAM and close) on a stream of 1000 events
n=$(curl -s --http2-prior-knowledge -m 1 "$URL/sse/ticks?count=1000&interval_ms=20" | grep -c '^data: ')
check "HTTP/2: a client that leaves mid-stream ($n events read)" yes "$([ "$n" -ge 1 ] && [ "$n" -lt 1000 ] && echo yes || echo no)"
check "after them, a fresh one-event stream works" 1 "$(curl -s -m 10 "$URL/sse/ticks?count=1" | grep -c '^data: ')"
check "50 concurrent streams" "whole 50" "$($PY $P many 50 "/sse/ticks?count=3&interval_ms=300")"
check "the page at / uses EventSource and WebSocket" 2 \
    "$(curl -s "$URL/" | grep -c -e "new EventSource('/sse/ticks" -e "/ws/echo'")"
check "realtime: --max-message takes a number" 2 \
    "$("$BIN/canal-realtime" --max-message x >/dev/null 2>&1; echo $?)"
stop rt

# ---- canal-streamapp: backpressure, the idle limit, the other writers ----
start app "$TBIN/canal-streamapp" --threads 2 --stream-timeout 3000 || exit 0
P=$PORT
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status"; }
curl -s -o /dev/null "$URL/flood?bytes=1000000" # the first stream's timers and buffers
rss0=$(rss)
# 1 GiB offered to a client that reads nothing for 3 s, then resets (the counters add up)
$PY $P stall "/flood?bytes=1073741824" 3 >"$TMP/stall" &
spid=$!
sleep 1.5
rss1=$(rss)
check "while a client stalls, others are answered" 1000 "$(curl -s -m 5 "$URL/ndjson?n=1000" | wc -l | tr -d ' ')"
wait $spid
stats=$(curl -s "$URL/stats")
check "the stalled client" stalled "$(cat "$TMP/stall")"
refused=$(echo "$stats" | sed 's/.*"refused":\([0-9]*\).*/\1/')
flooded=$(echo "$stats" | sed 's/.*"flooded":\([0-9]*\).*/\1/')
check "the writer was refused (CANAL_EAGAIN: $refused times)" yes "$([ "$refused" -ge 1 ] && echo yes || echo no)"
check "the writer got only what the socket took ($flooded of 1 GiB)" yes \
    "$([ "$flooded" -lt 67108864 ] && echo yes || echo no)"
check "the server's memory stayed flat ($rss0 kB, then $rss1 kB)" yes \
    "$([ -n "$rss0" ] && [ -n "$rss1" ] && [ $((rss1 - rss0)) -lt 16384 ] && echo yes || echo no)"
i=0
while [ $i -lt 50 ] && [ "$(curl -s "$URL/stats" | sed 's/.*"open":\([0-9]*\).*/\1/')" != 0 ]; do
    sleep 0.1
    i=$((i + 1))
done
check "the reset client's stream was closed and freed" 0 "$(curl -s "$URL/stats" | sed 's/.*"open":\([0-9]*\).*/\1/')"
check "a fast client gets the whole flood" 10000000 "$(curl -s "$URL/flood?bytes=10000000&chunk=1000" | wc -c | tr -d ' ')"

# the idle limit (3 s here): a stream nothing is written to is cut, and its owner hears it
s=$(date +%s)
code=$(curl -s -m 20 -o /dev/null -w '%{http_code}' "$URL/silent")
e=$(date +%s)
check "a silent stream is cut after the idle limit ($((e - s)) s)" yes \
    "$([ $((e - s)) -ge 2 ] && [ $((e - s)) -le 10 ] && echo yes || echo no)"
check "the silent stream's head had come at once" 200 "$code"

lines=$(curl -s "$URL/borrowed?n=3" | grep -c 'borrowed line')
check "borrowed writes sent, each released once" "3 lines, 3 released" \
    "$lines lines, $(curl -s "$URL/stats" | sed 's/.*"released":\([0-9]*\).*/\1/') released"
check "NDJSON from the stream's JSON writer" '{"i":1}|{"i":2}|{"i":3}' "$(curl -s "$URL/ndjson?n=3" | paste -sd '|')"
check "a JSON array from the stream's JSON writer" 5000 \
    "$(curl -s "$URL/array?n=5000" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
check "NDJSON of 100000 lines" 100000 "$(curl -s "$URL/ndjson?n=100000" | wc -l | tr -d ' ')"
check "writes posted from another thread, in order" "posted 1|posted 2|posted 3|posted 4|posted 5" \
    "$(curl -s "$URL/posted?n=5" | paste -sd '|')"
check "posted over HTTP/2" 200 "$(curl -s --http2-prior-knowledge "$URL/posted?n=200" | wc -l | tr -d ' ')"
curl -s -H 'Accept-Encoding: gzip' -D "$TMP/gz.h" "$URL/posted?n=50" >"$TMP/gz"
check "gzip: a text stream is compressed" gzip "$(tr -d '\r' <"$TMP/gz.h" | sed -n 's/^content-encoding: //p')"
check "gzip: and decompresses whole" "50 posted 50" \
    "$(gunzip <"$TMP/gz" | wc -l | tr -d ' ') $(gunzip <"$TMP/gz" | tail -n 1)"
check "gzip: an event stream is not compressed" "" \
    "$(curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' "$URL/mvc/events?n=50" | grep -i '^content-encoding')"
check "controller mode: an action's stream" "1|2|3" "$(curl -s "$URL/mvc/count?n=3" | paste -sd '|')"
check "controller mode: the after-filter ran at the commit" ran "$(header "$URL/mvc/count?n=1" x-after-filter)"
check "controller mode: a bad parameter is still a 400" 400 "$(status "$URL/mvc/count?n=x")"
check "controller mode: an action's event stream, data lines split" "1 n line one|line two|2 n line one|line two" \
    "$($PY $P events "/mvc/events?n=2" | sed -n '2,5p' | paste -sd '|')"
check "OpenAPI: the event stream's action answers text/event-stream" '{"text/event-stream":{"schema":{"type":"string"}}}' \
    "$(curl -s "$URL/openapi.json" | python3 -c 'import json,sys; d=json.load(sys.stdin)
print(json.dumps(d["paths"]["/mvc/events"]["get"]["responses"]["200"]["content"], separators=(",",":")))')"

# graceful shutdown with streams open: each ends properly within the drain
curl -s -N -D "$TMP/head1" "$URL/silent" -o "$TMP/open1" -w '%{http_code}\n' >"$TMP/code1" &
c1=$!
i=0
while [ $i -lt 100 ] && ! grep -q '^HTTP/1.1 200' "$TMP/head1" 2>/dev/null; do # the stream is open
    sleep 0.1
    i=$((i + 1))
done
stop app
wait $c1
check "a stream open at shutdown ended with its last-chunk (curl: 200, not a cut)" 200 "$(cat "$TMP/code1")"
