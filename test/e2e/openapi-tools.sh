#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl node npm:@redocly/cli npm:@stoplight/spectral-cli npm:openapi-typescript npm:typescript npm:ajv npm:ajv-formats
# The demo's OpenAPI document (both modes) checked by real tools from npm (docs/openapi.md):
# Redocly's recommended rules and Spectral's spectral:oas find no error; openapi-typescript
# makes types that a strict TypeScript snippet reads employee.LastName and orders[0].Freight
# from (and a misspelt field does not compile); every answer of the demo to a varied request
# set validates against the document with ajv (test/openapi/check-answers.cjs); the two
# modes' documents differ only where test/openapi/compare-modes.cjs says. examples/notes's
# document passes both linters too.
. test/e2e-lib.sh

NPM=build/npm/node_modules
export NODE_PATH=$NPM

# lint NAME DOC: both linters, 0 errors; their warnings go to the output as comments
lint() {
    (cd "$TMP" && "$OLDPWD/$NPM/.bin/redocly" lint --extends=recommended --format=summary "$2") \
        >"$TMP/$1.redocly" 2>&1
    rc=$?
    sed -n 's/^\(error\|warning\) /# redocly &/p' "$TMP/$1.redocly"
    check "$1: redocly lint (recommended): 0 errors" "0 0" "$rc $(grep -c '^error ' "$TMP/$1.redocly")"
    printf 'extends: ["spectral:oas"]\n' >"$TMP/spectral.yaml"
    "$NPM/.bin/spectral" lint --ruleset "$TMP/spectral.yaml" --fail-severity error "$2" \
        >"$TMP/$1.spectral" 2>&1
    rc=$?
    grep -E '^ +[0-9]+:[0-9]+ +(warning|error)' "$TMP/$1.spectral" | sed 's/^ */# spectral /'
    check "$1: spectral lint (spectral:oas): 0 errors" 0 "$rc"
}

# types NAME DOC: openapi-typescript's types, read by a strict snippet
types() {
    "$NPM/.bin/openapi-typescript" "$2" -o "$TMP/$1-api.d.ts" >"$TMP/$1.ots" 2>&1
    check "$1: openapi-typescript generates types" 0 $?
    for field in LastName NoSuchField; do
        cat >"$TMP/$1-$field.ts" <<TS
import type { paths } from "./$1-api";
declare const employee: paths["/home/employee/{id}"]["get"]["responses"][200]["content"]["application/json"];
declare const orders: paths["/home/orders/{id}"]["get"]["responses"][200]["content"]["application/json"];
export const last: string = employee.$field;
export const freight: number = orders[0].Freight;
TS
        "$NPM/.bin/tsc" --strict --noEmit --module esnext --moduleResolution bundler --target es2020 \
            "$TMP/$1-$field.ts" >"$TMP/$1-$field.tsc" 2>&1
        echo $? >"$TMP/$1-$field.rc"
    done
    check "$1: employee.LastName and orders[0].Freight compile with tsc --strict" 0 \
        "$(cat "$TMP/$1-LastName.rc")"
    [ "$(cat "$TMP/$1-LastName.rc")" = 0 ] || sed 's/^/# /' "$TMP/$1-LastName.tsc"
    check_match "$1: employee.NoSuchField does not compile" "NoSuchField' does not exist on type" \
        "$(cat "$TMP/$1-NoSuchField.tsc")"
}

for mode in router controller; do
    start "demo-$mode" "$BIN/canal-demo" --mode $mode || continue
    curl -s -o "$TMP/$mode.json" "$URL/openapi.json"
    lint "demo-$mode" "$TMP/$mode.json"
    types "demo-$mode" "$TMP/$mode.json"
    node test/openapi/check-answers.cjs "$TMP/$mode.json" "$URL"
    stop "demo-$mode"
done
node test/openapi/compare-modes.cjs "$TMP/router.json" "$TMP/controller.json"

# examples/notes: forms, a multipart upload, cookies and a 201's Location header
if start notes "$BIN/canal-notes" --db sqlite::memory:; then
    curl -s -o "$TMP/notes.json" "$URL/openapi.json"
    lint notes "$TMP/notes.json"
    stop notes
fi
