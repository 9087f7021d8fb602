#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 openssl
# Cookies, sessions, rate limits and security headers end to end (canal-guardsapp, 4 threads):
# a login sets exactly one sid cookie with the safe attributes; tampering, the name SID and a
# replay after logout are 401; /limited allows exactly R across 8 keep-alive connections and
# per client address (127.0.0.1 and 127.0.0.2), then 429 problem details with a truthful
# Retry-After; the security headers on 200/401/404/405/429, HSTS over TLS only.
. test/e2e-lib.sh

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 2 \
    -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
tls_port=$(free_port)
start guards "$TBIN/canal-guardsapp" --threads 4 --rate 5 --window 10 --tls-port "$tls_port" \
    --cert "$TMP/cert.pem" --key "$TMP/key.pem" || exit 0
T="https://127.0.0.1:$tls_port"

# ---- sessions ----
curl -s -o /dev/null -D "$TMP/login" -X POST "$URL/login?user=alice&password=secret"
cookies=$(tr -d '\r' <"$TMP/login" | grep -ic '^set-cookie:')
check "login sets exactly one cookie" 1 "$cookies"
line=$(tr -d '\r' <"$TMP/login" | grep -i '^set-cookie:' | sed 's/^[^:]*: *//')
check_match "sid with Path=/; HttpOnly; Secure; SameSite=Lax, no Domain" \
    '^sid=[A-Za-z0-9_.-]{22,}; Path=/(; Max-Age=[0-9]+)?; HttpOnly; Secure; SameSite=Lax$' "$line"
