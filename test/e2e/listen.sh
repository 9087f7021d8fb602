#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 nginx
# Where canal-demo listens: a second instance on a taken port exits 1 with the reason, and
# shares the port with --reuse-port (both serve); a unix socket (--listen unix:PATH) with its
# mode, a live one refused, a stale one replaced, the file removed on SIGTERM; and nginx in
# front over that socket (docs/deploy/nginx-canal-unix.conf), with the client address from
# nginx's X-Forwarded-For believed through --trusted-proxies unix, as the access log shows.
. test/e2e-lib.sh

# ---- a TCP port another instance listens on ----
start a "$BIN/canal-demo" --threads 2 --access-log "$TMP/a.log" || exit 0
APID=$PID APORT=$PORT
"$BIN/canal-demo" --threads 2 --port "$PORT" >"$TMP/b.out" 2>"$TMP/b.err" &
BPID=$!
SERVER_PIDS="$SERVER_PIDS $BPID"
i=0
while kill -0 "$BPID" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
wait "$BPID"
check "a second instance on the same port exits 1" 1 "$?"
check_match "and says why" "cannot listen on 127\.0\.0\.1:$PORT: another process listens there \(--reuse-port" \
    "$(cat "$TMP/b.err")"
check "the first one still serves" "Hello, World!" "$(body "$URL/home/plaintext")"

# --reuse-port: both listen, the kernel spreads new connections over the two
"$BIN/canal-demo" --threads 2 --port "$PORT" --reuse-port on --access-log "$TMP/c.log" >"$TMP/c.out" 2>"$TMP/c.err" &
CPID=$!
SERVER_PIDS="$SERVER_PIDS $CPID"
await_port c "$CPID" || exit 0
check "with --reuse-port the second one listens on the same port" "$APORT" "$PORT"
n=0
while [ $n -lt 64 ]; do curl -s -o /dev/null "$URL/home/plaintext"; n=$((n + 1)); done
PID=$CPID
stop c
PID=$APID
stop a
na=$(grep -c 'GET /home/plaintext' "$TMP/a.log")
nc=$(grep -c 'GET /home/plaintext' "$TMP/c.log")
echo "# 64 requests on one port: $((na - 1)) to the first instance, $nc to the second"
check "both instances served" yes "$([ "$nc" -gt 0 ] && [ "$na" -gt 1 ] && echo yes || echo "no ($na, $nc)")"

# ---- a unix socket ----
SOCK=$TMP/canal.sock
# unix_demo NAME ARGS...: canal-demo on $SOCK; sets PID (waits for its "listening on" line)
unix_demo() {
    name=$1
    shift
    : >"$TMP/$name.err"
    "$BIN/canal-demo" --threads 2 --listen "unix:$SOCK" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    PID=$!
    SERVER_PIDS="$SERVER_PIDS $PID"
    i=0
    while ! grep -q "listening on unix:$SOCK" "$TMP/$name.err" && kill -0 "$PID" 2>/dev/null && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    grep -q "listening on unix:$SOCK" "$TMP/$name.err" || { not_ok "$name started"; cat "$TMP/$name.err" >&2; return 1; }
}
unix_demo u --unix-mode 0600 --trusted-proxies unix --request-id on --access-log "$TMP/u.log" || exit 0
UPID=$PID
check "the socket has the mode asked for" "600 socket" "$(stat -c '%a %F' "$SOCK")"
check "curl over the unix socket" "Hello, World!" "$(curl -s --unix-socket "$SOCK" http://canal/home/plaintext)"
curl -s -o /dev/null --unix-socket "$SOCK" -H 'User-Agent: direct-unix' http://canal/home/plaintext
"$BIN/canal-demo" --listen "unix:$SOCK" >/dev/null 2>"$TMP/u2.err"
check "a second instance on a live unix socket exits 1" 1 "$?"
check_match "and says why" "cannot listen on unix:$SOCK: another process listens there" "$(cat "$TMP/u2.err")"
CANAL_LISTEN=unix:$SOCK "$BIN/canal-demo" --listen "tcp:1" >/dev/null 2>"$TMP/u3.err"
check "a listen address that is not unix:PATH is refused" 2 "$?"
check_match "with the reason" "listen: bad value 'tcp:1'" "$(cat "$TMP/u3.err")"

