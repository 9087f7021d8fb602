#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 systemd-socket-activate systemd-analyze
# systemd socket activation with canal-demo: the sockets systemd-socket-activate passes (TCP
# and unix, LISTEN_FDS/LISTEN_PID/LISTEN_FDNAMES) are the ones canal serves; a descriptor that
# is not a listening socket is refused; a restart under load refuses nothing, because the
# sockets outlive the process (a small launcher in Python holds them, as systemd does, and
# restarts canal as `systemctl restart` would: SIGTERM, wait, start); and systemd-analyze
# verifies the unit files of docs/deploy/.
. test/e2e-lib.sh

# ---- systemd-socket-activate ----
PORT=$(free_port)
SOCK=$TMP/act.sock
# it passes its child no environment but what -E names: the sanitizers' options (test/run)
PASS_ENV=""
for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
    eval "[ -n \"\${$v+set}\" ]" && PASS_ENV="$PASS_ENV -E $v"
done
# shellcheck disable=SC2086
systemd-socket-activate -l "127.0.0.1:$PORT" -l "$SOCK" --fdname=http:local $PASS_ENV \
    "$BIN/canal-demo" --threads 2 --access-log off >"$TMP/act.out" 2>"$TMP/act.err" &
APID=$!
SERVER_PIDS="$SERVER_PIDS $APID"
i=0
while ! [ -S "$SOCK" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
# the first connection makes systemd-socket-activate exec canal-demo, which accepts it
check "TCP socket from systemd" "Hello, World!" "$(curl -s --max-time 10 "http://127.0.0.1:$PORT/home/plaintext")"
check "unix socket from systemd" '{"message":"Hello, World!"}' "$(curl -s --max-time 10 --unix-socket "$SOCK" http://canal/home/json)"
check_match "canal names the sockets it adopted" "socket activation: listening on 127\.0\.0\.1:$PORT \(descriptor 3, http\)" \
    "$(cat "$TMP/act.err")"
check_match "and the unix one" "socket activation: listening on unix:$SOCK \(descriptor 4, local\)" "$(cat "$TMP/act.err")"
check_match "the demo prints the first as its address" "canal-demo listening on http://127\.0\.0\.1:$PORT " "$(cat "$TMP/act.err")"
PID=$APID
stop act
check "the unix socket file stays: it is systemd's" socket "$(stat -c %F "$SOCK" 2>/dev/null)"

# a descriptor 3 that is not a listening socket (LISTEN_PID set by the shell that execs)
sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --port 0' "$BIN/canal-demo" 3</dev/null >/dev/null 2>"$TMP/bad.err"
check "an inherited descriptor that is not a socket: exit 1" 1 "$?"
check_match "with the reason" "socket activation: descriptor 3 \(no name\) is not a listening TCP or unix stream socket" \
    "$(cat "$TMP/bad.err")"
for n in 4097 -1 two; do
    sh -c 'LISTEN_PID=$$ LISTEN_FDS=$1 exec "$0" --port 0' "$BIN/canal-demo" "$n" >/dev/null 2>"$TMP/bad.err"
    rc=$?
    check "LISTEN_FDS=$n: exit 1" 1 "$rc"
    check_match "LISTEN_FDS=$n: the reason" "socket activation: LISTEN_FDS=$n is not a count from 0 to 4096" \
        "$(cat "$TMP/bad.err")"
done
# LISTEN_PID of another process: not for us, canal binds its own port
start other env LISTEN_PID=1 LISTEN_FDS=1 "$BIN/canal-demo" --threads 1 --access-log off 3</dev/null || exit 0
check "LISTEN_PID of another process is ignored" "Hello, World!" "$(body "$URL/home/plaintext")"
stop other

# ---- a restart with the sockets held: no connection refused ----
cat >"$TMP/launcher.py" <<'PY'
# Holds a listening socket as systemd does and runs canal-demo on it (LISTEN_FDS=1); on
# SIGHUP, restarts it as `systemctl restart` does: SIGTERM, wait for the exit, start again.
# Prints "PORT <n>" once listening, "restarted <exit status>" after each restart.
import os, signal, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(1024)
os.set_inheritable(s.fileno(), True)
def spawn():
    pid = os.fork()
    if pid == 0:
        os.dup2(s.fileno(), 3)
        env = dict(os.environ, LISTEN_PID=str(os.getpid()), LISTEN_FDS="1", LISTEN_FDNAMES="http")
        os.execve(sys.argv[1], sys.argv[1:], env)
    return pid
def reap(pid):
    # waits for pid's exit, at most 30 s (canal's drain is 10 s): a hang is a failed check
    # ("... killed"), never a stalled test
    end = time.time() + 30
    while time.time() < end:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            return str(os.waitstatus_to_exitcode(st))
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "killed (no exit 30 s after SIGTERM)"
child = spawn()
restart = stop = False
def on_hup(*_):
    global restart
    restart = True
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGHUP, on_hup)
signal.signal(signal.SIGTERM, on_term)
print("PORT", s.getsockname()[1], flush=True)
while not stop:
    time.sleep(0.01)
    if restart:
        restart = False
        os.kill(child, signal.SIGTERM)
        st = reap(child)
        child = spawn()
        print("restarted", st, flush=True)
