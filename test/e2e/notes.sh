#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# examples/notes as a program (its actions have tests of their own on the test client,
# examples/notes/test/): every route with curl, every 400 with the keys of its errors (JSON
# pointers for body members), the upload limit (413), wrong body types (415), Location, the
# view cookie, /openapi.json, a graceful stop; on SQLite (a file), and on a PostgreSQL this
# script starts (test/e2e-pg.sh; a SKIP line when it is not installed): the same program and
# checks, --db alone differs. Then: the data outlives a restart, the default database is
# ./notes.db, and the migration leaves an existing schema as it is.
. test/e2e-lib.sh
. test/e2e-pg.sh

JSON="content-type: application/json"
# keys BODY: the keys of a problem's "errors", sorted, comma-separated
keys() { printf '%s' "$1" | python3 -c 'import json, sys; print(",".join(sorted(json.load(sys.stdin)["errors"])))'; }
# field BODY PYTHON-EXPR: a value of the JSON answer (d), as Python prints it
field() { printf '%s' "$1" | python3 -c "import json, sys; d = json.load(sys.stdin); print($2)"; }

# suite LABEL FLAGS...: every check, on a new empty database given by FLAGS
suite() {
    L=$1
    shift
    start notes "$BIN/canal-notes" --threads 2 "$@" || return 1


    check "$L: an empty list" "[]" "$(body "$URL/api/notes")"

    # POST /api/notes: 201, Location by link generation, defaults filled in (done, state)
    out=$(curl -s -D "$TMP/h1" "$URL/api/notes" -H "$JSON" \
        --data '{"title":"Groceries","tags":["food","weekly"],"items":[{"text":"milk","qty":2},{"text":"eggs","qty":12,"done":true}]}')
    check "$L: POST: 201" "201" "$(sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$TMP/h1")"
    check "$L: POST: Location" "/api/notes/1" "$(tr -d '\r' <"$TMP/h1" | sed -n 's/^location: //p')"
    check "$L: POST: the note, body null, defaults" \
        "1 Groceries None ['food', 'weekly'] [False, True] draft" \
        "$(field "$out" 'd["id"], d["title"], d["body"], d["tags"], [i["done"] for i in d["items"]], d["state"]')"
    check_match "$L: POST: created is an RFC 3339 UTC time" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' \
        "$(field "$out" 'd["created"]')"
    check "$L: GET: the same note" "$out" "$(body "$URL/api/notes/1")"
    check "$L: GET with view=compact: the summary" '{"id":1,"title":"Groceries","state":"draft"}' \
        "$(body "$URL/api/notes/1" -b 'view=compact')"
    check "$L: GET with view=full: the note" "$out" "$(body "$URL/api/notes/1" -b 'theme=dark; view=full')"
    out=$(body "$URL/api/notes/1" -b 'view=tiny')
    check "$L: a bad view cookie: 400 on view" "view" "$(keys "$out")"

    # every rule of the body, each reported under its JSON pointer, all in one 400
    out=$(curl -s "$URL/api/notes" -H "$JSON" --data '{"title":"","body":3,"tags":["ok","Bad tag","","waytoolongtobeatagatall"],
        "items":[{"text":"a","qty":1},{},{"text":"b","qty":"2"},{"text":"c","qty":100,"done":"yes"}],"state":"gone"}')
    check "$L: a bad body: 400, every field under its pointer" \
        "/body,/items/1/qty,/items/1/text,/items/2/qty,/items/3/done,/items/3/qty,/state,/tags/1,/tags/2,/tags/3,/title" "$(keys "$out")"
    check "$L: the message of /items/3/qty" "['The field qty must be between 1 and 99.']" "$(field "$out" 'd["errors"]["/items/3/qty"]')"
    out=$(body "$URL/api/notes" -H "$JSON" --data '{"title":"t","tags":["a","b","c","d","e","f","g","h","i"]}')
    check "$L: nine tags: 400 on /tags" "/tags" "$(keys "$out")"
    items=$(python3 -c 'import json; print(json.dumps([{"text": "x", "qty": 1}] * 51))')
    out=$(body "$URL/api/notes" -H "$JSON" --data "{\"title\":\"t\",\"items\":$items}")
    check "$L: 51 items: 400 on /items" "/items" "$(keys "$out")"
    out=$(body "$URL/api/notes" -H "$JSON" --data '{"title":"81 chars: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}')
    check "$L: an 81-character title: 400 on /title" "/title" "$(keys "$out")"
    out=$(body "$URL/api/notes" -H "$JSON" --data '{"body":"no title"}')
    check "$L: no title: 400 on /title" "/title" "$(keys "$out")"
    # the schema's validate callback: its error in the same problem shape
    out=$(body "$URL/api/notes" -H "$JSON" --data '{"title":"t","state":"published","body":null}')
    check "$L: published without a body: 400 on /body" "/body" "$(keys "$out")"
    check "$L: its message" "['A published note needs a body.']" "$(field "$out" 'd["errors"]["/body"]')"
    check "$L: published with a body: 201" 201 "$(status "$URL/api/notes" -H "$JSON" --data '{"title":"Post","body":"text","state":"published","tags":["blog"]}')"
    out=$(body "$URL/api/notes" -H "$JSON" --data '{"title":')
    check "$L: malformed JSON: 400 on \$body" '$body' "$(keys "$out")"
    out=$(body "$URL/api/notes" -H "$JSON" --data '[1]')
    check "$L: a JSON array: 400 on \$body" '$body' "$(keys "$out")"
    check "$L: a text/plain body: 415" 415 "$(status "$URL/api/notes" -H 'content-type: text/plain' --data '{"title":"t"}')"
    check "$L: a form body to the JSON route: 415" 415 "$(status "$URL/api/notes" --data 'title=t')"

    # POST /api/notes/quick: an urlencoded form, tags given once per tag
    out=$(curl -s -D "$TMP/h3" "$URL/api/notes/quick" --data 'title=Quick+one&body=from+a+form&tags=home&tags=todo')
    check "$L: quick: Location" "/api/notes/3" "$(tr -d '\r' <"$TMP/h3" | sed -n 's/^location: //p')"
    check "$L: quick: the note" "3 Quick one from a form ['home', 'todo'] [] draft" \
        "$(field "$out" 'd["id"], d["title"], d["body"], d["tags"], d["items"], d["state"]')"
    out=$(body "$URL/api/notes/quick" --data 'body=x&tags=No+Caps&tags=ok')
    check "$L: quick without a title, a bad tag: 400" "tags,title" "$(keys "$out")"
    out=$(body "$URL/api/notes/quick" --data 'title=a&title=b')
    check "$L: quick with two titles: 400 on title" "title" "$(keys "$out")"
    check "$L: quick with a JSON body: 415" 415 "$(status "$URL/api/notes/quick" -H "$JSON" --data '{"title":"t"}')"
    out=$(body "$URL/api/notes/quick" --data 'title=%zz')
    check "$L: quick with a bad escape: 400 on \$body" '$body' "$(keys "$out")"

    # GET /api/notes: filters and pages
    check "$L: the list: every note's id" "[1, 2, 3]" "$(field "$(body "$URL/api/notes")" '[n["id"] for n in d]')"
    check "$L: tag=blog" "[2]" "$(field "$(body "$URL/api/notes?tag=blog")" '[n["id"] for n in d]')"
    check "$L: state=draft" "[1, 3]" "$(field "$(body "$URL/api/notes?state=draft")" '[n["id"] for n in d]')"
    check "$L: index=1&size=2" "[3]" "$(field "$(body "$URL/api/notes?index=1&size=2")" '[n["id"] for n in d]')"
    check "$L: a compact list" '[{"id":2,"title":"Post","state":"published"}]' "$(body "$URL/api/notes?state=published" -b view=compact)"
    out=$(body "$URL/api/notes?state=old&index=-1&size=101")
    check "$L: bad query values: 400 on each" "index,size,state" "$(keys "$out")"
    out=$(body "$URL/api/notes?size=x&size=2")
    check "$L: size twice: 400 on size" "size" "$(keys "$out")"

    # PUT /api/notes/{id}: the body bound whole, the same rules, created kept
    created=$(field "$(body "$URL/api/notes/1")" 'd["created"]')
    out=$(body "$URL/api/notes/1" -X PUT -H "$JSON" --data '{"title":"Groceries","body":"Saturday","state":"published","items":[{"text":"bread","qty":1,"done":true}]}')
    check "$L: PUT: the new content, created kept" "Saturday published [] 1 $created" \
        "$(field "$out" 'd["body"], d["state"], d["tags"], len(d["items"]), d["created"]')"
    out=$(body "$URL/api/notes/1" -X PUT -H "$JSON" --data '{"title":"t","items":[{"text":"a","qty":1},{"text":"b","qty":1},{"text":"c","qty":1},{"text":"d","qty":0}]}')
    check "$L: PUT: 400 on /items/3/qty" "/items/3/qty" "$(keys "$out")"
    out=$(body "$URL/api/notes/1" -X PUT -H "$JSON" --data '{"title":"t","state":"published"}')
    check "$L: PUT published without a body: 400 on /body" "/body" "$(keys "$out")"
    out=$(body "$URL/api/notes/1" -X PUT -H "$JSON")
    check "$L: PUT without a body: 400 on \$body" '$body' "$(keys "$out")"
    check "$L: PUT a missing note: 404" 404 "$(status "$URL/api/notes/99" -X PUT -H "$JSON" --data '{"title":"t"}')"
    check "$L: PUT text/plain: 415" 415 "$(status "$URL/api/notes/1" -X PUT -H 'content-type: text/plain' --data '{"title":"t"}')"

    # POST /api/notes/{id}/attachments: multipart, a file and a text field, 64 KiB at most
    printf 'line one\r\n--not-a-boundary\r\n\000binary' >"$TMP/scan.bin"
    out=$(body "$URL/api/notes/1/attachments" -F description=receipt -F "file=@$TMP/scan.bin;type=application/octet-stream")
    check "$L: upload: its metadata" '{"id":1,"note":1,"filename":"scan.bin","contentType":"application/octet-stream","description":"receipt","size":35}' "$out"
    out=$(body "$URL/api/notes/1/attachments" -F "file=@$TMP/scan.bin;filename=b.txt")
    check "$L: upload without a description: null, text/plain by default" "2 b.txt text/plain None" \
        "$(field "$out" 'd["id"], d["filename"], d["contentType"], d["description"]')"
    head -c 70000 /dev/zero >"$TMP/big.bin"
    check "$L: upload over 64 KiB: 413" 413 "$(status "$URL/api/notes/1/attachments" -F "file=@$TMP/big.bin")"
    head -c 60000 /dev/zero >"$TMP/fits.bin"
    check "$L: upload under 64 KiB: 201" 201 "$(status "$URL/api/notes/1/attachments" -F "file=@$TMP/fits.bin")"
    out=$(body "$URL/api/notes/1/attachments" -F description=only-text)
    check "$L: upload without a file: 400 on file" "file" "$(keys "$out")"
    out=$(body "$URL/api/notes/1/attachments" -F "file=@$TMP/scan.bin" -F "file=@$TMP/scan.bin")
    check "$L: two files: 400 on file" "file" "$(keys "$out")"
    printf -- '--B\r\nContent-Disposition: form-data; name="file"; filename="a\377.txt"\r\n\r\nhi\r\n--B--\r\n' >"$TMP/bad.mp"
    out=$(body "$URL/api/notes/1/attachments" -H 'content-type: multipart/form-data; boundary=B' --data-binary "@$TMP/bad.mp")
    check "$L: a filename that is not UTF-8: 400 on file" "file" "$(keys "$out")"
    check "$L: upload as JSON: 415" 415 "$(status "$URL/api/notes/1/attachments" -H "$JSON" --data '{}')"
    check "$L: upload to a missing note: 404" 404 "$(status "$URL/api/notes/99/attachments" -F "file=@$TMP/scan.bin")"

    # DELETE, 404s, 405
    check "$L: DELETE: 204" 204 "$(status "$URL/api/notes/3" -X DELETE)"
    check "$L: gone: 404" 404 "$(status "$URL/api/notes/3")"
    check "$L: DELETE again: 404" 404 "$(status "$URL/api/notes/3" -X DELETE)"
    check "$L: an id that is not an int: 404" 404 "$(status "$URL/api/notes/abc")"
    check "$L: PATCH: 405" 405 "$(status "$URL/api/notes/1" -X PATCH)"

    # one store, one lock, two worker threads: 20 notes posted at once get 20 different ids
    before=$(field "$(body "$URL/api/notes?size=100")" 'len(d)')
    i=0
    pids=""
    while [ $i -lt 20 ]; do
        curl -s -o "$TMP/par.$i" "$URL/api/notes" -H "$JSON" --data "{\"title\":\"parallel $i\"}" &
        pids="$pids $!"
        i=$((i + 1))
    done
    for p in $pids; do wait "$p"; done
    ids=$(cat "$TMP"/par.* | python3 -c 'import json, sys; print(len({json.loads(l)["id"] for l in sys.stdin.read().replace("}{", "}\n{").splitlines()}))')
    check "$L: 20 parallel POSTs: 20 ids" 20 "$ids"
    check "$L: 20 parallel POSTs: all listed" $((before + 20)) "$(field "$(body "$URL/api/notes?size=100")" 'len(d)')"

    # the OpenAPI document describes what the tests above used
    doc=$(body "$URL/openapi.json")
    check "$L: openapi: the paths" "['/api/notes', '/api/notes/quick', '/api/notes/{id}', '/api/notes/{id}/attachments']" \
        "$(field "$doc" 'sorted(d["paths"])')"
    check "$L: openapi: the schemas" "['Attachment', 'Note', 'NoteInput', 'NoteItem', 'NoteSummary', 'ProblemDetails', 'ValidationProblemDetails']" \
        "$(field "$doc" 'sorted(k for k in d["components"]["schemas"] if not k.endswith("Args"))')"
    check "$L: openapi: the view cookie" "cookie" \
        "$(field "$doc" '[p["in"] for p in d["paths"]["/api/notes/{id}"]["get"]["parameters"] if p["name"] == "view"][0]')"
    check "$L: openapi: the upload is multipart with a binary file" "binary" \
        "$(field "$doc" 'd["paths"]["/api/notes/{id}/attachments"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]["file"]["format"]')"
    check "$L: openapi: Note requires what the compact view writes" "['id', 'title', 'state']" \
        "$(field "$doc" 'd["components"]["schemas"]["Note"]["required"]')"
    stop notes
}

