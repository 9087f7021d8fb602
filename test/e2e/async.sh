#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# Answers given later: the offload pool (sleeps: blocking work that is not a database), SQLite
# queries through the database client (canal/db.h), completions posted from another thread, the
# loop staying responsive meanwhile, a full queue (503), the deadline (504), a client that
# leaves while its request waits, and graceful shutdown with work in flight; and controller
# actions that query or offload (after-filters at the completion, a 201 by link generation, a
# full queue).
. test/e2e-lib.sh

# burst URL: six requests at once in the background, each one's status, head and body in
# $TMP/{c,h,s}.N (the last burst's only); their PIDs in pids
burst() {
    rm -f "$TMP"/c.* "$TMP"/h.* "$TMP"/s.*
    i=0
    pids=""
    while [ $i -lt 6 ]; do
        curl -s -o "$TMP/s.$i" -D "$TMP/h.$i" -w '%{http_code}' "$1" >"$TMP/c.$i" &
        pids="$pids $!"
        i=$((i + 1))
    done
}

start off "$BIN/canal-offload" --threads 1 --offload-threads 2 --offload-queue 2 --request-timeout 3000 || exit 0

check "sqlite item through canal_db" '{"id":3,"name":"item 3","price":0.75}' "$(body "$URL/db/item/3")"
check "missing item: 404" 404 "$(status "$URL/db/item/5000")"
check "answer posted from another thread" "answered after 100 ms" "$(body "$URL/deferred?ms=100")"

# controller actions that query: the answer is set in the callback like any other, the after-filter
# runs when it completes, link generation builds the Location of a 201
check "action: sqlite item through canal_db" '{"id":3,"name":"item 3","price":0.75}' "$(body "$URL/api/items/3")"
check "action: the after-filter ran on the deferred answer" 200 "$(header "$URL/api/items/3" x-after-filter)"
check "action: missing item: 404, after-filter saw it" 404 "$(header "$URL/api/items/5000" x-after-filter)"
J='-H content-type:application/json -X POST'
# shellcheck disable=SC2086
check "action: an INSERT ... RETURNING, 201" 201 "$(status "$URL/api/items" $J -d '{"name":"new","price":2.5}')"
# shellcheck disable=SC2086
loc=$(header "$URL/api/items" location $J -d '{"name":"newer","price":3}')
check_match "action: 201 Location from link generation ($loc)" '^/api/items/[0-9]+$' "$loc"
check "action: the created item reads back" '"name":"newer"' "$(body "$URL$loc" | grep -o '"name":"newer"')"
# shellcheck disable=SC2086
check "action: bad body is a 400 before any work" 400 "$(header "$URL/api/items" x-after-filter $J -d '{"price":-1}')"

# the loop keeps answering while the pool works: 2 running sleeps, 2 queued, 2 refused
burst "$URL/offload/sleep?ms=1000"
sleep 0.3
t=$(curl -s -o /dev/null -w '%{time_total}' "$URL/plaintext")
# the sleeps take 1 s: a loop they blocked would answer after them (sanitizers slow us, not 1 s)
check "plaintext answered while the pool sleeps, not after ($t s)" yes "$(awk -v t="$t" 'BEGIN{print (t < 0.7) ? "yes" : "no"}')"
if command -v wrk >/dev/null 2>&1; then
    wrk -t 1 -c 20 -d 1s "$URL/plaintext" >"$TMP/wrk1" 2>&1
    echo "# plaintext while the pool sleeps: $(grep Requests/sec "$TMP/wrk1")"
    check "plaintext under wrk while the pool sleeps: no errors" "" "$(grep -E 'Socket errors|Non-2xx' "$TMP/wrk1")"
fi
wait $pids # not a bare wait: the server runs in the background too
codes=$(cat "$TMP"/c.* | fold -w3 | sort | tr '\n' ' ')
answered=$(cat "$TMP"/c.* | fold -w3 | grep -c 200)
# 2 threads and 2 places in the queue: 4 answered, 2 refused (when the threads are slow to
# take jobs, as under ThreadSanitizer, fewer are answered: never fewer than 2, never more than 4)
check_match "full queue: answered (200) or refused (503), nothing else ($codes)" '^(200 ){2,4}(503 ){2,4}$' "$codes"
refused=$(grep -l '^HTTP/1.1 503' "$TMP"/h.* | head -n 1)
check "503 carries Retry-After" "1" "$(tr -d '\r' <"$refused" | sed -n 's/^retry-after: //p')"
check "every 200 carried its answer" "$answered" "$(cat "$TMP"/s.* | grep -o 'slept 1000' | wc -l | tr -d ' ')"

# the same through an action: the 503 of a full queue is the action's answer, after-filter
# included, and no false "no answer" failure is logged for it
burst "$URL/api/items/slow?ms=800"
wait $pids
codes=$(cat "$TMP"/c.* | fold -w3 | sort | tr '\n' ' ')
check_match "action, full queue: 200 or 503 ($codes)" '^(200 ){2,4}(503 ){2,4}$' "$codes"
refused=$(grep -l '^HTTP/1.1 503' "$TMP"/h.* | head -n 1)
check "action, full queue: the after-filter saw the 503" "503" "$(tr -d '\r' <"$refused" | sed -n 's/^x-after-filter: //p')"
check "action, full queue: nothing logged as a failure" "" "$(grep -E 'no answer|failed' "$TMP/off.err")"

# every deferred answer correct under load (2 connections: never more than the queue holds)
if command -v wrk >/dev/null 2>&1; then
    wrk -t 1 -c 2 -d 2s "$URL/db/item/42" >"$TMP/wrk2" 2>&1
    echo "# sqlite through canal_db under wrk -c 2: $(grep Requests/sec "$TMP/wrk2")"
    check "canal_db under wrk: no errors" "" "$(grep -E 'Socket errors|Non-2xx' "$TMP/wrk2")"
fi
check "answers stay right after the load" '{"id":42,"name":"item 42","price":10.5}' "$(body "$URL/db/item/42")"

# a client that leaves while its request waits; the server carries on
curl -s --max-time 0.2 "$URL/offload/sleep?ms=600" >/dev/null
check "client left while pending: curl timed out" 28 "$?"
curl -s --max-time 0.2 "$URL/deferred?ms=600" >/dev/null
sleep 0.8
check "server still answers after clients left" "Hello, World!" "$(body "$URL/plaintext")"
stop off

# the deadline: a deferred answer that does not come in time is a 504
start slow "$BIN/canal-offload" --threads 1 --request-timeout 300 || exit 0
check "deadline: 504" 504 "$(status "$URL/offload/sleep?ms=1500")"
check "deadline from another thread: 504" 504 "$(status "$URL/deferred?ms=1500")"
sleep 1.3
check "late answers are dropped, the server carries on" 200 "$(status "$URL/plaintext")"
stop slow

# SIGTERM while work is in flight: it is answered before the process exits
start drain "$BIN/canal-offload" --threads 1 --offload-threads 2 || exit 0
curl -s "$URL/offload/sleep?ms=700" >"$TMP/d1" &
c1=$!
curl -s "$URL/deferred?ms=700" >"$TMP/d2" &
c2=$!
sleep 0.3
stop drain
wait $c1 $c2
check "offloaded work in flight at SIGTERM answered" "slept 700" "$(cat "$TMP/d1")"
check "posted answer in flight at SIGTERM answered" "answered after 700 ms" "$(cat "$TMP/d2")"