os.kill(child, signal.SIGTERM)
print("stopped", reap(child), flush=True)
PY
cat >"$TMP/client.py" <<'PY'
# Requests /home/plaintext on new connections for SECS seconds; prints
# "ok N failed F slowest MS".
import http.client, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
ok = failed = 0
slowest = 0.0
end = time.time() + secs
while time.time() < end:
    t = time.time()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/home/plaintext")
        r = c.getresponse()
        body = r.read()
        c.close()
        if r.status == 200 and body == b"Hello, World!":
            ok += 1
        else:
            failed += 1
    except OSError:
        failed += 1
    slowest = max(slowest, time.time() - t)
print("ok", ok, "failed", failed, "slowest", int(slowest * 1000))
PY
python3 "$TMP/launcher.py" "$BIN/canal-demo" --threads 2 --access-log off >"$TMP/launcher.out" 2>"$TMP/launcher.err" &
LPID=$!
SERVER_PIDS="$SERVER_PIDS $LPID"
i=0
while ! grep -q '^PORT ' "$TMP/launcher.out" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
LPORT=$(sed -n 's/^PORT //p' "$TMP/launcher.out")
python3 "$TMP/client.py" "$LPORT" 3 >"$TMP/client.out" &
CPID=$!
sleep 1
kill -HUP "$LPID"
sleep 0.7
kill -HUP "$LPID"
wait "$CPID"
kill -TERM "$LPID"
wait "$LPID"
set -- $(cat "$TMP/client.out")
echo "# two restarts in 3 s of requests: $2 answered, $4 failed, slowest ${6} ms"
check "the old processes exit 0 at each restart" "restarted 0
restarted 0
stopped 0" "$(grep -v '^PORT' "$TMP/launcher.out")"
check "requests across two restarts: none failed" 0 "$4"
check "and some were answered" yes "$([ "$2" -gt 100 ] && echo yes || echo "no ($2)")"
check "the new processes adopted the socket" 3 "$(grep -c 'socket activation: listening on 127\.0\.0\.1' "$TMP/launcher.err")"

# ---- the unit files ----
mkdir -p "$TMP/units"
cp docs/deploy/canal-demo.service docs/deploy/canal-demo.socket "$TMP/units/"
# verify wants ExecStart's binary to exist: point it at the built one
sed -i "s|/usr/local/bin/canal-demo|$(pwd)/$BIN/canal-demo|" "$TMP/units/canal-demo.service"
out=$(systemd-analyze verify "$TMP/units/canal-demo.socket" "$TMP/units/canal-demo.service" 2>&1)
check "systemd-analyze verify: docs/deploy/canal-demo.socket and .service, no complaint" "0 []" "$? [$out]"
