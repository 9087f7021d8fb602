#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# The server core through canal-testapp: bodies and limits, JSON, queries, route values,
# headers, errors in production and development, load on every worker, graceful shutdown.
. test/e2e-lib.sh

start prod "$TBIN/canal-testapp" --threads 2 --max-body 1000 || exit 0

# bodies and the body limit
check "echo body" "hello" "$(body "$URL/echo" --data-binary hello -H 'content-type: text/plain')"
head -c 1000 /dev/zero | tr '\0' a >"$TMP/1000"
head -c 1001 /dev/zero | tr '\0' a >"$TMP/1001"
check "body at the limit" 200 "$(status "$URL/echo" --data-binary @"$TMP/1000")"
check "body over the limit: 413" 413 "$(status "$URL/echo" --data-binary @"$TMP/1001")"
check "chunked body over the limit: 413" 413 "$(status "$URL/echo" -H 'transfer-encoding: chunked' --data-binary @"$TMP/1001")"
check "huge declared body answered early: 413" 413 "$(status "$URL/echo" -H 'content-length: 1000000000' --data-binary x --max-time 5)"
check "server answers after 413s" 200 "$(status "$URL/echo" --data-binary x)"
# libh2o answers these itself (before canal's handler): problem details all the same
check "libh2o's 413 is problem details" \
    '{"type":"about:blank","title":"Content Too Large","status":413,"detail":"request entity is too large"}' \
    "$(body "$URL/echo" --data-binary @"$TMP/1001")"
check "libh2o's 413: its content type" "application/problem+json" \
    "$(header "$URL/echo" content-type --data-binary @"$TMP/1001")"
check "libh2o's 400 for a broken chunk is problem details" \
    '{"type":"about:blank","title":"Bad Request","status":400,"detail":"broken chunked-encoding"}' \
    "$(printf 'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n' |
        python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",'"$PORT"')); s.sendall(sys.stdin.buffer.read())
d=b""
while True:
    c=s.recv(65536)
    if not c: break
    d+=c
sys.stdout.write(d.split(b"\r\n\r\n",1)[1].decode())')"

# the request's own limits: target length 414, header count and size 431, query parameters 414
long=$(head -c 8200 /dev/zero | tr '\0' a)
check "request target over 8 KiB: 414" 414 "$(status "$URL/echo?x=$long")"
check "request target at the limit is fine" 404 "$(status "$URL/$(head -c 8000 /dev/zero | tr '\0' a)")"
many=""
i=0
while [ $i -lt 65 ]; do many="$many -H X-H$i:v"; i=$((i + 1)); done
check "65 header fields: 431" 431 "$(status "$URL/query" $many)"
check "a 17 KiB header: 431" 431 "$(status "$URL/query" -H "X-Big: $(head -c 17000 /dev/zero | tr '\0' a)")"
check "257 query parameters: 414" 414 "$(status "$URL/query?$(i=0; while [ $i -lt 257 ]; do printf 'a=%d&' $i; i=$((i + 1)); done)")"
check "256 query parameters are fine" 200 "$(status "$URL/query?$(i=0; while [ $i -lt 256 ]; do printf 'a=%d&' $i; i=$((i + 1)); done)")"
check "server answers after the limits" 200 "$(status "$URL/query?a=1")"

# JSON bodies
check "json echo" '{"a":[1,2.5,"x"],"b":null}' "$(body "$URL/json" -H 'content-type: application/json' --data-binary '{"a":[1,2.5,"x"],"b":null}')"
check "json +json type" 200 "$(status "$URL/json" -H 'content-type: application/merge-patch+json' --data-binary '{}')"
check "malformed json: 400" 400 "$(status "$URL/json" -H 'content-type: application/json' --data-binary '{"a":')"
check "duplicate keys: 400" 400 "$(status "$URL/json" -H 'content-type: application/json' --data-binary '{"a":1,"a":2}')"
check "json without content type: 400" 400 "$(status "$URL/json" --data-binary '{}' -H 'content-type: text/plain')"

# queries and route values
check "query: decoded, repeated keys kept, + is space" '[["a","1"],["b","x y"],["a","2"],["c","&="],["flag",""]]' \
    "$(body "$URL/query?a=1&b=x+y&a=2&&c=%26%3D&flag")"
check "route values" '{"a":"x/y z","b":-7,"route":"param/{a}/{b:int}"}' "$(body "$URL/param/x%2Fy%20z/-7")"
check "int constraint rejects +7" 404 "$(status "$URL/param/x/+7")"

# headers
check "request header read, response header added" "hi there" "$(header "$URL/header" x-echo -H 'X-Test: hi there')"
check "redirect status" 302 "$(status "$URL/redirect")"
check "redirect location" "/target?x=1" "$(header "$URL/redirect" location)"
check "the last answer set is the one sent" "second" "$(body "$URL/twice")"

# errors in production: a bare problem, nothing internal
check "failing handler: 500" 500 "$(status "$URL/fail")"
check "production 500 body" '{"type":"about:blank","title":"Internal Server Error","status":500}' "$(body "$URL/fail")"
check "handler that does not answer: 500" 500 "$(status "$URL/noanswer")"
check_match "the error goes to stderr" 'GET /fail: boom' "$(cat "$TMP/prod.err")"

