#!/bin/sh
# SPDX-License-Identifier: MIT
# The router is pure C11 + libc/POSIX: lib/router/, lib/tools/ and include/canal/router.h (with the two
# headers it includes, error.h and export.h) may include only standard C and POSIX headers
# and canal's own router, error and export headers; nothing from h2o, jansson or anything
# else, but PCRE2's <pcre2.h> in lib/router/*.c (regex constraints, lib/router/regex.c). Prints "ok - ..." lines, or "not ok - FILE:LINE: the include" for each offender,
# and exits 1 if there is one.
#
# Two checks: the #include lines as written, and (when a C compiler is at hand) every header
# the preprocessor actually reads, so an include hidden behind a macro or pulled in by an
# allowed header still shows.
cd "$(dirname "$0")/.." || exit 1

files="include/canal/router.h include/canal/error.h include/canal/export.h"
# the tools (canal-routes) are the router alone too, and are linked with its objects only; but
# canal-view, the template engine's tool, which is linked with the library (Makefile)
for f in lib/router/*.c lib/router/*.h lib/tools/*.c; do
    [ "$f" = lib/tools/canal-view.c ] && continue
    [ -f "$f" ] && files="$files $f"
done

# canal's own headers, as they may be spelled in a quoted include
own='canal/router.h canal/error.h canal/export.h router.h error.h export.h router_internal.h regex_internal.h'

# C11 and POSIX.1-2017 headers
std='assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h
math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h
stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h
aio.h arpa/inet.h cpio.h dirent.h dlfcn.h fcntl.h fmtmsg.h fnmatch.h ftw.h glob.h grp.h iconv.h
langinfo.h libgen.h monetary.h mqueue.h ndbm.h net/if.h netdb.h netinet/in.h netinet/tcp.h
nl_types.h poll.h pthread.h pwd.h regex.h sched.h search.h semaphore.h spawn.h strings.h
stropts.h syslog.h tar.h termios.h trace.h ulimit.h unistd.h utime.h utmpx.h wordexp.h
sys/ipc.h sys/mman.h sys/msg.h sys/resource.h sys/select.h sys/sem.h sys/shm.h sys/socket.h
sys/stat.h sys/statvfs.h sys/time.h sys/times.h sys/types.h sys/uio.h sys/un.h sys/utsname.h
sys/wait.h'

in_list() { # word list
    for w in $2; do
        [ "$w" = "$1" ] && return 0
    done
    return 1
}

bad=0
nincludes=0
for f in $files; do
    # "LINE:#include <x>" with any spacing around '#' and 'include'
    grep -n '^[[:space:]]*#[[:space:]]*include' "$f" >"${TMPDIR:-/tmp}/purity.$$" || true
    while IFS= read -r line; do
        nincludes=$((nincludes + 1))
        num=${line%%:*}
        text=${line#*:}
        hdr=$(printf '%s\n' "$text" | sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p')
        case "$hdr" in
        \"*\")
            name=${hdr#\"}
            name=${name%\"}
            in_list "$name" "$own" && continue
            ;;
        \<*\>)
            name=${hdr#<}
            name=${name%>}
            in_list "$name" "$std" && continue
            # PCRE2, for regex constraints: in the router's sources, not in its headers
            case "$f" in lib/router/*.c) [ "$name" = pcre2.h ] && continue ;; esac
            ;;
        esac
        echo "not ok - $f:$num: $text"
        bad=1
    done <"${TMPDIR:-/tmp}/purity.$$"
    rm -f "${TMPDIR:-/tmp}/purity.$$"
done
if [ "$bad" -eq 0 ]; then
    echo "ok - router purity: $nincludes #include lines in $(echo $files | wc -w) files name only libc/POSIX, canal's router, error and export headers, and pcre2.h"
fi

# What the preprocessor reads: every header must be canal's own allowed one or a system
# header, and none may be h2o's, jansson's or another library's.
cc=${CC:-cc}
if command -v "$cc" >/dev/null 2>&1; then
    pbad=0
    for f in include/canal/router.h lib/router/*.c; do
        deps=$(printf '#include "%s"\n' "$PWD/$f" | "$cc" -std=c11 -D_GNU_SOURCE -Iinclude -Ilib/router \
            -M -x c - 2>&1) || {
            echo "not ok - $f does not preprocess with only -Iinclude: $deps"
            pbad=1
            continue
        }
        for d in $(printf '%s\n' "$deps" | tr -d '\\' | tr ' ' '\n' | grep '\.h$'); do
            case "$d" in
            */h2o*|*/jansson*|*/openssl/*|*/uv.h|*/uv/*|*/yajl/*|*/cjson/*|*/cmocka*|*/pcre.h|*/pcreposix.h|*/pcre2posix.h)
                echo "not ok - $f reads $d"
                pbad=1
                ;;
            "$PWD"/include/canal/router.h|"$PWD"/include/canal/error.h|"$PWD"/include/canal/export.h)
                ;;
            include/canal/router.h|include/canal/error.h|include/canal/export.h)
                ;;
            "$PWD"/lib/router/router_internal.h|lib/router/router_internal.h)
                ;;
            "$PWD"/lib/router/regex_internal.h|lib/router/regex_internal.h)
                ;;
            "$PWD"/*|include/*|lib/*)
                echo "not ok - $f reads $d, which is not a router header"
                pbad=1
                ;;
            esac
        done
    done
    if [ "$pbad" -eq 0 ]; then
        echo "ok - router purity: the preprocessor reads only system headers and canal's router, error and export headers"
    else
        bad=1
    fi
fi
exit "$bad"
