/* SPDX-License-Identifier: MIT */
/*
 * Link generation (route values back to a URL: defaults, optional and catch-all segments,
 * percent-encoding, the query string, missing or refused values, truncation), route groups,
 * and the round trip: a generated link matches its own route with the same values.
 */
#include "test.h"
#include "canal/router.h"

#define NV 6

struct link_case {
    const char *tmpl;
    canal_kv_t values[NV]; /* up to the first {NULL, NULL} */
    int rc;                /* 0: expect url; else the error */
    const char *url;
    int round_trip;        /* 1: matching url gives back the values that named parameters */
};

#define ERR(code) code, NULL, 0

static const struct link_case link_cases[] = {
    /* literals */
    {"/", {{0}}, 0, "/", 1},
    {"", {{0}}, 0, "/", 1},
    {"/a", {{0}}, 0, "/a", 1},
    {"a/b/c", {{0}}, 0, "/a/b/c", 1},
    {"/a/", {{0}}, 0, "/a", 1},
    {"/a b", {{0}}, 0, "/a%20b", 1},
    {"/caf\xc3\xa9", {{0}}, 0, "/caf%C3%A9", 1},
    {"/{{x}}", {{0}}, 0, "/%7Bx%7D", 1},
    {"/a%b", {{0}}, 0, "/a%25b", 1},
    {"/a:b@c!$'()*+,;", {{0}}, 0, "/a:b@c!$'()*+,;", 1},
    {"/a&b=c", {{0}}, 0, "/a%26b%3Dc", 1},
    {"/-._~", {{0}}, 0, "/-._~", 1},
    /* complex segments */
    {"/f/{name}.{ext}", {{"name", "a"}, {"ext", "txt"}}, 0, "/f/a.txt", 1},
    {"/f/{name}.{ext}", {{"name", "a"}}, ERR(CANAL_EINVAL)},
    {"/f/{name}.{ext}", {{"name", "a"}, {"ext", ""}}, ERR(CANAL_EINVAL)},
    {"/{lang}-{region}", {{"lang", "en"}, {"region", "US"}, {"q", "1"}}, 0, "/en-US?q=1", 1},
    {"/{p1}.{p2?}", {{"p1", "a"}}, 0, "/a", 1},
    {"/{p1}.{p2?}", {{"p1", "a"}, {"p2", ""}}, 0, "/a", 0},
    {"/{p1}.{p2?}", {{"p1", "a"}, {"p2", "b"}}, 0, "/a.b", 1},
    {"/{p1}.{p2?}", {{"p2", "b"}}, ERR(CANAL_EINVAL)},
    {"/{a:int}-{b}", {{"a", "x"}, {"b", "y"}}, ERR(CANAL_EINVAL)},
    {"/{a:int}-{b}", {{"a", "1"}, {"b", "y z"}}, 0, "/1-y%20z", 1},
    {"/x{a}/{b}", {{"a", "a/b"}, {"b", "c"}}, 0, "/xa%2Fb/c", 1},
    /* parameters */
    {"/users/{id}", {{"id", "5"}}, 0, "/users/5", 1},
    {"users/{id}", {{"id", "5"}}, 0, "/users/5", 1},
    {"/users/{id}", {{0}}, ERR(CANAL_EINVAL)},
    {"/users/{id}", {{"id", ""}}, ERR(CANAL_EINVAL)},
    {"/users/{id}", {{"ID", "5"}}, ERR(CANAL_EINVAL)},
    {"/users/{id}", {{"id", NULL}}, ERR(CANAL_EINVAL)},
    {"/users/{id}", {{NULL, "5"}}, ERR(CANAL_EINVAL)},
    {"/users/{id}", {{"id", "1"}, {"id", "2"}}, 0, "/users/1", 0},
    {"/users/{id}", {{"id", NULL}, {"id", "2"}}, 0, "/users/2", 1},
    {"/{a}/{b}/{c}", {{"c", "3"}, {"a", "1"}, {"b", "2"}}, 0, "/1/2/3", 1},
    {"/{a}/{b}/{c}", {{"c", "3"}, {"a", "1"}}, ERR(CANAL_EINVAL)},
    {"/p/{v}", {{"v", "a b"}}, 0, "/p/a%20b", 1},
    {"/p/{v}", {{"v", "a/b"}}, 0, "/p/a%2Fb", 1},
    {"/p/{v}", {{"v", "a?b#c"}}, 0, "/p/a%3Fb%23c", 1},
    {"/p/{v}", {{"v", "100%"}}, 0, "/p/100%25", 1},
    {"/p/{v}", {{"v", "%41"}}, 0, "/p/%2541", 1},
    {"/p/{v}", {{"v", "a&b=c"}}, 0, "/p/a%26b%3Dc", 1},
    {"/p/{v}", {{"v", "!$'()*+,;:@"}}, 0, "/p/!$'()*+,;:@", 1},
    {"/p/{v}", {{"v", "-._~"}}, 0, "/p/-._~", 1},
    {"/p/{v}", {{"v", "\"<>[]\\^`{|}"}}, 0, "/p/%22%3C%3E%5B%5D%5C%5E%60%7B%7C%7D", 1},
    {"/p/{v}", {{"v", "\xc3\xa9"}}, 0, "/p/%C3%A9", 1},
    {"/p/{v}", {{"v", "\t\r\n\x7f\x01"}}, 0, "/p/%09%0D%0A%7F%01", 1},
    {"/p/{v}", {{"v", "\xff"}}, 0, "/p/%FF", 1},
    {"/p/{v}", {{"v", "."}}, 0, "/p/.", 1},
    {"/p/{v}", {{"v", ".."}}, 0, "/p/..", 1},
    /* constraints are checked on the value */
    {"/u/{id:int}", {{"id", "42"}}, 0, "/u/42", 1},
    {"/u/{id:int}", {{"id", "-2147483648"}}, 0, "/u/-2147483648", 1},
    {"/u/{id:int}", {{"id", "2147483648"}}, ERR(CANAL_EINVAL)},
    {"/u/{id:int}", {{"id", "abc"}}, ERR(CANAL_EINVAL)},
    {"/u/{id:int}", {{"id", "+1"}}, ERR(CANAL_EINVAL)},
    {"/u/{id:int}", {{"id", " 1"}}, ERR(CANAL_EINVAL)},
    {"/u/{id:int:min(1)}", {{"id", "0"}}, ERR(CANAL_EINVAL)},
    {"/u/{id:int:min(1)}", {{"id", "1"}}, 0, "/u/1", 1},
    {"/u/{b:bool}", {{"b", "TRUE"}}, 0, "/u/TRUE", 1},
    {"/u/{b:bool}", {{"b", "yes"}}, ERR(CANAL_EINVAL)},
    {"/u/{d:double}", {{"d", "1.5e3"}}, 0, "/u/1.5e3", 1},
    {"/u/{d:double}", {{"d", "inf"}}, ERR(CANAL_EINVAL)},
    {"/u/{g:guid}", {{"g", "{01234567-89ab-cdef-0123-456789abcdef}"}}, 0,
     "/u/%7B01234567-89ab-cdef-0123-456789abcdef%7D", 1},
    {"/u/{g:guid}", {{"g", "0123"}}, ERR(CANAL_EINVAL)},
    {"/u/{s:alpha}", {{"s", "abc"}}, 0, "/u/abc", 1},
    {"/u/{s:alpha}", {{"s", "ab1"}}, ERR(CANAL_EINVAL)},
    {"/u/{s:length(2)}", {{"s", "\xc3\xa9\xc3\xa9"}}, 0, "/u/%C3%A9%C3%A9", 1},
    {"/u/{s:length(2)}", {{"s", "abc"}}, ERR(CANAL_EINVAL)},
    {"/u/{s:maxlength(2)}", {{"s", "abc"}}, ERR(CANAL_EINVAL)},
    {"/u/{s:minlength(2)}", {{"s", "a"}}, ERR(CANAL_EINVAL)},
    {"/u/{n:range(1,3)}", {{"n", "3"}}, 0, "/u/3", 1},
    {"/u/{n:range(1,3)}", {{"n", "4"}}, ERR(CANAL_EINVAL)},
    {"/u/{s:regex(^[a-z]+$)}", {{"s", "abc"}}, 0, "/u/abc", 1},
    {"/u/{s:regex(^[a-z]+$)}", {{"s", "ab1"}}, ERR(CANAL_EINVAL)},
    {"/u/{s:regex(^a/b$)}", {{"s", "a/b"}}, 0, "/u/a%2Fb", 1},
    /* optional parameters */
    {"/o/{x?}", {{0}}, 0, "/o", 1},
    {"/o/{x?}", {{"x", "1"}}, 0, "/o/1", 1},
    {"/o/{x:int?}", {{"x", "z"}}, ERR(CANAL_EINVAL)},
    {"/o/{a?}/{b?}", {{"a", "1"}}, 0, "/o/1", 1},
    {"/o/{a?}/{b?}", {{"a", "1"}, {"b", "2"}}, 0, "/o/1/2", 1},
    {"/{x?}", {{0}}, 0, "/", 1},
    {"/{x?}", {{"x", "v"}}, 0, "/v", 1},
    /* defaults: filled in, and left out at the end when the value is the default */
    {"/d/{x=7}", {{0}}, 0, "/d", 1},
    {"/d/{x=7}", {{"x", "7"}}, 0, "/d", 1},
    {"/d/{x=7}", {{"x", "8"}}, 0, "/d/8", 1},
    {"/d/{x=7}/e", {{0}}, 0, "/d/7/e", 1},
    {"/d/{x=7}/e", {{"x", "8"}}, 0, "/d/8/e", 1},
    {"/d/{x=a b}", {{"x", "c d"}}, 0, "/d/c%20d", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{0}}, 0, "/", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"c", "Home"}}, 0, "/", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"c", "Blog"}}, 0, "/Blog", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"a", "Post"}}, 0, "/Home/Post", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"id", "3"}}, 0, "/Home/Index/3", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"c", "Home"}, {"a", "Index"}, {"id", "3"}}, 0,
     "/Home/Index/3", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"c", "Blog"}, {"a", "Index"}}, 0, "/Blog", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"c", "Home"}, {"a", "Show"}}, 0, "/Home/Show", 1},
    {"/{c=Home}/{a=Index}/{id?}", {{"c", "home"}}, 0, "/home", 1},
    {"/{a=1}/{b=2}", {{"a", "1"}, {"b", "3"}}, 0, "/1/3", 1},
    {"/{a=1}/{b=2}", {{"b", "2"}}, 0, "/", 1},
    {"/{a=1}/{b=2}", {{"a", "5"}}, 0, "/5", 1},
    {"/{a=1}/b/{c=3}", {{0}}, 0, "/1/b", 1},
    {"/{a:int=1}", {{"a", "x"}}, ERR(CANAL_EINVAL)},
    /* catch-alls: {*x} encodes '/', {**x} keeps it */
    {"/f/{*x}", {{"x", "a/b"}}, 0, "/f/a%2Fb", 0},
    {"/f/{**x}", {{"x", "a/b"}}, 0, "/f/a/b", 1},
    {"/f/{**x}", {{"x", "a b/c%d/"}}, 0, "/f/a%20b/c%25d/", 0}, /* "/" ignored */
    {"/f/{**x}", {{"x", "/"}}, 0, "/f//", 0},
    {"/f/{*x}", {{"x", "abc"}}, 0, "/f/abc", 1},
    {"/f/{*x}", {{"x", ""}}, 0, "/f", 1},
    {"/f/{*x}", {{0}}, 0, "/f", 1},
    {"/f/{**x}", {{0}}, 0, "/f", 1},
    {"/{*x}", {{0}}, 0, "/", 1},
    {"/{**x}", {{"x", "a/b/c"}}, 0, "/a/b/c", 1},
    {"/f/{*x=d}", {{0}}, 0, "/f", 1},
    {"/f/{*x=d}", {{"x", "e"}}, 0, "/f/e", 1},
    {"/f/{**x:maxlength(3)}", {{"x", "a/b"}}, 0, "/f/a/b", 1},
    {"/f/{**x:maxlength(3)}", {{"x", "a/bc"}}, ERR(CANAL_EINVAL)},
    {"/{p}/f/{**x}", {{"p", "1"}, {"x", "y/z"}}, 0, "/1/f/y/z", 1},
    /* the query string: values that name no parameter, in the order given */
    {"/", {{"q", "1"}}, 0, "/?q=1", 1},
    {"/a", {{"q", "1"}, {"r", "2"}}, 0, "/a?q=1&r=2", 1},
    {"/a", {{"r", "2"}, {"q", "1"}}, 0, "/a?r=2&q=1", 1},
    {"/a", {{"q", "1"}, {"q", "2"}}, 0, "/a?q=1&q=2", 1},
    {"/a", {{"q", ""}}, 0, "/a?q=", 1},
    {"/a", {{"", "v"}}, 0, "/a?=v", 1},
    {"/a", {{"q", NULL}, {NULL, "x"}, {"r", "1"}}, 0, "/a?r=1", 1},
    {"/a", {{"q", "a b"}}, 0, "/a?q=a%20b", 1},
    {"/a", {{"q", "a+b"}}, 0, "/a?q=a%2Bb", 1},
    {"/a", {{"q", "a&b=c"}}, 0, "/a?q=a%26b%3Dc", 1},
    {"/a", {{"q", "a/b?c#d"}}, 0, "/a?q=a%2Fb%3Fc%23d", 1},
    {"/a", {{"q", "!$'()*,;:@"}}, 0, "/a?q=%21%24%27%28%29%2A%2C%3B%3A%40", 1},
    {"/a", {{"q", "-._~"}}, 0, "/a?q=-._~", 1},
    {"/a", {{"q", "\xc3\xa9"}}, 0, "/a?q=%C3%A9", 1},
    {"/a", {{"k y", "v"}}, 0, "/a?k%20y=v", 1},
    {"/a", {{"k&=", "v"}}, 0, "/a?k%26%3D=v", 1},
    {"/u/{id}", {{"id", "5"}, {"q", "x"}}, 0, "/u/5?q=x", 1},
    {"/u/{id}", {{"q", "x"}, {"id", "5"}}, 0, "/u/5?q=x", 1},
    {"/u/{id}", {{"ID", "5"}, {"id", "6"}}, 0, "/u/6?ID=5", 1},
    /* a value for a parameter left out (default, optional) does not go to the query */
    {"/d/{x=7}", {{"x", "7"}, {"y", "1"}}, 0, "/d?y=1", 1},
    {"/f/{*x}", {{"x", ""}, {"y", "1"}}, 0, "/f?y=1", 1},
    /* a missing required value fails even with query values around */
    {"/u/{id}", {{"q", "x"}}, ERR(CANAL_EINVAL)},
};

