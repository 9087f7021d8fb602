#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 py:jwt openssl
# Issue 18's contract for examples/secure (build/bin/canal-secure), row by row and rule by
# rule: tokens made by PyJWT (test/e2e/jwt_tok.py), keys by openssl here, 4 worker threads,
# a second client address (127.0.0.2), TLS for HSTS. Requests by curl and python3's
# http.client, raw sockets for bytes curl will not send.
. test/e2e-lib.sh
jwt_keys || exit 0
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$K/tls.key" -out "$K/tls.crt" -days 2 \
    -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
# The secret files end in "\n", "\r\n" or nothing: each is its bytes less that newline.
printf '%s\n' "$(openssl rand -hex 32)" >"$K/hs"
KEY=$(openssl rand -hex 16)
printf '%s\r\n' "$KEY" >"$K/apikey"
printf 'p\303\244ss:w\303\266rd' >"$K/pw"   # UTF-8 with a colon, no newline
openssl rand -hex 32 >"$K/cookie"
openssl rand -hex 32 >"$K/cookie-other"

tok() { $PY test/e2e/jwt_tok.py "$K" "$@"; }
tls_port=$(free_port)
start secure "$BIN/canal-secure" --host 127.0.0.1 --threads 4 --jwt-hs256-secret "$K/hs" \
    --jwt-rs256-public-key "$K/rsa.pub" --jwt-es256-public-key "$K/ec.pub" --jwt-issuer https://issuer.test \
    --jwt-audience canal-test --api-key "$K/apikey" --basic-user alice --basic-password "$K/pw" \
    --cookie-secret "$K/cookie" --cookie-secret-other "$K/cookie-other" --rate 5 --window 2 \
    --tls-port "$tls_port" --cert "$K/tls.crt" --key "$K/tls.key" || { not_ok "canal-secure starts"; exit 0; }
T="https://127.0.0.1:$tls_port"

# code NAME EXPECTED PATH [curl args]; codes NAME REGEX PATH [curl args]
code() { n=$1; e=$2; p=$3; shift 3; check "$n" "$e" "$(status "$URL$p" "$@")"; }
codes() { n=$1; e=$2; p=$3; shift 3; check_match "$n" "$e" "$(status "$URL$p" "$@")"; }
wwwa() { p=$1; shift; header "$URL$p" www-authenticate "$@"; }
# raw PATH BYTES-OF-EXTRA-HEADER-LINES (python escapes): the status of a hand-made request
raw() {
    $PY - "$PORT" "$1" "$2" <<'PY'
import sys, socket
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
extra = sys.argv[3].encode().decode("unicode_escape").encode("latin-1")
s.sendall(b"GET " + sys.argv[2].encode() + b" HTTP/1.1\r\nHost: x\r\n" + extra + b"Connection: close\r\n\r\n")
d = b""
while b"\r\n" not in d:
    c = s.recv(4096)
    if not c: break
    d += c
print(d.split(b" ")[1].decode() if d else "closed")
PY
}
# problem NAME STATUS PATH [curl args]: the answer is STATUS with an RFC 9457 body
problem() {
    n=$1; e=$2; p=$3; shift 3
    curl -s -D "$TMP/ph" -o "$TMP/pb" "$@" "$URL$p"
    got=$($PY - "$TMP/ph" "$TMP/pb" "$e" <<'PY'
import sys, json
h, b, e = open(sys.argv[1]).read().lower(), open(sys.argv[2], "rb").read(), int(sys.argv[3])
status = int(h.split()[1])
ctype = [l.split(":", 1)[1].strip() for l in h.splitlines() if l.startswith("content-type:")]
try: d = json.loads(b)
except ValueError: d = None
ok = (status == e and ctype and ctype[0].startswith("application/problem+json") and isinstance(d, dict)
      and type(d.get("status")) is int and d["status"] == e and isinstance(d.get("title"), str)
      and all(isinstance(d[k], str) for k in ("type", "detail", "instance") if k in d))
print("ok" if ok else "%d %s %r" % (status, ctype, b[:200]))
PY
)
    check "$n: $e problem+json" ok "$got"
}

HS=$(tok hs); RS=$(tok rs); ES=$(tok es)
B="Authorization: Bearer"
# RFC 9110 11.6.1 challenge: auth-scheme [ 1*SP ( token68 / #auth-param ) ], params quoted or tokens
CH='^[!#$%&'"'"'*+.^_`|~0-9A-Za-z-]+( +[!#$%&'"'"'*+.^_`|~0-9A-Za-z-]+=("[^"\\]*"|[!#$%&'"'"'*+.^_`|~0-9A-Za-z-]+)(, *[!#$%&'"'"'*+.^_`|~0-9A-Za-z-]+=("[^"\\]*"|[!#$%&'"'"'*+.^_`|~0-9A-Za-z-]+))*)?$'

