# SPDX-License-Identifier: MIT
# Helpers for the end-to-end tests (POSIX sh). Each test script sources this file, starts the
# servers it needs on free 127.0.0.1 ports, talks to them with curl and prints TAP-style
# "ok - ..." / "not ok - ..." lines that test/run counts. Servers are stopped by PID only.
#
#   B        the build directory (build or build/asan), set by test/run
set -u
B=${B:-build}
BIN=$B/bin
TBIN=$B/test
TMP=$(mktemp -d "${TMPDIR:-/tmp}/canal-e2e.XXXXXX")
SERVER_PIDS=""
trap 'for p in $SERVER_PIDS; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }

# check NAME EXPECTED ACTUAL
check() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: expected [$2], got [$3]"; fi
}

# check_match NAME REGEX ACTUAL (grep -E)
check_match() {
    if printf '%s' "$3" | grep -Eq -- "$2"; then ok "$1"; else not_ok "$1: [$3] does not match /$2/"; fi
}

# free_port: a port that binds now (for servers that take no port 0), below Linux's ephemeral
# range (32768 and up), where the thousands of
# client connections of other tests (the soak) leave TIME_WAIT sockets that can make a
# bind there fail
free_port() {
    python3 -c '
import random, socket
for p in random.sample(range(20000, 32700), 200):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); print(p); break
    except OSError:
        pass
    finally:
        s.close()
'
}

# await_port NAME SERVER_PID: waits (10 s at most, while the server runs) for the port it logs
# in $TMP/NAME.err or .out ("listening on http://...:PORT"); sets PORT, or says "not ok" and
# returns 1
await_port() {
    PORT=""
    i=0
    while [ $i -lt 200 ]; do
        PORT=$(sed -n 's|.*listening on http://[^ ]*:\([0-9][0-9]*\).*|\1|p' "$TMP/$1.err" "$TMP/$1.out" 2>/dev/null | head -n 1)
        [ -n "$PORT" ] && return 0
        if ! kill -0 "$2" 2>/dev/null; then break; fi
        sleep 0.05
        i=$((i + 1))
    done
    not_ok "$1 started"
    cat "$TMP/$1.err" >&2
    return 1
}

# start NAME CMD ARGS...: runs a server on a free port; sets PID and PORT, logs in $TMP/NAME.*
start() {
    name=$1
    shift
    # empty the logs first: a second server of the same name must not be found by the port
    # of the first one, still in its log until the background shell truncates it
    : >"$TMP/$name.out"
    : >"$TMP/$name.err"
    "$@" --port 0 >"$TMP/$name.out" 2>"$TMP/$name.err" &
    PID=$!
    SERVER_PIDS="$SERVER_PIDS $PID"
    await_port "$name" "$PID" || return 1
    URL="http://127.0.0.1:$PORT"
}

# stop NAME: SIGTERM, then the exit status must be 0 (under ASan: no leak, no error)
stop() {
    kill -TERM "$PID" 2>/dev/null
    wait "$PID"
    rc=$?
    SERVER_PIDS=$(echo "$SERVER_PIDS" | sed "s/ $PID\$//; s/ $PID / /")
    check "$1 exits 0 on SIGTERM" 0 "$rc"
    if [ "$rc" != 0 ]; then tail -n 30 "$TMP/$1.err" >&2; fi
}

# status URL [curl args]: the HTTP status code
status() { u=$1; shift; curl -s -o /dev/null -w '%{http_code}' "$@" "$u"; }
# body URL [curl args]
body() { u=$1; shift; curl -s "$@" "$u"; }
# header URL NAME [curl args]: the value of a response header (first), no CR
header() { u=$1; n=$2; shift 2; curl -s -o /dev/null -D - "$@" "$u" | tr -d '\r' | grep -i "^$n:" | head -n 1 | sed 's/^[^:]*: *//'; }

# redis_start: a Redis of the test's own on 127.0.0.1:$RPORT (set by the caller), no
# persistence, its files in $TMP; sets RPID and waits (5 s at most) until it answers PING.
# Called again after a SIGKILL, it restarts on the same port.
redis_start() {
    (cd "$TMP" && exec redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$TMP" >>"$TMP/redis.log" 2>&1) &
    RPID=$!
    SERVER_PIDS="$SERVER_PIDS $RPID"
    i=0
    while [ $i -lt 100 ] && ! redis-cli -p "$RPORT" ping >/dev/null 2>&1; do sleep 0.05; i=$((i + 1)); done
}

# start_nginx INCLUDE LOG_FORMAT: nginx (NGINX, or the one on PATH) in the foreground, no
# master process, with its pid file, logs and temp paths under $TMP/nginx, an access log
# $TMP/nginx-access.log in LOG_FORMAT, and the http {} configuration in the file INCLUDE;
# sets NPID. No root, no system service, no user switch.
start_nginx() {
    mkdir -p "$TMP/nginx"
    cat >"$TMP/nginx.conf" <<NGINX_CONF
daemon off;
master_process off;
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 1024; }
http {
    log_format test '$2';
    access_log $TMP/nginx-access.log test;
    client_body_temp_path $TMP/nginx/client_body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    uwsgi_temp_path $TMP/nginx/uwsgi;
    scgi_temp_path $TMP/nginx/scgi;
    include $1;
}
NGINX_CONF
    "${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}" -p "$TMP/nginx" -e "$TMP/nginx/error.log" \
        -c "$TMP/nginx.conf" 2>"$TMP/nginx.err" &
    NPID=$!
    SERVER_PIDS="$SERVER_PIDS $NPID"
}

# need_browser NAME [NPM_FILE...]: sets CHROMIUM and NPM for a headless-browser test, or
# prints why it cannot run and returns 1: a SKIP when chromium is not installed, a failure
# when node, playwright-core or one of the npm files (paths under $NPM) is missing.
need_browser() {
    name=$1; shift
    NPM=build/npm/node_modules
    CHROMIUM=$(command -v chromium || true)
    if [ -z "$CHROMIUM" ]; then
        ok "$name # SKIP chromium is not installed (make deps installs it)"
        return 1
    fi
    missing=
    command -v node >/dev/null 2>&1 || missing=node
    for f in playwright-core "$@"; do [ -e "$NPM/$f" ] || missing="$missing $f"; done
    if [ -n "$missing" ]; then
        not_ok "$name: missing:$missing (make deps && make npm)"
        return 1
    fi
}

# jwt_keys: for the JWT tests, PY (Debian's python3, with python3-jwt) and K, a folder with an
# RSA 2048 and a P-256 key made by openssl (rsa.pem, rsa.pub, ec.pem, ec.pub); returns 1 (after
# a not ok line) when PyJWT is missing
jwt_keys() {
    PY=/usr/bin/python3
    if ! $PY -c "import jwt, cryptography" 2>/dev/null; then
        not_ok "PyJWT available (apt-get install python3-jwt python3-cryptography: .ci/install-deps)"
        return 1
    fi
    K=$TMP/keys
    mkdir -p "$K"
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$K/rsa.pem" 2>/dev/null
    openssl pkey -in "$K/rsa.pem" -pubout -out "$K/rsa.pub" 2>/dev/null
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$K/ec.pem" 2>/dev/null
    openssl pkey -in "$K/ec.pem" -pubout -out "$K/ec.pub" 2>/dev/null
}
