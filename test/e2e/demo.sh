#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# The demo app in both modes: the article's endpoints, bytes and types; 404, 405, HEAD,
# OPTIONS; then router mode and controller mode side by side answer the same bytes.
. test/e2e-lib.sh

printf 'k3y-%s\n' "$$" >"$TMP/demo.key" # the file's bytes less the newline are the key
for mode in router controller; do
echo "# --mode $mode"
start demo "$BIN/canal-demo" --mode $mode --threads 2 --access-log "$TMP/access.log" --api-key "$TMP/demo.key" || exit 0
check "the protected route: no key, 401" 401 "$(status "$URL/home/secret")"
check "and the challenge" 'ApiKey realm="canal-demo"' "$(header "$URL/home/secret" www-authenticate)"
check "a wrong key: 401" 401 "$(status "$URL/home/secret" -H "X-Api-Key: k3y")"
check "the key: 200" '{"message":"Only with the key."}' "$(body "$URL/home/secret" -H "X-Api-Key: k3y-$$")"
check "the key given twice: 401" 401 "$(status "$URL/home/secret" -H "X-Api-Key: k3y-$$" -H "X-Api-Key: k3y-$$")"

check "plaintext body" "Hello, World!" "$(body "$URL/home/plaintext")"
check "plaintext type" "text/plain; charset=utf-8" "$(header "$URL/home/plaintext" content-type)"
check "json body" '{"message":"Hello, World!"}' "$(body "$URL/home/json")"
check "json type" "application/json" "$(header "$URL/home/json" content-type)"
check "woo body" '{"id":1,"name":"Woo"}' "$(body "$URL/api/woo")"
check_match "employee 3" '^\{"EmployeeID":3,"LastName":"Leverling","FirstName":"Janet",.*"Notes":"[^"]*"\}$' "$(body "$URL/home/employee/3")"
check "employee 99 is 404" 404 "$(status "$URL/home/employee/99")"
# every order, streamed (more than the stream's queue holds: the rest follows as it is read)
curl -s -D "$TMP/nd.h" "$URL/home/orders.ndjson" >"$TMP/nd"
check "orders.ndjson: chunked NDJSON" "application/x-ndjson chunked" \
    "$(tr -d '\r' <"$TMP/nd.h" | sed -n 's/^content-type: //p; s/^transfer-encoding: //p' | paste -sd ' ')"
check "orders.ndjson: every order, each line one JSON object" "830 10248 11077" \
    "$(python3 -c 'import json,sys; o=[json.loads(l) for l in open(sys.argv[1])]; print(len(o), o[0]["OrderID"], o[-1]["OrderID"])' "$TMP/nd")"
check "orders.ndjson: a slow reader gets the same bytes" "$(cksum <"$TMP/nd")" \
    "$(curl -s --limit-rate 200k "$URL/home/orders.ndjson" | cksum)"
check "employee 99 problem type" "application/problem+json" "$(header "$URL/home/employee/99" content-type)"
check "employee abc is 404 (constraint)" 404 "$(status "$URL/home/employee/abc")"
check "employee 2147483648 is 404 (int32)" 404 "$(status "$URL/home/employee/2147483648")"
check "employee %33 decodes to 3" 200 "$(status "$URL/home/employee/%33")"

o=$(body "$URL/home/orders/3?index=0&size=2")
check_match "orders page of 2" '^\[\{"OrderID":10258,.*\},\{"OrderID":10263,.*\}\]$' "$o"
check "orders of 0 (everyone) default size 10" 10 "$(body "$URL/home/orders/0" | grep -o '"OrderID"' | wc -l | tr -d ' ')"
check "orders size 100" 100 "$(body "$URL/home/orders/0?size=100" | grep -o '"OrderID"' | wc -l | tr -d ' ')"
second=$(body "$URL/home/orders/0?size=2" | grep -o '"OrderID":[0-9]*' | sed -n 2p)
check "orders index=1&size=1 is the second order" "$second" "$(body "$URL/home/orders/0?index=1&size=1" | grep -o '"OrderID":[0-9]*')"
c=$(body "$URL/home/orders/0?customerid=ISEEU&size=100" | grep -o '"CustomerID":"[A-Z]*"' | sort -u)
check "orders filtered by customer" '"CustomerID":"ISEEU"' "$c"
check "orders past the end: empty array" "[]" "$(body "$URL/home/orders/3?index=1000")"
for bad in "size=0" "size=101" "size=x" "index=-1" "index=1.5" "size=1&size=2" "index=99999999999"; do
    check "orders $bad is 400" 400 "$(status "$URL/home/orders/3?$bad")"
