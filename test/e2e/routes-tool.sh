#!/bin/sh
# SPDX-License-Identifier: MIT
# canal-routes (lib/tools/canal-routes.c): --help, options in any order, the router's options
# (case, trailing slash, HEAD, OPTIONS), complex segments, and link generation (--link).
. test/e2e-lib.sh

T="$BIN/canal-routes"
R="$TMP/api.routes"
printf '%s\n' 'GET /users/me' 'GET /users/{id:int}' 'GET /docs' 'GET /f/{name}.{ext}' \
    'DELETE /users/{id:int}' 'GET /u/{id}' >"$R"
tab=$(printf '\t')

check "--help prints the usage on stdout and exits 0" "usage: canal-routes [OPTION]... ROUTES_FILE < REQUESTS" \
    "$("$T" --help 2>/dev/null | head -n 1)"
"$T" --help >/dev/null 2>&1
check "--help: status 0" 0 $?
check "-h after the file is help too" "usage: canal-routes [OPTION]... ROUTES_FILE < REQUESTS" \
    "$("$T" "$R" -h 2>/dev/null | head -n 1)"
"$T" --bogus "$R" </dev/null >/dev/null 2>&1
check "an unknown option: status 2" 2 $?
"$T" </dev/null >/dev/null 2>&1
check "no file: status 2" 2 $?
"$T" "$R" "$R" </dev/null >/dev/null 2>&1
check "two files: status 2" 2 $?
check "defaults: case-sensitive, strict slash, no automatic OPTIONS, HEAD from GET" \
    "404$tab-$tab|404$tab-$tab|405$tab-${tab}allow=GET|200$tab/users/{id:int}${tab}id=1" \
    "$(printf 'GET /USERS/me\nGET /docs/\nOPTIONS /docs\nHEAD /users/1\n' | "$T" "$R" | paste -sd '|')"
want="200$tab/users/me$tab|308$tab-${tab}location=/docs|204$tab-${tab}allow=GET|405$tab-${tab}allow=GET,DELETE"
reqs='GET /USERS/me\nGET /docs/\nOPTIONS /docs\nHEAD /users/1\n'
check "options before the file" "$want" \
    "$(printf "$reqs" | "$T" --case-insensitive --trailing-slash=redirect --auto-options --no-head "$R" | paste -sd '|')"
check "options after the file, in another order" "$want" \
    "$(printf "$reqs" | "$T" "$R" --no-head --auto-options --case-insensitive --trailing-slash=redirect | paste -sd '|')"
check "options around the file" "$want" \
    "$(printf "$reqs" | "$T" --auto-options --no-head "$R" --trailing-slash=redirect --case-insensitive | paste -sd '|')"
check "--trailing-slash=ignore" "200$tab/docs$tab" "$(printf 'GET /docs/\n' | "$T" --trailing-slash=ignore "$R")"
check "a later option wins" "404$tab-$tab" "$(printf 'GET /DOCS\n' | "$T" --case-insensitive "$R" --case-sensitive)"
check "complex segments" "200$tab/f/{name}.{ext}${tab}name=a.b&ext=c" "$(printf 'GET /f/a.b.c\n' | "$T" "$R")"
check "--link: by the route's line, query for the rest" \
    "200$tab/users/5?q=a%20b|200$tab/f/a.txt|400$tab-|404$tab-|400$tab-|200$tab/u/a%2Fb" \
    "$(printf '2 id=5&q=a%%20b\n4 name=a&ext=txt\n2 id=x\n9 id=1\nx\n6 id=a%%2Fb\n' | "$T" --link "$R" | paste -sd '|')"
printf 'GET /a//b\n' >"$TMP/bad.routes"
check "an empty segment in the routes file" "$TMP/bad.routes:1: GET /a//b: at byte 3: empty segment: '/' follows '/'" \
    "$("$T" "$TMP/bad.routes" </dev/null 2>&1)"
printf 'GET /{x:regex(^\\d+$)}\n' >"$TMP/re.routes"
check "a \\d in a regex (PCRE2)" "200${tab}/{x:regex(^\\d+\$)}${tab}x=42 404${tab}-${tab}" \
    "$(printf 'GET /42\nGET /4a\n' | "$T" "$TMP/re.routes" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
check "--ecma: the regex as OpenAPI writes it" "/{x:regex(^\\d+\$)}${tab}x${tab}^\\d+\$" \
    "$("$T" --ecma "$TMP/re.routes" 2>&1)"
printf 'GET /{x:regex(a*+)}\n' >"$TMP/re2.routes"
check "a regex with no ECMA-262 form" "$TMP/re2.routes:1: GET /{x:regex(a*+)}: at byte 4: regex at offset 2: possessive quantifiers are not translated: drop the '+'" \
    "$("$T" "$TMP/re2.routes" </dev/null 2>&1)"
