#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# Behind a load balancer, with curl against canal-demo: the health endpoints, the drain delay
# on SIGTERM (readiness 503 while the app still serves), request IDs, and X-Forwarded-For /
# Forwarded believed from a trusted proxy only (a spoofed header from another peer address,
# 127.0.0.2, is ignored), as the access log shows.
. test/e2e-lib.sh

LOG=$TMP/access.log
start demo "$BIN/canal-demo" --threads 2 --access-log "$LOG" --trusted-proxies 127.0.0.1 \
    --shutdown-delay 600000 || exit 0

check "live" '{"status":"live"}' "$(body "$URL/health/live")"
check "ready" '{"status":"ready"}' "$(body "$URL/health/ready")"
check "ready is not cached" "no-store" "$(header "$URL/health/ready" cache-control)"
check "HEAD ready" 200 "$(status "$URL/health/ready" -I)"
check "POST ready is 405" 405 "$(status "$URL/health/ready" -X POST)"

# request IDs: made here, or a trusted proxy's kept; in problem details too
check_match "a request ID is made" '^[0-9a-f]{8}-[0-9a-f]+-[0-9a-f]+$' "$(header "$URL/home/json" x-request-id)"
check "a trusted proxy's request ID is kept" "lb-7f3a" "$(header "$URL/home/json" x-request-id -H 'X-Request-Id: lb-7f3a')"
check_match "problem details name the request" '"requestId":"lb-404"\}$' "$(body "$URL/home/employee/99" -H 'X-Request-Id: lb-404')"
check "the body of an answer is unchanged" '{"message":"Hello, World!"}' "$(body "$URL/home/json" -H 'X-Request-Id: x')"

# the client address: believed from 127.0.0.1 (trusted), not from 127.0.0.2
curl -s -o /dev/null -H 'X-Forwarded-For: 198.51.100.1, 203.0.113.9' -H 'User-Agent: xff-trusted' "$URL/home/plaintext"
curl -s -o /dev/null -H 'Forwarded: for="[2001:db8::9]:443";proto=https' -H 'User-Agent: fwd-trusted' "$URL/home/plaintext"
if curl -s -o /dev/null --interface 127.0.0.2 "$URL/health/live" 2>/dev/null; then
    curl -s -o /dev/null --interface 127.0.0.2 -H 'X-Forwarded-For: 203.0.113.66' -H 'X-Request-Id: forged' \
        -H 'User-Agent: xff-spoofed' "$URL/home/plaintext"
    have_127_0_0_2=1
else
    echo "# 127.0.0.2 is not usable as a source address here: the spoofing check is skipped"
    have_127_0_0_2=0
fi

# SIGTERM: readiness turns 503 at once, but the app keeps listening and serving (new
# connections too) until the delay ends; a second SIGTERM ends it
kill -TERM "$PID"
i=0
while [ "$(status "$URL/health/ready")" != 503 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "draining: ready is 503" '{"status":"draining"}' "$(body "$URL/health/ready")"
check "draining: live is 200" 200 "$(status "$URL/health/live")"
check "draining: still serving" "Hello, World!" "$(body "$URL/home/plaintext")"
check "draining: still serving /api/woo" '{"id":1,"name":"Woo"}' "$(body "$URL/api/woo")"
check_match "draining is logged" 'readiness answers 503; still serving for 600000 ms' "$(cat "$TMP/demo.err")"
stop demo # the second SIGTERM

check_match "access log: the client behind a trusted proxy" '^203\.0\.113\.9 - - .*"xff-trusted" "[0-9a-f]{8}-' "$(grep xff-trusted "$LOG")"
check_match "access log: Forwarded" '^2001:db8::9 - - .*"fwd-trusted"' "$(grep fwd-trusted "$LOG")"
check_match "access log: the request ID kept" '"lb-7f3a"$' "$(grep '"lb-7f3a"' "$LOG")"
if [ $have_127_0_0_2 = 1 ]; then
    check_match "access log: a spoofed X-Forwarded-For from an untrusted peer is ignored" \
        '^127\.0\.0\.2 - - .*"xff-spoofed" "[0-9a-f]{8}-' "$(grep xff-spoofed "$LOG")"
fi

# without trusted proxies and request IDs: the peer address, no header, the plain log format
start plain "$BIN/canal-demo" --threads 1 --access-log "$LOG.2" --request-id off || exit 0
check "no request ID when off" "" "$(header "$URL/home/json" x-request-id)"
curl -s -o /dev/null -H 'X-Forwarded-For: 203.0.113.9' -H 'User-Agent: no-proxies' "$URL/home/plaintext"
stop plain
check_match "access log: the peer when no proxy is trusted" '^127\.0\.0\.1 - - .*"no-proxies"$' "$(grep no-proxies "$LOG.2")"

# bad flags are refused with the reason
"$BIN/canal-demo" --port 0 --trusted-proxies 10.0.0.0/40 >/dev/null 2>"$TMP/bad.err"
check "a bad CIDR is refused" 2 "$?"
check_match "with the reason" "trusted proxies: '10\.0\.0\.0/40' is not an address or CIDR" "$(cat "$TMP/bad.err")"
