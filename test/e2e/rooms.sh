#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 redis-server redis-cli nginx py:websockets
# Issue 27's rooms contract for canal-realtime --store: two instances (A and B, 2 threads each)
# on one Redis of the test's own (a temporary directory, a free port, no persistence), and
# nginx in front of both (docs/deploy/nginx-rooms.conf). WebSocket members (/ws/chat/{room})
# and SSE members (/sse/chat/{room}) mixed on both instances: every message of the room
# reaches every member exactly once, in order per sender, and no member of another room; a
# member that resets leaves and the room goes on; through nginx, members on both instances
# exchange too. Redis paused (SIGSTOP about 3 s) and killed (SIGKILL, restarted on the same
# port): nothing crashes or hangs, plain requests are answered within 3 s, open members get
# an answer or a clean close, and members exchange again within 5 s of Redis being back,
# without restarting the instances. Without --store, rooms stay in process as before; a HEAD
# on /sse/chat/{room} leaves no member behind. (test/e2e/rooms_client.py: the clients.)
. test/e2e-lib.sh
PY=/usr/bin/python3
RC="$PY test/e2e/rooms_client.py"

RPORT=$(free_port)
RPID=""
redis_start

realtime() {
    start "$1" "$BIN/canal-realtime" --host 127.0.0.1 --threads 2 --store "redis://127.0.0.1:$RPORT/2"
}
realtime a || exit 0
A=$URL
PA=$PID
PORTA=$PORT
realtime b || exit 0
B=$URL
PB=$PID
PORTB=$PORT

# ---- the contract, directly on the instances ----
timeout 60 $RC exchange "$A" "$B" lobby 20 >"$TMP/exchange" 2>"$TMP/exchange.err"
check "/sse/chat/{room}: 200 on A and B" "sse status 200 200" "$(grep '^sse status' "$TMP/exchange")"
check "/sse/chat/{room}: text/event-stream" "sse content-type text/event-stream" \
    "$(grep '^sse content-type' "$TMP/exchange")"
check "/sse/chat/{room}: no Content-Length" "sse content-length None" "$(grep '^sse content-length' "$TMP/exchange")"
for m in a1 a2 b1 b2; do
    check "WebSocket member $m: 4 senders x 20, each once, in order per sender" \
        "ws $m once 1 order 1 count 80" "$(grep "^ws $m " "$TMP/exchange")"
done
for m in a b; do
    check "SSE member on $m: every message once, in order per sender" \
        "sse $m once 1 order 1 count 80" "$(grep "^sse $m " "$TMP/exchange")"
done
check "members of another room (WS on A and B, SSE on B) got nothing" "other room 0" \
    "$(grep '^other room' "$TMP/exchange")"
[ -s "$TMP/exchange.err" ] && sed 's/^/# client: /' "$TMP/exchange.err" | head -n 20
check "a WS and an SSE member reset on B: the room goes on across A and B" ok \
    "$(timeout 30 $RC leave "$A" "$B" lobby2 2>&1 | tail -n 1)"
check "the instances published and received through Redis" 1 \
    "$(curl -s "$A/metrics" | awk '/^canal_redis_published_total/ {p=$2} /^canal_redis_received_total/ {r=$2}
        END {print (p > 0 && r > 0) ? 1 : 0}')"
check "the subscriber connection is up" "canal_redis_subscriber_up 1" \
    "$(curl -s "$B/metrics" | grep '^canal_redis_subscriber_up')"

# ---- behind nginx: one service ----
NPORT=$(free_port)
sed -e "s/server 127\.0\.0\.1:8081 /server 127.0.0.1:$PORTA /" -e "s/server 127\.0\.0\.1:8082 /server 127.0.0.1:$PORTB /" \
    -e "s/listen 127\.0\.0\.1:8080;/listen 127.0.0.1:$NPORT;/" docs/deploy/nginx-rooms.conf >"$TMP/rooms.conf"
