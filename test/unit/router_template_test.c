/* SPDX-License-Identifier: MIT */
/*
 * Route templates: the grammar (accepted templates with their parameters and a path they
 * match; rejected ones with the error code and byte position), every constraint's accepting
 * and refusing values, the strict value parsers and percent-decoding, duplicates, names,
 * limits, and the route accessors and listing. All tables.
 */
#include "test.h"
#include "canal/router.h"

static canal_str_t S(const char *s)
{
    return (canal_str_t){s, strlen(s)};
}

static int add(canal_router_t *r, const char *method, const char *tmpl, const char *name,
               canal_error_info_t *err)
{
    canal_route_spec_t spec = {.method = method, .tmpl = tmpl, .name = name};
    return canal_router_add(r, &spec, NULL, err);
}

/* Matches and writes the values as "a=1&b=2" (raw bytes), or "-" when there is no 200. */
static int match_values(const canal_router_t *r, const char *method, const char *path, char *out,
                        size_t size)
{
    char scratch[1024];
    canal_match_t m;
    int st = canal_router_match(r, S(method), S(path), scratch, sizeof(scratch), &m);
    size_t o = 0;
    out[0] = '\0';
    if (st != 200) {
        snprintf(out, size, "-");
        return st;
    }
    for (size_t i = 0; i < m.nparams; i++)
        o += (size_t)snprintf(out + o, size - o, "%s%.*s=%.*s", i ? "&" : "",
                              (int)m.params[i].name.len, m.params[i].name.base,
                              (int)m.params[i].value.len, m.params[i].value.base);
    return st;
}

/* ---- accepted templates --------------------------------------------------------------------- */

enum { IGNORE = 0, STRICT = 1 };

struct ok_case {
    int slash;
    const char *tmpl;
    const char *params; /* parameter names in order, comma-separated */
    const char *path;   /* a request path it matches (GET), or NULL */
    const char *values; /* the values that match gives */
};

static const struct ok_case ok_cases[] = {
    {IGNORE, "", "", "/", ""},
    {IGNORE, "/", "", "/", ""},
    {STRICT, "/", "", "/", ""},
    {IGNORE, "a", "", "/a", ""},
    {IGNORE, "/a", "", "/a", ""},
    {IGNORE, "/a/", "", "/a", ""},
    {STRICT, "/a/", "", "/a/", ""},
    {IGNORE, "a/b/c", "", "/a/b/c", ""},
    {IGNORE, "/a b/c d", "", "/a%20b/c d", ""},
    {IGNORE, "/{{x}}", "", "/%7Bx%7D", ""},
    {IGNORE, "/{{x}}", "", "/{x}", ""},
    {IGNORE, "/a{{b", "", "/a{b", ""},
    {IGNORE, "/a}}b", "", "/a}b", ""},
    {IGNORE, "/{{", "", "/{", ""},
    {IGNORE, "/}}", "", "/}", ""},
    {IGNORE, "/{{}}", "", "/{}", ""},
    {IGNORE, "/{{{{", "", "/{{", ""},
    {IGNORE, "/a:b", "", "/a:b", ""},
    {IGNORE, "/a=b", "", "/a=b", ""},
    {IGNORE, "/*", "", "/*", ""},
    {IGNORE, "/a*b", "", "/a*b", ""},
    {IGNORE, "/~/x", "", "/~/x", ""},
    {IGNORE, "/.", "", "/.", ""},
    {IGNORE, "/..", "", "/..", ""},
    {IGNORE, "/%", "", "/%25", ""},
    {IGNORE, "/a%20b", "", "/a%2520b", ""},
    {IGNORE, "/caf\xc3\xa9", "", "/caf%C3%A9", ""},
    {IGNORE, "{x}", "x", "/1", "x=1"},
    {IGNORE, "/{x}", "x", "/1", "x=1"},
    {IGNORE, "/{x}/", "x", "/1/", "x=1"},
    {IGNORE, "/a/{x}/b/{y}", "x,y", "/a/1/b/2", "x=1&y=2"},
    {IGNORE, "/{X1}", "X1", "/v", "X1=v"},
    {IGNORE, "/{a-b_c.d}", "a-b_c.d", "/v", "a-b_c.d=v"},
    {IGNORE, "/{_}", "_", "/v", "_=v"},
    {IGNORE, "/{0}", "0", "/v", "0=v"},
    {IGNORE, "/{x:int}", "x", "/5", "x=5"},
    {IGNORE, "/{x:INT}", "x", "/5", "x=5"},
    {IGNORE, "/{x:Int}", "x", "/-5", "x=-5"},
    {IGNORE, "/{x:long}", "x", "/5", "x=5"},
    {IGNORE, "/{x:bool}", "x", "/true", "x=true"},
    {IGNORE, "/{x:double}", "x", "/1.5", "x=1.5"},
    {IGNORE, "/{x:guid}", "x", "/0123456789abcdef0123456789abcdef",
     "x=0123456789abcdef0123456789abcdef"},
    {IGNORE, "/{x:alpha}", "x", "/abc", "x=abc"},
    {IGNORE, "/{x:min(1)}", "x", "/1", "x=1"},
    {IGNORE, "/{x:min(-1)}", "x", "/-1", "x=-1"},
    {IGNORE, "/{x:min(-9223372036854775808)}", "x", "/-9223372036854775808",
     "x=-9223372036854775808"},
    {IGNORE, "/{x:max(9223372036854775807)}", "x", "/9223372036854775807",
     "x=9223372036854775807"},
    {IGNORE, "/{x:range(1,1)}", "x", "/1", "x=1"},
    {IGNORE, "/{x:range(-2,-1)}", "x", "/-2", "x=-2"},
    {IGNORE, "/{x:length(2)}", "x", "/ab", "x=ab"},
    {IGNORE, "/{x:length(0)}", "x", NULL, NULL},
    {IGNORE, "/{x:length(0,0)}", "x", NULL, NULL},
    {IGNORE, "/{x:length(1,3)}", "x", "/ab", "x=ab"},
    {IGNORE, "/{x:minlength(0)}", "x", "/a", "x=a"},
    {IGNORE, "/{x:maxlength(0)}", "x", NULL, NULL},
    {IGNORE, "/{x:MinLength(2):MAXLENGTH(3)}", "x", "/abc", "x=abc"},
    {IGNORE, "/{x:regex(^a$)}", "x", "/a", "x=a"},
    {IGNORE, "/{x:regex(^(a|b)+$)}", "x", "/abba", "x=abba"},
    {IGNORE, "/{x:regex(^[0-9]{{3}}$)}", "x", "/123", "x=123"},
    {IGNORE, "/{x:regex(a/b)}", "x", "/a%2Fb", "x=a/b"},
    {IGNORE, "/{x:regex(a:b)}", "x", "/a:b", "x=a:b"},
    {IGNORE, "/{x:regex(a?b)}", "x", "/b", "x=b"},
    {IGNORE, "/{x:regex(a=b)}", "x", "/a=b", "x=a=b"},
    {IGNORE, "/{x:regex(^(a)(b)$):length(2)}", "x", "/ab", "x=ab"},
    {IGNORE, "/{x:regex(^a$)?}", "x", "/", ""},
    {IGNORE, "/{x:regex(^a$)=a}", "x", "/", "x=a"},
    {IGNORE, "/{x:regex(^[{{}}]$)}", "x", "/%7B", "x={"},
    {IGNORE, "/{x:regex(.)}", "x", "/%C3%A9", "x=\xc3\xa9"},
    {IGNORE, "/{x:int:min(1)}", "x", "/1", "x=1"},
    {IGNORE, "/{x:int:min(1):max(3)}", "x", "/3", "x=3"},
    {IGNORE, "/{x:alpha:length(2)}", "x", "/ab", "x=ab"},
    {IGNORE, "/{x?}", "x", "/", ""},
    {IGNORE, "/a/{x?}", "x", "/a", ""},
    {IGNORE, "/a/{x:int?}", "x", "/a/1", "x=1"},
    {IGNORE, "/a/{x?}/", "x", "/a", ""},
    {IGNORE, "/a/{x?}/{y?}", "x,y", "/a/1", "x=1"},
    {IGNORE, "/{x=1}", "x", "/", "x=1"},
    {IGNORE, "/{x=}", "x", "/", "x="},
    {IGNORE, "/{x=a b}", "x", "/", "x=a b"},
    {IGNORE, "/{x={{}}}", "x", "/", "x={}"},
    {IGNORE, "/{x:int=1}", "x", "/", "x=1"},
    {IGNORE, "/{x:range(1,5)=3}", "x", "/4", "x=4"},
    {IGNORE, "/{a=1}/{b=2}", "a,b", "/", "a=1&b=2"},
    {IGNORE, "/{a=1}/b", "a", "/x/b", "a=x"},
    {IGNORE, "/{a=1}/{b}", "a,b", "/x/y", "a=x&b=y"},
    {IGNORE, "/{a=1}/{b?}", "a,b", "/", "a=1"},
    {IGNORE, "/{*x}", "x", "/", "x="},
    {IGNORE, "/{**x}", "x", "/a/b", "x=a/b"},
    {IGNORE, "/a/{*x}", "x", "/a", "x="},
    {IGNORE, "/a/{*x}/", "x", "/a/b/", "x=b"},
    {IGNORE, "/a/{*x:minlength(1)}", "x", "/a/b", "x=b"},
    {IGNORE, "/a/{*x=d/e}", "x", "/a", "x=d/e"},
    {IGNORE, "/{a}/{b:int}/{c?}", "a,b,c", "/x/1/y", "a=x&b=1&c=y"},
    {IGNORE, "/{a}/{*b}", "a,b", "/x/1/y", "a=x&b=1/y"},
    /* complex segments */
    {IGNORE, "/a{x}", "x", "/ab", "x=b"},
    {IGNORE, "/{x}a", "x", "/ba", "x=b"},
    {IGNORE, "/a/b{x}/c", "x", "/a/b1/c", "x=1"},
    {IGNORE, "/{x}.{y}", "x,y", "/a.b", "x=a&y=b"},
    {IGNORE, "/{name}.{ext}", "name,ext", "/a.b.c", "name=a.b&ext=c"},
    {IGNORE, "/{lang}-{region}", "lang,region", "/en-US", "lang=en&region=US"},
    {IGNORE, "/{p1}.{p2?}", "p1,p2", "/abc", "p1=abc"},
    {IGNORE, "/{p1}.{p2?}", "p1,p2", "/abc.d", "p1=abc&p2=d"},
    {IGNORE, "/{a:int}-{b:alpha}", "a,b", "/12-ab", "a=12&b=ab"},
    {IGNORE, "/x{a}y{b}z", "a,b", "/x1y2z", "a=1&b=2"},
    {IGNORE, "/{{{x}", "x", "/{1", "x=1"},
    {IGNORE, "/{x}/{y}.{z}", "x,y,z", "/1/2.3", "x=1&y=2&z=3"},
    {STRICT, "/{x}/", "x", "/1/", "x=1"},
};

