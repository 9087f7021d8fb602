#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl
# Views (canal/view.h) end to end: the demo's HTML page in both modes (the same bytes, the
# type, escaping, HEAD, its ETag and 304, the output cache in production), its streamed page
# of 830 orders (chunked, the same bytes to a client that reads at 40 KB/s, HEAD), a changed
# template in development and in production, and the canal-view tool (partials, layout,
# errors with file, line and column, exit statuses).
. test/e2e-lib.sh

# the demo's views, copied so that the test can change them
mkdir -p "$TMP/views/layouts"
cp examples/demo/views/employees.mustache examples/demo/views/orders.mustache "$TMP/views/"
cp examples/demo/views/layouts/main.mustache "$TMP/views/layouts/"

for mode in router controller; do
    echo "# --mode $mode"
    start demo "$BIN/canal-demo" --mode $mode --threads 2 --views-dir "$TMP/views" || exit 0
    curl -s -D "$TMP/$mode.h" "$URL/home/employees" >"$TMP/$mode.html"
    check "$mode: 200 text/html; charset=utf-8" "200 text/html; charset=utf-8" \
        "$(tr -d '\r' <"$TMP/$mode.h" | sed -n 's/^HTTP\/1.1 \([0-9]*\).*/\1/p; s/^content-type: //p' | paste -sd ' ')"
    check "$mode: the layout around the page" "<!DOCTYPE html>|<title>Employees - canal demo</title>|</html>" \
        "$(grep -E '^<!DOCTYPE|<title>|^</html>' "$TMP/$mode.html" | paste -sd '|')"
    check "$mode: one row per employee" 9 "$(grep -c '^<tr><td>' "$TMP/$mode.html")"
    check "$mode: a row" '<tr><td>5</td><td><a href="/home/employee/5">Mr. Steven Buchanan</a></td><td>Sales Manager</td><td>London</td></tr>' \
        "$(grep '^<tr><td>5<' "$TMP/$mode.html")"
    check "$mode: HEAD has the length and no body" "$(wc -c <"$TMP/$mode.html" | tr -d ' ') 0" \
        "$(curl -s -I "$URL/home/employees" | tr -d '\r' | sed -n 's/^[Cc]ontent-[Ll]ength: //p') $(curl -s -I "$URL/home/employees" -o /dev/null -w '%{size_download}')"
    tag=$(header "$URL/home/employees" etag)
    check_match "$mode: an ETag (CANAL_ETAG(1))" '^"[0-9a-f]{16}"$' "$tag"
    check "$mode: If-None-Match with it: 304, no body" "304 0" \
        "$(curl -s -o /dev/null -w '%{http_code} %{size_download}' -H "If-None-Match: W/$tag" "$URL/home/employees")"
    check "$mode: another tag: 200" 200 "$(status "$URL/home/employees" -H 'If-None-Match: "x"')"
    # production: the page is kept by the output cache (stored once, then served)
    m=$(body "$URL/metrics")
    check "$mode: the page stored once in the output cache" 1 "$(echo "$m" | sed -n 's/^canal_output_cache_stores_total //p')"
    check_match "$mode: ... and served from it" '^[1-9][0-9]*$' "$(echo "$m" | sed -n 's/^canal_cache_hits_total{cache="output"} //p')"
    check "$mode: a request with a cookie is not served from it (the handler runs: no hit counted)" \
        "$(echo "$m" | sed -n 's/^canal_cache_hits_total{cache="output"} //p')" \
        "$(curl -s -o /dev/null -H 'Cookie: sid=x' "$URL/home/employees"; body "$URL/metrics" | sed -n 's/^canal_cache_hits_total{cache="output"} //p')"
    # the streamed page (canal_res_view_stream()): no length, chunks, every order
    curl -s -D "$TMP/$mode-orders.h" "$URL/home/orders.html" >"$TMP/$mode-orders.html"
    check "$mode: orders.html: 200, chunked, no Content-Length" "200 chunked " \
        "$(tr -d '\r' <"$TMP/$mode-orders.h" | sed -n 's/^HTTP\/1.1 \([0-9]*\).*/\1/p; s/^transfer-encoding: //p' | paste -sd ' ') $(tr -d '\r' <"$TMP/$mode-orders.h" | sed -n 's/^content-length: //p')"
    check "$mode: orders.html: one row per order, inside the layout" "830 1" \
        "$(grep -c '^<tr><td>[0-9]' "$TMP/$mode-orders.html") $(grep -c '^</html>' "$TMP/$mode-orders.html")"
    check "$mode: orders.html: larger than a part (16 KiB) many times over" 1 \
        "$(test "$(wc -c <"$TMP/$mode-orders.html")" -gt 100000 && echo 1)"
    curl -s --limit-rate 40k "$URL/home/orders.html" >"$TMP/$mode-orders-slow.html"
    cmp -s "$TMP/$mode-orders.html" "$TMP/$mode-orders-slow.html"
    check "$mode: orders.html: the same bytes to a client reading at 40 KB/s" 0 $?
    check "$mode: orders.html: HEAD: 200, no body" "200 0" \
        "$(curl -s -I -o /dev/null -w '%{http_code} %{size_download}' "$URL/home/orders.html")"
    # production: a changed file changes nothing
    sed 's/<h1>/<h1 class="changed">/' examples/demo/views/employees.mustache >"$TMP/views/employees.mustache"
    check "$mode: production does not read a changed template" 0 "$(body "$URL/home/employees" | grep -c 'class="changed"')"
    cp examples/demo/views/employees.mustache "$TMP/views/"
    stop demo