static canal_str_t S(const char *s)
{
    return (canal_str_t){s, strlen(s)};
}

static size_t nvalues(const struct link_case *c)
{
    size_t n = 0;
    while (n < NV && (c->values[n].key != NULL || c->values[n].value != NULL))
        n++;
    return n;
}

/* The generated URL, matched against its own route, gives back every value that fills a
 * parameter (or that parameter's default). */
static void check_round_trip(size_t i, const canal_router_t *r, const canal_route_t *rt,
                             const struct link_case *c, const char *url)
{
    char scratch[512];
    canal_match_t m;
    int st = canal_router_match(r, S("GET"), S(url), scratch, sizeof(scratch), &m);
    if (st != 200 || m.route != rt)
        fail_msg("link case %zu \"%s\": %s does not match its route (%d)", i, c->tmpl, url, st);
    for (size_t k = 0; k < nvalues(c); k++) {
        const canal_kv_t *kv = &c->values[k];
        if (kv->key == NULL || kv->value == NULL)
            continue;
        int is_param = 0;
        for (size_t p = 0; p < canal_route_param_count(rt); p++)
            is_param |= strcmp(canal_route_param_name(rt, p), kv->key) == 0;
        if (!is_param)
            continue;
        const canal_str_t *v = canal_match_get(&m, kv->key);
        if (kv->value[0] == '\0' && v == NULL)
            continue;
        if (v == NULL || v->len != strlen(kv->value) || memcmp(v->base, kv->value, v->len) != 0)
            fail_msg("link case %zu \"%s\": %s gives %s=\"%.*s\", expected \"%s\"", i, c->tmpl,
                     url, kv->key, v ? (int)v->len : 4, v ? v->base : "NULL", kv->value);
    }
}

