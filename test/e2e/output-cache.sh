#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl
# The output cache (canal/cache.h) end to end, over real connections to a server of 4 worker
# threads (canal-outputcacheapp, test/e2e/outputcacheapp.c): a hit does not run the handler
# and gives its headers back, HEAD from the GET's entry, the query and the vary headers in the
# key, every answer never kept (not GET, not 200, Set-Cookie, Cache-Control private and
# no-store, a request with Authorization or a Cookie unless the policy allows it), the time to
# live (a 30 ms one, polled: nothing asserts on time), the size bound, a tag evicted from a
# handler on another connection, and the metrics.
. test/e2e-lib.sh

start oc "$TBIN/canal-outputcacheapp" --threads 4 || exit 0

# ---- a hit, HEAD, the key ----
check "a first GET runs the handler" "page 1" "$(body "$URL/page")"
check "the next is served from the cache" "page 1" "$(body "$URL/page")"
check "... with the handler's header, once" "by the handler" \
    "$(curl -s -D - -o /dev/null "$URL/page" | tr -d '\r' | grep -i '^x-made:' | sed 's/^[^:]*: *//' | paste -sd '|')"
check "... its type" "text/plain" "$(header "$URL/page" content-type)"
check "HEAD from the GET's entry: its length, no body" "6 0" \
    "$(curl -s -I "$URL/page" | tr -d '\r' | sed -n 's/^[Cc]ontent-[Ll]ength: //p') $(curl -s -I -o /dev/null -w '%{size_download}' "$URL/page")"
check "the query is in the key" "page 2 page 3 page 2" \
    "$(body "$URL/page?a=1") $(body "$URL/page?a=2") $(body "$URL/page?a=1")"
check "vary: by Accept-Language" "vary 1 vary 2 vary 3 vary 2 vary 1" \
    "$(body "$URL/vary") $(body "$URL/vary" -H 'Accept-Language: fr') $(body "$URL/vary" -H 'Accept-Language: de') $(body "$URL/vary" -H 'Accept-Language: fr') $(body "$URL/vary")"
check "vary: by X-Tenant, a header libh2o has no token for" "vary 4 vary 4 vary 1" \
    "$(body "$URL/vary" -H 'X-Tenant: a') $(body "$URL/vary" -H 'x-tenant: a') $(body "$URL/vary" -H 'X-Other: a')"

# ---- never kept ----
for r in cookie private nostore missing; do
    check "never kept: /$r" "$r 1 $r 2 $r 3" "$(body "$URL/$r") $(body "$URL/$r") $(body "$URL/$r")"
done
check "never kept: POST" "post 1 post 2" "$(body "$URL/post" -X POST) $(body "$URL/post" -X POST)"
check "a request with Authorization runs the handler, and is not kept" "page 4 page 1 page 5" \
    "$(body "$URL/page" -H 'Authorization: Bearer x') $(body "$URL/page") $(body "$URL/page" -H 'Authorization: Bearer x')"
check "a request with a Cookie runs the handler" "page 6 page 1" "$(body "$URL/page" -H 'Cookie: theme=dark') $(body "$URL/page")"
check "allow_credentials: kept for them too" "anyone 1 anyone 1 anyone 1" \
    "$(body "$URL/anyone" -H 'Authorization: Bearer x') $(body "$URL/anyone" -H 'Cookie: sid=1') $(body "$URL/anyone")"

# ---- time to live, polled ----
# (whether the second request comes within 30 ms is not asserted: only that the entry goes)
check "a 30 ms entry: the first request runs the handler" "short 1" "$(body "$URL/short")"
again=0
i=0
while [ $i -lt 200 ]; do
    [ "$(body "$URL/short")" != "short 1" ] && { again=1; break; }
    sleep 0.02
    i=$((i + 1))
done
check "... expires: the handler runs again" 1 "$again"

# ---- tags ----
check "tagged: stored" "tagged 1 tagged 1" "$(body "$URL/tagged") $(body "$URL/tagged")"
check "canal_cache_evict_tag() from a handler: 204" 204 "$(status "$URL/evict?tag=news" -X POST)"
check "... the entry is gone" "tagged 2 tagged 2" "$(body "$URL/tagged") $(body "$URL/tagged")"
check "... other entries stay" "page 1" "$(body "$URL/page")"
check "an unknown tag: 404" 404 "$(status "$URL/evict?tag=sports" -X POST)"

# ---- the size bound: 64 KiB, answers of 1.5 KiB ----
k=0
while [ $k -lt 120 ]; do
    curl -s -o /dev/null "$URL/big?k=$k"
    k=$((k + 1))
done
check "a big answer is kept whole" 1500 "$(body "$URL/big?k=119" | wc -c | tr -d ' ')"
check "the first of 120 was pushed out by the bound" "big 121" "$(body "$URL/big?k=0" | cut -c1-7)"

# ---- metrics ----
m=$(body "$URL/metrics")
metric() { echo "$m" | sed -n "s/^$1 //p"; }
check_match "metrics: hits" '^[1-9][0-9]*$' "$(metric 'canal_cache_hits_total{cache="output"}')"
check_match "metrics: misses" '^[1-9][0-9]*$' "$(metric 'canal_cache_misses_total{cache="output"}')"
check_match "metrics: evictions by the size bound" '^[1-9][0-9]*$' "$(metric 'canal_cache_evictions_total{cache="output"}')"
check_match "metrics: bytes held, at most 64 KiB" '^[0-9]+$' "$(metric 'canal_cache_bytes{cache="output"}')"
check "metrics: bytes held within the bound" 1 "$([ "$(metric 'canal_cache_bytes{cache="output"}')" -le 65536 ] && echo 1)"
check "metrics: one tag evicted" 1 "$(metric canal_output_cache_tag_evictions_total)"
check_match "metrics: answers not kept counted" '^[1-9][0-9]*$' "$(metric canal_output_cache_skipped_total)"
check_match "metrics: stores" '^[1-9][0-9]*$' "$(metric canal_output_cache_stores_total)"
stop oc