done
cmp -s "$TMP/router.html" "$TMP/controller.html"
check "router and controller mode: the same bytes" 0 $?
cmp -s "$TMP/router-orders.html" "$TMP/controller-orders.html"
check "router and controller mode: the same streamed page" 0 $?

echo "# development"
start demo "$BIN/canal-demo" --env development --threads 2 --views-dir "$TMP/views" || exit 0
check "development: the page" 9 "$(body "$URL/home/employees" | grep -c '^<tr><td>')"
check "development: no output cache (a changed template must show)" "" \
    "$(body "$URL/metrics" | grep '^canal_output_cache_stores_total')"
sed 's/<h1>/<h1 class="changed">/' examples/demo/views/employees.mustache >"$TMP/views/employees.mustache"
touch -d '2001-01-01' "$TMP/views/employees.mustache" # a modification time of its own
check "development: a changed template is compiled on the next request" 1 \
    "$(body "$URL/home/employees" | grep -c '<h1 class="changed">Employees</h1>')"
printf '{{#employees}}\n' >"$TMP/views/employees.mustache"
touch -d '2002-01-01' "$TMP/views/employees.mustache"
check "development: a broken change answers 500" 500 "$(status "$URL/home/employees")"
check "development: its page names the file, line and column" 1 \
    "$(body "$URL/home/employees" | grep -c 'employees.mustache:1:1: unclosed section')"
cp examples/demo/views/employees.mustache "$TMP/views/"
check "development: fixed, it answers again" 200 "$(status "$URL/home/employees")"
stop demo

echo "# a template that does not compile stops the start"
printf '<p>\n  {{/nothing}}\n' >"$TMP/views/broken.mustache"
"$BIN/canal-demo" --port 0 --views-dir "$TMP/views" >"$TMP/broken.out" 2>"$TMP/broken.err"
check "the demo exits 1" 1 $?
check "with the file, line and column" 1 "$(grep -c "broken.mustache:2:3: a closing tag without a section" "$TMP/broken.err")"
rm "$TMP/views/broken.mustache"

echo "# canal-view"
V="$BIN/canal-view"
mkdir -p "$TMP/partials/layouts"
printf '<li>{{name}}</li>\n' >"$TMP/partials/item.mustache"
printf '<main>\n  {{>body}}\n</main>\n' >"$TMP/partials/layouts/page.mustache"
printf '<ul>\n{{#items}}\n{{>item}}\n{{/items}}\n</ul>\n' >"$TMP/list.mustache"
printf '{"items": [{"name": "a<b"}, {"name": "\\u65e5\\u672c"}]}' >"$TMP/data.json"
check "--help on stdout, status 0" "usage: canal-view [--partials DIR] [--layout NAME] TEMPLATE_FILE [DATA_FILE]" \
    "$("$V" --help | head -n 1)"
check "a template with partials, data from a file" "<ul>|<li>a&lt;b</li>|<li>日本</li>|</ul>" \
    "$("$V" --partials "$TMP/partials" "$TMP/list.mustache" "$TMP/data.json" | paste -sd '|')"
check "data from standard input, and a layout" "<main>|  <ul>|  <li>a&lt;b</li>|  <li>日本</li>|  </ul>|</main>" \
    "$("$V" --partials "$TMP/partials" --layout layouts/page "$TMP/list.mustache" <"$TMP/data.json" | paste -sd '|')"
printf 'ok\n{{#a}}\n  {{b}\n' >"$TMP/bad.mustache"
"$V" "$TMP/bad.mustache" "$TMP/data.json" >/dev/null 2>"$TMP/view.err"
check "a syntax error: status 1" 1 $?
check "and its file, line and column" "canal-view: $TMP/bad.mustache:3:3: unclosed tag" "$(cat "$TMP/view.err")"
echo '{"a": ' >"$TMP/bad.json"
"$V" "$TMP/list.mustache" "$TMP/bad.json" >/dev/null 2>&1
check "bad JSON: status 2" 2 $?
"$V" "$TMP/nope.mustache" "$TMP/data.json" >/dev/null 2>&1
check "no such template file: status 2" 2 $?
"$V" >/dev/null 2>&1
check "no template: status 2" 2 $?
"$V" --layout nope "$TMP/list.mustache" "$TMP/data.json" >/dev/null 2>"$TMP/view.err"
check "no such layout: status 1" "1 canal-view: no layout \"nope\"" "$? $(cat "$TMP/view.err")"
