#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 node chromium npm:playwright-core
# Debian's headless Chromium, driven by playwright-core (test/browser/realtime.cjs), against
# canal-realtime's page at /: its EventSource receives the ticks of /sse/ticks and its
# WebSocket to /ws/echo gets its messages back. Two worker threads, so the page's two
# connections may land on different loops. The screenshot is kept in $B/browser/. Skipped,
# visibly, only when chromium is not installed.
. test/e2e-lib.sh

need_browser realtime-browser || exit 0

start rt "$BIN/canal-realtime" --threads 2 || exit 0
check "GET / is the page" "200 text/html; charset=utf-8" \
    "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$URL/")"
# A headless browser on a shared 2-core machine is slow to start: realtime.cjs waits for what
# it checks, never for a fixed time.
NODE_PATH=$NPM node test/browser/realtime.cjs "$CHROMIUM" "$URL" "$B/browser" 2>"$TMP/browser.err"
rc=$?
if [ "$rc" != 0 ]; then tail -n 20 "$TMP/browser.err" >&2; fi
stop rt