sid=$(printf '%s' "$line" | sed 's/^sid=\([^;]*\);.*/\1/')
check "login with a wrong password: 401" 401 "$(status "$URL/login?user=alice&password=nope" -X POST)"
check "no Set-Cookie on a failed login" "" "$(header "$URL/login?user=alice&password=nope" set-cookie -X POST)"
check "the session cookie: 200" 200 "$(status "$URL/session" -H "Cookie: sid=$sid")"
check "the body names the user" '{"user":"alice"}' "$(body "$URL/session" -H "Cookie: sid=$sid")"
check "among other cookies" 200 "$(status "$URL/session" -H "Cookie: a=1; sid=$sid; b=2")"
check "in a second Cookie field" 200 "$(status "$URL/session" -H "Cookie: a=1" -H "Cookie: sid=$sid")"
check "a forged sid before the real one does not hide it" 200 "$(status "$URL/session" -H "Cookie: sid=forged; sid=$sid")"
sid2=$(curl -s -o /dev/null -D - -X POST "$URL/login?user=alice&password=secret" | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: sid=\([^;]*\);.*/\1/p')
if [ "$sid2" != "$sid" ] && [ -n "$sid2" ]; then ok "every login is a new session"; else not_ok "every login is a new session"; fi
python3 - "$URL" "$sid" >"$TMP/tamper" <<'PY'
import sys, http.client, urllib.parse
url, sid = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(url)
c = http.client.HTTPConnection(u.hostname, u.port)
alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
bad = 0; tried = 0
def get(v):
    c.request("GET", "/session", headers={"Cookie": "sid=" + v})
    r = c.getresponse(); r.read(); return r.status
for i in range(len(sid)):
    for ch in (alphabet[(alphabet.index(sid[i]) + 1) % len(alphabet)], alphabet[(alphabet.index(sid[i]) + 7) % len(alphabet)]):
        tried += 1
        if get(sid[:i] + ch + sid[i+1:]) != 401: bad += 1
for n in range(len(sid)):
    tried += 1
    if get(sid[:n]) != 401: bad += 1
for extra in ("A", "-", ".", "x"):
    tried += 1
    if get(sid + extra) != 401: bad += 1
print(tried, bad)
PY
read tried bad <"$TMP/tamper"
check "every changed character, cut and appended character: 401 ($tried tried)" 0 "$bad"
check "the name SID: 401" 401 "$(status "$URL/session" -H "Cookie: SID=$sid")"
check "an empty value: 401" 401 "$(status "$URL/session" -H "Cookie: sid=")"
check "no cookie: 401 with a Cookie challenge" 'Cookie realm="guards"' "$(header "$URL/session" www-authenticate)"
nul=$(python3 -c '
import sys, socket
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /session HTTP/1.1\r\nHost: x\r\nCookie: sid=" + sys.argv[2].encode() + b"\x00x\r\nConnection: close\r\n\r\n")
print(s.recv(100).split(b" ")[1].decode())' "$PORT" "$sid")
check_match "a value followed by NUL: 400 or 401" '^40[01]$' "$nul"
curl -s -o /dev/null -D "$TMP/logout" -X POST -H "Cookie: sid=$sid" "$URL/logout"
check_match "logout: 204" '^HTTP/1.1 204' "$(head -n 1 "$TMP/logout")"
check_match "logout deletes sid" '^[Ss]et-[Cc]ookie: sid=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970' "$(grep -i '^set-cookie' "$TMP/logout")"
check "the old cookie after logout: 401" 401 "$(status "$URL/session" -H "Cookie: sid=$sid")"
check "logout again: 401" 401 "$(status "$URL/logout" -X POST -H "Cookie: sid=$sid")"
check "the other session still lives" 200 "$(status "$URL/session" -H "Cookie: sid=$sid2")"

# ---- rate limits ----
sleep 2.1
python3 - "$PORT" 127.0.0.1 >"$TMP/burst" <<'PY'
import sys, http.client, json
port, src = int(sys.argv[1]), sys.argv[2]
conns = [http.client.HTTPConnection("127.0.0.1", port, source_address=(src, 0)) for _ in range(8)]
codes = []; last = None
for i in range(16):
    c = conns[i % 8]
    c.request("GET", "/limited")
    r = c.getresponse(); body = r.read()
    codes.append(r.status)
    if r.status == 429: last = (r, body)
r, body = last
p = json.loads(body)
print(codes.count(200), codes.count(429), r.getheader("Retry-After"), r.getheader("RateLimit-Limit"),
      r.getheader("RateLimit-Remaining"), r.getheader("Content-Type"), p["status"], r.getheader("X-Content-Type-Options"))
PY
read n200 n429 retry rlimit rremaining ctype pstatus nosniff <"$TMP/burst"
check "8 keep-alive connections, 16 requests: exactly 5 answered 200" "5 11" "$n200 $n429"
check_match "Retry-After between 1 and ceil(W/R)+1" '^[1-3]$' "$retry"
check "RateLimit-Limit is R, -Remaining 0 on a 429" "5 0" "$rlimit $rremaining"
check "429 is problem details" "application/problem+json 429 nosniff" "$ctype $pstatus $nosniff"
check "127.0.0.2 has its own budget" 200 "$(status "$URL/limited" --interface 127.0.0.2)"
n2=0
for i in 1 2 3 4 5 6; do [ "$(status "http://127.0.0.1:$PORT/limited" --interface 127.0.0.2)" = 200 ] && n2=$((n2 + 1)); done
check "127.0.0.2: 5 in all, then 429" 4 "$n2"
xff=$(python3 -c '
import sys, http.client
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
codes = []
for i in range(8):
    c.request("GET", "/limited", headers={"X-Forwarded-For": "10.9.9.%d" % i, "X-Real-IP": "10.8.8.%d" % i})
    r = c.getresponse(); r.read(); codes.append(r.status)
print("refused" if 429 in codes else "all allowed")' "$PORT")
check "X-Forwarded-For and X-Real-IP are not believed (8 fake clients)" refused "$xff"
check "other routes are not limited" 200 "$(status "$URL/public")"
retry=$(python3 -c '
import sys, http.client
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for i in range(20):
    c.request("GET", "/limited"); r = c.getresponse(); r.read()
    if r.status == 429: print(r.getheader("Retry-After")); break' "$PORT")
sleep "${retry:-0}"
check "after Retry-After ($retry s) a request succeeds" 200 "$(status "$URL/limited")"
check_match "the metrics count the 429s" 'canal_http_rate_limited_total\{limit="limited"\} [1-9]' "$(body "$URL/metrics")"

# ---- security headers ----
for case in "/public 200" "/session 401" "/nope 404" "/logout 405" "/limited 429"; do
    set -- $case
    # The bucket refills while curl runs (slowly under ASan): ask until the 429 comes.
    for i in $(seq 20); do
        curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' "$URL$1" >"$TMP/code"
        [ "$1" != /limited ] || [ "$(cat "$TMP/code")" = 429 ] && break
    done
    h=$(tr -d '\r' <"$TMP/h" | tr 'A-Z' 'a-z')
    all="$(cat "$TMP/code")"
    printf '%s\n' "$h" | grep -q '^x-content-type-options: nosniff$' && all="$all nosniff"
    printf '%s\n' "$h" | grep -q '^referrer-policy: strict-origin-when-cross-origin$' && all="$all referrer"
    printf '%s\n' "$h" | grep -q '^x-frame-options: deny$' && all="$all frame"
    printf '%s\n' "$h" | grep -q '^strict-transport-security:' && all="$all HSTS"
    check "$1 over plain HTTP: the preset, no HSTS" "$2 nosniff referrer frame" "$all"
done
for p in /public /nope; do
    check_match "$p over TLS (HTTP/2 and 1.1): HSTS" '^max-age=[1-9][0-9]*$' \
        "$(header "$T$p" strict-transport-security --cacert "$TMP/cert.pem")"
    check_match "$p over TLS+HTTP/1.1: HSTS" '^max-age=[1-9]' "$(header "$T$p" strict-transport-security --cacert "$TMP/cert.pem" --http1.1)"
done
check "h2c claiming :scheme https gets no HSTS" "" "$(header "$URL/public" strict-transport-security --http2-prior-knowledge)"
check "the app still serves /public" 200 "$(status "$URL/public")"
stop guards
