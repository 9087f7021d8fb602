#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl redis-server redis-cli
# The Redis client (canal/redis.h) end to end: canal-redisapp (2 threads) on a Redis of the
# test's own (a temporary directory, a free port, no persistence; never the system service).
# Binary-safe arguments (a key with a space, CR LF and a glob), SELECT from the URL, pipelined
# commands in order, a command from a callback, error replies; then the faults: Redis paused
# (SIGSTOP: 503 problem details with Retry-After within the deadline, /public stays 200,
# readiness 503), resumed (SIGCONT: 200 again without a restart), killed and restarted on the
# same port (the same); the metrics count commands, timeouts and reconnects.
. test/e2e-lib.sh

RPORT=$(free_port)
RPID=""
redis_start
R="redis-cli -p $RPORT"
$R -n 0 set canary:db0 keep >/dev/null
$R -n 5 set canary:db5 keep >/dev/null

start redis "$TBIN/canal-redisapp" --threads 2 --redis "redis://127.0.0.1:$RPORT/5" --redis-timeout 500 || exit 0

# wait for both workers' connections (readiness), 5 s at most
i=0
while [ $i -lt 100 ] && [ "$(status "$URL/health/ready")" != 200 ]; do sleep 0.05; i=$((i + 1)); done
check "ready once both workers are connected" 200 "$(status "$URL/health/ready")"

# ---- commands ----
check "SET with a binary-safe key: 204" 204 "$(status "$URL/kv/a%20b%0D%0A*" -X PUT --data-binary 'hello world')"
check "GET it back" "hello world" "$(body "$URL/kv/a%20b%0D%0A*")"
check "the key is one argument, in the URL's DB 5" "hello world" "$($R -n 5 get "$(printf 'a b\r\n*')")"
check "nothing written to DB 0 but the canary" "canary:db0" "$($R -n 0 keys '*')"
check "a missing key: 404" 404 "$(status "$URL/kv/nothing")"
check "INCR" '{"n":1}' "$(body "$URL/incr/counter" -X POST)"
check "a command from a callback (INCR then GET)" '{"n":2,"v":"2"}' "$(body "$URL/chain/counter")"
check "100 pipelined commands of one request, replies in order" '{"last":100}' "$(body "$URL/burst/pipe")"
check "a value that looks like a command is data" 204 \
    "$(status "$URL/kv/x" -X PUT --data-binary "$(printf '*1\r\n$8\r\nFLUSHALL\r\n')")"
check "... and the canaries are still there" "keep keep" "$($R -n 0 get canary:db0) $($R -n 5 get canary:db5)"
check "an error reply: 502 problem" 502 "$(status "$URL/eval" -X POST --data 'return redis.call("NOPE")')"
check "20 concurrent clients, 50 INCR each: 1000" 1000 "$(
    for c in $(seq 1 20); do
        (for n in $(seq 1 50); do printf 'url = "%s/incr/many"\n-X POST\n-o /dev/null\n' "$URL"; done |
            curl -s -K - >/dev/null) &
    done
    wait
    $R -n 5 get many)"

# ---- Redis paused: every answer within the deadline ----
kill -STOP "$RPID"
codes=""
for n in 1 2 3 4; do
    codes="$codes$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$URL/kv/a%20b%0D%0A*") "
done
check "paused: 503 every time, within 3 s" "503 503 503 503 " "$codes"
check "paused: a problem+json with status 503" '"status":503' \
    "$(curl -s -m 3 "$URL/incr/p" -X POST | grep -o '"status":503')"
check "paused: Retry-After" 1 "$(header "$URL/kv/x" retry-after -m 3)"
check "paused: /public stays 200" 200 "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$URL/public")"
check "paused: readiness 503" 503 "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$URL/health/ready")"
kill -CONT "$RPID"
# back URL [STATUS [CURL ARGS]]: "back" once URL answers STATUS (200), tried every 0.25 s
# for 5 s
back() {
    u=$1
    want=${2:-200}
    [ $# -ge 2 ] && shift 2 || shift
    i=0
    while [ $i -lt 20 ]; do
        [ "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$@" "$u")" = "$want" ] && { echo back; return; }
        sleep 0.25
        i=$((i + 1))
    done
    echo "not back"
}
check "resumed: 200 again within 5 s, no restart" back "$(back "$URL/kv/a%20b%0D%0A*")"

# ---- Redis killed, then restarted on the same port ----
kill -KILL "$RPID"
wait "$RPID" 2>/dev/null
check "killed: 503" 503 "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$URL/kv/x")"
check "killed: /public 200" 200 "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$URL/public")"
sleep 1
redis_start
check "restarted: SET works within 5 s" back "$(back "$URL/kv/k2" 204 -X PUT --data-binary again)"
# each worker has its own connection: the one that reads may reconnect after the one that wrote
v="" i=0
while [ $i -lt 20 ] && [ "$v" != again ]; do
    v=$(body "$URL/kv/k2")
    [ "$v" = again ] || sleep 0.25
    i=$((i + 1))
done
check "restarted: the value, within 5 s" again "$v"
i=0
while [ $i -lt 40 ] && [ "$(status "$URL/health/ready")" != 200 ]; do sleep 0.25; i=$((i + 1)); done
check "restarted: ready again" 200 "$(status "$URL/health/ready")"

# ---- metrics ----
curl -s "$URL/metrics" >"$TMP/metrics"
metric() { sed -n "s/^$1 //p" "$TMP/metrics"; }
check "canal_redis_up: both workers" 2 "$(metric canal_redis_up)"
check_match "commands counted" '^[0-9]{4,}$' "$(metric canal_redis_commands_total)"
check_match "timeouts counted (the pause)" '^[1-9][0-9]*$' "$(metric canal_redis_timeouts_total)"
check_match "reconnects counted" '^[1-9][0-9]*$' "$(metric canal_redis_reconnects_total)"
check_match "errors counted" '^[1-9][0-9]*$' "$(metric canal_redis_errors_total)"

APP=$PID
PID=$APP stop redis

# ---- the URL: AUTH, and refusals ----
R="redis-cli -p $RPORT --no-auth-warning"
$R config set requirepass 's3cr:et' >/dev/null
start auth "$TBIN/canal-redisapp" --threads 1 --redis "redis://:s3cr:et@127.0.0.1:$RPORT/5" || exit 0
i=0
while [ $i -lt 100 ] && [ "$(status "$URL/health/ready")" != 200 ]; do sleep 0.05; i=$((i + 1)); done
check "AUTH with the URL's password, then SELECT 5" "204 v5" \
    "$(status "$URL/kv/authed" -X PUT --data-binary v5) $($R -a 's3cr:et' -n 5 get authed)"
stop auth
start noauth "$TBIN/canal-redisapp" --threads 1 --redis "redis://127.0.0.1:$RPORT/5" || exit 0
check "without the password: 503, never a hang" 503 "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$URL/kv/x")"
check "without the password: not ready" 503 "$(status "$URL/health/ready")"
stop noauth
for u in http://127.0.0.1:1 redis:// redis://127.0.0.1:0 redis://127.0.0.1:6379/x "redis://[::1"; do
    "$TBIN/canal-redisapp" --port 0 --redis "$u" >/dev/null 2>"$TMP/bad.err" &
    p=$!
    i=0
    while [ $i -lt 100 ] && kill -0 $p 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    kill -KILL $p 2>/dev/null
    wait $p
    check "a bad URL ($u): refused at start" 1 "$?"
done