# ---- nginx in front, over the unix socket ----
NPORT=$(free_port)
NURL="http://127.0.0.1:$NPORT"
sed -e "s|unix:/run/canal-demo/http.sock|unix:$SOCK|" -e "s/listen 127\.0\.0\.1:8080;/listen 127.0.0.1:$NPORT;/" \
    docs/deploy/nginx-canal-unix.conf >"$TMP/canal.conf"
check "docs/deploy/nginx-canal-unix.conf has the socket and the port the test replaces" 2 \
    "$(grep -c -e "server unix:$SOCK " -e "listen 127.0.0.1:$NPORT;" "$TMP/canal.conf")"
start_nginx "$TMP/canal.conf" '$status "$upstream_addr" $request_id'
i=0
while [ "$(status "$NURL/home/plaintext")" != 200 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
got=$(body "$NURL/home/plaintext")
check "nginx answers through the unix socket" "Hello, World!" "$got"
[ "$got" = "Hello, World!" ] && : || sed 's/^/# nginx: /' "$TMP/nginx.err" "$TMP/nginx/error.log" 2>/dev/null
check "the JSON answer too" '{"message":"Hello, World!"}' "$(body "$NURL/home/json")"
id=$(header "$NURL/home/json" x-request-id -H 'X-Request-Id: spoofed-by-client')
check "canal keeps nginx's request ID (trusted: the unix socket's peer)" yes \
    "$(echo "$id" | grep -Eq '^[0-9a-f]{32}$' && grep -q " $id\$" "$TMP/nginx-access.log" && echo yes || echo "no ($id)")"
curl -s -o /dev/null -H 'User-Agent: via-nginx' "$NURL/home/plaintext"
curl -s -o /dev/null -H 'User-Agent: via-nginx-spoof' -H 'X-Forwarded-For: 203.0.113.7' "$NURL/home/plaintext"
n=0
while [ $n -lt 100 ]; do curl -s -o /dev/null "$NURL/home/plaintext"; n=$((n + 1)); done
check "100 more through nginx, all logged by nginx as 200 from the socket" 100 \
    "$(tail -n 100 "$TMP/nginx-access.log" | grep -c "^200 \"unix:$SOCK\"")"
kill -TERM "$NPID"
wait "$NPID" 2>/dev/null
PID=$UPID
stop u
check "the socket file is removed on SIGTERM" no "$([ -e "$SOCK" ] && echo yes || echo no)"
check_match "access log: the client nginx saw, from X-Forwarded-For" '^127\.0\.0\.1 - - .*"via-nginx" "[0-9a-f]{32}"$' \
    "$(grep '"via-nginx"' "$TMP/u.log")"
check_match "access log: a client's own X-Forwarded-For is not believed (127.0.0.1 is not trusted)" \
    '^127\.0\.0\.1 - - .*"via-nginx-spoof"' "$(grep '"via-nginx-spoof"' "$TMP/u.log")"
check_match "access log: a direct client of the socket has no address" '^- - - .*"direct-unix"' \
    "$(grep '"direct-unix"' "$TMP/u.log")"

# ---- the owner and group, by number ----
if [ "$(id -u)" = 0 ]; then
    unix_demo o --unix-owner 65534:65534 --unix-mode 0660 || exit 0
    check "--unix-owner: the socket's owner and group (root may give them away)" "65534 65534 660" \
        "$(stat -c '%u %g %a' "$SOCK")"
    stop o
else
    unix_demo o --unix-owner ":$(id -g)" || exit 0
    check "--unix-owner: the socket's group (one of ours)" "$(id -g)" "$(stat -c '%g' "$SOCK")"
    stop o
fi
"$BIN/canal-demo" --listen "unix:$SOCK" --unix-owner no-such-user-here >/dev/null 2>"$TMP/o2.err"
check "an unknown owner: exit 1" 1 "$?"
check_match "with the reason" "unix socket owner: no user 'no-such-user-here'" "$(cat "$TMP/o2.err")"

# ---- a stale socket file, left by a process that was killed ----
unix_demo k || exit 0
kill -KILL "$PID"
wait "$PID" 2>/dev/null
check "a killed instance leaves its socket file" "socket" "$(stat -c '%F' "$SOCK")"
unix_demo s || exit 0
check "the next one replaces it and serves" "Hello, World!" "$(curl -s --unix-socket "$SOCK" http://canal/home/plaintext)"
stop s