# ---- the routes table ----
code "GET /public: 200" 200 /public
code "GET /me HS256: 200" 200 /me -H "$B $HS"
code "GET /me RS256: 200" 200 /me -H "$B $RS"
code "GET /me ES256: 200" 200 /me -H "$B $ES"
check_match "/me is application/json" '^application/json' "$(header "$URL/me" content-type -H "$B $HS")"
check "/me body: sub and scopes in order" '{"sub":"user-1","scopes":["read","admin"]}' "$(body "$URL/me" -H "$B $HS")"
check "/me scopes keep the token's order" '{"sub":"user-1","scopes":["z","admin","a"]}' \
    "$(body "$URL/me" -H "$B $(tok hs '{"scope": "z admin a"}')")"
code "GET /me without a token: 401" 401 /me
problem "/me without a token" 401 /me
code "GET /hs/me HS256: 200" 200 /hs/me -H "$B $HS"
code "GET /hs/me RS256: 401" 401 /hs/me -H "$B $RS"
code "GET /hs/me ES256: 401" 401 /hs/me -H "$B $ES"
check "/hs/me body as /me" '{"sub":"user-1","scopes":["read","admin"]}' "$(body "$URL/hs/me" -H "$B $HS")"
code "GET /admin with scope admin: 200" 200 /admin -H "$B $RS"
check_match "/admin body has sub" '"sub":"user-1"' "$(body "$URL/admin" -H "$B $ES")"
code "GET /admin no token: 401" 401 /admin
code "GET /admin bad token: 401, not 403" 401 /admin -H "$B x.y.z"
code "GET /admin expired token with admin: 401, not 403" 401 /admin -H "$B $(tok hs "{\"exp\": $(($(date +%s) - 300))}")"
code "GET /admin valid, no admin: 403" 403 /admin -H "$B $(tok hs '{"scope": "read"}')"
problem "/admin without admin" 403 /admin -H "$B $(tok rs '{"scope": "read"}')"
code "GET /key: 200" 200 /key -H "X-Api-Key: $KEY"
code "GET /key without: 401" 401 /key
check_match "/key challenge ApiKey realm" '^ApiKey realm="[^"]*"$' "$(wwwa /key)"
problem "/key wrong key" 401 /key -H "X-Api-Key: nope"
b64() { printf "$1" | base64 -w0; }
ALICE=$(b64 'alice:p\303\244ss:w\303\266rd')
code "GET /basic: 200" 200 /basic -H "Authorization: Basic $ALICE"
check "/basic body" '{"user":"alice"}' "$(body "$URL/basic" -H "Authorization: Basic $ALICE")"
code "GET /basic without: 401" 401 /basic
check_match "/basic challenge Basic realm" '^Basic realm="[^"]*"(, charset="UTF-8")?$' "$(wwwa /basic)"
problem "/basic without credentials" 401 /basic
for p in /nope /me/x /public/ /PUBLIC /hs /other /other/logout; do
    code "GET $p: 404" 404 "$p"
done
for c in "POST /public GET" "DELETE /me GET" "GET /login POST" "PUT /session GET" "GET /logout POST" \
         "GET /other/login POST" "POST /other/session GET" "POST /limited GET"; do
    set -- $c
    curl -s -o /dev/null -D "$TMP/h" -X "$1" "$URL$2"
    got="$(head -n 1 "$TMP/h" | cut -d' ' -f2) $(tr -d '\r' <"$TMP/h" | grep -i '^allow:' | sed 's/^[^:]*: *//' | tr -d ' ')"
    check_match "$1 $2: 405 with Allow naming $3" "^405 ([A-Z,]*,)?$3(,[A-Z,]*)?\$" "$got"
done

# ---- Bearer: where credentials come from ----
code "bearer in lower case" 200 /me -H "Authorization: bearer $HS"
code "BEARER and three spaces" 200 /me -H "Authorization: BEARER   $HS"
check 'no token: a challenge without error' 'Bearer realm="canal"' "$(wwwa /me)"
check_match "no token: RFC 9110 challenge syntax" "$CH" "$(wwwa /me)"
for other in "Basic $ALICE" "ApiKey $KEY" "Token $HS"; do
    check_match "another scheme (${other%% *}): 401 without error" '^401 Bearer realm="[^"]*"$' \
        "$(status "$URL/me" -H "Authorization: $other") $(wwwa /me -H "Authorization: $other")"
done
for q in "?access_token=$HS" ; do
    check_match "access_token in the query: as no token" '^401 Bearer realm="[^"]*"$' "$(status "$URL/me$q") $(wwwa "/me$q")"
