#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: cc doxygen mandoc man
# The documentation cannot rot:
#   - every ```c block of README.md and docs/*.md that is a whole program (it has `int main`)
#     is compiled with warnings as errors and linked against the built libcanal-testing.a and
#     libcanal.a: one TAP line
#     each, named by file and line; those that use the test client (canal/testing.h) are run;
#   - the other ```c blocks are compiled too when they stand on their own at file level (type
#     and function definitions, tables), after `#include <canal.h>`; fragments of a function
#     body cannot be, and are listed as "# fragment" comments, not counted;
#   - `make docs` (Doxygen over include/) gives no warning: an undocumented public symbol fails;
#   - the man pages in docs/man/ pass `mandoc -T lint` and render with man(1) without warnings.
# B is the build directory holding lib/libcanal.a and lib/libcanal-testing.a (test/run sets it).
set -u
B=${B:-build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/canal-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

CFLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Werror -Iinclude"
DEP_CFLAGS="$(pkg-config --cflags libh2o-evloop jansson libpq sqlite3) -DH2O_USE_LIBUV=0"
DEP_LIBS="$(pkg-config --libs libh2o-evloop jansson libpcre2-8 libargon2 libpq sqlite3) -lwslay -lhiredis -lssl -lcrypto -lpthread"
case "${SANITIZE:-0}" in
1) SAN="-fsanitize=address,undefined" ;;
thread) SAN="-fsanitize=thread" ;;
*) SAN="" ;;
esac

# Writes each ```c block of $1 to $tmp/<n>.c and prints "<n> <line>" for each.
extract() {
    awk -v dir="$tmp" -v base="$2" '
        /^```c[ \t]*$/ { inblock = 1; n++; start = NR + 1; f = dir "/" base "-" n ".c";
                         printf "" > f; print base "-" n, start; next }
        /^```/ && inblock { inblock = 0; close(f); next }
        inblock { print >> f }
    ' "$1"
}

programs=0
for md in README.md docs/*.md; do
    [ -f "$md" ] || continue
    base=$(echo "$md" | tr '/.' '__')
    extract "$md" "$base" >"$tmp/list"
    while read -r id line; do
        src="$tmp/$id.c"
        if grep -q 'int main' "$src"; then
            programs=$((programs + 1))
            # shellcheck disable=SC2086
            if cc $CFLAGS $DEP_CFLAGS $SAN -o "$tmp/$id" "$src" "$B/lib/libcanal-testing.a" "$B/lib/libcanal.a" $DEP_LIBS -lm \
                2>"$tmp/$id.log"; then
                echo "ok - $md:$line: the program compiles and links"
                # a test program (it uses the test client) is run too: it must pass
                if grep -q 'canal_test_start' "$src"; then
                    if timeout 120 "$tmp/$id" >"$tmp/$id.log" 2>&1; then
                        echo "ok - $md:$line: the test program runs and passes"
                    else
                        echo "not ok - $md:$line: the test program failed:"
                        sed 's/^/#   /' "$tmp/$id.log" | head -n 20
                    fi
                fi
            else
                echo "not ok - $md:$line: the program does not compile or link:"
                sed 's/^/#   /' "$tmp/$id.log" | head -n 20
            fi
        else
            # a snippet: try it at file level, after the headers a program would include
            {
                printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n'
                printf '#include <canal.h>\n#include <canal/testing.h>\n#line 1 "%s"\n' "$md:$line"
                cat "$src"
            } >"$tmp/$id.snippet.c"
            # shellcheck disable=SC2086
            if cc $CFLAGS $DEP_CFLAGS -Wno-unused-function -Wno-unused-variable -Wno-missing-prototypes \
                -fsyntax-only "$tmp/$id.snippet.c" >/dev/null 2>&1; then
                echo "ok - $md:$line: the snippet compiles at file level"
            else
                echo "# fragment (not compiled): $md:$line"
            fi
        fi
    done <"$tmp/list"
done
if [ "$programs" -gt 0 ]; then echo "ok - $programs whole programs found in the docs"; else echo "not ok - no program found in the docs"; fi

# The API reference: Doxygen fails on any warning (WARN_AS_ERROR in docs/Doxyfile).
if ! command -v doxygen >/dev/null 2>&1; then
    echo "not ok - doxygen is not installed (sh .ci/install-deps)"
else
    sed -e "s|^OUTPUT_DIRECTORY .*|OUTPUT_DIRECTORY = $tmp/dox|" docs/Doxyfile >"$tmp/Doxyfile"
    if doxygen "$tmp/Doxyfile" >"$tmp/dox.log" 2>&1 && [ ! -s "$tmp/dox.log" ]; then
        echo "ok - make docs: Doxygen documents include/ with no warning"
    else
        echo "not ok - Doxygen warnings:"
        sed 's/^/#   /' "$tmp/dox.log" | head -n 40
    fi
    if [ -f "$tmp/dox/html/testing_8h.html" ] && [ -f "$tmp/dox/html/server_8h.html" ]; then
        echo "ok - the reference has a page per header"
    else
        echo "not ok - the reference lacks header pages: $(ls "$tmp/dox/html" 2>/dev/null | head -n 5)"
    fi
fi

# Man pages.
for page in docs/man/*.1; do
    [ -f "$page" ] || continue
    if out=$(mandoc -T lint -W warning "$page" 2>&1) && [ -z "$out" ]; then
        echo "ok - mandoc -T lint $page"
    else
        echo "not ok - mandoc -T lint $page: $out"
    fi
    out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
    if [ -z "$out" ]; then echo "ok - man --warnings -l $page"; else echo "not ok - man -l $page: $out"; fi
done
