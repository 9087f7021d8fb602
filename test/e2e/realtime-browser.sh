#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 node chromium npm:playwright-core
# Debian's headless Chromium, driven by playwright-core (test/browser/realtime.cjs), against
# canal-realtime's page at /: its EventSource receives the ticks of /sse/ticks and its
# WebSocket to /ws/echo gets its messages back. Two worker threads, so the page's two
# connections may land on different loops. The screenshot is kept in $B/browser/. Skipped,
# visibly, only when chromium is not installed.
. test/e2e-lib.sh

NPM=build/npm/node_modules
CHROMIUM=$(command -v chromium || true)
if [ -z "$CHROMIUM" ]; then
    ok "realtime-browser # SKIP chromium is not installed (make deps installs it)"
    exit 0
fi
if ! command -v node >/dev/null 2>&1 || [ ! -d "$NPM/playwright-core" ]; then
    not_ok "realtime-browser: node or playwright-core is missing in $NPM (make deps && make npm)"
    exit 0
fi

start rt "$BIN/canal-realtime" --threads 2 || exit 0
check "GET / is the page" "200 text/html; charset=utf-8" \
    "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$URL/")"
# A headless browser on a shared 2-core machine is slow to start: realtime.cjs waits for what
# it checks, never for a fixed time.
NODE_PATH=$NPM node test/browser/realtime.cjs "$CHROMIUM" "$URL" "$B/browser" 2>"$TMP/browser.err"
rc=$?
if [ "$rc" != 0 ]; then tail -n 20 "$TMP/browser.err" >&2; fi
stop rt
