#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: python3 node py:websockets npm:ws
# WebSockets (RFC 6455) of examples/realtime, with real clients: raw sockets for every
# handshake rejection and every framing, fragmentation, ping, UTF-8, close-code, size-limit
# and robustness rule of issue 16 (test/e2e/realtime_ws.py, one group of cases per run),
# 1000 concurrent sockets, chat rooms across two worker threads, Python's websockets and
# Node's ws as clients (realtime_ws.cjs), the idle timeout, a slow reader dropped past
# --ws-max-queued, and a graceful shutdown that closes every socket with 1001.
. test/e2e-lib.sh
PY=/usr/bin/python3
# 1000 sockets at once, each counted twice here (client and server)
ulimit -n 8192 2>/dev/null || ulimit -n 4096 2>/dev/null

# group NAME: one group of realtime_ws.py against the running server
group() {
    timeout 300 "$PY" test/e2e/realtime_ws.py "$PORT" "$1"
    rc=$?
    [ "$rc" = 0 ] || not_ok "realtime_ws.py $1 exited $rc"
}

start rt "$BIN/canal-realtime" --threads 2 || exit 0
for g in handshake framing close limits robust slow many chat lib; do
    group $g
done
NODE_PATH=build/npm/node_modules timeout 60 node test/e2e/realtime_ws.cjs "$PORT" || not_ok "realtime_ws.cjs exited $?"
group fresh

# a graceful shutdown closes an open socket with 1001, and the server exits 0
"$PY" test/e2e/realtime_ws.py "$PORT" shutdown >"$TMP/shutdown.out" 2>&1 &
client=$!
i=0
while [ $i -lt 100 ] && ! grep -q connected "$TMP/shutdown.out"; do
    sleep 0.1
    i=$((i + 1))
done
stop rt
wait $client
check "SIGTERM: an open WebSocket is sent Close 1001" "closed 1001" "$(grep closed "$TMP/shutdown.out")"

# the idle timeout: a silent socket is pinged, then closed
start idle "$BIN/canal-realtime" --threads 1 --ws-idle-timeout 400 || exit 0
group idle
stop idle

# a client that does not read is dropped past --ws-max-queued, and counted
start drop "$BIN/canal-realtime" --threads 1 --ws-max-queued 4194304 || exit 0
group drop
stop drop
