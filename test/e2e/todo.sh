#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: curl python3
# examples/todo as a program (its handlers have unit tests of their own on the test client,
# examples/todo/test/): main.c's flags, the API with curl, a graceful stop.
. test/e2e-lib.sh

start todo "$BIN/canal-todo" --threads 2 || exit 0
check "an empty list" "[]" "$(body "$URL/todos")"
check "POST a todo: 201" 201 "$(status "$URL/todos" -H 'content-type: application/json' --data '{"title":"curl it"}')"
check "its Location" "/todos/2" "$(header "$URL/todos" location -H 'content-type: application/json' --data '{"title":"again"}')"
check "GET it" '{"id":1,"title":"curl it","done":false}' "$(body "$URL/todos/1")"
check "PATCH it" '{"id":1,"title":"curl it","done":true}' "$(body "$URL/todos/1" -X PATCH -H 'content-type: application/json' --data '{"done":true}')"
check "DELETE it: 204" 204 "$(status "$URL/todos/1" -X DELETE)"
check "gone: 404" 404 "$(status "$URL/todos/1")"
check "a title that is not a string: 400" 400 "$(status "$URL/todos" -H 'content-type: application/json' --data '{"title":1}')"
check "one left" '[{"id":2,"title":"again","done":false}]' "$(body "$URL/todos")"
stop todo
