#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 node chromium npm:playwright-core npm:swagger-ui-dist
# Debian's headless Chromium, driven by playwright-core (test/browser/browser.cjs), against the
# demo's /docs page (Swagger UI renders every operation of /openapi.json) and the development
# error page of canal-testapp (a request carrying <script> shows it as text; nothing runs).
# Screenshots are kept in $B/browser/. Skipped, visibly, only when chromium is not installed.
. test/e2e-lib.sh

need_browser browser swagger-ui-dist/swagger-ui-bundle.js || exit 0

start demo "$BIN/canal-demo" --mode controller --threads 1 || exit 0
DEMO_PID=$PID
DEMO_URL=$URL
start testapp "$TBIN/canal-testapp" --env development --threads 1 || exit 0
# A headless browser on a shared 2-core machine is slow to start: browser.cjs waits for what it
# checks, never for a fixed time.
NODE_PATH=$NPM node test/browser/browser.cjs "$CHROMIUM" "$DEMO_URL" "$URL" "$B/browser" 2>"$TMP/browser.err"
rc=$?
if [ "$rc" != 0 ]; then tail -n 20 "$TMP/browser.err" >&2; fi
stop testapp
PID=$DEMO_PID
stop demo
