#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# The database client (canal/db.h) against a real PostgreSQL that this script starts itself:
# initdb into a temporary folder, pg_ctl on a private unix socket there (no TCP, never the
# system's service; as the postgres user when run as root), stopped on exit. Covers every
# column type and NULLs, rows bound through a schema, errors (syntax, constraint, wrong
# parameter count, a bad value), parameters bound not spliced, several queries of one request
# pipelined on one connection with a failing one in the middle, chaining, transactions, the
# deadline (504) and a client gone mid-query (HTTP/1.1, and an HTTP/2 stream reset), the query
# of a request gone cancelled on the server (pg_stat_activity), the pool's wait queue (503 with Retry-After), metrics and
# readiness, and the server killed and restarted under load (503s, then service resumes by
# itself; no crash, and under ASan no leak).
. test/e2e-lib.sh

. test/e2e-pg.sh
pg_setup || exit 0
psql -d postgres -c "CREATE DATABASE canal_test"
psql -d canal_test <<'SQL'
CREATE TABLE items (id serial PRIMARY KEY, name text UNIQUE NOT NULL, price float8 NOT NULL DEFAULT 0,
                    active boolean NOT NULL DEFAULT true, stock int8);
INSERT INTO items (name, price, active, stock) VALUES ('apple', 0.5, true, 12), ('pear', 1.25, false, NULL);
SQL
DB="postgresql:///canal_test?host=$PGDIR&port=$PGPORT&user=canal"

start a "$TBIN/canal-dbapp" --threads 1 --db "$DB" --pool 1 --request-timeout 1500 --slow-ms 200 || exit 0
ready=0
i=0
while [ $i -lt 100 ]; do
    [ "$(status "$URL/health/ready")" = 200 ] && { ready=1; break; }
    sleep 0.05
    i=$((i + 1))
done
check "ready once connected" 1 "$ready"

# ---- types and rows ----
ts=$(python3 -c 'import datetime as d; print(int(d.datetime(2026,12,3,14,27,11,500000,tzinfo=d.timezone.utc).timestamp()*1000000))')
check "every column type read by its reader" \
    "{\"int4\":42,\"int8\":9000000000,\"float8\":1.5,\"bool\":true,\"text\":\"h\\u00e9llo\",\"bytea\":\"00ff41\",\"timestamptz\":$ts,\"null_is_null\":true,\"null_rc\":-5,\"range_rc\":-7,\"type_rc\":-8,\"rows\":1,\"cols\":9,\"col5\":\"raw\",\"readers_ok\":true}" \
    "$(body "$URL/types" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), separators=(",",":")))')"
check "a row bound through a schema, written as a model" '{"id":1,"name":"apple","price":0.5,"active":true,"stock":12}' "$(body "$URL/items/1")"
check "a NULL column: the field is absent, written null" '{"id":2,"name":"pear","price":1.25,"active":false,"stock":null}' "$(body "$URL/items/2")"
check "no row: 404" 404 "$(status "$URL/items/99")"
check "SQL text with no parameters, every row" 2 "$(body "$URL/items" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"

# ---- writes and errors ----
check "an INSERT ... RETURNING: 201 with the new id" '{"id":3,"affected":1}' "$(body "$URL/items?name=kiwi&price=2" -X POST)"
check "a unique constraint: SQLSTATE 23505, answered 409" 409 "$(status "$URL/items?name=kiwi&price=3" -X POST)"
check "a NOT NULL constraint: canal_db_failed() answers 500" 500 "$(status "$URL/items?price=3" -X POST)"
check "the 500 does not show the server's message" "" "$(body "$URL/items?price=3" -X POST | grep -o 'null value')"
check "a syntax error: 42601, the server's primary message" '{"error":"syntax error at or near \"SELEC\"","sqlstate":"42601","unavailable":false}' "$(body "$URL/errors/syntax")"
check "a failure's log line quotes no value of the row" "" "$(grep -o 'Failing row' "$TMP/a.err")"
check_match "wrong parameter count: 08P01, not unavailable" '"sqlstate":"08P01","unavailable":false' "$(body "$URL/errors/params")"
check "a value of the wrong type: 22P02" '"22P02"' "$(body "$URL/errors/param-type" | grep -o '"22P02"')"
check "an unknown statement: 500, nothing sent" 500 "$(status "$URL/errors/unknown")"
check "the connection still serves after the errors" '{"id":1,"name":"apple","price":0.5,"active":true,"stock":12}' "$(body "$URL/items/1")"
evil="x'); DROP TABLE items; --"
check "a parameter is bound, never spliced into the SQL" "$evil" "$(body "$URL/echo" -G --data-urlencode "v=$evil")"
check "... and the table is still there" 200 "$(status "$URL/items/1")"

