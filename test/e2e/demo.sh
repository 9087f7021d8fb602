#!/bin/sh
# SPDX-License-Identifier: MIT
# The demo app in router mode: the article's endpoints, bytes and types; 404, 405, HEAD, OPTIONS.
. test/e2e-lib.sh

start demo "$BIN/canal-demo" --threads 2 --access-log "$TMP/access.log" || exit 0

check "plaintext body" "Hello, World!" "$(body "$URL/home/plaintext")"
check "plaintext type" "text/plain; charset=utf-8" "$(header "$URL/home/plaintext" content-type)"
check "json body" '{"message":"Hello, World!"}' "$(body "$URL/home/json")"
check "json type" "application/json" "$(header "$URL/home/json" content-type)"
check "woo body" '{"id":1,"name":"Woo"}' "$(body "$URL/api/woo")"
check_match "employee 3" '^\{"EmployeeID":3,"LastName":"Leverling","FirstName":"Janet",.*"Notes":"[^"]*"\}$' "$(body "$URL/home/employee/3")"
check "employee 99 is 404" 404 "$(status "$URL/home/employee/99")"
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
check "HEAD has no body" "" "$(curl -s -X HEAD --max-time 2 "$URL/home/json" 2>/dev/null | head -c 10)"
check "OPTIONS 204" 204 "$(status "$URL/api/woo" -X OPTIONS)"
check "OPTIONS Allow" "GET, HEAD, OPTIONS" "$(header "$URL/api/woo" allow -X OPTIONS)"
check "case-insensitive literals" 200 "$(status "$URL/HOME/PlainText")"
check "trailing slash ignored" 200 "$(status "$URL/api/woo/")"
check "bad escape in path 400" 400 "$(status "$URL/api/%zz")"
check "%00 in path 400" 400 "$(status "$URL/api/%00")"
check "bad escape in query 400" 400 "$(status "$URL/api/woo?a=%4")"
check "absolute-form target" '{"id":1,"name":"Woo"}' "$(body "$URL/x" --request-target "http://example.com/api/woo")"

stop demo
check_match "access log in Combined Log Format" '^127\.0\.0\.1 - - \[[^]]+\] "GET /home/plaintext HTTP/1\.1" 200 13 "-" "curl/[^"]*"$' "$(grep 'GET /home/plaintext' "$TMP/access.log" | head -n 1)"
