#!/bin/sh
# SPDX-License-Identifier: MIT
# Scale-out test (make scaleout): nginx in front of two canal-demo instances, configured by
# docs/deploy/nginx-canal.conf (only its ports changed), loaded by wrk through nginx.
#
#   1. In the middle of a wrk run, one instance gets SIGTERM: it says 503 on readiness, goes
#      on serving for its drain delay, closes its listeners, finishes and exits 0. nginx
#      retries what that instance refuses on the other one: no client request may fail.
#   2. Zero-downtime restart on the same port: during another wrk run, a new instance starts
#      on the port of a running one (--reuse-port: both listen), then the old one gets
#      SIGTERM. Again no client request may fail, and the new instance serves.
#
# "Failed" means what the client sees: a socket error (connect, read, write, timeout) or any
# status that is not 2xx (counted per answer by test/scaleout/count.lua). Prints TAP lines
# and the numbers; exits 1 if a check failed. Runs its own nginx (-p, -c and -e in a temp
# dir, no daemon, no master process, so no root, no system service and no user switch).
#
#   SCALEOUT_SECS (8) length of each wrk run; SCALEOUT_DELAY_MS (2000) the drain delay
. test/e2e-lib.sh

SECS=${SCALEOUT_SECS:-8}
DELAY=${SCALEOUT_DELAY_MS:-2000}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
FAILED=0
for t in "$NGINX" wrk curl; do
    if ! command -v "$t" >/dev/null; then
        echo "not ok - $t is missing (make deps installs nginx-light, wrk, curl)"
        exit 1
    fi
done
note_fail() { FAILED=1; }
checkf() { check "$@"; [ "$2" = "$3" ] || note_fail; }

