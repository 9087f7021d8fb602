#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 openssl h2load
# TLS and HTTP/2: the demo beside its cleartext port, with a certificate made here; curl over
# HTTP/2 and HTTP/1.1 and h2load give the same answers; h2c with prior knowledge on cleartext;
# a bad certificate or key is a clear error at start-up.
. test/e2e-lib.sh

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 2 \
    -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
check "test certificate made" 0 "$?"
tls_port=$(free_port) # --tls-port takes no 0
start tlsdemo "$BIN/canal-demo" --threads 2 --tls-port $tls_port --cert "$TMP/cert.pem" --key "$TMP/key.pem" || exit 0
T="https://127.0.0.1:$tls_port"
ids='s/"requestId":"[^"]*"/"requestId":"ID"/' # problem details name each request differently
for path in /home/plaintext /home/json /home/employee/3 "/home/orders/3?index=0&size=5" /api/woo /nope "/home/orders/3?size=0"; do
    plain=$(curl -s -w '%{http_code}' "$URL$path" | sed "$ids")
    h2=$(curl -s --cacert "$TMP/cert.pem" --http2 -w '%{http_code}' "$T$path" | sed "$ids")
    h1=$(curl -s --cacert "$TMP/cert.pem" --http1.1 -w '%{http_code}' "$T$path" | sed "$ids")
    check "same answer over HTTP/1.1, TLS+HTTP/1.1 and TLS+HTTP/2: $path" "$plain|$plain" "$h1|$h2"
done
check_match "X-Request-Id over HTTP/2" '^[0-9a-f]{8}-[0-9a-f]+-[0-9a-f]+$' "$(header "$T/api/woo" x-request-id --cacert "$TMP/cert.pem" --http2)"
check "ALPN picks h2" 2 "$(curl -s --cacert "$TMP/cert.pem" -o /dev/null -w '%{http_version}' "$T/api/woo")"
check "h2c with prior knowledge on the cleartext port" 2 "$(curl -s --http2-prior-knowledge -o /dev/null -w '%{http_version}' "$URL/api/woo")"
if command -v h2load >/dev/null 2>&1; then
    h2load -n 2000 -c 4 -m 8 "$T/home/json" >"$TMP/h2load" 2>&1
    check_match "h2load over TLS: all 2000 succeeded" '2000 succeeded, 0 failed' "$(cat "$TMP/h2load")"
    check_match "h2load negotiated h2" 'Application protocol: h2$' "$(cat "$TMP/h2load")"
    echo "# h2load -c 4 -m 8 over TLS: $(grep 'finished in' "$TMP/h2load")"
else
    not_ok "h2load is installed"
fi
stop tlsdemo

timeout 20 "$BIN/canal-demo" --port 0 --tls-port $tls_port --cert "$TMP/missing.pem" --key "$TMP/key.pem" >/dev/null 2>"$TMP/bad1"
check "missing certificate: exit 1" 1 "$?"
check_match "missing certificate: says which file" "certificate .*missing.pem: .*No such file" "$(cat "$TMP/bad1")"
timeout 20 "$BIN/canal-demo" --port 0 --tls-port $tls_port --cert "$TMP/cert.pem" --key "$TMP/cert.pem" >/dev/null 2>"$TMP/bad2"
check "a certificate as the key: exit 1" 1 "$?"
check_match "bad key: says which file" "private key .*cert.pem" "$(cat "$TMP/bad2")"
timeout 20 "$BIN/canal-demo" --port 0 --cert "$TMP/cert.pem" --key "$TMP/key.pem" >/dev/null 2>"$TMP/bad3"
check "a certificate without --tls-port: exit 1" 1 "$?"
check_match "says --tls-port is missing" "without a TLS port" "$(cat "$TMP/bad3")"