done
check_match "access_token in a form body: as no token" '^401 Bearer realm="[^"]*"$' \
    "$(status "$URL/me" -X GET -d "access_token=$HS") $(wwwa /me -X GET -d "access_token=$HS")"
check_match "the token in a cookie: as no token" '^401 Bearer realm="[^"]*"$' \
    "$(status "$URL/me" -b "access_token=$HS") $(wwwa /me -b "access_token=$HS")"
codes "two Authorization fields: 400 or 401" '^40[01]$' /me -H "$B $HS" -H "$B $HS"
codes "a good and a bad Authorization field: 400 or 401" '^40[01]$' /me -H "$B $HS" -H "Authorization: Basic $ALICE"
codes "Bearer and nothing: 400 or 401" '^40[01]$' /me -H "Authorization: Bearer"
codes "an empty Authorization field: 400 or 401" '^40[01]$' /me -H "Authorization;"
codes "Bearer, spaces inside: 400 or 401" '^40[01]$' /me -H "$B ab cd"
codes "Bearer, extra parts: 400 or 401" '^40[01]$' /me -H "$B $HS extra"
check_match "Bearer with a NUL: 400 or 401" '^40[01]$' "$(raw /me "Authorization: Bearer ${HS}\\x00x\\r\\n")"
check_match "Bearer with non-ASCII: 400 or 401" '^40[01]$' "$(raw /me "Authorization: Bearer ${HS}\\xc3\\xa9\\r\\n")"
check_match "invalid_token on a refused token" '^Bearer realm="[^"]*", error="invalid_token"(, error_description="[^"]*")?$' \
    "$(wwwa /me -H "$B x.y.z")"
check_match "invalid_token: RFC 9110 syntax" "$CH" "$(wwwa /me -H "$B x.y.z")"
desc=$(wwwa /me -H "$B $(tok hs '{"iss": "x"}')" | sed -n 's/.*error_description="\([^"]*\)".*/\1/p')
check_match "error_description ($desc) within %x20-21 / %x23-5B / %x5D-7E" '^[] !#-[^-~]*$' "$desc"
m=$(wwwa /me -H "$B ab cd")
check_match "a malformed field, if 400: invalid_request" '(invalid_request|invalid_token|^Bearer realm="[^"]*"$)' "$m"
check_match "403: insufficient_scope, scope names admin" '^Bearer realm="[^"]*", error="insufficient_scope"(, scope="admin")?' \
    "$(wwwa /admin -H "$B $(tok hs '{"scope": "read"}')")"
check "a refused token on /hs/me: a Bearer challenge" "Bearer" "$(wwwa /hs/me -H "$B $RS" | cut -d' ' -f1)"

