#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 py:prometheus_client
# The operations side of canal-demo with real clients: /metrics scraped by curl and parsed by
# the official Prometheus Python client's text-format parser (test/prometheus/check.py), static files (MIME types, Range,
# ETag and If-None-Match, the .gz sibling, traversal with curl --path-as-is), gzip
# compression (curl --compressed, raw Accept-Encoding, Vary) and CORS (simple, preflight,
# refused origin), in both modes.
. test/e2e-lib.sh

# the parser: the official Python client's (Debian's python3-prometheus-client). The npm
# parse-prometheus-text-format 1.1.1 was tried first: it folds histograms that carry labels
# besides "le" into one series, so it cannot check per-route histograms.
PY=/usr/bin/python3
if $PY -c 'import prometheus_client.parser' 2>/dev/null; then
    ok "Prometheus text parser available (python3-prometheus-client)"
    PARSER=1
else
    not_ok "Prometheus text parser available (apt-get install python3-prometheus-client: .ci/install-deps)"
    PARSER=0
fi

STATIC=examples/demo/static

for mode in router controller; do
echo "# --mode $mode"
start demo "$BIN/canal-demo" --mode $mode --threads 2 --access-log off --static-dir "$STATIC" || exit 0

# ---- metrics: a known number of requests, then one scrape ----
for i in 1 2 3 4 5; do curl -s -o /dev/null "$URL/home/plaintext"; done
for i in 1 2 3; do curl -s -o /dev/null "$URL/home/employee/3"; done
curl -s -o /dev/null "$URL/home/employee/99"
curl -s -o /dev/null "$URL/nope"
curl -s -o /dev/null -X POST "$URL/api/woo"
curl -s -o /dev/null -I "$URL/home/json"
check "metrics content type" "text/plain; version=0.0.4; charset=utf-8" "$(header "$URL/metrics" content-type)"
curl -s "$URL/metrics" >"$TMP/scrape"
if [ "$PARSER" = 1 ] && $PY test/prometheus/check.py <"$TMP/scrape" >"$TMP/samples" 2>"$TMP/parse.err"; then
    ok "the scrape parses as Prometheus text format, histograms consistent"
    # controller mode's conventional routes are lower-cased ("home/plaintext") as router mode's
    v() { grep -F "$1 " "$TMP/samples" | head -n 1 | sed 's/.* //'; }
    check "plaintext GET 200 count" 5 "$(v 'canal_http_requests_total{route="/home/plaintext",method="GET",status="200"}')"
    check "employee GET 200 count" 3 "$(v 'canal_http_requests_total{route="/home/employee/{id:int}",method="GET",status="200"}')"
    check "employee GET 404 count" 1 "$(v 'canal_http_requests_total{route="/home/employee/{id:int}",method="GET",status="404"}')"
    check "json HEAD 200 count" 1 "$(v 'canal_http_requests_total{route="/home/json",method="HEAD",status="200"}')"
    check "unmatched 404 count" 1 "$(v 'canal_http_requests_total{route="(unmatched)",method="GET",status="404"}')"
    check "unmatched POST 405 count" 1 "$(v 'canal_http_requests_total{route="(unmatched)",method="POST",status="405"}')"
    check "employee latency count" 4 "$(v 'canal_http_request_duration_seconds_count{route="/home/employee/{id:int}"}')"
    check "plaintext +Inf bucket" 5 "$(v 'canal_http_request_duration_seconds_bucket{route="/home/plaintext",le="+Inf"}')"
    check "workers gauge" 2 "$(v canal_workers)"
    check_match "in-flight gauge counts the scrape" '^[1-9]' "$(v canal_http_requests_in_flight)"
    check_match "connections gauge" '^[1-9]' "$(v canal_http_connections)"
    check "the scrapes so far counted by the next (content-type check + first)" 2 \
        "$(curl -s "$URL/metrics" | $PY test/prometheus/check.py | grep -F 'canal_http_requests_total{route="/metrics",method="GET",status="200"}' | sed 's/.* //')"
