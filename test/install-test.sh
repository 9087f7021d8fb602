#!/bin/sh
# SPDX-License-Identifier: MIT
# needs: cc pkg-config nm ldd
# make install into a temporary DESTDIR, then build and run an out-of-tree program with only
# `pkg-config --cflags --libs canal`, and a test program with only
# `pkg-config --cflags --libs canal-testing`; then make uninstall leaves nothing behind.
set -u
dest=$(mktemp -d "${TMPDIR:-/tmp}/canal-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
if make -s install DESTDIR="$dest" PREFIX=/usr/local >"$dest.log" 2>&1; then
    echo "ok - make install DESTDIR=... PREFIX=/usr/local"
else
    echo "not ok - make install failed"; cat "$dest.log"; rm -f "$dest.log"; exit 0
fi
rm -f "$dest.log"
for f in include/canal.h include/canal/router.h include/canal/server.h include/canal/testing.h \
         lib/libcanal.a lib/libcanal.so lib/libcanal.so.0 lib/pkgconfig/canal.pc bin/canal-routes \
         lib/libcanal-testing.a lib/libcanal-testing.so lib/libcanal-testing.so.0 \
         lib/pkgconfig/canal-testing.pc share/canal/lsan.supp share/canal/tsan.supp \
         share/canal/valgrind.supp \
         share/man/man1/canal-routes.1; do
    if [ -e "$dest/usr/local/$f" ]; then echo "ok - installed $f"; else echo "not ok - installed $f"; fi
done
mkdir "$dest/app"
cat >"$dest/app/hello.c" <<'EOC'
#include <stdio.h>
#include <string.h>
#include <canal.h>
static int hello(canal_req_t *req, void *data) { return canal_res_text(req, 200, "hi"); }
int main(void)
{
    canal_router_t *r = canal_router_create(NULL);
    canal_match_t m;
    char scratch[64];
    canal_route_spec_t spec = {.tmpl = "users/{id:int}"};
    if (canal_router_add(r, &spec, NULL, NULL) != 0)
        return 1;
    int st = canal_router_match(r, (canal_str_t){"GET", 3}, (canal_str_t){"/users/42", 9}, scratch,
                                sizeof(scratch), &m);
    printf("%s %d %.*s\n", canal_version(), st, (int)m.params[0].value.len, m.params[0].value.base);
    canal_router_destroy(r);
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.port = 0;
    cfg.threads = 1;
    canal_app_t *app = canal_app_create(&cfg);
    canal_app_get(app, "hello", hello, NULL);
    if (canal_app_start(app) != 0)
        return 1;
    canal_app_stop(app);
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    return rc;
}
EOC
export PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$dest/usr/local/lib/pkgconfig"
flags=$(pkg-config --cflags --libs canal 2>&1)
if cc -std=c11 -Wall -Werror -o "$dest/app/hello" "$dest/app/hello.c" $flags 2>"$dest/app/cc.log"; then
    echo "ok - out-of-tree build with pkg-config --cflags --libs canal ($flags)"
else
    echo "not ok - out-of-tree build: $(cat "$dest/app/cc.log")"; exit 0
fi
out=$(LD_LIBRARY_PATH="$dest/usr/local/lib" "$dest/app/hello")
if [ "$out" = "0.1.0 200 42" ]; then echo "ok - the program runs against the installed library"; else echo "not ok - program said [$out]"; fi
lib=$(LD_LIBRARY_PATH="$dest/usr/local/lib" ldd "$dest/app/hello" | grep libcanal)
case "$lib" in *"$dest/usr/local/lib/libcanal.so.0"*) echo "ok - linked to the installed libcanal.so.0";; *) echo "not ok - linked to [$lib]";; esac
static_flags=$(pkg-config --cflags --libs --static canal)
if cc -std=c11 -o "$dest/app/hello-static" "$dest/app/hello.c" "$dest/usr/local/lib/libcanal.a" $static_flags 2>"$dest/app/cc.log" &&
    [ "$("$dest/app/hello-static")" = "0.1.0 200 42" ]; then
    echo "ok - static link with pkg-config --static"
else
    echo "not ok - static link: $(cat "$dest/app/cc.log")"
fi
supp=$(pkg-config --variable=suppressionsdir canal)
if [ "$supp" = "$dest/usr/local/share/canal" ] && [ -f "$supp/lsan.supp" ]; then echo "ok - pkg-config --variable=suppressionsdir canal: $supp"; else echo "not ok - suppressionsdir is [$supp]"; fi
# the test client: its own library and pkg-config file, which brings canal in
cat >"$dest/app/hello_test.c" <<'EOC'
#include <string.h>
#include <canal.h>
#include <canal/testing.h>
static int hello(canal_req_t *req, void *data) { return canal_res_text(req, 200, "hi"); }
int main(void)
{
    canal_app_t *app = canal_app_create(NULL);
    if (app == NULL || canal_app_get(app, "hello", hello, NULL) != 0)
        return 1;
    canal_test_t *t = canal_test_start(app, NULL);
    if (t == NULL)
        return 1;
    canal_test_response_t *r = canal_test_get(t, "/hello");
    int ok = r != NULL && r->status == 200 && strcmp(r->body, "hi") == 0;
    canal_test_response_free(r);
    int rc = canal_test_stop(t);
    canal_app_destroy(app);
    return ok && rc == 0 ? 0 : 1;
}
EOC
flags=$(pkg-config --cflags --libs canal-testing 2>&1)
if cc -std=c11 -Wall -Werror -o "$dest/app/hello_test" "$dest/app/hello_test.c" $flags 2>"$dest/app/cc.log"; then
    echo "ok - a test program builds with pkg-config --cflags --libs canal-testing ($flags)"
    if LD_LIBRARY_PATH="$dest/usr/local/lib" "$dest/app/hello_test"; then
        echo "ok - the test program passes against the installed libcanal-testing.so.0"
    else
        echo "not ok - the test program failed against the installed libcanal-testing"
    fi
else
    echo "not ok - test program build: $(cat "$dest/app/cc.log")"
fi
if nm -D --defined-only "$dest/usr/local/lib/libcanal.so.0" | grep -q ' canal_test_'; then
    echo "not ok - libcanal.so exports the test client"
else
    echo "ok - the test client is not in libcanal.so"
fi
make -s uninstall DESTDIR="$dest" PREFIX=/usr/local >/dev/null 2>&1
left=$(find "$dest/usr" -type f -o -type l)
if [ -z "$left" ]; then echo "ok - make uninstall removes every file"; else echo "not ok - left after uninstall: $left"; fi