# ---- Bearer: the JWS compact serialization ----
code "stripped signature" 401 /me -H "$B ${HS%.*}."
code "wrong signature" 401 /me -H "$B ${HS%.*}.$(echo "${RS##*.}" | cut -c1-43)"
code "two segments" 401 /me -H "$B ${HS%.*}"
code "four segments" 401 /me -H "$B $HS.$(echo "${HS##*.}")"
codes "padded segments (=): 400 or 401" '^40[01]$' /me -H "$B $(tok padded)"
codes "'=' appended to the token: 400 or 401" '^40[01]$' /me -H "$B ${HS}=="
code "standard base64 (+ or /) in a segment" 401 /me -H "$B $(tok std64)"
code "a payload that is a JSON array" 401 /me -H "$B $(tok array)"
code "a payload that is not UTF-8" 401 /me -H "$B $(tok latin1)"
code "a duplicate member: never the first wins" 401 /admin -H "$B $(tok dup)"
code "nesting 5000 deep: 401" 401 /me -H "$B $(tok deep)"
code "a huge token" 401 /me -H "$B $($PY -c 'print("a"*9000 + "." + "b"*9000 + "." + "c"*100)')"
for a in none None NONE nOnE; do
    code "alg $a" 401 /me -H "$B $(tok none '{}' "{\"alg\":\"$a\"}")"
done
code "alg HS512" 401 /me -H "$B $(tok hsalg '{}' '{"alg":"HS512"}')"
code "alg hs256 (case)" 401 /me -H "$B $(tok hsalg '{}' '{"alg":"hs256"}')"
code "alg missing" 401 /me -H "$B $(tok hsalg '{}' '{"typ":"JWT"}')"
code "alg not a string" 401 /me -H "$B $(tok hsalg '{}' '{"alg":256}')"
code "HS256 keyed with the RS256 public key (PEM)" 401 /me -H "$B $(tok confused)"
code "crit refused" 401 /me -H "$B $(tok hs '{}' '{"crit": ["exp"], "exp": 1}')"
code "b64 refused" 401 /me -H "$B $(tok hsalg '{}' '{"alg":"HS256","b64":false}')"
# a jku/x5u that names a listening socket: a valid token is accepted and nothing connects
lport=$(free_port)
$PY - "$lport" >"$TMP/fetched" <<'PY' &
import sys, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); s.settimeout(4)
n = 0
try:
    while True: s.accept(); n += 1
except socket.timeout: pass
print(n)
PY
LPID=$!
sleep 0.3
u="http://127.0.0.1:$lport/jwks.json"
code "a strange kid, jku, x5u: ignored, 200" 200 /me -H "$B $(tok hs '{}' "{\"kid\": \"../../etc/passwd\", \"jku\": \"$u\", \"x5u\": \"$u\"}")"
code "an embedded jwk is never used" 401 /me -H "$B $(tok hsalg '{}' '{"alg":"HS256","jwk":{"kty":"oct","k":"AAAA"}}' | sed 's/\.[^.]*$/.AAAA/')"
code "an embedded jwk with RS256 is ignored" 200 /me -H "$B $(tok rs '{}' '{"jwk": {"kty": "oct", "k": "c2VjcmV0"}, "x5c": ["MIIB"]}')"
code "typ and cty are ignored" 200 /me -H "$B $(tok es '{}' '{"typ": "strange", "cty": "x"}')"
wait $LPID
check "no URL from a token is fetched (connections to jku/x5u)" 0 "$(cat "$TMP/fetched")"
code "ES256 DER signature" 401 /me -H "$B $(tok esder)"
code "ES256 r = 0" 401 /me -H "$B $(tok es0)"
code "ES256 r = n" 401 /me -H "$B $(tok esn)"
codes "ES256 high-S: either" '^(200|401)$' /me -H "$B $(tok eshighs)"
code "RS256 signature on an ES256 header" 401 /me -H "$B $(tok hsalg '{}' '{"alg":"ES256"}')"

# ---- Bearer: claims ----
now=$(date +%s)
code "expired (exp 300 s ago)" 401 /me -H "$B $(tok hs "{\"exp\": $((now - 300))}")"
code "exp missing" 401 /me -H "$B $(tok hs '{"exp": null}')"
code "exp a string" 401 /me -H "$B $(tok hs "{\"exp\": \"$((now + 300))\"}")"
code "nbf 300 s ahead" 401 /me -H "$B $(tok hs "{\"nbf\": $((now + 300))}")"
code "nbf 300 s ago" 200 /me -H "$B $(tok hs "{\"nbf\": $((now - 300))}")"
code "nbf a string" 401 /me -H "$B $(tok hs "{\"nbf\": \"$((now - 300))\"}")"
code "iat 300 s ahead" 401 /me -H "$B $(tok hs "{\"iat\": $((now + 300))}")"
code "iat a string" 401 /me -H "$B $(tok hs "{\"iat\": \"$now\"}")"
code "iat missing: allowed" 200 /me -H "$B $(tok hs '{"iat": null}')"
code "iss missing" 401 /me -H "$B $(tok hs '{"iss": null}')"
for iss in "https://issuer.test/" "https://issuer.tes" "HTTPS://ISSUER.TEST" "https://issuer.test.evil" "https://issuer.test\\u0000"; do
    code "iss '$iss'" 401 /me -H "$B $(tok hs "{\"iss\": \"$iss\"}")"
done
code "aud missing" 401 /me -H "$B $(tok hs '{"aud": null}')"
for aud in "canal" "canal-test-x" "Canal-test" "canal-test\\u0000"; do
    code "aud '$aud'" 401 /me -H "$B $(tok hs "{\"aud\": \"$aud\"}")"
done
code "aud an array holding it" 200 /me -H "$B $(tok hs '{"aud": ["x", "canal-test"]}')"
code "aud an array without it" 401 /me -H "$B $(tok hs '{"aud": ["x", "canal-tests"]}')"
code "aud a number" 401 /me -H "$B $(tok hs '{"aud": 7}')"
code "sub missing" 401 /me -H "$B $(tok hs '{"sub": null}')"
code "sub a number" 401 /me -H "$B $(tok hs '{"sub": 7}')"
check "sub with a NUL is whole" '{"sub":"u\u0000x","scopes":["read","admin"]}' "$(body "$URL/me" -H "$B $(tok hs '{"sub": "u\u0000x"}')")"
for s in "read" "administrator" "admin:write" "Admin" "read,admin" "xadmin" " admin" ; do
    want=403; [ "$s" = " admin" ] && want=200
    code "/admin scope '$s': $want" $want /admin -H "$B $(tok hs "{\"scope\": \"$s\"}")"
done
code "/admin scope an array: 403" 403 /admin -H "$B $(tok hs '{"scope": ["admin"]}')"
code "/admin scp admin, no scope: 403" 403 /admin -H "$B $(tok hs '{"scope": null, "scp": "admin"}')"
check "/me with an array scope: scopes []" '{"sub":"user-1","scopes":[]}' "$(body "$URL/me" -H "$B $(tok hs '{"scope": ["admin"]}')")"

# ---- API key ----
code "X-Api-Key name in lower case, spaces around" 200 /key -H "x-api-key:   $KEY  "
code "X-Api-Key with a tab around" 200 /key -H "$(printf 'X-Api-Key:\t%s\t' "$KEY")"
code "a wrong key" 401 /key -H "X-Api-Key: ${KEY}x"
code "a prefix of the key" 401 /key -H "X-Api-Key: $(echo "$KEY" | cut -c1-8)"
codes "the key with its file's \\r: 400 or 401" '^40[01]$' /key -H "$(printf 'X-Api-Key: %s\r' "$KEY")"
codes "two X-Api-Key fields: 400 or 401" '^40[01]$' /key -H "X-Api-Key: $KEY" -H "X-Api-Key: $KEY"
code "the key in Authorization" 401 /key -H "Authorization: $KEY"
code "the key as Authorization ApiKey" 401 /key -H "Authorization: ApiKey $KEY"
code "the key in the query" 401 "/key?api_key=$KEY&X-Api-Key=$KEY"
check_match "KEY\\0junk: refused" '^40[01]$' "$(raw /key "X-Api-Key: ${KEY}\\x00junk\\r\\n")"

# ---- Basic ----
code "Basic in lower case" 200 /basic -H "Authorization: basic $ALICE"
code "BASIC, two spaces" 200 /basic -H "Authorization: BASIC  $ALICE"
code "the Latin-1 password" 401 /basic -H "Authorization: Basic $(b64 'alice:p\344ss:w\366rd')"
code "password\\0junk" 401 /basic -H "Authorization: Basic $(b64 'alice:p\303\244ss:w\303\266rd\000junk')"
code "a prefix of the password" 401 /basic -H "Authorization: Basic $(b64 'alice:p\303\244ss')"
code "split at the first colon (user alice:p)" 401 /basic -H "Authorization: Basic $(b64 'alice:p:\303\244ss:w\303\266rd')"
code "another user" 401 /basic -H "Authorization: Basic $(b64 'alicia:p\303\244ss:w\303\266rd')"
code "user Alice" 401 /basic -H "Authorization: Basic $(b64 'Alice:p\303\244ss:w\303\266rd')"
codes "no colon: 400 or 401" '^40[01]$' /basic -H "Authorization: Basic $(b64 'alice')"
codes "bad base64: 400 or 401" '^40[01]$' /basic -H "Authorization: Basic %%%"
codes "unpadded base64: 400 or 401" '^40[01]$' /basic -H "Authorization: Basic $(echo "$ALICE" | tr -d =)"

# ---- session cookies ----
login() { curl -s -o /dev/null -D "$TMP/login" -X POST "$@"; tr -d '\r' <"$TMP/login"; }
sid_of() { grep -i '^set-cookie:' | sed -n 's/^[^:]*: *sid=\([^;]*\);.*/\1/p'; }
h=$(login -H "Authorization: Basic $ALICE" "$URL/login")
check_match "POST /login: 200 or 204" '^HTTP/1.1 20[04]' "$(printf '%s\n' "$h" | head -n 1)"
check "exactly one Set-Cookie" 1 "$(printf '%s\n' "$h" | grep -ic '^set-cookie:')"
line=$(printf '%s\n' "$h" | grep -i '^set-cookie:' | sed 's/^[^:]*: *//')
check_match "sid=VALUE; Path=/; HttpOnly; Secure; SameSite=Lax, cookie-octets, 22+ characters" \
    '^sid=[]!#-+.-:<-[^-~-]{22,}(; [A-Za-z-]+(=[^;]*)?)*$' "$line"
for a in "Path=/" HttpOnly Secure SameSite=Lax; do
    check_match "the cookie has $a" "; $a(;|\$)" "$line"
done
check "no Domain (host-only)" "" "$(printf '%s\n' "$line" | grep -i 'domain=')"
SID=$(printf '%s\n' "$h" | sid_of)
SID2=$(login -H "Authorization: Basic $ALICE" "$URL/login" | sid_of)
[ -n "$SID2" ] && [ "$SID2" != "$SID" ] && ok "every login is a new session" || not_ok "every login is a new session"
h=$(login -H "Authorization: Basic $(b64 'alice:nope')" "$URL/login")
check "a failed login: 401" 401 "$(printf '%s\n' "$h" | head -n 1 | cut -d' ' -f2)"
check "a failed login: no Set-Cookie" 0 "$(printf '%s\n' "$h" | grep -ic '^set-cookie:')"
check_match "a failed login: the Basic challenge" '^www-authenticate: Basic realm=' "$(printf '%s\n' "$h" | grep -i '^www-authenticate:' | tr 'A-Z' 'a-z' | sed 's/realm=.*/realm=/' | sed 's/^www-authenticate: basic/www-authenticate: Basic/')"
check "no Set-Cookie on a login without credentials" 0 "$(login "$URL/login" | grep -ic '^set-cookie:')"
problem "POST /login without credentials" 401 /login -X POST
code "GET /session: 200" 200 /session -b "sid=$SID"
check "/session body" '{"user":"alice"}' "$(body "$URL/session" -b "sid=$SID")"
code "sid among other cookies" 200 /session -H "Cookie: a=1; sid=$SID; b=2"
code "no cookie: 401" 401 /session
check_match "no cookie: the Cookie challenge" '^Cookie realm="[^"]*"$' "$(wwwa /session)"
problem "/session without a cookie" 401 /session
code "an empty sid" 401 /session -H "Cookie: sid="
code "the name SID" 401 /session -H "Cookie: SID=$SID"
code "the other secret's route refuses this cookie" 401 /other/session -b "sid=$SID"
$PY - "$PORT" "$SID" >"$TMP/tamper" <<'PY'
import sys, http.client
port, sid = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port)
def get(v):
    c.request("GET", "/session", headers={"Cookie": "sid=" + v})
    r = c.getresponse(); r.read(); return r.status
alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~!"
tried = bad = 0
for i in range(len(sid)):  # every character changed, to two others
    for d in (1, 7):
        v = sid[:i] + alphabet[(alphabet.index(sid[i]) + d) % len(alphabet)] + sid[i + 1:]
        tried += 1; bad += get(v) != 401
for n in range(len(sid)):  # every truncation
    tried += 1; bad += get(sid[:n]) != 401
for extra in ("A", "-", ".", "x", "="):
    tried += 1; bad += get(sid + extra) != 401
print(tried, bad, get(sid))
PY
read tried bad still <"$TMP/tamper"
check "every changed, cut or appended character: 401 ($tried tried), the real one 200" "0 200" "$bad $still"
check_match "a value followed by NUL: 400 or 401" '^40[01]$' "$(raw /session "Cookie: sid=${SID}\\x00x\\r\\n")"
OSID=$(login -H "Authorization: Basic $ALICE" "$URL/other/login" | sid_of)
check_match "POST /other/login sets a sid" '^.{22,}$' "$OSID"
code "GET /other/session with its cookie: 200" 200 /other/session -b "sid=$OSID"
check "/other/session body" '{"user":"alice"}' "$(body "$URL/other/session" -b "sid=$OSID")"
code "the other secret's cookie on /session: 401" 401 /session -b "sid=$OSID"
code "/other/login without credentials: 401" 401 /other/login -X POST
check_match "/other/session without: Cookie challenge" '^Cookie realm=' "$(wwwa /other/session)"
h=$(login -b "sid=$SID" "$URL/logout")
check_match "POST /logout: 200 or 204" '^HTTP/1.1 20[04]' "$(printf '%s\n' "$h" | head -n 1)"
check_match "logout deletes sid (Max-Age=0 or a past Expires)" '^set-cookie: sid=[^;]*;.*(max-age=0|expires=thu, 01 jan 1970)' \
    "$(printf '%s\n' "$h" | grep -i '^set-cookie:' | tr 'A-Z' 'a-z')"
