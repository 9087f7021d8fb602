#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 sqlite3
# The database client's SQLite backend (sqlite:PATH) with the same handlers as db.sh's
# PostgreSQL (test/e2e/dbapp.c): the schema made by canal_db_exec_script() at start, every
# reader, rows through a schema, errors mapped to PostgreSQL's SQLSTATEs, several queries of one
# request with a failing one in the middle, chaining, transactions (commit, rollback, a failing
# handler's left open, PostgreSQL's rule for a COMMIT after a failure), concurrent writers (one
# at a time, none refused as locked; in transactions too) in WAL mode, the query of a request
# gone interrupted (or never run), and :memory:.
. test/e2e-lib.sh

DBF="$TMP/items.db"
start s "$TBIN/canal-dbapp" --threads 2 --db "sqlite:$DBF" --pool 4 || exit 0
check "WAL mode" wal "$(sqlite3 "$DBF" 'PRAGMA journal_mode')"
check "ready" 200 "$(status "$URL/health/ready")"
ts=$(python3 -c 'import datetime as d; print(int(d.datetime(2026,12,3,14,27,11,500000,tzinfo=d.timezone.utc).timestamp()*1000000))')
check "every reader on SQLite's values" \
    "{\"int4\":42,\"int8\":9000000000,\"float8\":1.5,\"bool\":true,\"text\":\"h\\u00e9llo\",\"bytea\":\"00ff41\",\"timestamptz\":$ts,\"null_is_null\":true,\"null_rc\":-5,\"range_rc\":-7,\"type_rc\":-8,\"rows\":1,\"cols\":9,\"col5\":\"raw\",\"readers_ok\":true}" \
    "$(body "$URL/types" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), separators=(",",":")))')"
check "a row bound through a schema" '{"id":1,"name":"apple","price":0.5,"active":true,"stock":12}' "$(body "$URL/items/1")"
check "a NULL column" '{"id":2,"name":"pear","price":1.25,"active":false,"stock":null}' "$(body "$URL/items/2")"
check "no row: 404" 404 "$(status "$URL/items/99")"
check "INSERT ... RETURNING: 201" '{"id":3,"affected":1}' "$(body "$URL/items?name=kiwi&price=2" -X POST)"
check "a unique constraint: 23505, answered 409" 409 "$(status "$URL/items?name=kiwi&price=3" -X POST)"
check "NOT NULL: 500" 500 "$(status "$URL/items?price=3" -X POST)"
check_match "a syntax error: 42601" '"sqlstate":"42601"' "$(body "$URL/errors/syntax")"
check_match "wrong parameter count: 08P01" '"sqlstate":"08P01"' "$(body "$URL/errors/params")"
evil="x'); DROP TABLE items; --"
check "a parameter is bound, never spliced" "$evil" "$(body "$URL/echo" -G --data-urlencode "v=$evil")"
check "5 queries, the 3rd failing alone" '[{"value":0},{"value":10},{"error":"HY000"},{"value":30},{"value":40}]' \
    "$(body "$URL/pipeline?n=5&fail=2")"
check "200 queries of one request" 200 "$(body "$URL/pipeline?n=200" | grep -o '"value"' | wc -l | tr -d ' ')"
check "chaining" '{"chained":700}' "$(body "$URL/chain")"
check "a controller action's query" '{"id":1,"name":"apple","price":0.5,"active":true,"stock":12}' "$(body "$URL/mvc/items/1")"
check "... its after-filter ran at the deferred commit" 200 "$(header "$URL/mvc/items/1" x-after-filter)"
check "... and saw a 404 set by the query's callback" 404 "$(header "$URL/mvc/items/99" x-after-filter)"

# ---- transactions: on one SQLite thread's connection, under canal's write lock ----
count() { sqlite3 "$DBF" "SELECT count(*) FROM items WHERE name = '$1'"; }
check "transaction committed: 201" 201 "$(status "$URL/tx?name=t1&mode=commit" -X POST)"
check "... its row is there" 1 "$(count t1)"
check "transaction rolled back: 200" 200 "$(status "$URL/tx?name=t2&mode=rollback" -X POST)"
check "... its row is not" 0 "$(count t2)"
check "a statement failing in a transaction: the handler's 409" 409 "$(status "$URL/tx?name=t3&mode=fail" -X POST)"
check "... the transaction left open by the failing handler was rolled back" 0 "$(count t3)"
check "COMMIT after a failed statement: a rollback (PostgreSQL's rule)" "commit after a failure" \
    "$(body "$URL/tx?name=t5&mode=failcommit" -X POST)"
check "... nothing of it stored" 0 "$(count t5)"
check "a handler that answers with its transaction open: 200" 200 "$(status "$URL/tx?name=t4&mode=open" -X POST)"
check "... rolled back" 0 "$(count t4)"
check "a transaction reads its own write" 1 "$(body "$URL/tx?name=t6&mode=select" -X POST)"
check "... then committed" 1 "$(count t6)"
check "the write lock was given back: a plain insert" 201 "$(status "$URL/items?name=after-tx&price=1" -X POST)"