static void test_accepted(void **state)
{
    for (size_t i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++) {
        const struct ok_case *c = &ok_cases[i];
        canal_router_options_t opts = {.trailing_slash = c->slash ? CANAL_SLASH_STRICT
                                                                  : CANAL_SLASH_IGNORE};
        canal_router_t *r = canal_router_create(&opts);
        canal_error_info_t err = {0};
        const canal_route_t *rt = NULL;
        canal_route_spec_t spec = {.tmpl = c->tmpl};
        int rc = canal_router_add(r, &spec, &rt, &err);
        if (rc != 0)
            fail_msg("ok case %zu \"%s\": %s at %zu: %s", i, c->tmpl, canal_err_name(rc),
                     err.position, err.message);
        assert_string_equal(canal_route_template(rt), c->tmpl);
        char names[256] = "";
        size_t o = 0;
        for (size_t k = 0; k < canal_route_param_count(rt); k++)
            o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", k ? "," : "",
                                  canal_route_param_name(rt, k));
        assert_null(canal_route_param_name(rt, canal_route_param_count(rt)));
        if (strcmp(names, c->params) != 0)
            fail_msg("ok case %zu \"%s\": parameters \"%s\", expected \"%s\"", i, c->tmpl, names,
                     c->params);
        if (c->path != NULL) {
            char got[512];
            int st = match_values(r, "GET", c->path, got, sizeof(got));
            if (st != 200 || strcmp(got, c->values) != 0)
                fail_msg("ok case %zu \"%s\" GET %s: %d \"%s\", expected 200 \"%s\"", i, c->tmpl,
                         c->path, st, got, c->values);
        }
        canal_router_destroy(r);
    }
}

/* ---- rejected templates --------------------------------------------------------------------- */

struct err_case {
    int slash;
    const char *tmpl;
    int code;
    size_t pos;
};

static const struct err_case err_cases[] = {
    /* braces */
    {IGNORE, "{", CANAL_ESYNTAX, 0},
    {IGNORE, "/{", CANAL_ESYNTAX, 1},
    {IGNORE, "a/{", CANAL_ESYNTAX, 2},
    {IGNORE, "/a/{x", CANAL_ESYNTAX, 3},
    {IGNORE, "/a/{x:int", CANAL_ESYNTAX, 3},
    {IGNORE, "/a/{x}}", CANAL_ESYNTAX, 3},
    {IGNORE, "/a/{x/y", CANAL_ESYNTAX, 3},
    {IGNORE, "}", CANAL_ESYNTAX, 0},
    {IGNORE, "/}", CANAL_ESYNTAX, 1},
    {IGNORE, "/a}", CANAL_ESYNTAX, 2},
    {IGNORE, "/a/b}c", CANAL_ESYNTAX, 4},
    {IGNORE, "/{{x}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{x{y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x{{}", CANAL_ESYNTAX, 3},
    /* empty segments (as ASP.NET Core: '/' cannot follow '/') */
    {IGNORE, "/a//b", CANAL_ESYNTAX, 3},
    {IGNORE, "a//b", CANAL_ESYNTAX, 2},
    {IGNORE, "{a}//{z}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{a}//{z}", CANAL_ESYNTAX, 5},
    {IGNORE, "//", CANAL_ESYNTAX, 1},
    {STRICT, "//", CANAL_ESYNTAX, 1},
    {IGNORE, "//a", CANAL_ESYNTAX, 1},
    {IGNORE, "/a//", CANAL_ESYNTAX, 3},
    {STRICT, "/a//", CANAL_ESYNTAX, 3},
    /* complex segments */
    {IGNORE, "/{x}{y}", CANAL_ESYNTAX, 4},
    {IGNORE, "/a{x}{y}b", CANAL_ESYNTAX, 5},
    {IGNORE, "/{x}.{*y}", CANAL_ESYNTAX, 5},
    {IGNORE, "/a{**y}", CANAL_ESYNTAX, 2},
    {IGNORE, "/{x=1}.{y}", CANAL_ESYNTAX, 1},
    {IGNORE, "/{x?}.{y}", CANAL_ESYNTAX, 1},
    {IGNORE, "/{x}-{y?}", CANAL_ESYNTAX, 5},
    {IGNORE, "/{x}..{y?}", CANAL_ESYNTAX, 6},
    {IGNORE, "/{x}.{y?}a", CANAL_ESYNTAX, 5},
    {IGNORE, "/{x}.{x}", CANAL_ESYNTAX, 6},
    {IGNORE, "/{x}.{y:foo}", CANAL_EINVAL, 8},
    /* '?' outside a parameter */
    {IGNORE, "/a?b", CANAL_ESYNTAX, 2},
    {IGNORE, "/a/b?", CANAL_ESYNTAX, 4},
    {IGNORE, "?", CANAL_ESYNTAX, 0},
    {IGNORE, "/?x=1", CANAL_ESYNTAX, 1},
    /* names */
    {IGNORE, "/{}", CANAL_ESYNTAX, 2},
    {IGNORE, "{}", CANAL_ESYNTAX, 1},
    {IGNORE, "/{?}", CANAL_ESYNTAX, 2},
    {IGNORE, "/{=x}", CANAL_ESYNTAX, 2},
    {IGNORE, "/{:int}", CANAL_ESYNTAX, 2},
    {IGNORE, "/{*}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{**}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{*:int}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{***x}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{x y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{ x}", CANAL_ESYNTAX, 2},
    {IGNORE, "/{x }", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x/y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x%y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x*}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x(y)}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{caf\xc3\xa9}", CANAL_ESYNTAX, 5},
    {IGNORE, "/{x}/{x}", CANAL_ESYNTAX, 6},
    /* names compare case-insensitively (ASP.NET Core refuses these too): the second one */
    {IGNORE, "/{Controller}.mvc/{id}/{controller}", CANAL_ESYNTAX, 24},
    {IGNORE, "/{ID}/{x}-{id}", CANAL_ESYNTAX, 11},
    {IGNORE, "/{a}/{*A}", CANAL_ESYNTAX, 7},
    {IGNORE, "/{x}/{*x}", CANAL_ESYNTAX, 7},
    {IGNORE, "/{x}/{**x}", CANAL_ESYNTAX, 8},
    {IGNORE, "/{x:int}/a/{x?}", CANAL_ESYNTAX, 12},
    /* constraint syntax */
    {IGNORE, "/{x:}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{x::int}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{x:int:}", CANAL_ESYNTAX, 8},
    {IGNORE, "/{x:(1)}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{x:min(1}", CANAL_ESYNTAX, 7},
    {IGNORE, "/{x:int:min(1}", CANAL_ESYNTAX, 11},
    {IGNORE, "/{x:regex(a}", CANAL_ESYNTAX, 9},
    {IGNORE, "/{x:int)}", CANAL_ESYNTAX, 7},
    {IGNORE, "/{x:int5}", CANAL_EINVAL, 4}, /* names may hold digits after a letter (utf8) */
    {IGNORE, "/{x:utf8(1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:8utf}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{x:int x}", CANAL_ESYNTAX, 7},
    {IGNORE, "/{x:min(1)x}", CANAL_ESYNTAX, 7},
    /* '?' and '=' */
    {IGNORE, "/{x?y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x??}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x?=1}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x?:int}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{*x?}", CANAL_ESYNTAX, 4},
    {IGNORE, "/{**x?}", CANAL_ESYNTAX, 5},
    /* unknown constraints and bad arguments */
    {IGNORE, "/{x:foo}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:integer}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:in}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:datetime}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:decimal}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:float}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:required}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:int:bar}", CANAL_EINVAL, 8},
    {IGNORE, "/{x:int(1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:int()}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:alpha(3)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:guid()}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:max}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:length}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:minlength}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:maxlength}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:regex}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min()}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(a)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(1.5)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(+1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min( 1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(1 )}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(0x10)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(1e3)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(-)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(9223372036854775808)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(-9223372036854775809)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:min(1,2)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:max(1,2)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:minlength(1,2)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:maxlength(1,2)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(1,)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(,1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(,)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(1, 2)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(1,2,3)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(5,1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:range(a,b)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:length()}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:length(-1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:length(-2,-1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:length(3,1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:length(1,2,3)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:minlength(-1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:maxlength(-1)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:regex([)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:regex((a)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:regex(a{{2,1}})}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:regex(*a)}", CANAL_EINVAL, 4},
    {IGNORE, "/{x:int:regex([)}", CANAL_EINVAL, 8},
    {IGNORE, "/a/b/{x:int:min(1):foo}", CANAL_EINVAL, 19},
    /* catch-all and optional placement */
    {IGNORE, "/{*x}/a", CANAL_ESYNTAX, 1},
    {IGNORE, "/a/{*x}/b", CANAL_ESYNTAX, 3},
    {IGNORE, "/a/{**x}/{y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/a/{*x}/{*y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/a/{x?}/b", CANAL_ESYNTAX, 3},
    {IGNORE, "/a/{x?}/{y}", CANAL_ESYNTAX, 3},
    {IGNORE, "/{x?}/{y=1}/c", CANAL_ESYNTAX, 1},
    {STRICT, "/{*x}/", CANAL_ESYNTAX, 1},
    {STRICT, "/a/{x?}/", CANAL_ESYNTAX, 3},
};