static void test_link_cases(void **state)
{
    for (size_t i = 0; i < sizeof(link_cases) / sizeof(link_cases[0]); i++) {
        const struct link_case *c = &link_cases[i];
        canal_router_t *r = canal_router_create(NULL);
        canal_route_spec_t spec = {.tmpl = c->tmpl, .name = "n"};
        const canal_route_t *rt;
        canal_error_info_t err;
        int rc = canal_router_add(r, &spec, &rt, &err);
        if (rc != 0)
            fail_msg("link case %zu \"%s\": %s: %s", i, c->tmpl, canal_err_name(rc), err.message);
        char buf[512];
        memset(buf, 'X', sizeof(buf));
        int len = canal_route_link(rt, c->values, nvalues(c), buf, sizeof(buf));
        if (c->rc != 0) {
            if (len != c->rc)
                fail_msg("link case %zu \"%s\": %d, expected %s", i, c->tmpl, len,
                         canal_err_name(c->rc));
            /* by name: the same answer */
            assert_int_equal(canal_router_link(r, "n", c->values, nvalues(c), buf, sizeof(buf)),
                             c->rc);
            canal_router_destroy(r);
            continue;
        }
        if (len < 0 || strcmp(buf, c->url) != 0 || (size_t)len != strlen(c->url))
            fail_msg("link case %zu \"%s\": %d \"%s\", expected \"%s\"", i, c->tmpl, len,
                     len >= 0 ? buf : canal_err_name(len), c->url);
        /* by name, and with every smaller buffer: snprintf semantics */
        char named[512];
        assert_int_equal(canal_router_link(r, "n", c->values, nvalues(c), named, sizeof(named)),
                         len);
        assert_string_equal(named, c->url);
        for (size_t size = 0; size <= (size_t)len + 1; size++) {
            char small[512];
            memset(small, 'X', sizeof(small));
            int got = canal_route_link(rt, c->values, nvalues(c), size ? small : NULL, size);
            assert_int_equal(got, len);
            if (size > 0) {
                size_t keep = size - 1 < (size_t)len ? size - 1 : (size_t)len;
                assert_memory_equal(small, c->url, keep);
                assert_int_equal(small[keep], '\0');
            }
            assert_int_equal(small[size], 'X'); /* nothing written past size */
        }
        if (c->round_trip)
            check_round_trip(i, r, rt, c, buf);
        canal_router_destroy(r);
    }
}