code "the old cookie after logout: 401" 401 /session -b "sid=$SID"
code "logout replayed: 401" 401 /logout -X POST -b "sid=$SID"
check_match "logout without a cookie: 401 Cookie challenge" '^401 Cookie realm=' \
    "$(status "$URL/logout" -X POST) $(wwwa /logout -X POST)"
code "the second session still lives" 200 /session -b "sid=$SID2"

# ---- rate limiting: 5 per 2 s per client address ----
sleep 2.2
$PY - "$PORT" >"$TMP/burst" <<'PY'
import sys, http.client, json, math
port = int(sys.argv[1])
conns = [http.client.HTTPConnection("127.0.0.1", port) for _ in range(8)]
codes, last, hdrs_ok = [], None, True
for i in range(16):
    c = conns[i % 8]
    c.request("GET", "/limited")
    r = c.getresponse(); body = r.read()
    codes.append(r.status)
    for h in ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"):
        v = r.getheader(h)
        if v is not None and not v.isdigit(): hdrs_ok = False
    if r.status == 429: last = (r, body)
r, body = last
p = json.loads(body)
lim, rem = r.getheader("RateLimit-Limit"), r.getheader("RateLimit-Remaining")
print(codes.count(200), codes.count(429), r.getheader("Retry-After"),
      "ok" if (lim in (None, "5") and rem in (None, "0") and hdrs_ok) else "bad:%s,%s" % (lim, rem),
      r.getheader("Content-Type").split(";")[0], p["status"], type(p["title"]).__name__)