suite sqlite --db "sqlite:$TMP/notes.db"
start again "$BIN/canal-notes" --threads 2 --db "sqlite:$TMP/notes.db" || exit 0
check "sqlite: the notes outlive a restart (the migration keeps them)" 22 "$(field "$(body "$URL/api/notes?size=100")" 'len(d)')"
check "sqlite: ... and their attachments" 201 "$(status "$URL/api/notes/1/attachments" -F "file=@$TMP/scan.bin")"
check "sqlite: ids go on" '"id":24' "$(body "$URL/api/notes" -H "$JSON" --data '{"title":"after"}' | grep -o '"id":24')"
stop again
mkdir "$TMP/cwd"
NOTES=$(cd "$BIN" && pwd)/canal-notes
(cd "$TMP/cwd" && exec "$NOTES" --port 0 >"$TMP/cwd.out" 2>&1) &
CPID=$!
i=0
while [ ! -s "$TMP/cwd.out" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$CPID" 2>/dev/null
wait "$CPID"
check "without --db: ./notes.db" "notes.db" "$(ls "$TMP/cwd")"
check "a bad --db: refused at start" 1 "$("$BIN/canal-notes" --db "mysql://x" >/dev/null 2>&1; echo $?)"

pg_setup || exit 0
psql -d postgres -c "CREATE DATABASE notes"
suite postgresql --db "postgresql:///notes?host=$PGDIR&port=$PGPORT&user=canal"
check "postgresql: every note in the table" 22 "$(psql -d notes -At -c 'SELECT count(*) FROM notes')"
