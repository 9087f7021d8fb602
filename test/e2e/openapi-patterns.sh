#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl node
# Every `pattern` canal writes into an OpenAPI document is valid ECMA-262 and means what canal
# matches (issue 25): the documents of the demo (both modes), the notes example and the
# kitchen-sink app canal-openapiapp (both modes, which has route regexes) go through
# test/openapi/check-patterns.cjs: each pattern compiles as `new RegExp(p, "u")` in Node, the
# examples beside a pattern pass it, and for each route regex Node and canal's router
# (canal-routes) agree on sample values; then the same for the regex corpus
# test/openapi/regex-corpus.txt under both case policies. Needs only node (no npm package).
. test/e2e-lib.sh

# fetch_doc NAME APP_CMD...: serves the app and saves its /openapi.json as $TMP/NAME.json
fetch_doc() {
    name=$1
    shift
    start "$name" "$@" || return
    curl -s -o "$TMP/$name.json" "$URL/openapi.json"
    check "$name: /openapi.json answers" 0 $?
    stop "$name"
    DOCS="$DOCS $TMP/$name.json"
}

DOCS=""
fetch_doc demo-router "$BIN/canal-demo" --mode router
fetch_doc demo-controller "$BIN/canal-demo" --mode controller
fetch_doc notes "$BIN/canal-notes" --threads 2 --db sqlite::memory:
fetch_doc kitchen-router "$TBIN/canal-openapiapp" --mode router
fetch_doc kitchen-controller "$TBIN/canal-openapiapp" --mode controller

# shellcheck disable=SC2086
node test/openapi/check-patterns.cjs "$BIN/canal-routes" $DOCS
check "check-patterns.cjs: the documents' patterns" 0 $?
node test/openapi/check-patterns.cjs "$BIN/canal-routes" --corpus test/openapi/regex-corpus.txt
check "check-patterns.cjs: the regex corpus" 0 $?