static void test_rejected(void **state)
{
    for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
        const struct err_case *c = &err_cases[i];
        canal_router_options_t opts = {.trailing_slash = c->slash ? CANAL_SLASH_STRICT
                                                                  : CANAL_SLASH_IGNORE};
        canal_router_t *r = canal_router_create(&opts);
        assert_int_equal(add(r, "GET", "/keep/{k:int}", NULL, NULL), 0);
        canal_error_info_t err;
        memset(&err, 0x55, sizeof(err));
        const canal_route_t *rt = (const canal_route_t *)&err; /* must stay untouched */
        canal_route_spec_t spec = {.method = "BREW", .tmpl = c->tmpl};
        int rc = canal_router_add(r, &spec, &rt, &err);
        if (rc != c->code || err.position != c->pos)
            fail_msg("err case %zu \"%s\": %s at %zu (%s), expected %s at %zu", i, c->tmpl,
                     canal_err_name(rc), rc ? err.position : 0, rc ? err.message : "",
                     canal_err_name(c->code), c->pos);
        assert_int_equal(err.code, rc);
        assert_true(strlen(err.message) > 0 && strlen(err.message) < sizeof(err.message));
        assert_ptr_equal(rt, (const canal_route_t *)&err);
        /* the router is as it was: one route, one method, still matching */
        assert_int_equal(canal_router_route_count(r), 1);
        assert_int_equal(canal_router_method_count(r), 1);
        char got[64];
        assert_int_equal(match_values(r, "GET", "/keep/7", got, sizeof(got)), 200);
        assert_string_equal(got, "k=7");
        assert_int_equal(match_values(r, "BREW", "/keep/7", got, sizeof(got)), 405);
        /* the error info is optional */
        assert_int_equal(canal_router_add(r, &spec, NULL, NULL), c->code);
        canal_router_destroy(r);
    }
}

/* The regex dialect (PCRE2, lib/router/regex.c): what registration accepts, with the
 * ECMA-262 form canal_route_param_constraint() gives for OpenAPI, and what it refuses, with
 * the message (the position is the constraint's). */
static const struct {
    const char *tmpl;
    const char *ecma;    /* accepted: the ECMA-262 form (case-insensitive router) */
    const char *message; /* refused: the message */
} escape_cases[] = {
    {"/{x:regex(^\\d+$)}", "^\\d+$", NULL},
    {"/{x:regex(^\\D\\w\\W\\b\\B$)}", "^\\D\\w\\W\\b\\B$", NULL},
    {"/{x:regex(a\\sb)}", "[aA][\\t\\n\\x0B\\f\\r ][bB]", NULL},
    {"/{x:regex(\\S)}", "[^\\t\\n\\x0B\\f\\r ]", NULL},
    {"/{x:regex(^[[:digit:]]+$)}", "^[0-9]+$", NULL},
    {"/{x:regex(^[^[:space:]]+$)}", "^[^\\x09-\\x0D ]+$", NULL},
    {"/{x:regex([[:^digit:]])}", "[\\x00-/:-\\x7F\\u{80}-\\u{10FFFF}]", NULL},
    {"/{x:regex([\\x{{80}}-\\x{{10ffff}}])}", "[\\u{80}-\\u{10FFFF}kKsS]", NULL},
    {"/{x:regex([^a-z])}", "[^a-zA-Z\\u{212A}\\u{17F}]", NULL},
    {"/{x:regex(^[[:upper:]]$)}", "^[A-Za-z]$", NULL},
    {"/{x:regex(^[0-9]{{3}}$)}", "^[0-9]{3}$", NULL},
    {"/{x:regex(a{{,2}})}", "[aA]\\{,2\\}", NULL},
    {"/{x:regex(\\Aa\\z)}", "^[aA]$", NULL},
    {"/{x:regex(a\\Z)}", "[aA](?=\\n?$)", NULL},
    {"/{x:regex(^.$)}", "^[^\\n]$", NULL},
    {"/{x:regex(\\x{{e9}}\\x41\\@\\-)}", "\\u{E9}[Aa]@-", NULL},
    {"/{x:regex([]a-])}", "[\\]aA\\-]", NULL},
    {"/{x:regex(\\p{{Lu}}\\pN\\P{{Greek}}\\p{{L&}})}", "\\p{Lu}\\p{N}\\P{Script=Greek}\\p{LC}", NULL},
    {"/{x:regex((?<y>1)(?P<z>2)(?:3)(?=4)(?<!5)6(?#c)*)}", "(?<y>1)(?<z>2)(?:3)(?=4)(?<!5)6*", NULL},
    {"/{x:regex(\\Q.*\\E+)}", "\\.\\*+", NULL},
    {"/{x:regex(/{{}}])}", "\\/\\{\\}\\]", NULL},
    {"/{x:regex(k)}", "[kK\\u{212A}]", NULL},
    {"/{x:regex(caf\xc3\xa9)}", "[cC][aA][fF]\\u{E9}", NULL},
    {"/{x:regex(a*+)}", NULL, "regex at offset 2: possessive quantifiers are not translated: drop the '+'"},
    {"/{x:regex((?>a))}", NULL, "regex at offset 0: atomic groups (?>...) are not translated"},
    {"/{x:regex((?i)a)}", NULL, "regex at offset 0: inline options ((?i), (?x), ...) are not translated"},
    {"/{x:regex((?-i:a))}", NULL, "regex at offset 0: inline options ((?i), (?-i), ...) are not translated"},
    {"/{x:regex((a)\\1)}", NULL, "regex at offset 3: backreferences are not translated"},
    {"/{x:regex((?<n>a)\\k<n>)}", NULL, "regex at offset 7: backreferences are not translated"},
    {"/{x:regex((a)(?1))}", NULL, "regex at offset 3: recursion, conditionals, callouts, backreferences and (?|...) are not translated"},
    {"/{x:regex((*UTF)a)}", NULL, "regex at offset 0: (*VERB) and start-of-pattern options are not translated"},
    {"/{x:regex(a\\Kb)}", NULL, "regex at offset 1: this escape (\\K, \\G, \\X, ...) has no ECMA-262 equivalent"},
    {"/{x:regex((?=a)*)}", NULL, "regex at offset 5: a quantified assertion is not valid ECMA-262"},
    {"/{x:regex(\\p{{Xan}})}", NULL, "regex at offset 0: \\p{...}: only general categories (\\p{L}, \\p{Nd}, ...) and the scripts Arabic to Thai are translated"},
    {"/{x:regex([[.a.]])}", NULL, "bad regex at offset 1: POSIX collating elements are not supported"},
    {"/{x:regex(\\C)}", NULL, "bad regex at offset 2: using \\C is disabled by the application"},
    {"/{x:regex(\\u0041)}", NULL, "bad regex at offset 2: PCRE2 does not support \\F, \\L, \\l, \\N{name}, \\U, or \\u"},
    {"/{x:int:regex(\\d\\)}", NULL, "bad regex at offset 3: \\ at end of pattern"},
};

static void test_regex_escapes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(escape_cases) / sizeof(escape_cases[0]); i++) {
        canal_router_t *r = canal_router_create(NULL);
        canal_error_info_t err;
        int rc = add(r, "GET", escape_cases[i].tmpl, NULL, &err);
        if (escape_cases[i].message == NULL ? rc != 0
                                            : rc != CANAL_EINVAL || strcmp(err.message, escape_cases[i].message) != 0)
            fail_msg("regex case %zu %s: %s (%s)", i, escape_cases[i].tmpl, canal_err_name(rc),
                     rc ? err.message : "accepted");
        if (rc != 0) {
            assert_int_equal(err.position, strstr(escape_cases[i].tmpl, "regex") - escape_cases[i].tmpl);
        } else {
            canal_constraint_info_t c;
            assert_int_equal(canal_route_param_constraint(canal_router_route_at(r, 0), 0, 0, &c), 0);
            assert_int_equal(c.kind, CANAL_CONSTRAINT_REGEX);
            if (strcmp(c.ecma, escape_cases[i].ecma) != 0)
                fail_msg("regex case %zu %s: ECMA-262 %s, expected %s", i, escape_cases[i].tmpl,
                         c.ecma, escape_cases[i].ecma);
        }
        canal_router_destroy(r);
    }
}

struct method_case {
    const char *method;
    int code;
};