else
    not_ok "the scrape parses: $(cat "$TMP/parse.err" 2>/dev/null)"
fi

# ---- static files ----
check "static index.html" 200 "$(status "$URL/static/")"
check "static html type" "text/html" "$(header "$URL/static/index.html" content-type)"
check "static css type" "text/css" "$(header "$URL/static/style.css" content-type)"
check "static js type" "application/javascript" "$(header "$URL/static/app.js" content-type)"
check "static svg type" "image/svg+xml" "$(header "$URL/static/logo.svg" content-type)"
check "static body" "$(cat $STATIC/style.css)" "$(body "$URL/static/style.css")"
check "static range 206" 206 "$(status "$URL/static/style.css" -H 'Range: bytes=0-9')"
check "static range bytes" "$(head -c 10 $STATIC/style.css)" "$(body "$URL/static/style.css" -H 'Range: bytes=0-9')"
check_match "static content-range" '^bytes 0-9/[0-9]+$' "$(header "$URL/static/style.css" content-range -H 'Range: bytes=0-9')"
check "static unsatisfiable range 416" 416 "$(status "$URL/static/style.css" -H 'Range: bytes=99999-')"
etag=$(header "$URL/static/style.css" etag)
check_match "static ETag" '^"[0-9a-f]+-[0-9a-f]+"$' "$etag"
check "If-None-Match 304" 304 "$(status "$URL/static/style.css" -H "If-None-Match: $etag")"
check "If-None-Match other 200" 200 "$(status "$URL/static/style.css" -H 'If-None-Match: "x"')"
check "static HEAD length" "$(wc -c <$STATIC/lorem.txt | tr -d ' ')" "$(header "$URL/static/lorem.txt" content-length -I)"
check ".gz sibling served to gzip clients" gzip "$(header "$URL/static/lorem.txt" content-encoding -H 'Accept-Encoding: gzip')"
check ".gz sibling bytes" "$(wc -c <$STATIC/lorem.txt.gz | tr -d ' ')" "$(curl -s -H 'Accept-Encoding: gzip' "$URL/static/lorem.txt" | wc -c | tr -d ' ')"
check ".gz sibling Vary" accept-encoding "$(header "$URL/static/lorem.txt" vary -H 'Accept-Encoding: gzip')"
check "curl --compressed decodes it" "$(cat $STATIC/lorem.txt)" "$(body "$URL/static/lorem.txt" --compressed)"
check "plain file without Accept-Encoding" "" "$(header "$URL/static/lorem.txt" content-encoding)"
check "missing static file 404" 404 "$(status "$URL/static/nope.txt")"
for evil in "/static/../examples/demo/main.c" "/static/%2e%2e/main.c" "/static/..%2fmain.c" \
    "/static/%2e%2e%2f%2e%2e%2fdata/northwind.json" "/static/../../../../etc/passwd" "/static/%00"; do
    code=$(status "$URL$evil" --path-as-is)
    check_match "traversal $evil refused" '^4[0-9][0-9]$' "$code"
    check "traversal $evil leaks nothing" "" "$(body "$URL$evil" --path-as-is | grep -E 'canal_app|root:|northwind|EmployeeID' | head -n 1)"
done

# ---- compression ----
check "orders gzip when asked" gzip "$(header "$URL/home/orders/0?size=20" content-encoding -H 'Accept-Encoding: gzip')"
check "orders Vary" accept-encoding "$(header "$URL/home/orders/0?size=20" vary -H 'Accept-Encoding: gzip')"
check "orders --compressed same bytes" "$(body "$URL/home/orders/0?size=20")" "$(body "$URL/home/orders/0?size=20" --compressed)"
check "orders identity when not asked" "" "$(header "$URL/home/orders/0?size=20" content-encoding)"
check "orders identity for br only" "" "$(header "$URL/home/orders/0?size=20" content-encoding -H 'Accept-Encoding: br')"
check "small answers stay identity" "" "$(header "$URL/home/plaintext" content-encoding -H 'Accept-Encoding: gzip')"
check "plaintext bytes unchanged" "Hello, World!" "$(body "$URL/home/plaintext" --compressed)"

