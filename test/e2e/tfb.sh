#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# examples/techempower (canal-tfb): the fortunes and cached-queries tests by TechEmpower's
# rules, against a real PostgreSQL that this script starts itself with the example's own
# create-db.sh (initdb into a temporary folder, a private unix socket there, no TCP, never the
# system's service), stopped on exit. The fortunes page byte for byte (the <script> row
# escaped by the view engine, the Japanese row intact, the extra row added at request time,
# sorted by message), its type, one Server header and a Date; cached-queries' counts (clamped
# 1..500), row shape and values as stored. The other five tests are checked by db.sh.
. test/e2e-lib.sh

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
    ok "tfb # SKIP PostgreSQL is not installed (make deps-test installs it)"
    exit 0
fi
# a folder create-db.sh makes itself (in TMPDIR, which the postgres user can pass through)
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/canal-tfb-pg.XXXXXX")
rmdir "$PGDIR"
trap 'for p in $SERVER_PIDS; do kill -KILL "$p" 2>/dev/null; done; sh examples/techempower/create-db.sh stop "$PGDIR" 2>/dev/null; rm -rf "$TMP" "$PGDIR"' EXIT
if ! sh examples/techempower/create-db.sh start "$PGDIR" >"$TMP/db.url" 2>"$TMP/db.err"; then
    not_ok "create-db.sh start"
    sed 's/^/# /' "$TMP/db.err" "$PGDIR/log" 2>/dev/null
    exit 0
fi
DB=$(tail -n 1 "$TMP/db.url")
check_match "create-db.sh prints the --db URL" '^postgresql://benchmarkdbuser:benchmarkdbpass@/hello_world\?host=/' "$DB"
psql() { "$PGBIN/psql" -X -q -h "$PGDIR" -U postgres -d hello_world -At "$@"; }
check "the Fortune table: 12 rows" 12 "$(psql -c 'SELECT count(*) FROM fortune')"

start t "$BIN/canal-tfb" --threads 2 --pool 2 --db "$DB" || exit 0
i=0
while [ "$(status "$URL/db")" != 200 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

# ---- /fortunes ----
# TechEmpower's page, with canal's escaping (' is &#39;)
printf '%s' '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr><tr><td>11</td><td>&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);&lt;/script&gt;</td></tr><tr><td>4</td><td>A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1</td></tr><tr><td>5</td><td>A computer program does what you tell it to do, not what you want it to do.</td></tr><tr><td>2</td><td>A computer scientist is someone who fixes things that aren&#39;t broken.</td></tr><tr><td>8</td><td>A list is only as strong as its weakest link. — Donald Knuth</td></tr><tr><td>0</td><td>Additional fortune added at request time.</td></tr><tr><td>3</td><td>After enough decimal places, nobody gives a damn.</td></tr><tr><td>7</td><td>Any program that runs right is obsolete.</td></tr><tr><td>10</td><td>Computers make very fast, very accurate mistakes.</td></tr><tr><td>6</td><td>Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen</td></tr><tr><td>9</td><td>Feature: A bug with seniority.</td></tr><tr><td>1</td><td>fortune: No such file or directory</td></tr><tr><td>12</td><td>フレームワークのベンチマーク</td></tr></table></body></html>' >"$TMP/expected.html"
curl -s -D "$TMP/f.h" -o "$TMP/f.html" "$URL/fortunes"
tr -d '\r' <"$TMP/f.h" >"$TMP/f.hdr"
if cmp -s "$TMP/expected.html" "$TMP/f.html"; then
    ok "/fortunes: the page byte for byte ($(wc -c <"$TMP/f.html" | tr -d ' ') bytes)"
else
    not_ok "/fortunes: the page byte for byte"
    diff "$TMP/expected.html" "$TMP/f.html" | sed 's/^/# /' | head -n 10
fi
check "/fortunes: 200" 200 "$(sed -n 's/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$TMP/f.hdr")"
check "/fortunes: text/html; charset=utf-8" "text/html; charset=utf-8" "$(sed -n 's/^content-type: //Ip' "$TMP/f.hdr")"
check "/fortunes: one Server header" "canal" "$(grep -i '^server:' "$TMP/f.hdr" | sed 's/^[^:]*: *//' | paste -sd ' ')"
check_match "/fortunes: a Date header" '^[Dd]ate: [A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$' "$(grep -i '^date:' "$TMP/f.hdr")"
check "/fortunes: Content-Length is the body's" "$(wc -c <"$TMP/f.html" | tr -d ' ')" "$(sed -n 's/^content-length: //Ip' "$TMP/f.hdr")"
check "/fortunes: the <script> row escaped, no raw tag" "0 1" \
    "$(grep -c '<script>' "$TMP/f.html") $(grep -c '&lt;script&gt;alert(&quot;This' "$TMP/f.html")"