check "docs/deploy/nginx-rooms.conf has the three ports the test replaces" 3 \
    "$(grep -c -e "127.0.0.1:$PORTA " -e "127.0.0.1:$PORTB " -e "127.0.0.1:$NPORT;" "$TMP/rooms.conf")"
start_nginx "$TMP/rooms.conf" '$status $upstream_addr'
N="http://127.0.0.1:$NPORT"
i=0
while [ $i -lt 100 ] && [ "$(status "$N/")" != 200 ]; do sleep 0.05; i=$((i + 1)); done
timeout 60 $RC exchange "$N" "$N" svc 10 >"$TMP/svc" 2>&1
check "through nginx: 4 WS + 2 SSE members, every message once and in order" 6 \
    "$(grep -Ec '^(ws|sse) [a-z0-9]+ once 1 order 1 count 40$' "$TMP/svc")"
check "through nginx: the members were on both instances" 2 \
    "$(grep -o "127.0.0.1:\($PORTA\|$PORTB\)" "$TMP/nginx-access.log" | sort -u | wc -l | tr -d ' ')"

# ---- faults ----
# back BASE_A BASE_B: a fresh exchange across the instances, tried every 0.25 s (20 tries)
back() {
    i=0
    while [ $i -lt 20 ]; do
        if [ "$(timeout 10 $RC quick "$1" "$2" "back$i" 2>/dev/null | tail -n 1)" = ok ]; then
            echo back
            return
        fi
        sleep 0.25
        i=$((i + 1))
    done
    echo "not back"
}
# during: plain answers of both instances within 3 s while Redis is away
during() {
    printf '%s %s\n' "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$A/")" \
        "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "$B/")"
}
alive() { kill -0 "$PA" 2>/dev/null && kill -0 "$PB" 2>/dev/null && echo alive; }

timeout 30 $RC hold "$A" held 4 >"$TMP/hold1" 2>/dev/null &
HOLD=$!
sleep 0.7
kill -STOP "$RPID"
during >"$TMP/paused"
timeout 10 $RC quick "$A" "$B" paused >/dev/null 2>&1 # delivery may continue or stop: no crash
during >>"$TMP/paused"
sleep 1
check "paused: / answered 200 on A and B within 3 s (twice)" 2 "$(grep -c '^200 200$' "$TMP/paused")"
kill -CONT "$RPID"
check "resumed: WS on A and B and SSE on B exchange within 5 s" back "$(back "$A" "$B")"
wait $HOLD
check "paused: members held through it got an answer or a clean close" alive "$(cat "$TMP/hold1")"
check "paused: both instances still run" alive "$(alive)"

kill -KILL "$RPID"
wait "$RPID" 2>/dev/null
during >"$TMP/killed"
timeout 10 $RC quick "$A" "$B" killed >/dev/null 2>&1
check "killed: / answered 200 on A and B within 3 s" "200 200" "$(cat "$TMP/killed")"
check "killed: WS on A alone still gets its room's messages (local delivery)" ok \
    "$(timeout 10 $RC quick "$A" "$A" local 2>&1 | tail -n 1)"
sleep 2
redis_start
check "restarted: WS on A and B and SSE on B exchange within 5 s" back "$(back "$A" "$B")"
check "restarted: both instances still run" alive "$(alive)"

kill -TERM "$NPID" 2>/dev/null
PID=$PA stop a
PID=$PB stop b

# ---- without --store: in process, as before ----
start c "$BIN/canal-realtime" --host 127.0.0.1 --threads 2 || exit 0
C=$URL
check "no --store: a room within the instance" ok "$(timeout 30 $RC quick "$C" "$C" solo 2>&1 | tail -n 1)"
check "no --store: HEAD /sse/chat/{room} 200, no body" "200 0" \
    "$(curl -s -m 3 -I -o /dev/null -w '%{http_code} %{size_download}' "$C/sse/chat/solo")"
check "no --store: a bad room name is 404" 404 "$(status "$C/sse/chat/bad.name")"
check "no --store: no Redis metrics" 0 "$(curl -s "$C/metrics" | grep -c '^canal_redis_')"
stop c
