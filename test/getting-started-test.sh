#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: cc curl pkg-config
# Follows docs/getting-started.md as a newcomer would, with HOME pointing at a fresh temporary
# folder: the guide's install commands run in the source folder, its environment lines are
# sourced, its programs are written to an empty folder and built with its exact commands, then
# run (on a free port instead of 8080) and asked the requests the guide shows.
#
# The guide marks what this script takes with HTML comments before each block:
#   <!-- test: install -->     sh commands run in canal's source folder
#   <!-- test: env -->         sh lines sourced before building and running
#   <!-- test: file NAME -->   a program saved as NAME
#   <!-- test: build NAME -->  sh commands run in the app folder; they must produce NAME
set -u
guide=docs/getting-started.md
src=$(pwd)
home=$(mktemp -d "${TMPDIR:-/tmp}/canal-gs.XXXXXX")
PIDS=""
trap 'for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$home"' EXIT
mkdir "$home/app"

# block KIND [ARG]: prints the fenced block that follows the marker "<!-- test: KIND ARG -->"
block() {
    awk -v marker="<!-- test: $* -->" '
        $0 == marker { want = 1; next }
        want && /^```/ && !inside { inside = 1; next }
        want && inside && /^```/ { exit }
        want && inside { print }
    ' "$guide"
}

check() {
    if [ "$2" = "$3" ]; then echo "ok - $1"; else echo "not ok - $1: expected [$2], got [$3]"; fi
}

# 1. install, as the guide says, with HOME in a temporary folder
block install >"$home/install.sh"
if [ ! -s "$home/install.sh" ]; then echo "not ok - $guide has no install block"; exit 0; fi
if HOME="$home" sh -e "$home/install.sh" >"$home/install.log" 2>&1; then
    echo "ok - the guide's install commands: $(tr '\n' ';' <"$home/install.sh")"
else
    echo "not ok - the guide's install commands failed:"; tail -n 20 "$home/install.log" | sed 's/^/#   /'
    exit 0
fi
for f in include/canal.h lib/libcanal.so.0 lib/pkgconfig/canal.pc bin/canal-routes \
         share/man/man1/canal-routes.1; do
    if [ -e "$home/.local/$f" ]; then echo "ok - installed ~/.local/$f"; else echo "not ok - ~/.local/$f missing"; fi
done

# 2. the environment lines, then each program: written, built, run, asked
block env >"$home/env.sh"
export HOME="$home"
unset PKG_CONFIG_PATH LD_LIBRARY_PATH
# shellcheck disable=SC1091
. "$home/env.sh"
check "pkg-config finds canal with the guide's environment" "0.1.0" "$(pkg-config --modversion canal 2>&1)"

# build NAME: writes NAME.c, runs the guide's build block; 0 when NAME was built
build() {
    block file "$1.c" >"$home/app/$1.c"
    lines=$(wc -l <"$home/app/$1.c")
    if [ "$lines" -gt 5 ] && [ "$lines" -lt 40 ]; then
        echo "ok - $1.c is $lines lines of C (under 40)"
    else
        echo "not ok - $1.c is $lines lines of C"
    fi
    block build "$1" >"$home/app/build-$1.sh"
    if (cd "$home/app" && sh -e "build-$1.sh" >"$home/app/$1.log" 2>&1) && [ -x "$home/app/$1" ]; then
        echo "ok - built $1 with: $(cat "$home/app/build-$1.sh")"
    else
        echo "not ok - building $1 failed:"; sed 's/^/#   /' "$home/app/$1.log"
        return 1
    fi
    lib=$(ldd "$home/app/$1" | grep libcanal)
    case "$lib" in
    *"$home/.local/lib/libcanal.so.0"*) echo "ok - $1 loads ~/.local/lib/libcanal.so.0" ;;
    *) echo "not ok - $1 loads [$lib]" ;;
    esac
}

# run NAME: starts ./NAME --port 0 in the app folder; sets URL and PID
run() {
    (cd "$home/app" && exec "./$1" --port 0) >"$home/app/$1.out" 2>"$home/app/$1.err" &
    PID=$!
    PIDS="$PIDS $PID"
    URL=""
    i=0
    while [ $i -lt 200 ] && [ -z "$URL" ]; do
        URL=$(sed -n 's|^listening on \(http://[^ ]*\)$|\1|p' "$home/app/$1.err" "$home/app/$1.out")
        [ -n "$URL" ] || sleep 0.05
        i=$((i + 1))
    done
    if [ -n "$URL" ]; then echo "ok - ./$1 says it is listening on $URL"; else echo "not ok - ./$1 did not start"; cat "$home/app/$1.err"; fi
}

stop() {
    kill -INT "$PID" 2>/dev/null # the guide's Ctrl-C
    wait "$PID"
    check "./$1 exits 0 on Ctrl-C (SIGINT)" 0 "$?"
}

# flags NAME: --help prints the usage and exits 0; a mistyped flag is refused with exit 2
flags() {
    (cd "$home/app" && "./$1" --help >"$1.help" 2>&1)
    check "./$1 --help exits 0" 0 "$?"
    if grep -q -- '--port N' "$home/app/$1.help"; then echo "ok - ./$1 --help lists the flags"; else echo "not ok - ./$1 --help says: $(head -c 300 "$home/app/$1.help")"; fi
    (cd "$home/app" && "./$1" --prot 9000 >"$1.prot" 2>&1)
    check "./$1 --prot 9000 (a typo) exits 2" 2 "$?"
    check "./$1 --prot 9000 says why" "unknown flag --prot; see --help" "$(head -n 1 "$home/app/$1.prot")"
}

get() { curl -s "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

if build hello; then
    flags hello
    # the process runs in the background of a non-interactive shell, where SIGINT is ignored
    # unless a program handles it itself, as canal_app_wait() does
    run hello
    check "GET /hello/world" '{"hello":"world"}' "$(get "$URL/hello/world")"
    check "GET /square/12" '{"square":144}' "$(get "$URL/square/12")"
    check "GET /square/twelve is a 404" 404 "$(code "$URL/square/twelve")"
    check "POST /hello/x is a 405" 405 "$(code -X POST "$URL/hello/x")"
    allow=$(curl -s -o /dev/null -D - -X POST "$URL/hello/x" | tr -d '\r' | sed -n 's/^allow: //Ip')
    check "the 405 says allow: GET, HEAD, OPTIONS" "GET, HEAD, OPTIONS" "$allow"
    stop hello
fi

if build todos; then
    flags todos
    run todos
    check "GET /api/todos/3" '{"id":3,"title":"docs","done":false}' "$(get "$URL/api/todos/3")"
    check "GET /api/todos/3?done=true" '{"id":3,"title":"docs","done":true}' "$(get "$URL/api/todos/3?done=true")"
    check "GET /api/todos/0 is a 400" 400 "$(code "$URL/api/todos/0")"
    body=$(get "$URL/api/todos/0")
    case "$body" in
    *'"status":400,"errors":{"id":["The field id must be at least 1."]}}') echo "ok - the 400 is problem details naming id: $body" ;;
    *) echo "not ok - the 400 body is [$body]" ;;
    esac
    check "GET /api/todos/3?done=maybe is a 400" 400 "$(code "$URL/api/todos/3?done=maybe")"
    stop todos
fi