static const struct method_case method_cases[] = {
    {NULL, 0},        {"GET", 0},         {"get", 0},        {"M-SEARCH", 0},
    {"A_B.C~D", 0},   {"!#$%&'*+-.^_`|~", 0}, {"0", 0},       {"", CANAL_ESYNTAX},
    {"GE T", CANAL_ESYNTAX}, {"GET\n", CANAL_ESYNTAX}, {"GET\t", CANAL_ESYNTAX},
    {"G\"T", CANAL_ESYNTAX}, {"G(T", CANAL_ESYNTAX}, {"G/T", CANAL_ESYNTAX},
    {"G:T", CANAL_ESYNTAX}, {"G@T", CANAL_ESYNTAX}, {"G{T", CANAL_ESYNTAX},
    {"G\x7f", CANAL_ESYNTAX}, {"G\xc3\xa9", CANAL_ESYNTAX}, {"G,T", CANAL_ESYNTAX},
};

static void test_methods(void **state)
{
    for (size_t i = 0; i < sizeof(method_cases) / sizeof(method_cases[0]); i++) {
        canal_router_t *r = canal_router_create(NULL);
        canal_error_info_t err;
        int rc = add(r, method_cases[i].method, "/a", NULL, &err);
        if (rc != method_cases[i].code)
            fail_msg("method case %zu: %s, expected %s", i, canal_err_name(rc),
                     canal_err_name(method_cases[i].code));
        assert_int_equal(canal_router_method_count(r), rc == 0 ? 1 : 0);
        canal_router_destroy(r);
    }
    /* no template, no spec */
    canal_router_t *r = canal_router_create(NULL);
    canal_route_spec_t spec = {.method = "GET"};
    canal_error_info_t err;
    assert_int_equal(canal_router_add(r, &spec, NULL, &err), CANAL_EINVAL);
    assert_int_equal(err.code, CANAL_EINVAL);
    assert_int_equal(canal_router_add(r, NULL, NULL, NULL), CANAL_EINVAL);
    assert_int_equal(canal_router_route_count(r), 0);
    canal_router_destroy(r);
}

/* ---- constraints ---------------------------------------------------------------------------- */

struct cons_case {
    const char *cons;  /* the constraint text after "{v:" */
    const char *value; /* a path segment as sent (percent-encoded where needed) */
    int matches;
};

