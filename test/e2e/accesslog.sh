#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# The access log (lib/observability/acclog.c) against canal-demo: CLF byte for byte as libh2o's own
# logger writes it (canal-h2olog, the same requests, hostile bytes included), JSON lines that
# all parse, libh2o's own 413 and a static file logged, a line written within about a second
# when idle, reopen on SIGUSR1 with nothing lost, and no line lost on SIGTERM under load.
. test/e2e-lib.sh

SEND="python3 test/e2e/acclog_send.py"
# lines with the time stamp taken out
untimed() { sed 's/ \[[^]]*\] / [T] /' "$1"; }

# ---- CLF: the same lines as libh2o's logger ----
start ref "$TBIN/canal-h2olog" --access-log "$TMP/ref.log" || exit 0
REF_PORT=$PORT
REF_PID=$PID
start clf "$BIN/canal-demo" --threads 1 --access-log "$TMP/clf.log" --request-id on \
    --trusted-proxies 127.0.0.1 || exit 0
$SEND "$REF_PORT" hostile >"$TMP/ref.status"
$SEND "$PORT" hostile >"$TMP/clf.status"
check "the hostile requests are answered 200 by both" "$(cat "$TMP/ref.status")" "$(cat "$TMP/clf.status")"
stop clf
kill -TERM "$REF_PID" 2>/dev/null
wait "$REF_PID" 2>/dev/null
check "CLF lines: 5" 5 "$(wc -l <"$TMP/clf.log" | tr -d ' ')"
check "CLF: libh2o's lines, byte for byte apart from the time" "$(untimed "$TMP/ref.log")" "$(untimed "$TMP/clf.log")"
check_match "CLF: a time stamp like libh2o's" '^127\.0\.0\.1 - - \[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9:]{8} [-+][0-9]{4}\] "GET' \
    "$(head -n 1 "$TMP/clf.log")"

# ---- JSON lines, libh2o's own 413, a static file, flush when idle ----
start json "$BIN/canal-demo" --threads 2 --access-log "$TMP/json.log" --access-log-format json \
    --request-id on --max-body 100 || exit 0
$SEND "$PORT" hostile >/dev/null
check "a body over --max-body: libh2o's 413" 413 "$(status "$URL/api/woo" --data-binary @"$TMP/clf.log")"
check "a static file" 200 "$(status "$URL/static/")"
check "a route with a parameter" 200 "$(status "$URL/home/employee/3")"
check "no route" 404 "$(status "$URL/no/such/thing")"
# idle: the lines are written within about a second (the flush timer), not at shutdown
i=0
while [ $i -lt 60 ] && [ "$(wc -l <"$TMP/json.log" | tr -d ' ')" -lt 9 ]; do sleep 0.05; i=$((i + 1)); done
check "idle: every line written within 3 s (flush timer)" 9 "$(wc -l <"$TMP/json.log" | tr -d ' ')"
stop json
python3 - "$TMP/json.log" >"$TMP/json.check" 2>&1 <<'EOF'
import json, sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')
assert lines[-1] == b'', 'the last line ends with a newline'
docs = []
for raw in lines[:-1]:
    raw.decode('utf-8')  # valid UTF-8, strictly
    docs.append(json.loads(raw))
print('parsed', len(docs))
keys = ['time', 'client', 'method', 'target', 'protocol', 'status', 'bytes', 'duration_ms', 'route',
        'request_id', 'trace_id', 'span_id', 'referer', 'user_agent']
for d in docs:
    assert list(d) == keys, list(d)
by = {}
for d in docs:
    by.setdefault(d['target'], d)