# ---- CORS: any origin may GET ----
O='Origin: https://app.example'
check "simple request: allow-origin" "*" "$(header "$URL/home/json" access-control-allow-origin -H "$O")"
check "no Origin: no CORS header" "" "$(header "$URL/home/json" access-control-allow-origin)"
check "preflight 204" 204 "$(status "$URL/home/employee/3" -X OPTIONS -H "$O" -H 'Access-Control-Request-Method: GET')"
check "preflight allow-methods" "GET,HEAD" "$(header "$URL/home/employee/3" access-control-allow-methods -X OPTIONS -H "$O" -H 'Access-Control-Request-Method: GET')"
check "preflight max-age" 600 "$(header "$URL/home/employee/3" access-control-max-age -X OPTIONS -H "$O" -H 'Access-Control-Request-Method: GET')"
check "preflight allowed header" "content-type" "$(header "$URL/home/json" access-control-allow-headers -X OPTIONS -H "$O" -H 'Access-Control-Request-Method: GET' -H 'Access-Control-Request-Headers: content-type')"
check "preflight refused header 403" 403 "$(status "$URL/home/json" -X OPTIONS -H "$O" -H 'Access-Control-Request-Method: GET' -H 'Access-Control-Request-Headers: x-secret')"
check "plain OPTIONS unchanged" "GET, HEAD, OPTIONS" "$(header "$URL/api/woo" allow -X OPTIONS)"
stop demo
done

# ---- CORS with credentials and a list of origins: the test app (test/e2e/opsapp.c) ----
start opsapp "$TBIN/canal-opsapp" || exit 0
A='Origin: https://a.example'
check "credentials: origin echoed" "https://a.example" "$(header "$URL/api/me" access-control-allow-origin -H "$A")"
check "credentials: allow-credentials" true "$(header "$URL/api/me" access-control-allow-credentials -H "$A")"
check "credentials: Vary Origin" Origin "$(header "$URL/api/me" vary -H "$A")"
check "credentials: exposed headers" "X-Request-Count" "$(header "$URL/api/me" access-control-expose-headers -H "$A")"
check "disallowed origin: no allow-origin" "" "$(header "$URL/api/me" access-control-allow-origin -H 'Origin: https://evil.example')"
check "disallowed origin: still served" 200 "$(status "$URL/api/me" -H 'Origin: https://evil.example')"
check "preflight with credentials 204" 204 "$(status "$URL/api/me" -X OPTIONS -H "$A" -H 'Access-Control-Request-Method: PUT' -H 'Access-Control-Request-Headers: Authorization')"
check "preflight echoes the origin" "https://a.example" "$(header "$URL/api/me" access-control-allow-origin -X OPTIONS -H "$A" -H 'Access-Control-Request-Method: PUT')"
check "preflight disallowed origin 403" 403 "$(status "$URL/api/me" -X OPTIONS -H 'Origin: https://evil.example' -H 'Access-Control-Request-Method: PUT')"
check "preflight method not in the policy 403" 403 "$(status "$URL/api/me" -X OPTIONS -H "$A" -H 'Access-Control-Request-Method: POST')"
check "preflight method without a route: no allow-origin" "" "$(header "$URL/api/me" access-control-allow-origin -X OPTIONS -H "$A" -H 'Access-Control-Request-Method: DELETE')"
check "route outside the policy: no CORS" "" "$(header "$URL/public" access-control-allow-origin -H "$A")"
check "per-route compression off" "" "$(header "$URL/public" content-encoding -H 'Accept-Encoding: gzip')"
check "compression on elsewhere" gzip "$(header "$URL/api/me" content-encoding -H 'Accept-Encoding: gzip')"
stop opsapp
