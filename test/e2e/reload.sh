#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 openssl
# Reloading the configuration (canal_app_reload(), SIGHUP) with canal-reloadapp, whose
# settings come from a --config file: a changed file and a SIGHUP change the log's and the
# access log's formats, the TLS certificate (new handshakes), the app's greeting and session
# secret (its reload hook: a cookie of the secret before still verifies, one of two secrets
# ago does not), without dropping a keep-alive connection or a request in flight; a setting
# that does not reload is named in the log; a new --log-level drops the app's info lines from
# then on; a bad file (wrong type, unknown key) and a bad certificate change nothing and the
# log says why.
. test/e2e-lib.sh

# reloads NAME: the reloads $TMP/NAME.err has logged as done
reloads() { grep -c 'read again' "$TMP/$1.err"; }
# wait_log NAME REGEX: waits for a line (while the server runs; 20 s at most, not a check)
wait_log() {
    i=0
    while [ $i -lt 800 ]; do
        grep -Eq -- "$2" "$TMP/$1.err" && return 0
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.025
        i=$((i + 1))
    done
    return 1
}
# last_access REGEX: the access log's last line once one matches (they are written in batches)
last_access() {
    i=0
    while [ $i -lt 800 ] && ! grep -Eq -- "$1" "$TMP/access.log" 2>/dev/null; do sleep 0.025; i=$((i + 1)); done
    grep -E -- "$1" "$TMP/access.log" | tail -n 1
}
# subject: the certificate a new TLS handshake gets
subject() {
    openssl s_client -connect "127.0.0.1:$tls_port" </dev/null 2>/dev/null | openssl x509 -noout -subject 2>/dev/null
}
# cert CN: a new certificate and key in the same two files
cert() {
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 2 \
        -subj "/CN=$1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
}
# config GREETING SECRET LOG_FORMAT ACCESS_LOG_FORMAT MAX_BODY [RATE]: the configuration file
config() {
    cat >"$TMP/app.json" <<JSON
{"greeting": "$1", "secret": "$2", "log-format": "$3", "access-log-format": "$4", "rate": ${6:-100},
 "jwt-secret": "${7:-the first JWT secret, of 32 bytes}", "cors-origin": "${8:-https://a.example}",
 "access-log": "$TMP/access.log", "max-body": $5, "threads": 2,
 "tls-port": $tls_port, "cert": "$TMP/cert.pem", "key": "$TMP/key.pem",
 "started": "$TMP/started", "release": "$TMP/release"}
JSON
}
# token SECRET: an HS256 JWT for the app's issuer and audience, made here (hmac, not canal)
token() {
    python3 -c '
import base64, hashlib, hmac, json, sys, time
b = lambda d: base64.urlsafe_b64encode(d).rstrip(b"=").decode()
h = b(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
p = b(json.dumps({"iss": "https://issuer.test", "aud": "canal-test", "sub": "u", "exp": int(time.time()) + 600}).encode())
print(h + "." + p + "." + b(hmac.new(sys.argv[1].encode(), (h + "." + p).encode(), hashlib.sha256).digest()))' "$1"
}
# acao ORIGIN: the Access-Control-Allow-Origin /greet answers that origin
acao() { header "$URL/greet" access-control-allow-origin -H "Origin: $1"; }
jwt() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(token "$1")" "$URL/jwt"; }
me() { curl -s -o /dev/null -w '%{http_code}' -H "Cookie: sid=$1" "$URL/me"; }
login() { curl -s -D - -o /dev/null -X POST "$URL/login" | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: sid=\([^;]*\).*/\1/p'; }

tls_port=$(free_port)
cert first
check "test certificate made" 0 "$?"
config hello "the first secret, 32 bytes long!" text clf 1000
start reload "$TBIN/canal-reloadapp" --config "$TMP/app.json" || exit 0

check "the file's greeting" hello "$(body "$URL/greet")"
check_match "the first certificate" "CN ?= ?first" "$(subject)"
cookie1=$(login)
check_match "a session cookie" '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' "$cookie1"
check "the session verifies" 200 "$(me "$cookie1")"
for i in 1 2 3; do curl -s -o /dev/null "$URL/limited"; done
check "the file's rate: 3 of 100 allowed" 200 "$(status "$URL/limited")"
check "CORS: the file's origin is allowed" https://a.example "$(acao https://a.example)"
check "CORS: another is not" "" "$(acao https://b.example)"
check "a JWT of the file's secret" 200 "$(jwt "the first JWT secret, of 32 bytes")"
check "a JWT of another secret" 401 "$(jwt "the second JWT secret, 32 bytes!")"
check_match "access log in CLF" '^127\.0\.0\.1 .*"GET /me HTTP/1.1" 200' "$(last_access 'GET /me')"

# a keep-alive connection and a request in flight, then the new file and SIGHUP
python3 test/e2e/reload_client.py "$PORT" "$TMP" >"$TMP/client.out" 2>&1 &
client=$!
i=0
while [ $i -lt 800 ] && { [ ! -e "$TMP/ready" ] || [ ! -e "$TMP/started" ]; }; do sleep 0.025; i=$((i + 1)); done
check "a request in flight before the reload" yes "$([ -e "$TMP/started" ] && echo yes || echo no)"
cert second
config bonjour "the second secret, 32 bytes long" json json 2000 2 "the second JWT secret, 32 bytes!" https://b.example
kill -HUP "$PID"
wait_log reload 'read again'
touch "$TMP/release" "$TMP/go"
wait "$client"
check "keep-alive: before" "before hello" "$(sed -n 1p "$TMP/client.out")"
check "keep-alive: the new greeting on the same connection" "after bonjour" "$(sed -n 2p "$TMP/client.out")"
check "keep-alive: the connection stayed open" "same connection yes" "$(sed -n 3p "$TMP/client.out")"
check "the request in flight was answered" "slow 200 done" "$(sed -n 4p "$TMP/client.out")"
line=$(grep 'read again' "$TMP/reload.err" | tail -n 1)
check_match "the reload is logged in the new format (JSON)" '^\{.*"msg":"reload: ' "$line"
check_match "the log names what changed" 'changed: [^;]*--log-format' "$line"
check_match "the log names what did not reload" 'not reloaded[^;]*--max-body' "$line"
check_match "the app's options go to its hook" 'changed: [^;]*--greeting' "$line"
curl -s -o /dev/null "$URL/greet?after"
check_match "access log now in JSON" '^\{.*"/greet\?after"' "$(last_access 'greet\?after')"
check_match "new handshakes get the new certificate" "CN ?= ?second" "$(subject)"
check "a cookie of the secret before still verifies" 200 "$(me "$cookie1")"
check "CORS: the new origin is allowed" https://b.example "$(acao https://b.example)"
check "CORS: the old one no longer" "" "$(acao https://a.example)"
check "the new JWT secret: its tokens pass" 200 "$(jwt "the second JWT secret, 32 bytes!")"
check "the new JWT secret: the old one's do not" 401 "$(jwt "the first JWT secret, of 32 bytes")"
check "the new rate: RateLimit-Limit" 2 "$(header "$URL/limited" ratelimit-limit)"
curl -s -o /dev/null "$URL/limited"
check "the new rate: the third request in a minute is refused" 429 "$(status "$URL/limited")"
cookie2=$(login)
check "a cookie of the new secret verifies" 200 "$(me "$cookie2")"

# bad files change nothing
n=$(reloads reload)
printf '{"greeting": 5}' >"$TMP/app.json"
kill -HUP "$PID"
wait_log reload 'greeting: wrong type'
check_match "a wrong type: the log names the file and the key" 'app\.json: greeting: wrong type.*nothing changed' \
    "$(grep 'wrong type' "$TMP/reload.err")"
printf '{"gretting": "x"}' >"$TMP/app.json"
kill -HUP "$PID"
wait_log reload "unknown key 'gretting'"
check_match "an unknown key: named" "app\\.json: unknown key 'gretting'.*nothing changed" \
    "$(grep 'unknown key' "$TMP/reload.err")"
check "after bad files: the greeting stays" bonjour "$(body "$URL/greet")"
check "after bad files: no reload was done" "$n" "$(reloads reload)"

# a third secret: a cookie of two secrets ago no longer verifies; a bad certificate is kept out
config salut "the third secret, 32 bytes long!" json json 2000
echo "not a certificate" >"$TMP/cert.pem"
kill -HUP "$PID"
wait_log reload 'greeting: wrong type' # already there: the next line is what counts
i=0
while [ $i -lt 800 ] && [ "$(reloads reload)" = "$n" ]; do sleep 0.025; i=$((i + 1)); done
check "the third reload" salut "$(body "$URL/greet")"
check "a cookie of two secrets ago does not verify" 401 "$(me "$cookie1")"
check "a cookie of one secret ago does" 200 "$(me "$cookie2")"
check_match "a bad certificate: logged, the old one kept" 'keeps its certificate: certificate .*cert\.pem' \
    "$(grep 'keeps its certificate' "$TMP/reload.err")"
check_match "a bad certificate: still the second" "CN ?= ?second" "$(subject)"
check_match "a part failed: said so" 'a part failed' "$(grep 'read again' "$TMP/reload.err" | tail -n 1)"
stop reload

# the environment and the flags stay above the file, at the start and after a reload
config hello "the first secret, 32 bytes long!" text clf 1000
cert first
CANAL_GREETING=from-env start reload2 "$TBIN/canal-reloadapp" --config "$TMP/app.json" --tls-port "$(free_port)" || exit 0
check "the environment over the file" from-env "$(body "$URL/greet")"
config changed "the first secret, 32 bytes long!" text clf 1000
kill -HUP "$PID"
wait_log reload2 'read again'
check "after a reload too" from-env "$(body "$URL/greet")"
# --log-level reloads: the app's info line is logged, then not; its warning still is
curl -s -o /dev/null "$URL/note"
check "log level info: an info line" 1 "$(grep -c 'note info' "$TMP/reload2.err")"
sed 's/^{/{"log-level": "warn", /' "$TMP/app.json" >"$TMP/app.json.new" && mv "$TMP/app.json.new" "$TMP/app.json"
kill -HUP "$PID"
i=0 # each /note logs its info line until the reload is done
while [ $i -lt 400 ]; do
    n=$(grep -c 'note info' "$TMP/reload2.err")
    curl -s -o /dev/null "$URL/note"
    [ "$(grep -c 'note info' "$TMP/reload2.err")" = "$n" ] && break
    sleep 0.025
    i=$((i + 1))
done
n=$(grep -c 'note info' "$TMP/reload2.err")
curl -s -o /dev/null "$URL/note"
check "log level warn after SIGHUP: no info line" "$n" "$(grep -c 'note info' "$TMP/reload2.err")"
curl -s -o /dev/null "$URL/note?warn"
check "... a warning still is" 1 "$(grep -c 'note warn' "$TMP/reload2.err")"
stop reload2

# what an app sets in code before canal_config_load() stays on a reload: the demo's access
# log and request IDs are not "changed" by a SIGHUP that changed nothing
start demo "$BIN/canal-demo" --threads 1 || exit 0
kill -HUP "$PID"
wait_log demo 'read again'
check_match "the demo's settings in code survive a reload: nothing changed" \
    'changed: none; not reloaded \(a restart applies them\): none' "$(grep 'read again' "$TMP/demo.err")"
stop demo

# a bad file stops the start: exit status 2, the file and the key named
printf '{"port": "80"}' >"$TMP/bad.json"
"$TBIN/canal-reloadapp" --config "$TMP/bad.json" --secret "0123456789abcdef" >/dev/null 2>"$TMP/bad.err"
check "a bad file at the start: exit 2" 2 "$?"
check_match "and the message names it" 'bad\.json: port: wrong type' "$(cat "$TMP/bad.err")"
CANAL_CONFIG="$TMP/bad.json" "$BIN/canal-demo" >/dev/null 2>"$TMP/bad2.err"
check "an example reads CANAL_CONFIG too: exit 2" 2 "$?"
"$TBIN/canal-reloadapp" --help >"$TMP/help.out"
check_match "--help lists the app's options beside canal's" 'CANAL_GREETING; default hello' "$(cat "$TMP/help.out")"