static const struct cons_case cons_cases[] = {
    /* int: 32-bit signed, optional '-', ASCII digits only */
    {"int", "0", 1},
    {"int", "1", 1},
    {"int", "-1", 1},
    {"int", "-0", 1},
    {"int", "007", 1},
    {"int", "00", 1},
    {"int", "123456789", 1},
    {"int", "2147483647", 1},
    {"int", "-2147483648", 1},
    {"int", "02147483647", 1},
    {"int", "2147483648", 0},
    {"int", "-2147483649", 0},
    {"int", "4294967296", 0},
    {"int", "9223372036854775807", 0},
    {"int", "99999999999999999999999", 0},
    {"int", "+3", 0},
    {"int", "%2B3", 0},
    {"int", "0x10", 0},
    {"int", "0X10", 0},
    {"int", "1.5", 0},
    {"int", "1.0", 0},
    {"int", "1.", 0},
    {"int", "%201", 0},
    {"int", "1%20", 0},
    {"int", "%091", 0},
    {"int", "1e3", 0},
    {"int", "1E3", 0},
    {"int", "-", 0},
    {"int", "--1", 0},
    {"int", "-+1", 0},
    {"int", "1-", 0},
    {"int", "1-2", 0},
    {"int", "1,000", 0},
    {"int", "1_000", 0},
    {"int", "abc", 0},
    {"int", "1a", 0},
    {"int", "a1", 0},
    {"int", "%D9%A1", 0},  /* ARABIC-INDIC DIGIT ONE */
    {"int", "%EF%BC%91", 0}, /* FULLWIDTH DIGIT ONE */
    {"int", "%C2%B9", 0},  /* SUPERSCRIPT ONE */
    {"int", "inf", 0},
    {"int", "true", 0},
    /* long: 64-bit signed */
    {"long", "0", 1},
    {"long", "-1", 1},
    {"long", "2147483648", 1},
    {"long", "-2147483649", 1},
    {"long", "9223372036854775807", 1},
    {"long", "-9223372036854775808", 1},
    {"long", "0009223372036854775807", 1},
    {"long", "9223372036854775808", 0},
    {"long", "-9223372036854775809", 0},
    {"long", "18446744073709551615", 0},
    {"long", "18446744073709551616", 0},
    {"long", "99999999999999999999999999999999999999", 0},
    {"long", "+1", 0},
    {"long", "1.0", 0},
    {"long", "1e3", 0},
    {"long", "0x1", 0},
    {"long", "%201", 0},
    {"long", "-", 0},
    {"long", "1L", 0},
    /* bool */
    {"bool", "true", 1},
    {"bool", "false", 1},
    {"bool", "TRUE", 1},
    {"bool", "False", 1},
    {"bool", "tRuE", 1},
    {"bool", "FALSE", 1},
    {"bool", "1", 0},
    {"bool", "0", 0},
    {"bool", "yes", 0},
    {"bool", "no", 0},
    {"bool", "t", 0},
    {"bool", "f", 0},
    {"bool", "truee", 0},
    {"bool", "tru", 0},
    {"bool", "%20true", 0},
    {"bool", "true%20", 0},
    {"bool", "on", 0},
    /* double */
    {"double", "0", 1},
    {"double", "1", 1},
    {"double", "-1", 1},
    {"double", "1.5", 1},
    {"double", "-0.5", 1},
    {"double", "0.0", 1},
    {"double", "00.100", 1},
    {"double", "1e3", 1},
    {"double", "1E3", 1},
    {"double", "1e+3", 1},
    {"double", "1e-3", 1},
    {"double", "1.5e-3", 1},
    {"double", "-1.5E+300", 1},
    {"double", "123456789012345678901234567890", 1},
    {"double", "1.7976931348623157e308", 1},
    {"double", "4.9e-324", 1},
    {"double", "1e-400", 1}, /* underflows to zero: still a number */
    {"double", "1e400", 0},  /* overflows */
    {"double", "-1e400", 0},
    {"double", "+1", 0},
    {"double", "%2B1", 0},
    {"double", "inf", 0},
    {"double", "-inf", 0},
    {"double", "infinity", 0},
    {"double", "Infinity", 0},
    {"double", "nan", 0},
    {"double", "NaN", 0},
    {"double", "0x1p3", 0},
    {"double", "0x10", 0},
    {"double", "1e", 0},
    {"double", "1e+", 0},
    {"double", "1e-", 0},
    {"double", "e3", 0},
    {"double", "-e3", 0},
    {"double", ".", 0},
    {"double", "-", 0},
    {"double", "-.", 0},
    {"double", "1,5", 0},
    {"double", "1.5.1", 0},
    {"double", "1e3.5", 0},
    {"double", "1e3e3", 0},
    {"double", "%201", 0},
    {"double", "1%20", 0},
    {"double", "1d", 0},
    {"double", "1f", 0},
    {"double", "--1", 0},
    /* guid: 32 hex digits, or 8-4-4-4-12 with dashes, optionally in {} or () */
    {"guid", "00000000-0000-0000-0000-000000000000", 1},
    {"guid", "01234567-89ab-cdef-0123-456789ABCDEF", 1},
    {"guid", "0123456789abcdef0123456789ABCDEF", 1},
    {"guid", "{01234567-89ab-cdef-0123-456789abcdef}", 1},
    {"guid", "%7B01234567-89ab-cdef-0123-456789abcdef%7D", 1},
    {"guid", "(01234567-89ab-cdef-0123-456789abcdef)", 1},
    {"guid", "0123456789abcdef0123456789abcde", 0},
    {"guid", "0123456789abcdef0123456789abcdef0", 0},
    {"guid", "0123456789abcdef0123456789abcdeg", 0},
    {"guid", "01234567-89ab-cdef-0123-456789abcde", 0},
    {"guid", "01234567-89ab-cdef-0123-456789abcdef0", 0},
    {"guid", "01234567-89ab-cdef-0123-456789abcdeg", 0},
    {"guid", "0123456-789ab-cdef-0123-456789abcdef", 0},
    {"guid", "01234567089ab-cdef-0123-456789abcdef", 0},
    {"guid", "01234567-89ab0cdef-0123-456789abcdef", 0},
    {"guid", "01234567-89ab-cdef-0123-456789ab-cdef", 0},
    {"guid", "{01234567-89ab-cdef-0123-456789abcdef)", 0},
    {"guid", "(01234567-89ab-cdef-0123-456789abcdef}", 0},
    {"guid", "[01234567-89ab-cdef-0123-456789abcdef]", 0},
    {"guid", "{0123456789abcdef0123456789abcdef}", 0},
    {"guid", "{01234567-89ab-cdef-0123-456789abcdef", 0},
    {"guid", "01234567-89ab-cdef-0123-456789abcdef}", 0},
    {"guid", "%2001234567-89ab-cdef-0123-456789abcdef", 0},
    {"guid", "0", 0},
    {"guid", "x", 0},
    /* alpha: ASCII letters, at least one */
    {"alpha", "a", 1},
    {"alpha", "Z", 1},
    {"alpha", "abcXYZ", 1},
    {"alpha", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 1},
    {"alpha", "a1", 0},
    {"alpha", "1", 0},
    {"alpha", "a-b", 0},
    {"alpha", "a_b", 0},
    {"alpha", "a%20b", 0},
    {"alpha", "%C3%A9", 0},
    {"alpha", "caf%C3%A9", 0},
    {"alpha", "a.", 0},
    {"alpha", "%40", 0},
    {"alpha", "%5B", 0},
    {"alpha", "%60", 0},
    {"alpha", "%7B", 0},
    /* min, max, range: 64-bit integers compared */
    {"min(5)", "5", 1},
    {"min(5)", "6", 1},
    {"min(5)", "05", 1},
    {"min(5)", "9223372036854775807", 1},
    {"min(5)", "4", 0},
    {"min(5)", "-5", 0},
    {"min(5)", "9223372036854775808", 0},
    {"min(5)", "abc", 0},
    {"min(5)", "5.5", 0},
    {"min(5)", "+6", 0},
    {"min(-5)", "-5", 1},
    {"min(-5)", "0", 1},
    {"min(-5)", "-6", 0},
    {"min(0)", "-0", 1},
    {"max(5)", "5", 1},
    {"max(5)", "-100", 1},
    {"max(5)", "-9223372036854775808", 1},
    {"max(5)", "6", 0},
    {"max(5)", "-9223372036854775809", 0},
    {"max(5)", "x", 0},
    {"max(-1)", "-1", 1},
    {"max(-1)", "0", 0},
    {"range(1,5)", "1", 1},
    {"range(1,5)", "3", 1},
    {"range(1,5)", "5", 1},
    {"range(1,5)", "0", 0},
    {"range(1,5)", "6", 0},
    {"range(1,5)", "-1", 0},
    {"range(1,5)", "a", 0},
    {"range(-5,-1)", "-3", 1},
    {"range(-5,-1)", "0", 0},
    {"range(7,7)", "7", 1},
    {"range(7,7)", "8", 0},
    {"range(-9223372036854775808,9223372036854775807)", "0", 1},
    {"range(-9223372036854775808,9223372036854775807)", "-9223372036854775808", 1},
    {"range(-9223372036854775808,9223372036854775807)", "9223372036854775808", 0},
    /* length, minlength, maxlength: characters (UTF-8 code points), not bytes */
    {"length(3)", "abc", 1},
    {"length(3)", "ab", 0},
    {"length(3)", "abcd", 0},
    {"length(3)", "a%20c", 1},
    {"length(3)", "%C3%A9%C3%A9%C3%A9", 1},
    {"length(3)", "%C3%A9%C3%A9", 0},
    {"length(3)", "%E2%82%AC%E2%82%AC%E2%82%AC", 1},
    {"length(1)", "%F0%9F%98%80", 1},
    {"length(1)", "%C3%A9", 1},
    {"length(2)", "%C3%A9", 0},
    {"length(2,4)", "a", 0},
    {"length(2,4)", "ab", 1},
    {"length(2,4)", "abc", 1},
    {"length(2,4)", "abcd", 1},
    {"length(2,4)", "abcde", 0},
    {"length(0)", "a", 0},
    {"minlength(2)", "ab", 1},
    {"minlength(2)", "abcdefgh", 1},
    {"minlength(2)", "a", 0},
    {"minlength(2)", "%C3%A9", 0},
    {"minlength(2)", "%C3%A9a", 1},
    {"minlength(0)", "a", 1},
    {"maxlength(2)", "a", 1},
    {"maxlength(2)", "ab", 1},
    {"maxlength(2)", "abc", 0},
    {"maxlength(2)", "%C3%A9%C3%A9", 1},
    {"maxlength(2)", "%C3%A9%C3%A9%C3%A9", 0},
    {"maxlength(0)", "a", 0},
    /* bytes that are not UTF-8 count one each: stray continuations must not shrink a value */
    {"maxlength(3)", "%80%80%80", 1},
    {"maxlength(3)", "%80%80%80%80", 0},
    {"maxlength(3)", "%80%80%80%80%80%80%80%80%80%80%80%80%80%80%80%80", 0},
    {"maxlength(2)", "%C3%A9%80", 1},
    {"maxlength(2)", "%C3%A9%80%80", 0},
    {"maxlength(1)", "%FF%FF", 0},
    {"length(2)", "%FF%FF", 1},
    {"length(2)", "%C3a", 1},
    {"length(1)", "%E2%82", 1},
    {"minlength(1)", "%80", 1},
    /* regex: PCRE2, not anchored unless the pattern says so, case-insensitive as the router */
    {"regex(^[0-9]{{3}}$)", "123", 1},
    {"regex(^[0-9]{{3}}$)", "1234", 0},
    {"regex(^[0-9]{{3}}$)", "12a", 0},
    {"regex(abc)", "abc", 1},
    {"regex(abc)", "xabcx", 1},
    {"regex(abc)", "ab", 0},
    {"regex(^abc$)", "ABC", 1},
    {"regex(^abc$)", "abc%0A", 0}, /* '$' only at the very end */
    {"regex(^\\d{{2}}$)", "12", 1},
    {"regex(^\\d{{2}}$)", "%D9%A1%D9%A2", 0}, /* ASCII digits only */
    {"regex(^\\w+$)", "a_Z9", 1},
    {"regex(^\\s$)", "%0B", 1},
    {"regex(^[^a]$)", "%FF", 0},                /* not UTF-8: no regex matches */
    {"regex(b)", "%FFb", 0},
    {"regex(b)", "%C0%AFb", 0},                 /* an overlong '/' */
    {"regex(\\S)", "%C3%A9", 1},
    {"regex((a+)+c)", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 0}, /* the match limit */
    {"regex(^(ab)+$)", "abab", 1},
    {"regex(^(ab)+$)", "aba", 0},
    {"regex(^a|b$)", "ax", 1},
    {"regex(^a|b$)", "xb", 1},
    {"regex(^a|b$)", "xa", 0},
    {"regex(^a/b$)", "a%2Fb", 1},
    {"regex(^a b$)", "a%20b", 1},
    {"regex(^a+b$)", "a+b", 0},
    {"regex(^a+b$)", "aab", 1},
    {"regex(^a\\+b$)", "a+b", 1},
    {"regex(^[[:alpha:]]+$)", "abC", 1},
    {"regex(^[[:alpha:]]+$)", "ab1", 0},
    {"regex(^.$)", "%C3%A9", 1}, /* UTF-8: one character */
    {"regex(^..$)", "%C3%A9", 0},
    {"regex(^[^/]*$)", "a%2Fb", 0},
    {"regex(^(x|y)-[0-9]+$)", "x-1", 1},
    {"regex(^(x|y)-[0-9]+$)", "z-1", 0},
    {"regex(^(a)b?$)", "a", 1},
    {"regex(^(a)(b)$)", "ab", 1},
    {"regex(^$)", "a", 0},
    /* chains: every constraint must accept */
    {"int:min(1)", "1", 1},
    {"int:min(1)", "0", 0},
    {"int:min(1)", "-1", 0},
    {"int:min(1)", "2147483648", 0},
    {"int:range(1,10)", "10", 1},
    {"int:range(1,10)", "11", 0},
    {"long:max(5)", "-9223372036854775808", 1},
    {"alpha:length(3)", "abc", 1},
    {"alpha:length(3)", "ab1", 0},
    {"alpha:length(3)", "abcd", 0},
    {"alpha:minlength(2):maxlength(3)", "ab", 1},
    {"alpha:minlength(2):maxlength(3)", "a", 0},
    {"alpha:minlength(2):maxlength(3)", "abcd", 0},
    {"guid:regex(^0)", "0123456789abcdef0123456789abcdef", 1},
    {"guid:regex(^0)", "1123456789abcdef0123456789abcdef", 0},
    {"bool:length(4)", "true", 1},
    {"bool:length(4)", "false", 0},
    {"double:min(1)", "1", 1},
    {"double:min(1)", "1.5", 0},
    {"regex(^[a-z]+$):maxlength(3)", "abc", 1},
    {"regex(^[a-z]+$):maxlength(3)", "abcd", 0},
    {"int:int:int", "5", 1},
    /* utf8: well-formed UTF-8 only (RFC 3629) */
    {"utf8", "abc", 1},
    {"utf8", "caf%C3%A9", 1},
    {"utf8", "%E2%82%AC", 1},
    {"utf8", "%F0%9F%98%80", 1},
    {"utf8", "%F4%8F%BF%BF", 1},
    {"utf8", "%ED%9F%BF", 1},
    {"utf8", "%EE%80%80", 1},
    {"utf8", "%C0%AF", 0},
    {"utf8", "%C1%BF", 0},
    {"utf8", "%E0%80%AF", 0},
    {"utf8", "%E0%9F%BF", 0},
    {"utf8", "%F0%80%80%AF", 0},
    {"utf8", "%F0%8F%BF%BF", 0},
    {"utf8", "%ED%A0%80", 0},
    {"utf8", "%ED%BF%BF", 0},
    {"utf8", "%F4%90%80%80", 0},
    {"utf8", "%F5%80%80%80", 0},
    {"utf8", "%FF", 0},
    {"utf8", "%FE", 0},
    {"utf8", "%80", 0},
    {"utf8", "a%BF", 0},
    {"utf8", "%C3", 0},
    {"utf8", "%E2%82", 0},
    {"utf8", "%F0%9F%98", 0},
    {"utf8", "%C3%28", 0},
    {"utf8", "%E2%28%A1", 0},
    {"utf8", "%E2%82%28", 0},
    {"utf8:maxlength(1)", "%C3%A9", 1},
    {"utf8:maxlength(1)", "%C3%A9%C3%A9", 0},
    {"min(1):max(0)", "0", 0},
    {"min(1):max(0)", "1", 0},
};