# concurrent writers: 8 clients, 40 inserts each, on 4 SQLite threads
cat >"$TMP/writers.py" <<'PY'
import sys, threading, urllib.request, urllib.error
url = sys.argv[1]
codes = {}
lock = threading.Lock()
def run(k):
    for i in range(40):
        try:
            c = urllib.request.urlopen(urllib.request.Request("%s/items?name=w%d-%d&price=%d" % (url, k, i, i),
                                       method="POST"), timeout=10).status
        except urllib.error.HTTPError as e:
            c = e.code
        with lock:
            codes[c] = codes.get(c, 0) + 1
ts = [threading.Thread(target=run, args=(k,)) for k in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(" ".join("%s:%d" % kv for kv in sorted(codes.items())))
PY
check "320 concurrent inserts: every one 201" "201:320" "$(python3 "$TMP/writers.py" "$URL")"
check "... all stored" 320 "$(sqlite3 "$DBF" "SELECT count(*) FROM items WHERE name LIKE 'w%'")"

# concurrent writers in transactions: 8 clients, 15 each, committing or rolling back or
# failing by turns, beside plain inserts: none refused as locked, none waiting forever
cat >"$TMP/txwriters.py" <<'PY'
import sys, threading, urllib.request, urllib.error
url = sys.argv[1]
codes = {}
lock = threading.Lock()
def run(k):
    for i in range(15):
        mode = ("commit", "rollback", "fail", "insert")[i % 4]
        path = ("/items?name=x%d-%d&price=1" % (k, i) if mode == "insert" else
                "/tx?name=x%d-%d&mode=%s" % (k, i, mode))
        try:
            c = urllib.request.urlopen(urllib.request.Request(url + path, method="POST"), timeout=10).status
        except urllib.error.HTTPError as e:
            c = e.code
        except Exception:
            c = "timeout"
        with lock:
            codes[mode + ":" + str(c)] = codes.get(mode + ":" + str(c), 0) + 1
ts = [threading.Thread(target=run, args=(k,)) for k in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(" ".join("%s=%d" % kv for kv in sorted(codes.items())))
PY
check "120 concurrent transactions and inserts: each its own answer" \
    "commit:201=32 fail:409=32 insert:201=24 rollback:200=32" "$(python3 "$TMP/txwriters.py" "$URL")"
check "... the committed and inserted rows stored, no other" 56 "$(sqlite3 "$DBF" "SELECT count(*) FROM items WHERE name LIKE 'x%'")"
m=$(body "$URL/metrics")
check "metrics: nothing in flight, nothing waiting" "0 0" \
    "$(echo "$m" | sed -n 's/^canal_db_queries_in_flight //p') $(echo "$m" | sed -n 's/^canal_db_queries_waiting //p')"
check "metrics: the inserts counted" 484 "$(echo "$m" | sed -n 's/^canal_db_query_duration_seconds_count{statement="insert"} //p')"
check "metrics: 4 SQLite threads" 4 "$(echo "$m" | sed -n 's/^canal_db_connections_ready //p')"
stop s
check "the data outlives the server" '3|kiwi' "$(sqlite3 "$DBF" "SELECT id, name FROM items WHERE id = 3")"

# requests gone mid-query (their deadline): the running SQLite statement is interrupted, and
# the thread goes on with the next query
start d "$TBIN/canal-dbapp" --threads 1 --db "sqlite:$DBF" --pool 1 --request-timeout 500 || exit 0
# one thread, which the transaction holds: the request's plain query runs in it, not after it
check "pool 1: a request's plain query runs in its transaction" 1 "$(body "$URL/tx?name=p1&mode=plain" -X POST)"
curl -s -o /dev/null -w '%{http_code}' "$URL/sleep?ms=20000" >"$TMP/d1" &
D1=$!
sleep 0.1
curl -s -o /dev/null -w '%{http_code}' "$URL/sleep?ms=20000" >"$TMP/d2" &
D2=$!
wait "$D1" "$D2"
check "a slow SQLite query overtaken by the deadline: 504" 504 "$(cat "$TMP/d1")"
check "another queued behind it, then running at its deadline: 504" 504 "$(cat "$TMP/d2")"
n=""
i=0
while [ "$n" != 2 ] && [ $i -lt 300 ]; do
    n=$(body "$URL/metrics" | sed -n 's/^canal_db_query_duration_seconds_count{statement="sleep"} //p')
    sleep 0.1
    i=$((i + 1))
done
m=$(body "$URL/metrics")
check "both came back" 2 "$n"
check "... as errors: each interrupted" 2 \
    "$(echo "$m" | sed -n 's/^canal_db_query_errors_total{statement="sleep"} //p')"
check "... two interrupts" 2 "$(echo "$m" | sed -n 's/^canal_db_cancels_total //p')"
check "no callback ran for them" 0 "$(body "$URL/sleep/callbacks")"
check "the thread serves the next query" 200 "$(status "$URL/sleep?ms=1")"
check "... whose callback ran" 1 "$(body "$URL/sleep/callbacks")"
stop d

start m "$TBIN/canal-dbapp" --threads 2 --db "sqlite::memory:" --pool 2 || exit 0
check ":memory:: the migration ran" '{"id":1,"name":"apple","price":0.5,"active":true,"stock":12}' "$(body "$URL/items/1")"
check ":memory:: one database for every thread" 201 "$(status "$URL/items?name=m&price=1" -X POST)"
check ":memory:: the row seen from the other threads" 3 "$(body "$URL/items" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
stop m
