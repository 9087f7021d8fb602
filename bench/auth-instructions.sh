#!/bin/sh
# SPDX-License-Identifier: MIT
# User-space instructions per request of a policy (Bearer JWT, HS256 and RS256) against the
# same JSON answer on a route without one, on test/e2e/authapp.c, counted by callgrind as
# bench/instructions.sh does: each case is loaded with N1 and N2 requests (h2load --h1, 4
# connections, one worker) and the difference divided by N2 - N1.
#   sh bench/auth-instructions.sh [N1 N2]   (default 200 1200)   needs valgrind, h2load, python3-jwt
set -eu
N1=${1:-200}
N2=${2:-1200}
BIN=${BIN:-build/test/canal-authapp}
K=$(mktemp -d)
trap 'rm -rf "$K"' EXIT
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$K/rsa.pem" 2>/dev/null
openssl pkey -in "$K/rsa.pem" -pubout -out "$K/rsa.pub"
printf 'an HS256 secret of more than 32 bytes, for tests\n' >"$K/hs"
printf 'k\n' >"$K/key"
printf 'p\n' >"$K/pw"
tok() { /usr/bin/python3 -c "import jwt, time, sys
key = open(sys.argv[2], 'rb').read().rstrip(b'\n')
print(jwt.encode({'iss': 'i', 'aud': 'a', 'sub': 'user-1', 'exp': int(time.time()) + 3600, 'scope': 'read admin'}, key, sys.argv[1]))" "$@"; }
HS=$(tok HS256 "$K/hs")
RS=$(tok RS256 "$K/rsa.pem")
count() { # path n [token] -> Ir
    valgrind --tool=callgrind --callgrind-out-file="$K/cg.out" "$BIN" --threads 1 --port 0 --jwt-hs256-secret "$K/hs" \
        --jwt-rs256-public-key "$K/rsa.pub" --jwt-issuer i --jwt-audience a --api-key "$K/key" --basic-user u \
        --basic-password "$K/pw" 2>"$K/log" &
    pid=$!
    port=""
    while [ -z "$port" ]; do
        sleep 0.3
        port=$(sed -n 's|.*listening on http://[^ ]*:\([0-9]*\).*|\1|p' "$K/log")
    done
    if [ -n "${3:-}" ]; then
        h2load --h1 -n "$2" -c 4 -H "Authorization: Bearer $3" "http://127.0.0.1:$port$1" >/dev/null
    else
        h2load --h1 -n "$2" -c 4 "http://127.0.0.1:$port$1" >/dev/null
    fi
    kill -TERM $pid
    wait $pid
    awk '/^(summary|totals):/ {print $2; exit}' "$K/cg.out"
}
for c in "plain /plain/me" "HS256 /me $HS" "RS256 /me $RS"; do
    set -- $c
    a=$(count "$2" "$N1" "${3:-}")
    b=$(count "$2" "$N2" "${3:-}")
    echo "$1 $2: $(( (b - a) / (N2 - N1) )) Ir/request"
done