# instance NAME PORT [ACCESS_LOG [FLAGS...]]: canal-demo on 127.0.0.1:PORT (0: any free
# port), as docs/deploy.md runs it; sets IPID and IPORT
instance() {
    name=$1 port=$2 log=${3:-off}
    shift $(($# < 3 ? $# : 3))
    "$BIN/canal-demo" --threads 1 --port "$port" --access-log "$log" --trusted-proxies 127.0.0.1 \
        --shutdown-delay "$DELAY" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    IPID=$!
    SERVER_PIDS="$SERVER_PIDS $IPID"
    await_port "$name" "$IPID" || exit 1
    IPORT=$PORT
}

# wrk_run N: wrk through nginx for SECS seconds in the background; sets WPID
wrk_run() {
    wrk -t2 -c16 -d"${SECS}s" -s test/scaleout/count.lua "$NURL/home/plaintext" >"$TMP/wrk$1.out" 2>&1 &
    WPID=$!
}

# wrk_check N WHAT: the client saw no failure; prints wrk's numbers and nginx's view
wrk_check() {
    wait "$WPID"
    line=$(grep '^SCALEOUT ' "$TMP/wrk$1.out")
    set -- "$1" "$2" $line
    n=$4 bad=$5 errs="$6 $7 $8 $9"
    rps=$(sed -n 's/^Requests\/sec: *//p' "$TMP/wrk$1.out")
    checkf "$2: wrk got answers" yes "$([ "${n:-0}" -gt 0 ] && echo yes || echo no)"
    checkf "$2: no socket error (connect read write timeout)" "0 0 0 0" "$errs"
    checkf "$2: no answer but 2xx" 0 "$bad"
    # nginx's log of the same window: which instance answered, how many were retried
    sed -n "$((LOGLINES + 1)),\$p" "$TMP/nginx-access.log" >"$TMP/window.log"
    LOGLINES=$(wc -l <"$TMP/nginx-access.log")
    a=$(grep -c "\"127.0.0.1:$APORT\"" "$TMP/window.log")
    b=$(grep -c "\"127.0.0.1:$BPORT\"" "$TMP/window.log")
    retried=$(grep -c ', 127\.0\.0\.1' "$TMP/window.log")
    echo "# $2: $n requests in ${SECS}s ($rps req/s) through nginx; failed: $bad non-2xx," \
         "socket errors $errs; answered by :$APORT $a, by :$BPORT $b;" \
         "retried by nginx on the other instance: $retried"
}

# ---- two instances and nginx ----
instance a 0
APID=$IPID APORT=$IPORT
instance b 0
BPID=$IPID BPORT=$IPORT
NPORT=$(free_port)
NURL="http://127.0.0.1:$NPORT"
sed -e "s/127\.0\.0\.1:8081/127.0.0.1:$APORT/" -e "s/127\.0\.0\.1:8082/127.0.0.1:$BPORT/" \
    -e "s/listen 127\.0\.0\.1:8080;/listen 127.0.0.1:$NPORT;/" docs/deploy/nginx-canal.conf >"$TMP/canal.conf"
checkf "docs/deploy/nginx-canal.conf has the three ports the test replaces" 3 \
    "$(grep -c -e ":$APORT " -e ":$BPORT " -e ":$NPORT;" "$TMP/canal.conf")"
start_nginx "$TMP/canal.conf" '$status "$upstream_addr" "$upstream_status" $request_id'
i=0
while [ "$(status "$NURL/home/plaintext")" != 200 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
got=$(body "$NURL/home/plaintext")
checkf "nginx answers through the upstream" "Hello, World!" "$got"
[ "$got" = "Hello, World!" ] || sed 's/^/# nginx: /' "$TMP/nginx.err" "$TMP/nginx/error.log" 2>/dev/null
checkf "nginx hides the health endpoints" 404 "$(status "$NURL/health/ready")"
id=$(header "$NURL/home/json" x-request-id -H 'X-Request-Id: spoofed-by-client')
checkf "canal answers with nginx's request ID (32 hex digits), not the client's" yes \
    "$(echo "$id" | grep -Eq '^[0-9a-f]{32}$' && grep -q " $id\$" "$TMP/nginx-access.log" && echo yes || echo "no ($id)")"
LOGLINES=$(wc -l <"$TMP/nginx-access.log")

# ---- 1. SIGTERM one instance under load ----
wrk_run 1
sleep 2
kill -TERM "$APID"
sleep 0.3
checkf "instance a, draining: readiness 503" 503 "$(status "http://127.0.0.1:$APORT/health/ready")"
checkf "instance a, draining: still serving" 200 "$(status "http://127.0.0.1:$APORT/home/plaintext")"
wait "$APID"
checkf "instance a exits 0 after draining" 0 "$?"
wrk_check 1 "SIGTERM under load"

# ---- 2. zero-downtime restart on the same port (--reuse-port) ----
instance a2 "$APORT" # a comes back where it was
APID=$IPID
wrk_run 2
sleep 2
# the new b binds b's port while b still listens: told to share it (else it refuses to start)
instance b2 "$BPORT" "$TMP/b2-access.log" --reuse-port on
B2PID=$IPID
checkf "the new instance listens on the old one's port" "$BPORT" "$IPORT"
kill -TERM "$BPID"
wait "$BPID"
checkf "the old instance exits 0" 0 "$?"
wrk_check 2 "restart on the same port"
served=$(wc -l <"$TMP/b2-access.log")
checkf "the new instance served requests" yes "$([ "$served" -gt 0 ] && echo yes || echo no)"
echo "# the new instance on :$BPORT answered $served requests"

kill -QUIT "$NPID"
wait "$NPID"
kill -TERM "$APID" "$B2PID"
sleep 0.3
kill -TERM "$APID" "$B2PID" 2>/dev/null # a second SIGTERM ends the drain delay
wait "$APID"
checkf "instance a2 exits 0" 0 "$?"
wait "$B2PID"
checkf "instance b2 exits 0" 0 "$?"
SERVER_PIDS=""
exit $FAILED