/* canal_utf8_valid() on raw bytes, at every boundary of RFC 3629's table */
static const struct {
    const char *bytes;
    size_t len;
    int valid;
} utf8_cases[] = {
    {"", 0, 1},
    {"a\0b", 3, 1},              /* U+0000 is UTF-8; %00 is refused by the decoder, not here */
    {"\x7f", 1, 1},
    {"\xc2\x80", 2, 1},          /* U+0080 */
    {"\xdf\xbf", 2, 1},          /* U+07FF */
    {"\xe0\xa0\x80", 3, 1},      /* U+0800 */
    {"\xef\xbf\xbf", 3, 1},      /* U+FFFF */
    {"\xf0\x90\x80\x80", 4, 1},  /* U+10000 */
    {"\xf4\x8f\xbf\xbf", 4, 1},  /* U+10FFFF */
    {"\x80", 1, 0},
    {"\xc0\x80", 2, 0},          /* overlong U+0000 */
    {"\xc1\xbf", 2, 0},          /* overlong U+007F */
    {"\xe0\x9f\xbf", 3, 0},      /* overlong U+07FF */
    {"\xf0\x8f\xbf\xbf", 4, 0},  /* overlong U+FFFF */
    {"\xed\xa0\x80", 3, 0},      /* U+D800 */
    {"\xed\xbf\xbf", 3, 0},      /* U+DFFF */
    {"\xf4\x90\x80\x80", 4, 0},  /* U+110000 */
    {"\xf8\x88\x80\x80\x80", 5, 0},
    {"\xc2", 1, 0},
    {"\xe2\x82", 2, 0},
    {"\xf0\x9f\x98", 3, 0},
    {"\xc2\x41", 2, 0},
    {"\xe2\x82\xc3\xa9", 4, 0},
    {"ok\xff", 3, 0},
};

static void test_utf8(void **state)
{
    for (size_t i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++)
        if (canal_utf8_valid((canal_str_t){utf8_cases[i].bytes, utf8_cases[i].len}) != utf8_cases[i].valid)
            fail_msg("utf8 case %zu: expected %d", i, utf8_cases[i].valid);
}

static void test_constraints(void **state)
{
    char tmpl[256], path[256], got[256];
    for (size_t i = 0; i < sizeof(cons_cases) / sizeof(cons_cases[0]); i++) {
        const struct cons_case *c = &cons_cases[i];
        canal_router_t *r = canal_router_create(NULL);
        snprintf(tmpl, sizeof(tmpl), "/t/{v:%s}", c->cons);
        canal_error_info_t err;
        int rc = add(r, "GET", tmpl, NULL, &err);
        if (rc != 0)
            fail_msg("constraint case %zu %s: %s at %zu: %s", i, tmpl, canal_err_name(rc),
                     err.position, err.message);
        snprintf(path, sizeof(path), "/t/%s", c->value);
        int st = match_values(r, "GET", path, got, sizeof(got));
        if ((st == 200) != c->matches)
            fail_msg("constraint case %zu: %s with %s: %d, expected %s", i, tmpl, c->value, st,
                     c->matches ? "a match" : "none");
        if (!c->matches)
            assert_int_equal(st, 404); /* a failing constraint is no match, never 400 */
        /* the same constraint on a catch-all sees the same value */
        canal_router_t *r2 = canal_router_create(NULL);
        snprintf(tmpl, sizeof(tmpl), "/t/{*v:%s}", c->cons);
        assert_int_equal(add(r2, "GET", tmpl, NULL, NULL), 0);
        st = match_values(r2, "GET", path, got, sizeof(got));
        if ((st == 200) != c->matches)
            fail_msg("constraint case %zu: %s with %s: %d, expected %s", i, tmpl, c->value, st,
                     c->matches ? "a match" : "none");
        canal_router_destroy(r2);
        canal_router_destroy(r);
    }
}

/* ---- value parsers ---------------------------------------------------------------------------- */

enum { P_INT32, P_INT64, P_DOUBLE, P_BOOL };

struct parse_case {
    int type;
    const char *text;
    int rc;
    long long ival; /* int32, int64, bool */
    double dval;
};

static const struct parse_case parse_cases[] = {
    {P_INT32, "0", 0, 0, 0},
    {P_INT32, "-0", 0, 0, 0},
    {P_INT32, "42", 0, 42, 0},
    {P_INT32, "-42", 0, -42, 0},
    {P_INT32, "0042", 0, 42, 0},
    {P_INT32, "2147483647", 0, 2147483647LL, 0},
    {P_INT32, "-2147483648", 0, -2147483648LL, 0},
    {P_INT32, "2147483648", CANAL_ERANGE, 0, 0},
    {P_INT32, "-2147483649", CANAL_ERANGE, 0, 0},
    {P_INT32, "9223372036854775808", CANAL_ERANGE, 0, 0},
    {P_INT32, "99999999999999999999", CANAL_ERANGE, 0, 0},
    {P_INT32, "99999999999999999999x", CANAL_ETYPE, 0, 0},
    {P_INT32, "", CANAL_ETYPE, 0, 0},
    {P_INT32, "-", CANAL_ETYPE, 0, 0},
    {P_INT32, "+3", CANAL_ETYPE, 0, 0},
    {P_INT32, "0x10", CANAL_ETYPE, 0, 0},
    {P_INT32, "1.5", CANAL_ETYPE, 0, 0},
    {P_INT32, " 1", CANAL_ETYPE, 0, 0},
    {P_INT32, "1 ", CANAL_ETYPE, 0, 0},
    {P_INT32, "1e3", CANAL_ETYPE, 0, 0},
    {P_INT32, "--1", CANAL_ETYPE, 0, 0},
    {P_INT32, "\xd9\xa1", CANAL_ETYPE, 0, 0},
    {P_INT64, "9223372036854775807", 0, 9223372036854775807LL, 0},
    {P_INT64, "-9223372036854775808", 0, -9223372036854775807LL - 1, 0},
    {P_INT64, "-9223372036854775807", 0, -9223372036854775807LL, 0},
    {P_INT64, "9223372036854775808", CANAL_ERANGE, 0, 0},
    {P_INT64, "9223372036854775810", CANAL_ERANGE, 0, 0},
    {P_INT64, "-9223372036854775809", CANAL_ERANGE, 0, 0},
    {P_INT64, "18446744073709551616", CANAL_ERANGE, 0, 0},
    {P_INT64, "1844674407370955161600", CANAL_ERANGE, 0, 0},
    {P_INT64, "00000000000000000000000000001", 0, 1, 0},
    {P_INT64, "2147483648", 0, 2147483648LL, 0},
    {P_INT64, "+1", CANAL_ETYPE, 0, 0},
    {P_INT64, "1L", CANAL_ETYPE, 0, 0},
    {P_INT64, "", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, "0", 0, 0, 0.0},
    {P_DOUBLE, "1.5", 0, 0, 1.5},
    {P_DOUBLE, "-0.25", 0, 0, -0.25},
    {P_DOUBLE, "1e3", 0, 0, 1000.0},
    {P_DOUBLE, "1E-2", 0, 0, 0.01},
    {P_DOUBLE, "2.5e+2", 0, 0, 250.0},
    {P_DOUBLE, "12345678901234567890", 0, 0, 12345678901234567890.0},
    {P_DOUBLE, "1e-400", 0, 0, 0.0},
    {P_DOUBLE, "1e400", CANAL_ERANGE, 0, 0},
    {P_DOUBLE, "-1e400", CANAL_ERANGE, 0, 0},
    {P_DOUBLE, "", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, "+1", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, "inf", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, "nan", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, "0x1p3", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, "1e", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, " 1", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, "1 ", CANAL_ETYPE, 0, 0},
    {P_DOUBLE, ".", CANAL_ETYPE, 0, 0},
    {P_BOOL, "true", 0, 1, 0},
    {P_BOOL, "TRUE", 0, 1, 0},
    {P_BOOL, "false", 0, 0, 0},
    {P_BOOL, "FaLsE", 0, 0, 0},
    {P_BOOL, "1", CANAL_ETYPE, 0, 0},
    {P_BOOL, "", CANAL_ETYPE, 0, 0},
    {P_BOOL, "true ", CANAL_ETYPE, 0, 0},
    {P_BOOL, "fals", CANAL_ETYPE, 0, 0},
};

static void test_parsers(void **state)
{
    for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
        const struct parse_case *c = &parse_cases[i];
        /* the text is not NUL-terminated for the parser: a byte after it must not matter */
        char buf[128];
        size_t n = strlen(c->text);
        memcpy(buf, c->text, n);
        buf[n] = '7';
        canal_str_t s = {buf, n};
        int rc = 0;
        long long iv = 0;
        double dv = 0;
        switch (c->type) {
        case P_INT32: {
            int32_t v = 12345;
            rc = canal_parse_int32(s, &v);
            iv = v;
            if (rc != 0)
                assert_int_equal(v, 12345); /* untouched on failure */
            break;
        }
        case P_INT64: {
            int64_t v = 12345;
            rc = canal_parse_int64(s, &v);
            iv = v;
            if (rc != 0)
                assert_int_equal(v, 12345);
            break;
        }
        case P_DOUBLE:
            rc = canal_parse_double(s, &dv);
            break;
        case P_BOOL: {
            int v = -1;
            rc = canal_parse_bool(s, &v);
            iv = v;
            break;
        }
        }
        if (rc != c->rc)
            fail_msg("parse case %zu \"%s\": %s, expected %s", i, c->text, canal_err_name(rc),
                     canal_err_name(c->rc));
        if (rc == 0 && c->type != P_DOUBLE && iv != c->ival)
            fail_msg("parse case %zu \"%s\": %lld, expected %lld", i, c->text, iv, c->ival);
        if (rc == 0 && c->type == P_DOUBLE && dv != c->dval)
            fail_msg("parse case %zu \"%s\": %g, expected %g", i, c->text, dv, c->dval);
    }
}

/* ---- percent-decoding --------------------------------------------------------------------- */

struct decode_case {
    const char *src;
    int plus_is_space;
    int rc;          /* decoded length, or an error */
    const char *out;
};

