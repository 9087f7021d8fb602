#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# Trace context end to end (canal/trace.h) with examples/otlp, an OpenTelemetry exporter on
# the request hooks: requests sent with a caller's traceparent and tracestate, with none, and
# with a malformed one (a new trace, still 200); the echoed traceparent; "traceId" in problem
# details; then python3 reads the OTLP JSON spans file (one ExportTraceServiceRequest a line),
# the JSON access log and the JSON log on stderr (canal_log() from the handlers), and checks
# that the trace, span and parent IDs agree everywhere, and the durations, names, statuses.
. test/e2e-lib.sh

T=4bf92f3577b34da6a3ce929d0e0e4736
P=00f067aa0ba902b7
SPANS=$TMP/spans.jsonl
before=$(python3 -c 'import time; print(time.time_ns())')
start otlp "$BIN/canal-otlp" --threads 2 --spans "$SPANS" --trace-echo on --request-id on --log-format json \
    --access-log "$TMP/access.log" --access-log-format json || exit 0

# hdr NAME: the response header NAME of the last request (curl -D into $TMP/h)
hdr() { tr -d '\r' <"$TMP/h" | grep -i "^$1:" | head -n 1 | sed 's/^[^:]*: *//'; }

check "with a caller's traceparent: 200" 200 \
    "$(curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' -H "traceparent: 00-$T-$P-01" \
        -H 'tracestate: rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' "$URL/users/7")"
ECHO_CALLER=$(hdr traceparent)
check_match "the echo continues the caller's trace" "^00-$T-[0-9a-f]{16}-01\$" "$ECHO_CALLER"

check "with no traceparent: 200" 200 "$(curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' "$URL/users/8")"
ECHO_NEW=$(hdr traceparent)
check_match "a new trace is echoed" '^00-[0-9a-f]{32}-[0-9a-f]{16}-01$' "$ECHO_NEW"

check "a malformed traceparent (upper case): 200, never a 400" 200 \
    "$(curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' -H "traceparent: 00-4BF92F3577B34DA6A3CE929D0E0E4736-$P-01" \
        "$URL/users/9")"
ECHO_BAD=$(hdr traceparent)
check_match "a malformed traceparent starts a new trace" '^00-[0-9a-f]{32}-' "$ECHO_BAD"
case $ECHO_BAD in *"$T"* | *4BF92F*) not_ok "the malformed trace ID was not taken: $ECHO_BAD" ;; *) ok "the malformed trace ID was not taken" ;; esac

curl -s -D "$TMP/h" -H "traceparent: 00-$T-$P-00" "$URL/unavailable" >"$TMP/problem.json"
ECHO_PROBLEM=$(hdr traceparent)
check "problem details carry traceId, the echoed traceparent" "$ECHO_PROBLEM" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["traceId"])' "$TMP/problem.json")"
check_match "not sampled by the caller: echoed with flags 00" "^00-$T-[0-9a-f]{16}-00\$" "$ECHO_PROBLEM"

check "no route: 404" 404 "$(curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' "$URL/nothing/here")"
ECHO_404=$(hdr traceparent)
stop otlp
after=$(python3 -c 'import time; print(time.time_ns())')

python3 - "$SPANS" "$TMP/access.log" "$TMP/otlp.err" "$T" "$P" "$before" "$after" \
    "$ECHO_CALLER" "$ECHO_NEW" "$ECHO_BAD" "$ECHO_PROBLEM" "$ECHO_404" <<'EOF'
import json, sys
spans_file, access_file, err_file, T, P, before, after = sys.argv[1:8]
before, after = int(before), int(after)
echo = dict(zip(['/users/7', '/users/8', '/users/9', '/unavailable', '/nothing/here'], sys.argv[8:13]))
n = 0
def ok(cond, what):
    global n
    n += 1
    print(('ok - ' if cond else 'not ok - ') + what)

spans = {}
lines = open(spans_file, encoding='utf-8').read().splitlines()
for line in lines:
    req = json.loads(line)  # one ExportTraceServiceRequest a line
    rs = req['resourceSpans']
    assert len(rs) == 1 and rs[0]['resource']['attributes'][0]['key'] == 'service.name'
    ss = rs[0]['scopeSpans'][0]
    assert ss['scope']['name'] == 'canal'
    for s in ss['spans']:
        attrs = {a['key']: a['value'] for a in s['attributes']}
        spans[attrs['url.path']['stringValue']] = (s, attrs)