q = by['/home/plaintext?q=%22"\\}~{|']
assert q['user_agent'] == 'a "quoted" \\ agent\t~}', q
assert q['referer'] == 'http://r/?x="y"' and q['request_id'] is not None, q
u = by['/home/plaintext?u=\u00e9\u20ac']
assert u['user_agent'] == 'caf\u00e9 \U0001F600' and u['referer'] == 'http://\u00e9/', u
b = by['/home/plaintext?bad=\ufffd\ufffd(\ufffd\ufffd\ufffd\ufffd\ufffd']
assert b['user_agent'] == '\ufffd\ufffd\ufffd \ufffd\ufffd' and b['referer'] == '\ufffd\ufffd', b
assert b['route'] == '/home/plaintext' and b['status'] == 200 and b['bytes'] == 13, b
e = by['/home/employee/3']
assert e['route'].startswith('/home/employee/{') and e['client'] == '127.0.0.1', e
assert by['/no/such/thing']['status'] == 404 and by['/no/such/thing']['route'] is None
assert by['/api/woo']['status'] == 413 and by['/api/woo']['method'] == 'POST'
assert by['/static/']['status'] == 200 and by['/static/']['route'] is None
assert all(d['time'].endswith('Z') and d['protocol'] == 'HTTP/1.1' and d['duration_ms'] >= 0 for d in docs)
# microsecond granularity: a clock read at the end, not the loop's millisecond clock, so the
# durations are not all whole milliseconds
assert any(round(d['duration_ms'] * 1000) % 1000 != 0 for d in docs), [d['duration_ms'] for d in docs]
print('fields ok')
EOF
check "JSON: every line parses, with the fields and the escaping" "parsed 9
fields ok" "$(cat "$TMP/json.check")"

# ---- reopen on SIGUSR1 (logrotate: mv, then the signal) ----
LOG=$TMP/rot.log
start rot "$BIN/canal-demo" --threads 2 --access-log "$LOG" || exit 0
n=0
while [ $n -lt 20 ]; do curl -s -o /dev/null "$URL/home/plaintext"; n=$((n + 1)); done
mv "$LOG" "$LOG.1"
kill -USR1 "$PID"
n=0
while [ $n -lt 30 ]; do curl -s -o /dev/null "$URL/home/json"; n=$((n + 1)); done
i=0
while [ $i -lt 60 ] && [ "$(cat "$LOG" "$LOG.1" 2>/dev/null | wc -l | tr -d ' ')" -lt 50 ]; do sleep 0.05; i=$((i + 1)); done
check "reopen: the lines after the signal are in the new file" 30 "$(grep -c 'GET /home/json' "$LOG" 2>/dev/null)"
check "reopen: none lost, none twice (old + new)" 50 "$(cat "$LOG" "$LOG.1" | wc -l | tr -d ' ')"
check "reopen: the old file has no line of after the signal" 0 "$(grep -c 'GET /home/json' "$LOG.1")"
stop rot

# ---- SIGTERM under load: a line for every answer the clients got ----
LOG=$TMP/load.log
start load "$BIN/canal-demo" --threads 2 --access-log "$LOG" || exit 0
python3 - "$PORT" >"$TMP/load.count" 2>/dev/null <<'EOF' &
import http.client, sys, threading
port, count, lock = int(sys.argv[1]), [0], threading.Lock()
def client():
    while True:
        try:
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            while True:
                c.request('GET', '/home/plaintext')
                r = c.getresponse()
                r.read()
                with lock:
                    count[0] += 1
                if r.getheader('connection', '').lower() == 'close':
                    return
        except Exception:
            return
ts = [threading.Thread(target=client) for _ in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print(count[0])
EOF
LOAD=$!
i=0
while [ $i -lt 100 ] && [ "$(wc -l <"$LOG" | tr -d ' ')" -lt 2000 ]; do sleep 0.05; i=$((i + 1)); done
stop load
wait "$LOAD"
answered=$(cat "$TMP/load.count")
logged=$(wc -l <"$LOG" | tr -d ' ')
check_match "SIGTERM under load: thousands answered" '^[0-9]{4,}$' "$answered"
check "SIGTERM under load: a line for every answer" "$answered" "$logged"

rm -f "$TMP"/*.log "$TMP"/*.log.1