static const struct decode_case decode_cases[] = {
    {"", 0, 0, ""},
    {"abc", 0, 3, "abc"},
    {"a%20b", 0, 3, "a b"},
    {"a+b", 0, 3, "a+b"},
    {"a+b", 1, 3, "a b"},
    {"%2B", 1, 1, "+"},
    {"%2F", 0, 1, "/"},
    {"%2f", 0, 1, "/"},
    {"%41%42%43", 0, 3, "ABC"},
    {"%C3%A9", 0, 2, "\xc3\xa9"},
    {"%FF", 0, 1, "\xff"},
    {"%01", 0, 1, "\x01"},
    {"%25", 0, 1, "%"},
    {"%2525", 0, 3, "%25"},
    {"%", 0, CANAL_EBADREQ, NULL},
    {"a%", 0, CANAL_EBADREQ, NULL},
    {"%4", 0, CANAL_EBADREQ, NULL},
    {"a%4", 0, CANAL_EBADREQ, NULL},
    {"%zz", 0, CANAL_EBADREQ, NULL},
    {"%4z", 0, CANAL_EBADREQ, NULL},
    {"%z4", 0, CANAL_EBADREQ, NULL},
    {"%00", 0, CANAL_EBADREQ, NULL},
    {"a%00b", 1, CANAL_EBADREQ, NULL},
    {"% 1", 0, CANAL_EBADREQ, NULL},
    {"%+1", 1, CANAL_EBADREQ, NULL},
    {"%-1", 0, CANAL_EBADREQ, NULL},
    {"%%41", 0, CANAL_EBADREQ, NULL},
    {"++", 1, 2, "  "},
};

static void test_percent_decode(void **state)
{
    for (size_t i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++) {
        const struct decode_case *c = &decode_cases[i];
        char dst[64], inplace[64];
        size_t n = strlen(c->src);
        int rc = canal_percent_decode((canal_str_t){c->src, n}, dst, c->plus_is_space);
        if (rc != c->rc)
            fail_msg("decode case %zu \"%s\": %d, expected %d", i, c->src, rc, c->rc);
        if (rc >= 0)
            assert_memory_equal(dst, c->out, (size_t)rc);
        /* dst may be src itself */
        memcpy(inplace, c->src, n);
        rc = canal_percent_decode((canal_str_t){inplace, n}, inplace, c->plus_is_space);
        assert_int_equal(rc, c->rc);
        if (rc >= 0)
            assert_memory_equal(inplace, c->out, (size_t)rc);
    }
}

/* ---- duplicates and names ------------------------------------------------------------------- */

struct reg {
    const char *method, *tmpl, *name;
    int rc;
};

struct dup_case {
    canal_router_options_t opts;
    struct reg regs[6];
};