PY
read n200 n429 retry rl ctype pstatus ptitle <"$TMP/burst"
check "8 keep-alive connections, 4 threads, 16 requests: exactly 5 answered 200" "5 11" "$n200 $n429"
check_match "Retry-After between 1 and ceil(W)+1 = 3" '^[1-3]$' "$retry"
check "RateLimit-* integers, -Limit 5 and -Remaining 0 on a 429" ok "$rl"
check "429 is problem+json with status and title" "application/problem+json 429 str" "$ctype $pstatus $ptitle"
# burst SOURCE N [XFF]: 200s among N requests at once on one keep-alive connection from SOURCE
burst() {
    $PY - "$PORT" "$@" <<'PY'
import sys, http.client
port, src, n, fake = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4
c = http.client.HTTPConnection("127.0.0.1", port, source_address=(src, 0))
ok = 0
for i in range(n):
    h = {"X-Forwarded-For": "10.9.9.%d" % i, "Forwarded": "for=10.7.7.%d" % i, "X-Real-IP": "10.8.8.%d" % i} if fake else {}
    c.request("GET", "/limited", headers=h); r = c.getresponse(); r.read(); ok += r.status == 200
print(ok)
PY
}
check "127.0.0.2 has its own 5 (8 sent)" 5 "$(burst 127.0.0.2 8)"
sleep 2.2
check "X-Forwarded-For, Forwarded, X-Real-IP are ignored (8 fake clients: 5)" 5 "$(burst 127.0.0.2 8 fake)"
code "other routes are not limited (/public)" 200 /public
code "other routes are not limited (/me)" 200 /me -H "$B $HS"
$PY - "$PORT" >"$TMP/truthful" <<'PY'
import sys, http.client, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for i in range(20):
    c.request("GET", "/limited"); r = c.getresponse(); r.read()
    if r.status == 429: break
ra = int(r.getheader("Retry-After"))
time.sleep(ra)
c.request("GET", "/limited"); r2 = c.getresponse(); r2.read()
print(r.status, ra, r2.status)
PY
read s1 ra s2 <"$TMP/truthful"
check "Retry-After ($ra s) is truthful: 429, then 200 after the wait" "429 200" "$s1 $s2"
sleep 2.2
$PY - "$PORT" >"$TMP/refill" <<'PY'
import sys, http.client, threading
port = int(sys.argv[1]); codes = []; lock = threading.Lock()
def run():
    c = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(2):
        c.request("GET", "/limited"); r = c.getresponse(); r.read()
        with lock: codes.append(r.status)