done
check_match "orders 400 names the parameter" '"errors":\{"size":\[' "$(body "$URL/home/orders/3?size=0")"

check "unknown path 404" 404 "$(status "$URL/nope")"
check "wrong method 405" 405 "$(status "$URL/api/woo" -X POST)"
check "405 Allow" "GET, HEAD, OPTIONS" "$(header "$URL/api/woo" allow -X DELETE)"
check "HEAD status" 200 "$(status "$URL/home/json" -I)"
check "HEAD content-length" 27 "$(header "$URL/home/json" content-length -I)"
check "HEAD has no body" "" "$(curl -s -i -X HEAD -H 'connection: close' --max-time 3 "$URL/home/json" | sed '1,/^\r$/d' | head -c 10)"
check "OPTIONS 204" 204 "$(status "$URL/api/woo" -X OPTIONS)"
check "OPTIONS Allow" "GET, HEAD, OPTIONS" "$(header "$URL/api/woo" allow -X OPTIONS)"
check "case-insensitive literals" 200 "$(status "$URL/HOME/PlainText")"
check "trailing slash ignored" 200 "$(status "$URL/api/woo/")"
check "bad escape in path 400" 400 "$(status "$URL/api/%zz")"
check "%00 in path 400" 400 "$(status "$URL/api/%00")"
check "bad escape in query 400" 400 "$(status "$URL/api/woo?a=%4")"
check "absolute-form target" '{"id":1,"name":"Woo"}' "$(body "$URL/x" --request-target "http://example.com/api/woo")"

stop demo
check_match "access log in Combined Log Format" '^127\.0\.0\.1 - - \[[^]]+\] "GET /home/plaintext HTTP/1\.1" 200 13 "-" "curl/[^"]*" "[0-9a-f]{8}-[0-9a-f]+-[0-9a-f]+"$' "$(grep 'GET /home/plaintext' "$TMP/access.log" | head -n 1)"
rm -f "$TMP/access.log"
done

# both modes at once: every answer (status, headers but Date, body) byte for byte the same
start router "$BIN/canal-demo" --mode router --threads 1 || exit 0
RURL=$URL
start controller "$BIN/canal-demo" --mode controller --threads 1 || exit 0
CURL_=$URL
same=0
differ=""
# each process makes its own request IDs (prefixes differ, counters run alike): placeholders
ids='s/^x-request-id: [0-9a-f]*-/x-request-id: ID-/; s/"requestId":"[0-9a-f]*-/"requestId":"ID-/'
for path in /home/plaintext /home/json /home/employee/1 /home/employee/9 /home/employee/10 /home/employee/-1 \
    /home/employee/x "/home/orders/0" "/home/orders/3?index=0&size=5" "/home/orders/5?customerid=ISEEU" \
    "/home/orders/0?index=82&size=10" "/home/orders/3?size=0" "/home/orders/3?size=101&index=-1" \
    "/home/orders/3?index=x&size=1.5" "/home/orders/3?size=1&size=2" "/home/orders/3?customerid=a&customerid=b" \
    "/home/orders/3?index=%C3%A9" "/home/orders/3?index=%FF" "/home/orders/3?size=%20" /api/woo /API/WOO/ /nope / \
    "/home/%zz" "/home/orders/3?x=%g0" /home/orders.ndjson /home/secret; do
    for method in GET HEAD POST OPTIONS; do
        how="-X $method"
        [ $method = HEAD ] && how=-I # curl -X HEAD would wait for a body
        a=$(curl -s -i $how "$RURL$path" --max-time 5 | grep -v '^Date:' | sed "$ids")
        b=$(curl -s -i $how "$CURL_$path" --max-time 5 | grep -v '^Date:' | sed "$ids")
        if [ "$a" = "$b" ]; then same=$((same + 1)); else differ="$differ $method:$path"; fi
    done
done
check "router and controller modes answer the same bytes ($same answers)" "" "$differ"
check_match "answers carry a request ID" '^[0-9a-f]{8}-0-[0-9a-f]+$' "$(header "$RURL/home/plaintext" x-request-id)"
stop controller
PID=$(echo "$SERVER_PIDS" | awk '{print $1}')
stop router

# the two smallest programs, one per mode, answer the same
start wooc "$BIN/canal-woo-controller" --threads 1 || exit 0
WC=$URL
start woor "$BIN/canal-woo-router" --threads 1 || exit 0
check "woo-router answers" '{"id":1,"name":"Woo"}' "$(body "$URL/api/woo")"
check "woo-controller answers the same" '{"id":1,"name":"Woo"}' "$(body "$WC/api/woo")"
stop woor
PID=$(echo "$SERVER_PIDS" | awk '{print $1}')
stop wooc
