#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 py:jwt openssl
# Authentication and policies (docs/security.md) with real clients: tokens made by PyJWT
# (Debian's python3-jwt), never by canal; keys made by openssl; requests by curl. Status
# codes and WWW-Authenticate per issue 18's contract, on test/e2e/authapp.c.
. test/e2e-lib.sh
jwt_keys || exit 0
printf 'an HS256 secret of more than 32 bytes, for tests\n' >"$K/hs"
printf 'key-0123456789abcdef\n' >"$K/apikey"
printf 'p\303\244ss:w\303\266rd\n' >"$K/pw"   # UTF-8 with a colon

# tok KIND [JSON overrides of the claims] [JSON header]: a token made by PyJWT (jwt_tok.py)
tok() { $PY test/e2e/jwt_tok.py "$K" "$@"; }

start auth "$TBIN/canal-authapp" --threads 2 --jwt-hs256-secret "$K/hs" --jwt-rs256-public-key "$K/rsa.pub" \
    --jwt-es256-public-key "$K/ec.pub" --jwt-issuer https://issuer.test --jwt-audience canal-test \
    --api-key "$K/apikey" --basic-user alice --basic-password "$K/pw" || exit 0

# code NAME EXPECTED PATH [curl args]
code() { n=$1; e=$2; p=$3; shift 3; check "$n" "$e" "$(status "$URL$p" "$@")"; }
wwwa() { header "$URL$1" www-authenticate -H "Authorization: Bearer $2"; }

HS=$(tok hs); RS=$(tok rs); ES=$(tok es)
code "public without credentials" 200 /public
check "/plain/me: the baseline route" '{"sub":"user-1","scopes":["read","admin"]}' "$(body "$URL/plain/me")"
code "/me HS256" 200 /me -H "Authorization: Bearer $HS"
code "/me RS256" 200 /me -H "Authorization: Bearer $RS"
code "/me ES256" 200 /me -H "Authorization: Bearer $ES"
check "/me body" '{"sub":"user-1","scopes":["read","admin"]}' "$(body "$URL/me" -H "Authorization: Bearer $HS")"
code "/hs/me HS256" 200 /hs/me -H "Authorization: Bearer $HS"
code "/hs/me RS256 refused" 401 /hs/me -H "Authorization: Bearer $RS"
code "/me bearer in lower case" 200 /me -H "Authorization: bearer $HS"
code "/me BEARER, three spaces" 200 /me -H "Authorization: BEARER   $HS"
code "/me without a token" 401 /me
check "no token: challenge without error" 'Bearer realm="canal"' "$(header "$URL/me" www-authenticate)"
check "Basic sent to /me: challenge without error" 'Bearer realm="canal"' \
    "$(header "$URL/me" www-authenticate -H 'Authorization: Basic YTpi')"
code "access_token in the query ignored" 401 "/me?access_token=$HS"
check_match "bad token: invalid_token" '^Bearer realm="canal", error="invalid_token", error_description="[^"\\]*"$' "$(wwwa /me x.y.z)"
check_match "problem+json on 401" 'application/problem\+json' "$(header "$URL/me" content-type)"
for a in none None NONE nOnE; do
    code "alg $a" 401 /me -H "Authorization: Bearer $(tok none '{}' "{\"alg\":\"$a\"}")"