# ---- several queries of one request, on one connection (--pool 1) ----
check "5 queries pipelined, the 3rd failing alone" '[{"value":0},{"value":10},{"error":"22012"},{"value":30},{"value":40}]' \
    "$(body "$URL/pipeline?n=5&fail=2")"
check "500 queries of one request, all back" 500 "$(body "$URL/pipeline?n=500" | grep -o '"value"' | wc -l | tr -d ' ')"
check "a query started from another's callback" '{"chained":700}' "$(body "$URL/chain")"
check "a controller action's query" '{"id":1,"name":"apple","price":0.5,"active":true,"stock":12}' "$(body "$URL/mvc/items/1")"
check "... its after-filter ran at the deferred commit" 200 "$(header "$URL/mvc/items/1" x-after-filter)"
check "... and saw a 404 set by the query's callback" 404 "$(header "$URL/mvc/items/99" x-after-filter)"

# ---- transactions, on the one connection (--pool 1) ----
count() { psql -d canal_test -At -c "SELECT count(*) FROM items WHERE name = '$1'"; }
check "transaction committed: 201" 201 "$(status "$URL/tx?name=t1&mode=commit" -X POST)"
check "... its row is there" 1 "$(count t1)"
check "transaction rolled back: 200" 200 "$(status "$URL/tx?name=t2&mode=rollback" -X POST)"
check "... its row is not" 0 "$(count t2)"
check "a statement failing in a transaction: the handler's 409" 409 "$(status "$URL/tx?name=t3&mode=fail" -X POST)"
check "... the transaction left open was rolled back" 0 "$(count t3)"
check "a handler that answers with its transaction open: 200" 200 "$(status "$URL/tx?name=t4&mode=open" -X POST)"
check "... rolled back" 0 "$(count t4)"
check "COMMIT after a failed statement: a rollback" "commit after a failure" "$(body "$URL/tx?name=t5&mode=failcommit" -X POST)"
check "... nothing of it stored" 0 "$(count t5)"
check "a transaction reads its own write" 1 "$(body "$URL/tx?name=t6&mode=select" -X POST)"
check "a plain query of the request runs in its transaction" 1 "$(body "$URL/tx?name=t7&mode=plain" -X POST)"
check "... then committed" 1 "$(count t6)"
check "the connection went back clean: not in a transaction" 0 \
    "$(psql -d canal_test -At -c "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'")"
check "... and serves the next request" '{"id":1,"name":"apple","price":0.5,"active":true,"stock":12}' "$(body "$URL/items/1")"