static void test_link_by_name(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    canal_route_spec_t specs[] = {
        {.method = "GET", .tmpl = "/users/{id:int}", .name = "user"},
        {.method = "PUT", .tmpl = "/users/{id:int}", .name = "user"},
        {.method = "GET", .tmpl = "/", .name = "home"},
    };
    for (int i = 0; i < 3; i++)
        assert_int_equal(canal_router_add(r, &specs[i], NULL, NULL), 0);
    char buf[64];
    canal_kv_t v[] = {{"id", "7"}};
    assert_int_equal(canal_router_link(r, "user", v, 1, buf, sizeof(buf)), 8);
    assert_string_equal(buf, "/users/7");
    assert_int_equal(canal_router_link(r, "home", NULL, 0, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "/");
    assert_int_equal(canal_router_link(r, "nope", v, 1, buf, sizeof(buf)), CANAL_ENOTFOUND);
    assert_int_equal(canal_router_link(r, "User", v, 1, buf, sizeof(buf)), CANAL_ENOTFOUND);
    assert_int_equal(canal_router_link(r, "", v, 1, buf, sizeof(buf)), CANAL_ENOTFOUND);
    /* only the length: no buffer */
    assert_int_equal(canal_router_link(r, "user", v, 1, NULL, 0), 8);
    canal_router_destroy(r);
}

static void test_link_strict_slash(void **state)
{
    canal_router_options_t opts = {.trailing_slash = CANAL_SLASH_STRICT};
    canal_router_t *r = canal_router_create(&opts);
    const canal_route_t *dir, *file, *empty;
    canal_route_spec_t s1 = {.tmpl = "/dir/"}, s2 = {.tmpl = "/dir/{f}/"}, s3 = {.tmpl = "//"};
    assert_int_equal(canal_router_add(r, &s1, &dir, NULL), 0);
    assert_int_equal(canal_router_add(r, &s2, &file, NULL), 0);
    canal_error_info_t err;
    assert_int_equal(canal_router_add(r, &s3, &empty, &err), CANAL_ESYNTAX); /* an empty segment */
    assert_int_equal(err.position, 1);
    char buf[64];
    assert_int_equal(canal_route_link(dir, NULL, 0, buf, sizeof(buf)), 5);
    assert_string_equal(buf, "/dir/");
    canal_kv_t v[] = {{"f", "x"}};
    assert_int_equal(canal_route_link(file, v, 1, buf, sizeof(buf)), 7);
    assert_string_equal(buf, "/dir/x/");
    canal_router_destroy(r);
}

/* ---- groups ---------------------------------------------------------------------------------- */

struct group_case {
    const char *prefixes[3]; /* each nested in the one before */
    const char *tmpl;
    const char *full_prefix;  /* canal_group_prefix of the innermost group */
    const char *registered;   /* the route's template */
    const char *path;         /* a path it matches */
    const char *values;
};

static const struct group_case group_cases[] = {
    {{"api"}, "/users", "api", "/api/users", "/api/users", ""},
    {{"/api"}, "users", "api", "/api/users", "/api/users", ""},
    {{"/api/"}, "/users/", "api", "/api/users/", "/api/users", ""},
    {{"//api//"}, "//users", "api", "/api/users", "/api/users", ""},
    {{"api"}, "", "api", "/api", "/api", ""},
    {{"api"}, "/", "api", "/api", "/api", ""},
    {{""}, "/users", "", "/users", "/users", ""},
    {{"/"}, "/", "", "/", "/", ""},
    {{"api", "v1"}, "/users/{id:int}", "api/v1", "/api/v1/users/{id:int}", "/api/v1/users/5",
     "id=5"},
    {{"api", "/v1/", "/admin"}, "x", "api/v1/admin", "/api/v1/admin/x", "/api/v1/admin/x", ""},
    {{"", "v1"}, "x", "v1", "/v1/x", "/v1/x", ""},
    {{"api", ""}, "x", "api", "/api/x", "/api/x", ""},
    {{"t/{tenant}"}, "/items/{id}", "t/{tenant}", "/t/{tenant}/items/{id}", "/t/acme/items/9",
     "tenant=acme&id=9"},
    {{"t/{tenant:alpha}", "{region}"}, "{*rest}", "t/{tenant:alpha}/{region}",
     "/t/{tenant:alpha}/{region}/{*rest}", "/t/acme/eu/a/b", "tenant=acme&region=eu&rest=a/b"},
    {{"files"}, "{**path}", "files", "/files/{**path}", "/files", "path="},
    {{"a b"}, "c", "a b", "/a b/c", "/a%20b/c", ""},
};

static void test_groups(void **state)
{
    for (size_t i = 0; i < sizeof(group_cases) / sizeof(group_cases[0]); i++) {
        const struct group_case *c = &group_cases[i];
        canal_router_t *r = canal_router_create(NULL);
        canal_route_group_t *g = NULL;
        for (size_t k = 0; k < 3 && c->prefixes[k] != NULL; k++) {
            g = canal_router_group(r, g, c->prefixes[k]);
            assert_non_null(g);
        }
        assert_string_equal(canal_group_prefix(g), c->full_prefix);
        canal_route_spec_t spec = {.method = "GET", .tmpl = c->tmpl, .name = "n"};
        const canal_route_t *rt;
        canal_error_info_t err;
        int rc = canal_group_add(g, &spec, &rt, &err);
        if (rc != 0)
            fail_msg("group case %zu: %s: %s", i, canal_err_name(rc), err.message);
        assert_string_equal(canal_route_template(rt), c->registered);
        assert_ptr_equal(canal_router_route_at(r, 0), rt);
        assert_ptr_equal(canal_router_find(r, "n"), rt);
        char scratch[256], got[256] = "";
        canal_match_t m;
        int st = canal_router_match(r, S("GET"), S(c->path), scratch, sizeof(scratch), &m);
        if (st != 200 || m.route != rt)
            fail_msg("group case %zu: GET %s: %d", i, c->path, st);
        size_t o = 0;
        for (size_t k = 0; k < m.nparams; k++)
            o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%.*s=%.*s", k ? "&" : "",
                                  (int)m.params[k].name.len, m.params[k].name.base,
                                  (int)m.params[k].value.len, m.params[k].value.base);
        assert_string_equal(got, c->values);
        canal_router_destroy(r);
    }
}