done
code "HS256 keyed with the RS256 public key" 401 /me -H "Authorization: Bearer $(tok confused)"
code "stripped signature" 401 /me -H "Authorization: Bearer ${HS%.*}."
code "wrong signature" 401 /me -H "Authorization: Bearer ${HS%.*}.$(echo "${RS##*.}" | cut -c1-43)"
code "expired" 401 /me -H "Authorization: Bearer $(tok hs "{\"exp\": $(($(date +%s) - 300))}")"
code "exp missing" 401 /me -H "Authorization: Bearer $(tok hs '{"exp": null}')"
code "not yet valid" 401 /me -H "Authorization: Bearer $(tok hs "{\"nbf\": $(($(date +%s) + 300))}")"
code "iat in the future" 401 /me -H "Authorization: Bearer $(tok hs "{\"iat\": $(($(date +%s) + 300))}")"
code "wrong issuer" 401 /me -H "Authorization: Bearer $(tok hs '{"iss": "https://issuer.test/"}')"
code "issuer with a NUL" 401 /me -H "Authorization: Bearer $(tok hs '{"iss": "https://issuer.test\u0000"}')"
code "wrong audience" 401 /me -H "Authorization: Bearer $(tok hs '{"aud": "canal"}')"
code "aud array holding it" 200 /me -H "Authorization: Bearer $(tok hs '{"aud": ["x", "canal-test"]}')"
code "aud array without it" 401 /me -H "Authorization: Bearer $(tok hs '{"aud": ["x", "canal-tests"]}')"
code "sub missing" 401 /me -H "Authorization: Bearer $(tok hs '{"sub": null}')"
code "ES256 with a DER signature" 401 /me -H "Authorization: Bearer $(tok esder)"
code "crit refused" 401 /me -H "Authorization: Bearer $(tok hs '{}' '{"crit": ["exp"]}')"
code "a strange kid and a jku are ignored" 200 /me -H "Authorization: Bearer $(tok hs '{}' '{"kid": "../../etc/passwd", "jku": "http://127.0.0.1:1/"}')"
code "duplicate member names refused" 401 /admin -H "Authorization: Bearer $(tok dup)"
code "nesting 5000 deep" 401 /me -H "Authorization: Bearer $(tok deep)"
code "padded base64url" 401 /me -H "Authorization: Bearer ${HS}=="
code "huge token" 401 /me -H "Authorization: Bearer $(python3 -c 'print("a"*9000)')"
code "two Authorization fields" 400 /me -H "Authorization: Bearer $HS" -H "Authorization: Bearer $HS"
code "Bearer and nothing" 400 /me -H "Authorization: Bearer"
code "Bearer, spaces inside" 400 /me -H "Authorization: Bearer ab cd"
check_match "malformed: invalid_request" 'error="invalid_request"' "$(wwwa /me 'ab cd')"
# /admin: 401 without a good token, 403 with one that lacks the scope
code "/admin with admin" 200 /admin -H "Authorization: Bearer $HS"
code "/admin without a token: 401" 401 /admin
code "/admin bad token: 401" 401 /admin -H "Authorization: Bearer x.y.z"
for s in "read" "administrator" "admin:write" "Admin" "read,admin"; do
    code "/admin scope '$s': 403" 403 /admin -H "Authorization: Bearer $(tok hs "{\"scope\": \"$s\"}")"
done
code "/admin scope array: 403" 403 /admin -H "Authorization: Bearer $(tok hs '{"scope": ["admin"]}')"
check "/me scope array: no scopes" '{"sub":"user-1","scopes":[]}' "$(body "$URL/me" -H "Authorization: Bearer $(tok hs '{"scope": ["admin"]}')")"
check 'insufficient_scope' 'Bearer realm="canal", error="insufficient_scope", scope="admin"' \
    "$(wwwa /admin "$(tok hs '{"scope": "read"}')")"
# API key
KEY=key-0123456789abcdef
code "/key" 200 /key -H "X-Api-Key: $KEY"
code "/key name in lower case, spaces around" 200 /key -H "x-api-key:   $KEY  "
code "/key wrong" 401 /key -H "X-Api-Key: ${KEY}x"
code "/key prefix" 401 /key -H "X-Api-Key: key-0123"
code "/key two fields" 401 /key -H "X-Api-Key: $KEY" -H "X-Api-Key: $KEY"
code "/key in Authorization" 401 /key -H "Authorization: $KEY"
code "/key in the query" 401 "/key?api_key=$KEY"
check "/key challenge" 'ApiKey realm="canal"' "$(header "$URL/key" www-authenticate)"
# Basic
b64() { printf "$1" | base64 -w0; }
code "/basic" 200 /basic -H "Authorization: Basic $(b64 'alice:p\303\244ss:w\303\266rd')"
check "/basic body" '{"user":"alice"}' "$(body "$URL/basic" -H "Authorization: Basic $(b64 'alice:p\303\244ss:w\303\266rd')")"
code "/basic scheme in upper case" 200 /basic -H "Authorization: BASIC $(b64 'alice:p\303\244ss:w\303\266rd')"
code "/basic Latin-1 password" 401 /basic -H "Authorization: Basic $(b64 'alice:p\344ss:w\366rd')"
code "/basic password with a NUL" 401 /basic -H "Authorization: Basic $(b64 'alice:p\303\244ss:w\303\266rd\000junk')"
code "/basic wrong user" 401 /basic -H "Authorization: Basic $(b64 'alicia:p\303\244ss:w\303\266rd')"
code "/basic no colon" 401 /basic -H "Authorization: Basic $(b64 'alice')"
code "/basic bad base64" 401 /basic -H "Authorization: Basic %%%"
code "/basic unpadded base64" 401 /basic -H "Authorization: Basic $(b64 'alice:x' | tr -d =)"
check "/basic challenge" 'Basic realm="canal", charset="UTF-8"' "$(header "$URL/basic" www-authenticate)"
# controller mode: the policy answers before the binding reads the body
J="-X POST -H Content-Type:application/json"
code "controller: no token, bad body: 401" 401 /ctl/admin $J -d '{bad'
code "controller: no admin, bad body: 403" 403 /ctl/admin $J -d '{bad' -H "Authorization: Bearer $(tok hs '{"scope": "read"}')"
code "controller: admin, bad body: 400" 400 /ctl/admin $J -d '{bad' -H "Authorization: Bearer $HS"
check "controller: admin" '{"n":7}' "$(body "$URL/ctl/admin" $J -d '{"n":7}' -H "Authorization: Bearer $HS")"
# OpenAPI: securitySchemes, per-operation security, 401 and 403
code "openapi.json under the default policy" 401 /openapi.json
body "$URL/openapi.json" -H "Authorization: Bearer $HS" >"$TMP/openapi.json"
check "openapi: security, 401, 403 and the schemes" "ok" "$($PY - "$TMP/openapi.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p, s = d["paths"], d["components"]["securitySchemes"]
ok = (p["/admin"]["get"]["security"] == [{"bearer": ["admin"]}] and "403" in p["/admin"]["get"]["responses"]
      and "401" in p["/me"]["get"]["responses"] and "403" not in p["/me"]["get"]["responses"]
      and p["/key"]["get"]["security"] == [{"apiKey": []}] and "security" not in p["/public"]["get"]
      and p["/ctl/admin"]["post"]["security"] == [{"bearer": ["admin"]}]
      and s["bearer"] == {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
      and s["apiKey"] == {"type": "apiKey", "in": "header", "name": "X-Api-Key"} and s["basic"]["scheme"] == "basic")
print("ok" if ok else json.dumps(p) + json.dumps(s))
PY
)"
code "public still answers" 200 /public
stop auth