ok(len(lines) == 5 and sorted(spans) == sorted(echo), 'one span a request, a line each: %s' % sorted(spans))

def tp(path):
    return echo[path].split('-')

s, a = spans['/users/7']
ok(s['traceId'] == T and tp('/users/7')[1] == T, "the caller's trace ID in the span and the echo")
ok(s['parentSpanId'] == P, "the caller's span is the parent")
ok(s['spanId'] == tp('/users/7')[2] and s['spanId'] != P, 'the span ID is the echoed one, a new one')
ok(s['traceState'] == 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE', 'tracestate kept: %s' % s.get('traceState'))
ok(s['name'] == 'GET /users/{id:int}' and a['http.route']['stringValue'] == '/users/{id:int}', 'name and route: ' + s['name'])
ok(s['kind'] == 2 and a['http.response.status_code']['intValue'] == '200' and a['http.request.method']['stringValue'] == 'GET',
   'a server span, status 200')
ok(a['http.response.body.size']['intValue'] == str(len('{"id":7}')), 'body size')
start, end = int(s['startTimeUnixNano']), int(s['endTimeUnixNano'])
ok(before <= start <= end <= after, 'start and end inside the test run')
ok(0 < end - start < 2 * 10**9, 'a duration: %d ns' % (end - start))

for path in ['/users/8', '/users/9', '/nothing/here']:
    s, a = spans[path]
    ok(s['traceId'] == tp(path)[1] and s['spanId'] == tp(path)[2] and 'parentSpanId' not in s and 'traceState' not in s,
       path + ': a new trace with no parent, as echoed')
ok(len({spans[p][0]['traceId'] for p in ['/users/8', '/users/9', '/nothing/here']}) == 3, 'every new trace its own')
s, a = spans['/unavailable']
ok(s['traceId'] == T and s['parentSpanId'] == P and s['spanId'] == tp('/unavailable')[2] and s['flags'] == 0,
   'a trace not sampled by the caller: flags 0')
ok(s['status'] == {'code': 2} and a['http.response.status_code']['intValue'] == '503', '5xx: an error status')
s, a = spans['/nothing/here']
ok(s['name'] == 'GET' and 'http.route' not in a and a['http.response.status_code']['intValue'] == '404',
   'no route: the method alone')
ids = {a['canal.request_id']['stringValue'] for s, a in spans.values()}
ok(len(ids) == 5, 'request IDs in the spans, all different')

# the JSON access log: the same trace and span per request
acc = {}
for line in open(access_file, encoding='utf-8').read().splitlines():
    d = json.loads(line)
    acc[d['target'].split('?')[0]] = d
ok(all(acc[p]['trace_id'] == spans[p][0]['traceId'] and acc[p]['span_id'] == spans[p][0]['spanId'] for p in echo),
   'the access log has each request\'s trace_id and span_id')
ok(all(acc[p]['request_id'] == spans[p][1]['canal.request_id']['stringValue'] for p in echo), 'and its request_id')

# the handlers' canal_log() lines on stderr (--log-format json), with their context
logs = [json.loads(l) for l in open(err_file, encoding='utf-8').read().splitlines() if l.startswith('{')]
mine = [l for l in logs if l['source'] == 'app']
s7 = spans['/users/7'][0]
hit = [l for l in mine if l['msg'] == 'looking up user 7']
ok(len(hit) == 1 and hit[0]['level'] == 'info' and hit[0]['trace_id'] == T and hit[0]['span_id'] == s7['spanId']
   and hit[0]['route'] == 'users/{id:int}' and hit[0]['request_id'] == acc['/users/7']['request_id'],
   'canal_log() from the handler: its request, route, trace and span: %s' % hit)
down = [l for l in mine if l['msg'] == 'the database is down']
ok(len(down) == 1 and down[0]['level'] == 'error' and down[0]['span_id'] == spans['/unavailable'][0]['spanId'],
   'an error line with its span')
ok(all(l['source'] == 'canal' for l in logs if l not in mine), "canal's own lines say so")
EOF