# ---- a query the deadline overtakes, a client that leaves ----
check "a query of 300 ms" slept "$(body "$URL/sleep?ms=300")"
check_match "... logged as slow, by statement and time, no values" 'canal warn: database: slow query sleep: [0-9.]+ ms' "$(cat "$TMP/a.err")"
check "deadline passed during a slow query: 504" 504 "$(status "$URL/sleep?ms=2500")"
# the query of a request gone is cancelled on the server (the only one in flight on its
# connection): pg_sleep(10) ends long before its 10 s
sleeping() { psql -d canal_test -At -c "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()"; }
check "SELECT pg_sleep(10) with a deadline of 1.5 s: 504" 504 "$(status "$URL/sleep?ms=10000")"
i=0
while [ "$(sleeping)" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "... the server's query was cancelled (pg_stat_activity: none running)" 0 "$(sleeping)"
check "... a cancel request counted" 2 "$(body "$URL/metrics" | sed -n 's/^canal_db_cancels_total //p')"
check_match "... the server logged it cancelled" 'canceling statement due to user request' "$(cat "$PGDIR/log")"
check "... the connection serves the next query" slept "$(body "$URL/sleep?ms=10")"
# (libh2o does not read an HTTP/1.1 connection while its request is handled: the answer finds
# the client gone when it is written)
curl -s -o /dev/null --max-time 0.3 "$URL/sleep?ms=800"
check "the client left mid-query: the next request is served" '{"chained":700}' "$(body "$URL/chain")"
sleep 1
m=$(body "$URL/metrics")
check "metrics: the slow queries came back and were counted" 5 "$(echo "$m" | sed -n 's/^canal_db_query_duration_seconds_count{statement="sleep"} //p')"
check "metrics: the failed division counted as an error" 1 "$(echo "$m" | sed -n 's/^canal_db_query_errors_total{statement="divide"} //p')"
check "metrics: one connection ready" 1 "$(echo "$m" | sed -n 's/^canal_db_connections_ready //p')"
check "metrics: nothing in flight, nothing waiting" "0 0" \
    "$(echo "$m" | sed -n 's/^canal_db_queries_in_flight //p') $(echo "$m" | sed -n 's/^canal_db_queries_waiting //p')"
check_match "metrics: latency buckets of a statement" 'canal_db_query_duration_seconds_bucket\{statement="times10",le="\+Inf"\} [0-9]+' "$m"
stop a

# ---- the pool's wait queue: one connection, one query at a time, 200 ms to wait ----
start p "$TBIN/canal-dbapp" --threads 1 --db "$DB" --pool 1 --pipeline 1 --wait-ms 200 || exit 0
i=0
while [ "$(status "$URL/health/ready")" != 200 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
for n in 0 1 2 3; do
    curl -s -o "$TMP/pool.$n" -D "$TMP/poolh.$n" -w '%{http_code}\n' "$URL/sleep?ms=1000" >"$TMP/poolc.$n" &
    eval "cp$n=\$!"
done
# shellcheck disable=SC2154
wait "$cp0" "$cp1" "$cp2" "$cp3"
codes=$(cat "$TMP"/poolc.* | sort | tr '\n' ' ')
check "pool exhausted: one served, the others 503 after the wait" "200 503 503 503 " "$codes"
h=$(grep -l '^HTTP/1.1 503' "$TMP"/poolh.* | head -n 1)
check "the 503 carries Retry-After" 1 "$(tr -d '\r' <"$h" | sed -n 's/^retry-after: //p')"
check "the 503 is problem details" "application/problem+json" "$(tr -d '\r' <"$h" | sed -n 's/^content-type: //p')"
stop p

# ---- requests gone before their queries: no callback, a waiting query never sent ----
# one connection, one query at a time, 3 s to wait for it, answers due in 1 s; no offload pool,
# so no cancel request: the first query holds the connection to its end
start g "$TBIN/canal-dbapp" --threads 1 --db "$DB" --pool 1 --pipeline 1 --wait-ms 3000 --request-timeout 1000 \
    --offload-threads 0 || exit 0
i=0
while [ "$(status "$URL/health/ready")" != 200 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
curl -s -o /dev/null -w '%{http_code}' "$URL/sleep?ms=1500" >"$TMP/g1" &
G1=$!
sleep 0.2
curl -s -o /dev/null -w '%{http_code}' "$URL/sleep?ms=100" >"$TMP/g2" &
G2=$!
wait "$G1" "$G2"
check "a query overtaken by the deadline: 504" 504 "$(cat "$TMP/g1")"
check "a query still waiting for the connection at the deadline: 504" 504 "$(cat "$TMP/g2")"
sleep 1 # the first query comes back at 1.5 s; the second is dropped then
m=$(body "$URL/metrics")
check "no callback ran for either request" 0 "$(body "$URL/sleep/callbacks")"
check "no offload pool: no cancel request" 0 "$(echo "$m" | sed -n 's/^canal_db_cancels_total //p')"
check "both came back to the client: counted" 2 "$(echo "$m" | sed -n 's/^canal_db_query_duration_seconds_count{statement="sleep"} //p')"
check "the waiting one was never sent: counted canceled" 1 "$(echo "$m" | sed -n 's/^canal_db_query_errors_total{statement="sleep"} //p')"
check "the connection serves the next request" slept "$(body "$URL/sleep?ms=10")"
check "... whose callback ran" 1 "$(body "$URL/sleep/callbacks")"
stop g

# ---- an HTTP/2 client that resets its stream while its query runs ----
# (unlike HTTP/1.1, libh2o reads an HTTP/2 connection all along: the RST_STREAM ends the
# request at once.) A raw h2c client: stream 1 asks for a slow query and is reset after
# 300 ms; then, on the same connection, stream 3 asks how many /sleep callbacks ran.
cat >"$TMP/h2reset.py" <<'PY'
import socket, struct, sys, time
host, port, path, wait = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload
def headers(p):
    # :method GET, :scheme http (static table), :path and :authority literal, not indexed
    lit = lambda idx, v: bytes([idx]) + bytes([len(v)]) + v.encode()
    return b"\x82\x86" + lit(4, p) + lit(1, "%s:%d" % (host, port))
s = socket.create_connection((host, port))
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(1, 5, 1, headers(path)))
time.sleep(0.3)
s.sendall(frame(3, 0, 1, struct.pack(">I", 8)))  # RST_STREAM, CANCEL
time.sleep(wait)
s.sendall(frame(1, 5, 3, headers("/sleep/callbacks")))
buf, body, got = b"", b"", {}
s.settimeout(10)
while True:
    while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
        chunk = s.recv(65536)
        if not chunk:
            print("closed", got); sys.exit(1)
        buf += chunk
    n = int.from_bytes(buf[:3], "big"); kind, flags = buf[3], buf[4]
    stream = int.from_bytes(buf[5:9], "big") & 0x7fffffff
    payload, buf = buf[9:9 + n], buf[9 + n:]
    got.setdefault(stream, []).append(kind)
    if kind == 4 and not flags & 1:
        s.sendall(frame(4, 1, 0))  # SETTINGS ACK
    if stream == 1 and kind in (0, 1):
        print("stream 1 answered after its reset"); sys.exit(1)
    if stream == 3 and kind == 0:
        body += payload
        if flags & 1:
            break
print(body.decode())
PY
start h "$TBIN/canal-dbapp" --threads 1 --db "$DB" --pool 1 || exit 0
i=0
while [ "$(status "$URL/health/ready")" != 200 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "HTTP/2: a stream reset mid-query: no callback for it, the connection goes on" 0 \
    "$(python3 "$TMP/h2reset.py" 127.0.0.1 "$PORT" "/sleep?ms=800" 1.0 2>&1)"
m=$(body "$URL/metrics")
check "... its query came back (dropped), or was cancelled" 1 "$(echo "$m" | sed -n 's/^canal_db_query_duration_seconds_count{statement="sleep"} //p')"
check "... a cancel request sent for it" 1 "$(echo "$m" | sed -n 's/^canal_db_cancels_total //p')"
check "HTTP/2: pg_sleep(10) reset after 300 ms: no callback" 0 \
    "$(python3 "$TMP/h2reset.py" 127.0.0.1 "$PORT" "/sleep?ms=10000" 0.2 2>&1)"
i=0
while [ "$(sleeping)" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "... cancelled on the server" 0 "$(sleeping)"
check "... the connection serves the next query, whose callback runs" slept "$(body "$URL/sleep?ms=10" --http2-prior-knowledge)"
check "... nothing in flight, nothing waiting" "0 0" \
    "$(body "$URL/metrics" | sed -n 's/^canal_db_queries_in_flight //p') $(body "$URL/metrics" | sed -n 's/^canal_db_queries_waiting //p')"
stop h

# ---- the server killed and restarted under load ----
start r "$TBIN/canal-dbapp" --threads 2 --db "$DB" --pool 2 || exit 0
i=0
while [ "$(status "$URL/health/ready")" != 200 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
cat >"$TMP/load.py" <<'PY'
import sys, threading, time, urllib.request, urllib.error
url, secs = sys.argv[1], float(sys.argv[2])
codes = {}
lock = threading.Lock()
def run():
    end = time.time() + secs
    while time.time() < end:
        try:
            c = urllib.request.urlopen(url + "/items/1", timeout=5).status
        except urllib.error.HTTPError as e:
            c = e.code
        except Exception:
            c = "conn"
        with lock:
            codes[c] = codes.get(c, 0) + 1
ts = [threading.Thread(target=run) for _ in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(" ".join("%s:%d" % (k, v) for k, v in sorted(codes.items(), key=str)))
PY
python3 "$TMP/load.py" "$URL" 4 >"$TMP/load.out" &
LPID=$!
sleep 1
pg_stop immediate
sleep 0.5
down=$(status "$URL/health/ready")
downq=$(status "$URL/items/1")
sleep 0.5
pg_start
wait "$LPID"
echo "# under load, PostgreSQL killed for 1 s: $(cat "$TMP/load.out")"
check "while the database is down: not ready" 503 "$down"
check "while the database is down: a query is answered 503" 503 "$downq"
check_match "under load: only 200s and 503s, no cut connection ($(cat "$TMP/load.out"))" '^200:[0-9]+ 503:[0-9]+$' "$(cat "$TMP/load.out")"
back=0
i=0
while [ $i -lt 100 ]; do
    [ "$(status "$URL/items/1")" = 200 ] && { back=1; break; }
    sleep 0.1
    i=$((i + 1))
done
check "service resumes by itself after the restart" 1 "$back"
check "ready again" 200 "$(status "$URL/health/ready")"
check "every connection reconnected" 4 "$(body "$URL/metrics" | sed -n 's/^canal_db_connections_ready //p')"
check_match "the losses were counted" '^[1-9]' "$(body "$URL/metrics" | sed -n 's/^canal_db_connection_losses_total //p')"
stop r

# ---- examples/techempower (canal-tfb) by TechEmpower's rules, over TCP ----
psql -d postgres -f examples/techempower/world.sql
start t "$BIN/canal-tfb" --threads 2 --pool 2 --db "postgresql://benchmarkdbuser:benchmarkdbpass@127.0.0.1:$PGPORT/hello_world" || exit 0
i=0
while [ "$(status "$URL/db")" != 200 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "tfb /json" '{"message":"Hello, World!"}' "$(body "$URL/json")"
check "tfb /plaintext" 'Hello, World!' "$(body "$URL/plaintext")"
check "tfb: a Server header" canal "$(header "$URL/db" server)"
check_match "tfb: a Date header" 'GMT$' "$(header "$URL/queries" date)"
cat >"$TMP/tfb.py" <<'PY'
import json, subprocess, sys, urllib.request
url, psql = sys.argv[1], sys.argv[2:]
def get(path):
    return json.load(urllib.request.urlopen(url + path, timeout=10))
def stored(ids):
    out = subprocess.run(psql + ["-d", "hello_world", "-At", "-c",
                         "SELECT id, randomnumber FROM world WHERE id IN (%s)" % ",".join(map(str, ids))],
                         capture_output=True, text=True, check=True).stdout
    return {int(a): int(b) for a, b in (l.split("|") for l in out.split())}
def row_ok(r):
    return sorted(r) == ["id", "randomNumber"] and 1 <= r["id"] <= 10000 and 1 <= r["randomNumber"] <= 10000
r = get("/db")
print("db", row_ok(r) and stored([r["id"]])[r["id"]] == r["randomNumber"])
for q, n in (("20", 20), ("1", 1), ("0", 1), ("foo", 1), ("", 1), ("501", 500), ("-3", 1), ("12abc", 1)):
    rows = get("/queries?queries=" + q)
    print("queries=%s" % q, len(rows) == n and all(map(row_ok, rows)))
print("queries missing", len(get("/queries")) == 1)
rows = get("/updates?queries=20")
s = stored([r["id"] for r in rows])
print("updates", len(rows) == 20 and all(map(row_ok, rows)) and all(s[r["id"]] == r["randomNumber"] for r in rows))
print("updates=foo", len(get("/updates?queries=foo")) == 1)
print("updates=600", len(get("/updates?queries=600")) == 500)
PY
out=$(python3 "$TMP/tfb.py" "$URL" "$PGBIN/psql" -X -h "$PGDIR" -p "$PGPORT" -U canal 2>&1)
check "tfb /db: one row as stored" "db True" "$(echo "$out" | grep '^db ')"
for q in 20 1 0 foo "" 501 -3 12abc; do
    check "tfb /queries?queries=$q: clamped, one object per query" "queries=$q True" "$(echo "$out" | grep "^queries=$q ")"
done
check "tfb /queries without the parameter: 1" "queries missing True" "$(echo "$out" | grep '^queries missing')"
check "tfb /updates?queries=20: new numbers, persisted" "updates True" "$(echo "$out" | grep '^updates ')"
check "tfb /updates?queries=foo: 1" "updates=foo True" "$(echo "$out" | grep '^updates=foo')"
check "tfb /updates?queries=600: 500" "updates=600 True" "$(echo "$out" | grep '^updates=600')"
if command -v wrk >/dev/null 2>&1; then
    wrk -t 2 -c 16 -d 2s "$URL/updates?queries=20" >"$TMP/wrk.up" 2>&1
    echo "# tfb /updates?queries=20 under wrk -c 16: $(grep Requests/sec "$TMP/wrk.up")"
    check "tfb: concurrent updates, no error (no deadlock)" "" "$(grep -E 'Socket errors|Non-2xx' "$TMP/wrk.up")"
fi
stop t