# every worker busy under load (wrk), and no error answers
if command -v wrk >/dev/null 2>&1; then
    wrk -t 2 -c 100 -d 2s "$URL/query?a=1" >"$TMP/wrk.out" 2>&1
    check "wrk: no socket errors" "" "$(grep 'Socket errors' "$TMP/wrk.out")"
    check "wrk: no non-2xx" "" "$(grep 'Non-2xx' "$TMP/wrk.out")"
    counts=$(body "$URL/stats")
    check_match "every worker served requests under wrk -c 100 ($counts)" '^\[[1-9][0-9]{2,},[1-9][0-9]{2,}\]$' "$counts"
    echo "# wrk -c 100 on /query: $(grep 'Requests/sec' "$TMP/wrk.out"); per worker: $counts"
else
    not_ok "wrk is installed"
fi
stop prod

# development: the error page shows the details, HTML-escaped
start dev "$TBIN/canal-testapp" --threads 1 --env development || exit 0
page=$(body "$URL/fail?q=%3Cb%3E" -H 'X-Evil: <img src=x>')
check "development 500" 500 "$(status "$URL/fail")"
check "development page is HTML" "text/html; charset=utf-8" "$(header "$URL/fail" content-type)"
check_match "error text escaped" 'boom &lt;script&gt;alert\(1\)&lt;/script&gt; &amp; &quot;quotes&quot;' "$page"
check_match "query shown escaped" '<th>q</th><td>&lt;b&gt;</td>' "$page"
check_match "header shown escaped" '<th>x-evil</th><td>&lt;img src=x&gt;</td>' "$page"
check_match "route shown" '<th>template</th><td>fail</td>' "$page"
check "no raw script tag" "" "$(printf '%s' "$page" | grep -o '<script>')"
stop dev

# graceful shutdown: requests in flight when SIGTERM arrives are all answered
start drain "$TBIN/canal-testapp" --threads 2 || exit 0
i=0
while [ $i -lt 8 ]; do
    curl -s -o "$TMP/drain.$i" -w '%{http_code}' "$URL/hang?ms=800" >"$TMP/drain.$i.status" &
    i=$((i + 1))
done
# SIGTERM once all 8 are in flight (dispatched and deferred: /hang answers from a helper
# thread after 800 ms, and /stats, which counts itself too, is served meanwhile), however
# slowly the curls started on a loaded machine
polls=0
while [ $polls -lt 200 ]; do
    polls=$((polls + 1))
    n=$(curl -s --max-time 5 "$URL/stats" | tr -d '[] ' | tr ',' '\n' | awk '{s += $1} END {print s + 0}')
    [ "$n" -ge $((8 + polls)) ] && break
    sleep 0.05
done
kill -TERM "$PID"
wait "$PID"
rc=$?
SERVER_PIDS=""
wait
answered=0
i=0
while [ $i -lt 8 ]; do
    [ "$(cat "$TMP/drain.$i.status")" = 200 ] && [ "$(cat "$TMP/drain.$i")" = "hung 800" ] && answered=$((answered + 1))
    i=$((i + 1))
done
check "graceful shutdown: every in-flight request answered" 8 "$answered"
check "graceful shutdown: exit 0" 0 "$rc"
check "after shutdown nothing listens" 000 "$(status "$URL/sleep" --max-time 2)"

# configuration errors are clear, not crashes
"$TBIN/canal-testapp" --port 99999 >/dev/null 2>"$TMP/badport.err"
check "bad --port exits 2" 2 "$?"
check_match "bad --port says why" "port: bad value '99999'" "$(cat "$TMP/badport.err")"
CANAL_ENV=staging "$TBIN/canal-testapp" >/dev/null 2>"$TMP/badenv.err"
check "bad CANAL_ENV exits 2" 2 "$?"
"$TBIN/canal-testapp" --prot 9000 >/dev/null 2>"$TMP/typo.err"
check "a mistyped flag (--prot) exits 2, not a server on 8080" 2 "$?"
check_match "a mistyped flag is named" "unknown flag --prot; see --help" "$(cat "$TMP/typo.err")"
"$TBIN/canal-testapp" --help >"$TMP/help.out" 2>&1
check "--help exits 0" 0 "$?"
check_match "--help lists the flags and their variables" "--shutdown-timeout MS.*CANAL_SHUTDOWN_TIMEOUT" "$(tr '\n' ' ' <"$TMP/help.out")"
for app in demo offload otlp todo woo-controller woo-router; do
    "$BIN/canal-$app" --help >/dev/null 2>&1
    h=$?
    "$BIN/canal-$app" --prot 9000 >/dev/null 2>&1
    check "canal-$app: --help exits 0, --prot exits 2" "0 2" "$h $?"
done
start envport env CANAL_THREADS=3 "$TBIN/canal-testapp" || exit 0
check "CANAL_THREADS sets the worker count" "[0,0,0]" "$(body "$URL/stats" | sed 's/[1-9]/0/')"
stop envport
