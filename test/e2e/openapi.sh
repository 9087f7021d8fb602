#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3 node npm:@apidevtools/swagger-parser
# The OpenAPI documents and the /docs page over HTTP: the demo (both modes) and the
# kitchen-sink app canal-openapiapp (both modes) serve /openapi.json, which must validate as
# OpenAPI 3.1 with a real validator from npm and describe every route of the app's route table
# with the right types and constraints (test/openapi/check-openapi.cjs); controller mode adds
# what the actions declare (test/openapi/*.expect.json). The kitchen-sink app's WebSocket route
# is a GET marked x-websocket with its 101 and handshake refusals. Needs node and `make npm`.
. test/e2e-lib.sh

NPM=build/npm/node_modules
if ! command -v node >/dev/null 2>&1; then
    ok "openapi # SKIP node is not installed (make deps installs nodejs and npm)"
    exit 0
fi
if [ ! -d "$NPM/@apidevtools/swagger-parser" ]; then
    not_ok "openapi: npm packages missing in $NPM (run make npm)"
    exit 0
fi

# check_doc NAME APP_CMD... : serves the app, fetches its document and route table, checks both
check_doc() {
    name=$1
    expect=$2
    shift 2
    "$@" --routes >"$TMP/$name.routes" 2>"$TMP/$name.routes.err"
    check "$name: --routes lists the route table" 0 $?
    start "$name" "$@" || return
    curl -s -D "$TMP/$name.headers" -o "$TMP/$name.json" "$URL/openapi.json"
    check "$name: /openapi.json is application/json" "application/json" \
        "$(tr -d '\r' <"$TMP/$name.headers" | sed -n 's/^[Cc]ontent-[Tt]ype: //p')"
    flags=""
    case $name in *controller*) flags=--declared ;; esac
    case $name in kitchen*) flags="$flags --websocket=/ws/rooms/{room:alpha}" ;; esac
    NODE_PATH=$NPM node test/openapi/check-openapi.cjs "$TMP/$name.json" "$TMP/$name.routes" \
        $expect $flags
    SAVED_URL=$URL
}

check_doc demo-router "" "$BIN/canal-demo" --mode router
stop demo-router
check_doc demo-controller test/openapi/demo-controller.expect.json "$BIN/canal-demo" --mode controller
# The document's own example: a route it describes answers at the path it gives.
check "demo-controller: /home/orders/{id} with the declared query answers 200" 200 \
    "$(status "$SAVED_URL/home/orders/3?index=0&size=5")"
check "demo-controller: size over the declared maximum is the 400 validation problem" \
    "400 application/problem+json" \
    "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$SAVED_URL/home/orders/3?size=101")"
# /docs: canal's page, Swagger UI's files from build/npm, nothing else of that directory
if [ -f "$NPM/swagger-ui-dist/swagger-ui-bundle.js" ]; then
    check "demo: /docs answers 200" 200 "$(status "$SAVED_URL/docs")"
    check_match "demo: /docs forbids inline scripts" "script-src 'self'" \
        "$(header "$SAVED_URL/docs" content-security-policy)"
    check "demo: /docs/swagger-ui-bundle.js is the installed file" \
        "$(wc -c <"$NPM/swagger-ui-dist/swagger-ui-bundle.js" | tr -d ' ')" \
        "$(curl -s "$SAVED_URL/docs/swagger-ui-bundle.js" | wc -c | tr -d ' ')"
    check "demo: other files of swagger-ui-dist are not served" 404 \
        "$(status "$SAVED_URL/docs/package.json")"
    # 400: a dot-segment, even percent-encoded, is refused before routing (docs/security.md)
    check_match "demo: no way out of the directory" '^(400|404)$' \
        "$(status "$SAVED_URL/docs/..%2F..%2Fpackage.json")"
else
    not_ok "swagger-ui-dist is not installed in $NPM (make npm)"
fi
stop demo-controller

check_doc kitchen-router "" "$TBIN/canal-openapiapp" --mode router
check "kitchen-router: an escaped-brace path from the document reaches its route" \
    "braces/{{literal}}/{x}" "$(body "$SAVED_URL/braces/%7Bliteral%7D/x")"
check "kitchen-router: a catch-all path from the document holds '/'" "files/{*path}" \
    "$(body "$SAVED_URL/files/a/b/c")"
stop kitchen-router
check_doc kitchen-controller test/openapi/kitchen-controller.expect.json "$TBIN/canal-openapiapp" \
    --mode controller
stop kitchen-controller

# Without Swagger UI's files /docs says how to get them, and the app still runs.
start demo-nodocs "$BIN/canal-demo" --swagger-ui "$TMP/nowhere"
check "demo without swagger-ui-dist: /docs answers 503" 503 "$(status "$URL/docs")"
check_match "demo without swagger-ui-dist: /docs says how to install it" "make npm" \
    "$(body "$URL/docs")"
check_match "demo without swagger-ui-dist: it warned at start" "/docs will answer 503" \
    "$(cat "$TMP/demo-nodocs.err")"
check "demo without swagger-ui-dist: /openapi.json still answers" 200 \
    "$(status "$URL/openapi.json")"
stop demo-nodocs