check "/fortunes: the Japanese row intact (UTF-8)" 1 "$(grep -c '<td>フレームワークのベンチマーク</td>' "$TMP/f.html")"
check "/fortunes: 13 rows, the extra one once" "13 1" \
    "$(grep -o '<tr><td>' "$TMP/f.html" | wc -l | tr -d ' ') $(grep -o 'Additional fortune added at request time.' "$TMP/f.html" | wc -l | tr -d ' ')"
psql -c "INSERT INTO fortune VALUES (13, 'Zz a row added <b>now</b> & read on the next request')" >/dev/null
body "$URL/fortunes" >"$TMP/f2.html"
check "/fortunes: rows read per request (a new row in its place, escaped)" \
    '<tr><td>9</td><td>Feature: A bug with seniority.</td></tr><tr><td>13</td><td>Zz a row added &lt;b&gt;now&lt;/b&gt; &amp; read on the next request</td></tr><tr><td>1</td><td>fortune:' \
    "$(grep -o '<tr><td>9</td>.*<td>fortune:' "$TMP/f2.html")"
check "/fortunes: the extra row is still added once" 1 "$(grep -o 'Additional fortune' "$TMP/f2.html" | wc -l | tr -d ' ')"
psql -c "DELETE FROM fortune WHERE id = 13" >/dev/null
check "/fortunes: the same page again" "" "$(body "$URL/fortunes" | cmp - "$TMP/expected.html" 2>&1)"

# ---- /cached-queries ----
check "/cached-queries: application/json" application/json "$(header "$URL/cached-queries?count=2" content-type)"
check "/cached-queries: one Server header" canal "$(curl -s -o /dev/null -D - "$URL/cached-queries" | tr -d '\r' | grep -i '^server:' | sed 's/^[^:]*: *//' | paste -sd ' ')"
cat >"$TMP/cq.py" <<'PY'
import json, subprocess, sys, urllib.request
url, psql = sys.argv[1], sys.argv[2:]
def get(path):
    return json.load(urllib.request.urlopen(url + path, timeout=10))
def stored(ids):
    out = subprocess.run(psql + ["-c", "SELECT id, randomnumber FROM world WHERE id IN (%s)" % ",".join(map(str, ids))],
                         capture_output=True, text=True, check=True).stdout
    return {int(a): int(b) for a, b in (l.split("|") for l in out.split())}
def row_ok(r):
    return isinstance(r, dict) and sorted(r) == ["id", "randomNumber"] and 1 <= r["id"] <= 10000 and 1 <= r["randomNumber"] <= 10000
for q, n in (("20", 20), ("1", 1), ("0", 1), ("foo", 1), ("", 1), ("501", 500), ("500", 500), ("-3", 1), ("12abc", 1), ("99999999999999999999", 500)):
    rows = get("/cached-queries?count=" + q)
    print("count=%s" % q, isinstance(rows, list) and len(rows) == n and all(map(row_ok, rows)))
print("count missing", len(get("/cached-queries")) == 1)
# twice over the same ids: the first fills the cache from the database, the second reads it;
# both as stored
seen = []
for _ in range(4):
    seen += get("/cached-queries?count=500")
s = stored(sorted({r["id"] for r in seen}))
print("as stored", all(s[r["id"]] == r["randomNumber"] for r in seen), len(seen))
PY
out=$(python3 "$TMP/cq.py" "$URL" "$PGBIN/psql" -X -q -h "$PGDIR" -U postgres -d hello_world -At 2>&1)
for q in 20 1 0 foo "" 501 500 -3 12abc 99999999999999999999; do
    check "/cached-queries?count=$q: clamped, an array of {id, randomNumber}" "count=$q True" "$(echo "$out" | grep "^count=$q ")"
done
check "/cached-queries without count: 1" "count missing True" "$(echo "$out" | grep '^count missing')"
check "/cached-queries: 2000 rows (cached and read) as stored" "as stored True 2000" "$(echo "$out" | grep '^as stored')"
echo "$out" | grep -Ev '^(count|as stored)' | sed 's/^/# /'
stop t