static void test_group_errors(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    canal_route_group_t *api = canal_router_group(r, NULL, "/api/{id}");
    canal_route_group_t *bad = canal_router_group(r, NULL, "/bad/{x");
    canal_route_group_t *other = canal_router_group(r, NULL, "/api/");
    assert_non_null(api);
    assert_non_null(bad);
    canal_error_info_t err;
    const canal_route_t *rt;
    canal_route_spec_t spec = {.tmpl = "/x/{id}"};
    /* the group's parameter and the route's share a name */
    assert_int_equal(canal_group_add(api, &spec, &rt, &err), CANAL_ESYNTAX);
    /* a bad prefix shows when a route is added */
    spec.tmpl = "/y";
    assert_int_equal(canal_group_add(bad, &spec, &rt, &err), CANAL_ESYNTAX);
    /* a duplicate across a group and the root */
    spec.tmpl = "/api/z";
    assert_int_equal(canal_router_add(r, &spec, &rt, &err), 0);
    spec.tmpl = "z";
    assert_int_equal(canal_group_add(other, &spec, &rt, &err), CANAL_EEXIST);
    assert_int_equal(canal_group_add(other, NULL, &rt, &err), CANAL_EINVAL);
    canal_route_spec_t notmpl = {.method = "GET"};
    assert_int_equal(canal_group_add(other, &notmpl, &rt, &err), CANAL_EINVAL);
    assert_int_equal(canal_router_route_count(r), 1);
    /* and the router still works through a group */
    spec.tmpl = "/w/{v}";
    assert_int_equal(canal_group_add(api, &spec, &rt, &err), 0);
    assert_string_equal(canal_route_template(rt), "/api/{id}/w/{v}");
    char scratch[64];
    canal_match_t m;
    assert_int_equal(canal_router_match(r, S("GET"), S("/api/1/w/2"), scratch, sizeof(scratch), &m),
                     200);
    assert_int_equal(m.nparams, 2);
    /* groups are listed like any route */
    char list[256];
    canal_router_list(r, list, sizeof(list));
    assert_string_equal(list, "GET /api/z\nGET /api/{id}/w/{v}\n");
    canal_router_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_cases),
        cmocka_unit_test(test_link_by_name),
        cmocka_unit_test(test_link_strict_slash),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_group_errors),
    };
    print_message("cases: %zu links, %zu groups\n", sizeof(link_cases) / sizeof(link_cases[0]),
                  sizeof(group_cases) / sizeof(group_cases[0]));
    return cmocka_run_group_tests_name("router_link", tests, NULL, NULL);
}