static const struct dup_case dup_cases[] = {
    /* constraint arguments by value */
    {{0}, {{"GET", "/u/{a:min(1)}", NULL, 0}, {"GET", "/u/{b:MIN(01)}", NULL, CANAL_EEXIST},
           {"GET", "/u/{c:length(3)}", NULL, 0}, {"GET", "/u/{d:length(3,3)}", NULL, CANAL_EEXIST},
           {"GET", "/u/{e:regex(a)}", NULL, 0}, {"GET", "/u/{f:regex((a))}", NULL, 0}}},
    /* complex segments: the same parts and constraints, whatever the names */
    {{0}, {{"GET", "/f/{a}.{b}", NULL, 0}, {"GET", "/f/{x}.{y}", NULL, CANAL_EEXIST},
           {"GET", "/f/{a}.{b?}", NULL, 0}, {"GET", "/f/{a}-{b}", NULL, 0},
           {"GET", "/f/{a:int}.{b}", NULL, 0}, {"GET", "/f/{a}", NULL, 0}}},
    {{0}, {{"GET", "/f/x{a}", NULL, 0}, {"GET", "/f/X{b}", NULL, CANAL_EEXIST}}},
    {{.case_sensitive = 1}, {{"GET", "/f/x{a}", NULL, 0}, {"GET", "/f/X{b}", NULL, 0}}},
    {{0}, {{"GET", "/f/{a:regex(A)}.{b}", NULL, 0}, {"GET", "/f/{a:regex(a)}.{b}", NULL, 0}}},
    {{0}, {{"GET", "/a", NULL, 0}, {"GET", "/a", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/a", NULL, 0}, {"POST", "/a", NULL, 0}, {"POST", "a", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/a", NULL, 0}, {"get", "/a", NULL, 0}}},
    {{0}, {{"GET", "/a", NULL, 0}, {"GET", "/A", NULL, CANAL_EEXIST}}},
    {{.case_sensitive = 1}, {{"GET", "/a", NULL, 0}, {"GET", "/A", NULL, 0}}},
    {{0}, {{"GET", "/", NULL, 0}, {"GET", "", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/a", NULL, 0}, {"GET", "/a/", NULL, CANAL_EEXIST}}},
    {{.trailing_slash = CANAL_SLASH_REDIRECT}, {{"GET", "/a", NULL, 0}, {"GET", "/a/", NULL, CANAL_EEXIST}}},
    {{.trailing_slash = CANAL_SLASH_STRICT}, {{"GET", "/a", NULL, 0}, {"GET", "/a/", NULL, 0}}},
    {{0}, {{"GET", "/u/{id}", NULL, 0}, {"GET", "/u/{name}", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/u/{id}", NULL, 0}, {"PUT", "/u/{name}", NULL, 0}}},
    {{0}, {{"GET", "/u/{id:int}", NULL, 0}, {"GET", "/u/{id}", NULL, 0}}},
    {{0}, {{"GET", "/u/{id:int}", NULL, 0}, {"GET", "/u/{x:INT}", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/u/{id:int}", NULL, 0}, {"GET", "/u/{id:long}", NULL, 0}}},
    {{0}, {{"GET", "/u/{id:int:min(1)}", NULL, 0}, {"GET", "/u/{id:min(1):int}", NULL, 0}}},
    {{0}, {{"GET", "/u/{*a}", NULL, 0}, {"GET", "/u/{*b}", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/u/{*a}", NULL, 0}, {"GET", "/u/{**b}", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/u/{*a}", NULL, 0}, {"GET", "/u/{a}", NULL, 0}, {"GET", "/u", NULL, 0}}},
    {{0}, {{"GET", "/u/{x?}", NULL, 0}, {"GET", "/u", NULL, 0}}},
    {{0}, {{"GET", "/u", NULL, 0}, {"GET", "/u/{x?}", NULL, 0}}},
    {{0}, {{"GET", "/u/{x?}", NULL, 0}, {"GET", "/u/{y}", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/u/{x=1}", NULL, 0}, {"GET", "/u/{x?}", NULL, CANAL_EEXIST}}},
    {{0}, {{"GET", "/{a}/b", NULL, 0}, {"GET", "/{c}/b", NULL, CANAL_EEXIST}, {"GET", "/a/b", NULL, 0}}},
    {{0}, {{"GET", "/{{x}}", NULL, 0}, {"GET", "/{x}", NULL, 0}, {"GET", "/{{X}}", NULL, CANAL_EEXIST}}},
    /* names: one template per name; the same template under other methods may share it */
    {{0}, {{"GET", "/a", "n", 0}, {"POST", "/a", "n", 0}, {"PUT", "/b", "n", CANAL_EEXIST}}},
    {{0}, {{"GET", "/a", "n", 0}, {"POST", "/a/", "n", CANAL_EEXIST}, {"POST", "/a/", "m", 0}}},
    {{0}, {{"GET", "/a", "n", 0}, {"GET", "/b", "N", 0}, {"GET", "/c", "", 0}, {"GET", "/d", "", CANAL_EEXIST}}},
    {{0}, {{"GET", "/a", NULL, 0}, {"GET", "/b", NULL, 0}, {"GET", "/c", "a", 0}}},
    /* a failed add leaves no trace: the same route can be added afterwards */
    {{0}, {{"GET", "/a/{x", NULL, CANAL_ESYNTAX}, {"GET", "/a/{x}", "n", 0}, {"GET", "/b/{y}", "n", CANAL_EEXIST}, {"GET", "/b/{y}", "m", 0}}},
};

static void test_duplicates(void **state)
{
    for (size_t i = 0; i < sizeof(dup_cases) / sizeof(dup_cases[0]); i++) {
        const struct dup_case *c = &dup_cases[i];
        canal_router_t *r = canal_router_create(&c->opts);
        size_t ok = 0;
        for (size_t k = 0; k < 6 && c->regs[k].tmpl != NULL; k++) {
            const struct reg *g = &c->regs[k];
            canal_error_info_t err = {0};
            int rc = add(r, g->method, g->tmpl, g->name, &err);
            if (rc != g->rc)
                fail_msg("dup case %zu.%zu %s %s: %s (%s), expected %s", i, k, g->method, g->tmpl,
                         canal_err_name(rc), err.message, canal_err_name(g->rc));
            if (rc == 0) {
                ok++;
                if (g->name != NULL) {
                    const canal_route_t *found = canal_router_find(r, g->name);
                    assert_non_null(found);
                    assert_string_equal(canal_route_template(found), g->tmpl);
                }
            }
            assert_int_equal(canal_router_route_count(r), ok);
        }
        canal_router_destroy(r);
    }
}

/* ---- limits ----------------------------------------------------------------------------------- */

static void test_limits(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    char tmpl[1024], path[1024];
    canal_error_info_t err;
    char got[512];

    /* segments: 32 accepted, the 33rd refused at its position */
    size_t o = 0, p = 0;
    for (int i = 0; i < CANAL_ROUTER_MAX_SEGMENTS; i++) {
        o += (size_t)sprintf(tmpl + o, "/s%d", i);
        p += (size_t)sprintf(path + p, "/s%d", i);
    }
    assert_int_equal(add(r, "GET", tmpl, NULL, &err), 0);
    assert_int_equal(match_values(r, "GET", path, got, sizeof(got)), 200);
    sprintf(path + p, "/x");
    assert_int_equal(match_values(r, "GET", path, got, sizeof(got)), 404);
    size_t at = o + 1;
    sprintf(tmpl + o, "/x");
    assert_int_equal(add(r, "GET", tmpl, NULL, &err), CANAL_ELIMIT);
    assert_int_equal(err.position, at);
    /* a path with many more segments than any template is simply not found */
    p = 0;
    for (int i = 0; i < 200; i++)
        p += (size_t)sprintf(path + p, "/s%d", i % 32);
    assert_int_equal(match_values(r, "GET", path, got, sizeof(got)), 404);
    assert_int_equal(match_values(r, "POST", path, got, sizeof(got)), 404);

    /* a catch-all as the 32nd segment takes any number of further segments */
    o = 0;
    for (int i = 0; i < CANAL_ROUTER_MAX_SEGMENTS - 1; i++)
        o += (size_t)sprintf(tmpl + o, "/c%d", i);
    sprintf(tmpl + o, "/{*rest}");
    assert_int_equal(add(r, "GET", tmpl, NULL, &err), 0);
    p = 0;
    for (int i = 0; i < CANAL_ROUTER_MAX_SEGMENTS - 1; i++)
        p += (size_t)sprintf(path + p, "/c%d", i);
    sprintf(path + p, "/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21/22/23/24/25/26/27/28/29/30/31/32/33/34");
    assert_int_equal(match_values(r, "GET", path, got, sizeof(got)), 200);
    assert_string_equal(got, "rest=1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21/22/23/24/25/26/27/28/29/30/31/32/33/34");

    /* parameters: 16 accepted, the 17th refused */
    o = 0;
    for (int i = 0; i < CANAL_ROUTER_MAX_PARAMS; i++)
        o += (size_t)sprintf(tmpl + o, "/{p%d}", i);
    assert_int_equal(add(r, "PUT", tmpl, NULL, &err), 0);
    at = o + 1;
    sprintf(tmpl + o, "/{p%d}", CANAL_ROUTER_MAX_PARAMS);
    assert_int_equal(add(r, "PUT", tmpl, NULL, &err), CANAL_ELIMIT);
    assert_int_equal(err.position, at);
    p = 0;
    for (int i = 0; i < CANAL_ROUTER_MAX_PARAMS; i++)
        p += (size_t)sprintf(path + p, "/%d", i);
    char scratch[1024];
    canal_match_t m;
    assert_int_equal(canal_router_match(r, S("PUT"), S(path), scratch, sizeof(scratch), &m), 200);
    assert_int_equal(m.nparams, CANAL_ROUTER_MAX_PARAMS);
    assert_memory_equal(m.params[15].value.base, "15", 2);
    canal_router_destroy(r);

    /* methods: 64 accepted, the 65th refused; 405 and Allow see all 64 */
    r = canal_router_create(NULL);
    for (int i = 0; i < CANAL_ROUTER_MAX_METHODS; i++) {
        char method[16];
        sprintf(method, "M%d", i);
        assert_int_equal(add(r, method, "/a", NULL, NULL), 0);
    }
    assert_int_equal(add(r, "M64", "/b", NULL, &err), CANAL_ELIMIT);
    assert_int_equal(add(r, "M63", "/b", NULL, &err), 0); /* a known method still works */
    assert_int_equal(canal_router_method_count(r), CANAL_ROUTER_MAX_METHODS);
    assert_int_equal(canal_router_match(r, S("GET"), S("/a"), scratch, sizeof(scratch), &m), 405);
    assert_true(m.allow == ~(uint64_t)0);
    assert_int_equal(canal_router_match(r, S("M63"), S("/a"), scratch, sizeof(scratch), &m), 200);
    assert_int_equal(canal_router_match(r, S("M63"), S("/b"), scratch, sizeof(scratch), &m), 200);
    assert_int_equal(canal_router_match(r, S("M0"), S("/b"), scratch, sizeof(scratch), &m), 405);
    assert_true(m.allow == (uint64_t)1 << 63);
    char hdr[1024];
    size_t need = canal_router_allow_header(r, m.allow, hdr, sizeof(hdr));
    assert_string_equal(hdr, "M63, OPTIONS");
    assert_int_equal(need, 12);
    canal_router_destroy(r);
}

/* ---- accessors and listing --------------------------------------------------------------------- */

static void test_accessors_and_list(void **state)
{
    canal_router_options_t opts = {.case_sensitive = 1, .trailing_slash = CANAL_SLASH_REDIRECT};
    canal_router_t *r = canal_router_create(&opts);
    assert_int_equal(canal_router_options(r)->case_sensitive, 1);
    assert_int_equal(canal_router_options(r)->trailing_slash, CANAL_SLASH_REDIRECT);
    canal_router_t *d = canal_router_create(NULL);
    assert_int_equal(canal_router_options(d)->case_sensitive, 0);
    assert_int_equal(canal_router_options(d)->trailing_slash, CANAL_SLASH_IGNORE);
    char buf[512];
    assert_int_equal(canal_router_list(d, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");
    assert_null(canal_router_route_at(d, 0));
    assert_null(canal_router_find(d, "x"));
    canal_router_destroy(d);

    static int data;
    canal_route_spec_t specs[] = {
        {.tmpl = "/", .name = "home"},
        {.method = "POST", .tmpl = "users/{id:int}/{*rest}", .name = "user", .data = &data},
        {.method = "DELETE", .tmpl = "/x/"},
    };
    const canal_route_t *rt[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(canal_router_add(r, &specs[i], &rt[i], NULL), 0);
    assert_int_equal(canal_router_route_count(r), 3);
    for (size_t i = 0; i < 3; i++)
        assert_ptr_equal(canal_router_route_at(r, i), rt[i]);
    assert_null(canal_router_route_at(r, 3));
    assert_ptr_equal(canal_router_find(r, "user"), rt[1]);
    assert_ptr_equal(canal_router_find(r, "home"), rt[0]);
    assert_null(canal_router_find(r, "User"));
    assert_null(canal_router_find(r, ""));
    assert_string_equal(canal_route_method(rt[1]), "POST");
    assert_string_equal(canal_route_template(rt[1]), "users/{id:int}/{*rest}");
    assert_string_equal(canal_route_name(rt[1]), "user");
    assert_null(canal_route_name(rt[2]));
    assert_ptr_equal(canal_route_data(rt[1]), &data);
    assert_null(canal_route_data(rt[0]));
    assert_int_equal(canal_route_param_count(rt[1]), 2);
    assert_string_equal(canal_route_param_name(rt[1], 0), "id");
    assert_string_equal(canal_route_param_name(rt[1], 1), "rest");
    assert_null(canal_route_param_name(rt[1], 2));
    assert_int_equal(canal_route_param_count(rt[0]), 0);
    assert_null(canal_route_param_name(rt[0], 0));

    /* strings were copied */
    char tmpl[32] = "/copied/{c}", name[8] = "cp", method[8] = "PUT";
    canal_route_spec_t spec = {.method = method, .tmpl = tmpl, .name = name};
    const canal_route_t *cp;
    assert_int_equal(canal_router_add(r, &spec, &cp, NULL), 0);
    memset(tmpl, 'z', sizeof(tmpl) - 1);
    memset(name, 'z', sizeof(name) - 1);
    memset(method, 'z', sizeof(method) - 1);
    assert_string_equal(canal_route_template(cp), "/copied/{c}");
    assert_string_equal(canal_route_name(cp), "cp");
    assert_string_equal(canal_route_method(cp), "PUT");
    assert_string_equal(canal_route_param_name(cp, 0), "c");
    assert_ptr_equal(canal_router_find(r, "cp"), cp);

    const char *want = "GET / home\nPOST users/{id:int}/{*rest} user\nDELETE /x/\n"
                       "PUT /copied/{c} cp\n";
    size_t need = canal_router_list(r, buf, sizeof(buf));
    assert_int_equal(need, strlen(want));
    assert_string_equal(buf, want);
    /* snprintf semantics for every size */
    for (size_t size = 0; size <= need + 1; size++) {
        char small[512];
        memset(small, 'X', sizeof(small));
        assert_int_equal(canal_router_list(r, size ? small : NULL, size), need);
        if (size > 0) {
            size_t keep = size - 1 < need ? size - 1 : need;
            assert_memory_equal(small, want, keep);
            assert_int_equal(small[keep], '\0');
        }
        assert_int_equal(small[size], 'X');
    }
    canal_router_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_rejected),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_regex_escapes),
        cmocka_unit_test(test_constraints),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_parsers),
        cmocka_unit_test(test_percent_decode),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_accessors_and_list),
    };
    print_message("cases: %zu accepted, %zu rejected, %zu methods, %zu constraint values, "
                  "%zu parser, %zu decode, %zu duplicate sequences\n",
                  sizeof(ok_cases) / sizeof(ok_cases[0]), sizeof(err_cases) / sizeof(err_cases[0]),
                  sizeof(method_cases) / sizeof(method_cases[0]),
                  sizeof(cons_cases) / sizeof(cons_cases[0]),
                  sizeof(parse_cases) / sizeof(parse_cases[0]),
                  sizeof(decode_cases) / sizeof(decode_cases[0]),
                  sizeof(dup_cases) / sizeof(dup_cases[0]));
    return cmocka_run_group_tests_name("router_template", tests, NULL, NULL);
}