ts = [threading.Thread(target=run) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(codes.count(200))
PY
check "after W s idle, a parallel burst of 16 on 8 connections: exactly 5" 5 "$(cat "$TMP/refill")"
problem "/limited over the limit" 429 /limited

# ---- every answer: the security headers ----
for c in "200 /public" "200 /me -H|$B $HS" "401 /me" "403 /admin -H|$B $(tok hs '{"scope": "read"}')" "404 /nope" \
         "405 /public -X|POST" "429 /limited" "400 /me -H|$B ab cd" "204 /login -X|POST|-H|Authorization: Basic $ALICE"; do
    want=${c%% *}; rest=${c#* }; path=${rest%% *}; args=${rest#"$path"}; args=${args# }
    for scheme in http tls; do
        base=$URL; extra="--no-progress-meter"
        [ $scheme = tls ] && base=$T && extra="--cacert $K/tls.crt"
        # shellcheck disable=SC2086
        if [ -n "$args" ]; then
            old=$IFS; IFS='|'; set -- $args; IFS=$old
            for i in $(seq 20); do
                curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' $extra "$@" "$base$path" >"$TMP/code"
                [ "$path" != /limited ] || [ "$(cat "$TMP/code")" = 429 ] && break
            done
        else
            for i in $(seq 20); do
                curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' $extra "$base$path" >"$TMP/code"
                [ "$path" != /limited ] || [ "$(cat "$TMP/code")" = 429 ] && break
            done
        fi
        h=$(tr -d '\r' <"$TMP/h" | tr 'A-Z' 'a-z')
        got=$(cat "$TMP/code")
        printf '%s\n' "$h" | grep -q '^x-content-type-options: nosniff$' && got="$got nosniff"
        printf '%s\n' "$h" | grep -Eq '^referrer-policy: (no-referrer|same-origin|origin|strict-origin|origin-when-cross-origin|strict-origin-when-cross-origin)$' && got="$got referrer"
        if [ $scheme = http ]; then
            printf '%s\n' "$h" | grep -q '^strict-transport-security:' && got="$got HSTS"
            check "$want $path over HTTP: nosniff, Referrer-Policy, no HSTS" "$want nosniff referrer" "$got"
        else
            printf '%s\n' "$h" | grep -Eq '^strict-transport-security: max-age=[1-9][0-9]*' && got="$got HSTS"
            check "$want $path over TLS: nosniff, Referrer-Policy, HSTS max-age > 0" "$want nosniff referrer HSTS" "$got"
        fi
    done
done
# libh2o's own answers on canal's path (a body over the limit, broken chunked framing) and
# canal's refusals before routing (431) carry the preset too
head -c 2000000 /dev/zero >"$TMP/big"
for scheme in http tls; do
    base=$URL; extra="--no-progress-meter"
    # (over HTTP/2 libh2o 2.2.5 resets the stream of a body over the limit: no answer at all)
    [ $scheme = tls ] && base=$T && extra="--cacert $K/tls.crt --http1.1"
    h=$(curl -s -o /dev/null -D - $extra -X POST --data-binary @"$TMP/big" "$base/public" | tr -d '\r' | tr 'A-Z' 'a-z')
    got=$(printf '%s\n' "$h" | head -n 1 | cut -d' ' -f2)
    printf '%s\n' "$h" | grep -q '^x-content-type-options: nosniff$' && got="$got nosniff"
    printf '%s\n' "$h" | grep -q '^referrer-policy: ' && got="$got referrer"
    printf '%s\n' "$h" | grep -q '^strict-transport-security: max-age=[1-9]' && got="$got HSTS"
    want="413 nosniff referrer"; [ $scheme = tls ] && want="$want HSTS"
    check "libh2o's 413 over $scheme: the preset" "$want" "$got"
done
$PY - "$PORT" >"$TMP/own" <<'PY'
import sys, socket
def ask(raw):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.settimeout(5)
    s.sendall(raw); d = b""
    try:
        while b"\r\n\r\n" not in d:
            c = s.recv(4096)
            if not c: break
            d += c
    except OSError: pass
    h = d.lower()
    return "%s%s" % (d.split(b" ")[1].decode() if d.startswith(b"HTTP/") else "closed", " nosniff" if b"x-content-type-options: nosniff" in h else "")
print(ask(b"POST /public HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") + ",",
      ask(b"GET /public HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70000 + b"\r\n\r\n"))
PY
check "libh2o's 400 (broken chunked), canal's 431: the preset" "400 nosniff, 431 nosniff" "$(cat "$TMP/own")"
check "h2c claiming :scheme https: no HSTS" "" "$(header "$URL/public" strict-transport-security --http2-prior-knowledge)"

# ---- limits: the app answers and never crashes ----
$PY - "$PORT" >"$TMP/limits" <<'PY'
import sys, socket
port = int(sys.argv[1])
def send(nbytes):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(10)
    fields = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000) for i in range(nbytes // 1012))
    try:
        s.sendall(b"GET /public HTTP/1.1\r\nHost: x\r\n" + fields + b"Connection: close\r\n\r\n")
        d = s.recv(100)
    except OSError: d = b""
    return d.split(b" ")[1].decode() if d.startswith(b"HTTP/") else "closed"
print(send(16 * 1024 - 200), send(64 * 1024 + 1024), send(1024 * 1024))
PY
read h16 h64 h1m <"$TMP/limits"
check "a 16 KiB header section: served" 200 "$h16"
check_match "over 64 KiB: 431 or 400, answered" '^(431|400)$' "$h64"
check_match "1 MiB: 431, 400 or closed" '^(431|400|closed)$' "$h1m"
code "GET /public answers 200 after everything" 200 /public
stop secure

# ---- a JWT flag left out refuses its algorithm everywhere ----
start secure-rs "$BIN/canal-secure" --threads 2 --jwt-rs256-public-key "$K/rsa.pub" --jwt-issuer https://issuer.test \
    --jwt-audience canal-test --api-key "$K/apikey" --basic-user alice --basic-password "$K/pw" \
    --cookie-secret "$K/cookie" --cookie-secret-other "$K/cookie-other" --rate 5 --window 2 \
    || { not_ok "canal-secure starts with RS256 only"; exit 0; }
code "RS256 only: /me RS256 200" 200 /me -H "$B $RS"
code "RS256 only: /me HS256 401" 401 /me -H "$B $HS"
code "RS256 only: /me ES256 401" 401 /me -H "$B $ES"
code "RS256 only: /hs/me HS256 401" 401 /hs/me -H "$B $HS"
check_match "RS256 only: /hs/me's 401 is a Bearer invalid_token" 'error="invalid_token"' "$(wwwa /hs/me -H "$B $HS")"
stop secure-rs
