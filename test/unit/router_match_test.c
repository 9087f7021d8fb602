/* SPDX-License-Identifier: MIT */
/*
 * Matching: the scenario files in test/unit/cases/router/ (routers, routes and requests with
 * their expected outcome, see match.txt for the format), then what a table cannot say well:
 * the Allow header, canal_match_get, the scratch-size contract, route data, HEAD and OPTIONS
 * switches, and that a match allocates nothing (malloc is counted in this file).
 *
 * The scenario files are read relative to the working directory (the repository root, as
 * `make test` runs the tests); CANAL_ROUTER_CASES names another directory.
 */
#include "test.h"
#include <dirent.h>
#include "canal/router.h"

#include "counting_malloc.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static canal_str_t S(const char *s)
{
    return (canal_str_t){s, strlen(s)};
}

static void add_ok(canal_router_t *r, const char *method, const char *tmpl)
{
    canal_error_info_t err = {0};
    canal_route_spec_t spec = {.method = method, .tmpl = tmpl};
    int rc = canal_router_add(r, &spec, NULL, &err);
    if (rc != 0)
        fail_msg("add %s %s: %s at %zu: %s", method, tmpl, canal_err_name(rc), err.position,
                 err.message);
}

static int match(const canal_router_t *r, const char *method, const char *path, char *scratch,
                 size_t size, canal_match_t *m)
{
    memset(m, 0, sizeof(*m));
    return canal_router_match(r, S(method), S(path), scratch, size, m);
}

/* The canal-routes encoding of a value: '%', '&', '=' and bytes outside 0x21-0x7E. */
static void put_value(char **o, const char *end, canal_str_t v)
{
    for (size_t i = 0; i < v.len && *o + 4 < end; i++) {
        unsigned char c = (unsigned char)v.base[i];
        if (c < 0x21 || c > 0x7E || c == '%' || c == '&' || c == '=')
            *o += sprintf(*o, "%%%02X", c);
        else
            *(*o)++ = (char)c;
    }
    **o = '\0';
}

/* The outcome of a match as the scenario files write it. */
static void describe(const canal_router_t *r, int status, const canal_match_t *m, char *buf,
                     size_t size)
{
    char *o = buf, *end = buf + size;
    o += snprintf(o, (size_t)(end - o), "%d", status);
    if (status == 200) {
        o += snprintf(o, (size_t)(end - o), " %s", canal_route_template(m->route));
        for (size_t k = 0; k < m->nparams && o + 8 < end; k++) {
            o += snprintf(o, (size_t)(end - o), "%s%.*s=", k ? "&" : " ",
                          (int)m->params[k].name.len, m->params[k].name.base);
            put_value(&o, end, m->params[k].value);
        }
    } else if (status == 405 || status == 204) {
        o += snprintf(o, (size_t)(end - o), " - allow=");
        int first = 1;
        for (size_t k = 0; k < canal_router_method_count(r); k++)
            if (m->allow >> k & 1) {
                o += snprintf(o, (size_t)(end - o), "%s%s", first ? "" : ",",
                              canal_router_method_name(r, k));
                first = 0;
            }
    } else if (status == 308) {
        snprintf(o, (size_t)(end - o), " - location=%.*s", (int)m->location.len,
                 m->location.base);
    } else {
        snprintf(o, (size_t)(end - o), " -");
    }
}

/* ---- scenario files ----------------------------------------------------------------------- */

/* Undoes the file escapes in place: "\\" and "\xHH"; any other backslash stays as written. */
static size_t unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p;) {
        if (p[0] == '\\' && p[1] == '\\') {
            *o++ = '\\';
            p += 2;
        } else if (p[0] == '\\' && p[1] == 'x' && p[2] && p[3] && strchr("0123456789abcdefABCDEF", p[2]) &&
                   strchr("0123456789abcdefABCDEF", p[3])) {
            char hex[3] = {p[2], p[3], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            p += 4;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return (size_t)(o - s);
}

static int parse_router_line(char *args, canal_router_options_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    for (char *tok = strtok(args, " "); tok != NULL; tok = strtok(NULL, " ")) {
        if (strcmp(tok, "canal-routes") == 0) {
            opts->case_sensitive = 1;
            opts->trailing_slash = CANAL_SLASH_STRICT;
            opts->no_auto_options = 1;
        } else if (strcmp(tok, "case=sensitive") == 0) {
            opts->case_sensitive = 1;
        } else if (strcmp(tok, "case=insensitive") == 0) {
            opts->case_sensitive = 0;
        } else if (strcmp(tok, "slash=strict") == 0) {
            opts->trailing_slash = CANAL_SLASH_STRICT;
        } else if (strcmp(tok, "slash=ignore") == 0) {
            opts->trailing_slash = CANAL_SLASH_IGNORE;
        } else if (strcmp(tok, "slash=redirect") == 0) {
            opts->trailing_slash = CANAL_SLASH_REDIRECT;
        } else if (strcmp(tok, "head=get") == 0) {
            opts->no_head_from_get = 0;
        } else if (strcmp(tok, "head=off") == 0) {
            opts->no_head_from_get = 1;
        } else if (strcmp(tok, "options=auto") == 0) {
            opts->no_auto_options = 0;
        } else if (strcmp(tok, "options=off") == 0) {
            opts->no_auto_options = 1;
        } else {
            return -1;
        }
    }
    return 0;
}

static int cases_run, cases_failed;

/* Runs one scenario file; returns the number of failed lines. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        print_error("cannot open %s\n", path);
        return 1;
    }
    char line[8192], scratch[8192], got[8192];
    canal_router_t *r = NULL;
    int failed = 0, lineno = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if (strncmp(line, "router", 6) == 0 && (line[6] == ' ' || line[6] == '\0')) {
            canal_router_options_t opts;
            canal_router_destroy(r);
            r = NULL;
            /* "router NAME options...": skip the name */
            char *args = line + 6;
            args += strspn(args, " ");
            args += strcspn(args, " ");
            if (parse_router_line(args, &opts) != 0) {
                print_error("%s:%d: bad router line\n", path, lineno);
                failed++;
                break;
            }
            r = canal_router_create(&opts);
            continue;
        }
        if (r == NULL) {
            print_error("%s:%d: no router line before this one\n", path, lineno);
            failed++;
            break;
        }
        if (strncmp(line, "route ", 6) == 0) {
            char *method = line + 6, *sp = strchr(method, ' ');
            if (sp == NULL) {
                print_error("%s:%d: expected \"route METHOD TEMPLATE\"\n", path, lineno);
                failed++;
                continue;
            }
            *sp = '\0';
            unescape(sp + 1);
            canal_error_info_t err = {0};
            canal_route_spec_t spec = {.method = method, .tmpl = sp + 1};
            int rc = canal_router_add(r, &spec, NULL, &err);
            if (rc != 0) {
                print_error("%s:%d: route %s %s: %s at %zu: %s\n", path, lineno, method, sp + 1,
                            canal_err_name(rc), err.position, err.message);
                failed++;
            }
            continue;
        }
        /* "METHOD TARGET => EXPECTED" */
        char *arrow = strstr(line, " => ");
        char *sp = strchr(line, ' ');
        if (arrow == NULL || sp == NULL) {
            print_error("%s:%d: expected \"METHOD TARGET => OUTCOME\"\n", path, lineno);
            failed++;
            continue;
        }
        *arrow = '\0';
        char *expected = arrow + 4;
        unescape(expected);
        *sp = '\0';
        size_t tlen = unescape(sp + 1);
        canal_match_t m;
        memset(&m, 0, sizeof(m));
        int status = canal_router_match(r, S(line), (canal_str_t){sp + 1, tlen}, scratch,
                                        sizeof(scratch), &m);
        describe(r, status, &m, got, sizeof(got));
        cases_run++;
        if (strcmp(got, expected) != 0) {
            print_error("%s:%d: %s %s\n    expected: %s\n    got:      %s\n", path, lineno, line,
                        sp + 1, expected, got);
            failed++;
        }
    }
    canal_router_destroy(r);
    fclose(f);
    return failed;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_scenario_files(void **state)
{
    const char *dir = getenv("CANAL_ROUTER_CASES");
    if (dir == NULL)
        dir = CANAL_SRCDIR "/test/unit/cases/router";
    DIR *d = opendir(dir);
    if (d == NULL)
        fail_msg("cannot open %s", dir);
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64) {
        size_t len = strlen(e->d_name);
        if (len > 10 && strcmp(e->d_name + len - 10, "-match.txt") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    assert_true(n > 0);
    qsort(names, n, sizeof(names[0]), by_name);
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        failed += run_file(path);
        free(names[i]);
    }
    print_message("scenario files: %zu, requests checked: %d, failures: %d\n", n, cases_run,
                  failed);
    cases_failed = failed;
    assert_int_equal(failed, 0);
    assert_true(cases_run >= 100);
}

/* ---- the Allow header --------------------------------------------------------------------- */

struct allow_case {
    canal_router_options_t opts;
    const char *routes[6];  /* "METHOD TEMPLATE" */
    const char *method, *path;
    int status;
    const char *header;     /* canal_router_allow_header of m.allow */
};

static const struct allow_case allow_cases[] = {
    {{0}, {"GET /a", "POST /a"}, "PUT", "/a", 405, "GET, HEAD, POST, OPTIONS"},
    {{0}, {"POST /a", "GET /a"}, "PUT", "/a", 405, "POST, GET, HEAD, OPTIONS"},
    {{0}, {"POST /a"}, "GET", "/a", 405, "POST, OPTIONS"},
    {{0}, {"POST /a"}, "HEAD", "/a", 405, "POST, OPTIONS"},
    {{0}, {"GET /a", "HEAD /a"}, "POST", "/a", 405, "GET, HEAD, OPTIONS"},
    {{0}, {"GET /a", "OPTIONS /a"}, "POST", "/a", 405, "GET, HEAD, OPTIONS"},
    {{0}, {"GET /a", "OPTIONS /b"}, "POST", "/a", 405, "GET, HEAD, OPTIONS"},
    {{0}, {"GET /a", "POST /b"}, "POST", "/a", 405, "GET, HEAD, OPTIONS"},
    {{0}, {"GET /a", "DELETE /a"}, "OPTIONS", "/a", 204, "GET, HEAD, DELETE, OPTIONS"},
    {{0}, {"GET /a/{x:int}", "PUT /a/{y}"}, "POST", "/a/1", 405, "GET, HEAD, PUT, OPTIONS"},
    {{0}, {"GET /a/{x:int}", "PUT /a/{y}"}, "POST", "/a/z", 405, "PUT, OPTIONS"},
    {{0}, {"GET /a/{*x}", "PUT /a/b/{y}"}, "POST", "/a/b/c", 405, "GET, HEAD, PUT, OPTIONS"},
    {{.no_head_from_get = 1}, {"GET /a", "POST /a"}, "PUT", "/a", 405, "GET, POST, OPTIONS"},
    {{.no_head_from_get = 1}, {"GET /a"}, "HEAD", "/a", 405, "GET, OPTIONS"},
    {{.no_auto_options = 1}, {"GET /a", "POST /a"}, "PUT", "/a", 405, "GET, HEAD, POST"},
    {{.no_auto_options = 1}, {"GET /a"}, "OPTIONS", "/a", 405, "GET, HEAD"},
    {{.no_auto_options = 1, .no_head_from_get = 1}, {"GET /a", "post /a"}, "POST", "/a", 405,
     "GET, post"},
    {{0}, {"GET /a"}, "OPTIONS", "/a", 204, "GET, HEAD, OPTIONS"},
    {{0}, {"GET /a", "OPTIONS /a"}, "OPTIONS", "/a", 200, NULL},
    {{0}, {"GET /a"}, "OPTIONS", "/b", 404, ""},
    {{0}, {"GET /a"}, "PUT", "/b", 404, ""},
};

static void test_allow_header(void **state)
{
    for (size_t i = 0; i < sizeof(allow_cases) / sizeof(allow_cases[0]); i++) {
        const struct allow_case *c = &allow_cases[i];
        canal_router_t *r = canal_router_create(&c->opts);
        for (size_t k = 0; k < 6 && c->routes[k] != NULL; k++) {
            char buf[256];
            snprintf(buf, sizeof(buf), "%s", c->routes[k]);
            char *sp = strchr(buf, ' ');
            *sp = '\0';
            add_ok(r, buf, sp + 1);
        }
        char scratch[256], hdr[256];
        canal_match_t m;
        int st = match(r, c->method, c->path, scratch, sizeof(scratch), &m);
        if (st != c->status)
            fail_msg("allow case %zu: %s %s: status %d, expected %d", i, c->method, c->path, st,
                     c->status);
        if (c->header != NULL) {
            size_t need = canal_router_allow_header(r, m.allow, hdr, sizeof(hdr));
            if (strcmp(hdr, c->header) != 0 || need != strlen(c->header))
                fail_msg("allow case %zu: header \"%s\" (%zu), expected \"%s\"", i, hdr, need,
                         c->header);
            /* snprintf semantics: every smaller buffer gets a NUL-terminated prefix */
            for (size_t size = 0; size <= need + 1; size++) {
                char small[256];
                memset(small, 'X', sizeof(small));
                size_t got = canal_router_allow_header(r, m.allow, size ? small : NULL, size);
                assert_int_equal(got, need);
                if (size > 0) {
                    size_t keep = size - 1 < need ? size - 1 : need;
                    assert_memory_equal(small, c->header, keep);
                    assert_int_equal(small[keep], '\0');
                }
                if (size < sizeof(small))
                    assert_int_equal(small[size], 'X');
            }
        }
        canal_router_destroy(r);
    }
}

static void test_allow_header_empty_mask(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    add_ok(r, "GET", "/a");
    char hdr[64] = "junk";
    /* an empty mask gives an empty header: OPTIONS is only added to a non-empty list */
    assert_int_equal(canal_router_allow_header(r, 0, hdr, sizeof(hdr)), 0);
    assert_string_equal(hdr, "");
    canal_router_destroy(r);
}

/* ---- match results ------------------------------------------------------------------------ */

static void test_match_get(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    add_ok(r, "GET", "/u/{id:int}/p/{Slug}/{*rest}");
    char scratch[128];
    canal_match_t m;
    assert_int_equal(match(r, "GET", "/u/42/p/hello%20world/x/y%2Fz", scratch, sizeof(scratch), &m),
                     200);
    assert_int_equal(m.nparams, 3);
    const canal_str_t *v = canal_match_get(&m, "id");
    assert_non_null(v);
    assert_int_equal(v->len, 2);
    assert_memory_equal(v->base, "42", 2);
    v = canal_match_get(&m, "Slug");
    assert_non_null(v);
    assert_int_equal(v->len, 11);
    assert_memory_equal(v->base, "hello world", 11);
    v = canal_match_get(&m, "rest");
    assert_non_null(v);
    assert_int_equal(v->len, 5);
    assert_memory_equal(v->base, "x/y/z", 5);
    /* exact comparison: no case folding, no prefixes */
    assert_null(canal_match_get(&m, "slug"));
    assert_null(canal_match_get(&m, "i"));
    assert_null(canal_match_get(&m, "idx"));
    assert_null(canal_match_get(&m, ""));
    /* template order */
    assert_int_equal(m.params[0].name.len, 2);
    assert_memory_equal(m.params[0].name.base, "id", 2);
    assert_memory_equal(m.params[1].name.base, "Slug", 4);
    assert_memory_equal(m.params[2].name.base, "rest", 4);
    /* values captured without a '%' in the path may point into the path; with one, into
     * scratch: either way they must read right after the scratch is reused for nothing else */
    canal_router_destroy(r);
}

static void test_match_defaults_and_absent(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    add_ok(r, "GET", "/{controller=Home}/{action=Index}/{id?}");
    char scratch[64];
    canal_match_t m;
    assert_int_equal(match(r, "GET", "/", scratch, sizeof(scratch), &m), 200);
    assert_int_equal(m.nparams, 2);
    assert_non_null(canal_match_get(&m, "controller"));
    assert_memory_equal(canal_match_get(&m, "controller")->base, "Home", 4);
    assert_memory_equal(canal_match_get(&m, "action")->base, "Index", 5);
    assert_null(canal_match_get(&m, "id"));
    canal_router_destroy(r);
}

static void test_scratch_size(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    add_ok(r, "GET", "/a/{x}");
    char scratch[64];
    canal_match_t m;
    const char *path = "/a/%41%42";
    size_t n = strlen(path);
    assert_int_equal(match(r, "GET", path, scratch, n - 1, &m), CANAL_EINVAL);
    assert_int_equal(match(r, "GET", path, scratch, 0, &m), CANAL_EINVAL);
    assert_int_equal(match(r, "GET", path, scratch, n, &m), 200);
    assert_int_equal(canal_match_get(&m, "x")->len, 2);
    assert_memory_equal(canal_match_get(&m, "x")->base, "AB", 2);
    /* the value lives in the scratch memory */
    assert_true(canal_match_get(&m, "x")->base >= scratch &&
                canal_match_get(&m, "x")->base < scratch + sizeof(scratch));
    /* the path need not be NUL-terminated: only path.len bytes are read */
    char raw[16];
    memcpy(raw, "/a/bcd", 6);
    memset(raw + 6, '%', sizeof(raw) - 6);
    assert_int_equal(canal_router_match(r, S("GET"), (canal_str_t){raw, 6}, scratch, 6, &m), 200);
    assert_int_equal(canal_match_get(&m, "x")->len, 3);
    canal_router_destroy(r);
}

static int disposed[8];
static void dispose(void *data)
{
    disposed[*(int *)data]++;
}

static void test_route_data(void **state)
{
    static int ids[4] = {0, 1, 2, 3};
    memset(disposed, 0, sizeof(disposed));
    canal_router_t *r = canal_router_create(NULL);
    const canal_route_t *rt[4];
    canal_route_spec_t specs[] = {
        {.tmpl = "/a", .data = &ids[0], .dispose = dispose},
        {.method = "POST", .tmpl = "/a", .data = &ids[1], .dispose = dispose},
        {.tmpl = "/b/{x}", .data = &ids[2]},
        {.tmpl = "/a", .data = &ids[3], .dispose = dispose}, /* a duplicate: refused */
    };
    for (int i = 0; i < 3; i++)
        assert_int_equal(canal_router_add(r, &specs[i], &rt[i], NULL), 0);
    rt[3] = NULL;
    assert_int_equal(canal_router_add(r, &specs[3], &rt[3], NULL), CANAL_EEXIST);
    assert_null(rt[3]);
    assert_string_equal(canal_route_method(rt[0]), "GET"); /* NULL method means GET */
    char scratch[64];
    canal_match_t m;
    assert_int_equal(match(r, "GET", "/a", scratch, sizeof(scratch), &m), 200);
    assert_ptr_equal(m.route, rt[0]);
    assert_ptr_equal(m.data, &ids[0]);
    assert_int_equal(m.nparams, 0);
    assert_int_equal(match(r, "POST", "/a", scratch, sizeof(scratch), &m), 200);
    assert_ptr_equal(m.data, &ids[1]);
    assert_int_equal(match(r, "HEAD", "/a", scratch, sizeof(scratch), &m), 200);
    assert_ptr_equal(m.data, &ids[0]);
    assert_int_equal(match(r, "GET", "/b/q", scratch, sizeof(scratch), &m), 200);
    assert_ptr_equal(m.route, rt[2]);
    assert_ptr_equal(canal_route_data(rt[2]), &ids[2]);
    assert_int_equal(disposed[0] + disposed[1] + disposed[3], 0);
    canal_router_destroy(r);
    /* dispose runs once per registered route, and never for the refused one */
    assert_int_equal(disposed[0], 1);
    assert_int_equal(disposed[1], 1);
    assert_int_equal(disposed[2], 0);
    assert_int_equal(disposed[3], 0);
    canal_router_destroy(NULL);
}

static void test_head_and_options_precedence(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    add_ok(r, "GET", "/x/me");
    add_ok(r, "HEAD", "/x/{id}");
    add_ok(r, "OPTIONS", "/o");
    add_ok(r, "GET", "/o");
    char scratch[64];
    canal_match_t m;
    /* an explicit HEAD route wins over the GET fallback, even a less specific one */
    assert_int_equal(match(r, "HEAD", "/x/me", scratch, sizeof(scratch), &m), 200);
    assert_string_equal(canal_route_template(m.route), "/x/{id}");
    /* the GET fallback still answers where HEAD has nothing */
    assert_int_equal(match(r, "HEAD", "/o", scratch, sizeof(scratch), &m), 200);
    assert_string_equal(canal_route_method(m.route), "GET");
    /* an OPTIONS route answers itself */
    assert_int_equal(match(r, "OPTIONS", "/o", scratch, sizeof(scratch), &m), 200);
    assert_string_equal(canal_route_method(m.route), "OPTIONS");
    canal_router_destroy(r);
}

/* Several trees, one per option set, answering the same request lines. */
static void test_methods(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    assert_int_equal(canal_router_method_count(r), 0);
    assert_null(canal_router_method_name(r, 0));
    add_ok(r, "GET", "/a");
    add_ok(r, "PROPFIND", "/a");
    add_ok(r, "GET", "/b");
    add_ok(r, "M-SEARCH", "/c");
    add_ok(r, "x!#$%&'*+-.^_`|~9", "/d");
    assert_int_equal(canal_router_method_count(r), 4);
    assert_string_equal(canal_router_method_name(r, 0), "GET");
    assert_string_equal(canal_router_method_name(r, 1), "PROPFIND");
    assert_string_equal(canal_router_method_name(r, 2), "M-SEARCH");
    assert_string_equal(canal_router_method_name(r, 3), "x!#$%&'*+-.^_`|~9");
    assert_null(canal_router_method_name(r, 4));
    char scratch[64];
    canal_match_t m;
    assert_int_equal(match(r, "PROPFIND", "/a", scratch, sizeof(scratch), &m), 200);
    assert_int_equal(match(r, "x!#$%&'*+-.^_`|~9", "/d", scratch, sizeof(scratch), &m), 200);
    /* a method longer or shorter than every known one, or with a NUL in it */
    assert_int_equal(match(r, "GETGETGETGETGETGETGETGETGETGETGETGETGETGET", "/a", scratch,
                           sizeof(scratch), &m),
                     405);
    assert_int_equal(match(r, "G", "/a", scratch, sizeof(scratch), &m), 405);
    assert_int_equal(canal_router_match(r, (canal_str_t){"GET\0", 4}, S("/a"), scratch,
                                        sizeof(scratch), &m),
                     405);
    assert_int_equal(canal_router_match(r, (canal_str_t){"", 0}, S("/a"), scratch, sizeof(scratch),
                                        &m),
                     405);
    assert_int_equal(canal_router_match(r, (canal_str_t){NULL, 0}, S("/a"), scratch,
                                        sizeof(scratch), &m),
                     405);
    canal_router_destroy(r);
}

/* ---- allocation ----------------------------------------------------------------------------- */

/* Every kind of segment and constraint, regex included: PCRE2's JIT matches on the stack, and
 * lib/router/regex.c takes its match data from an arena on the stack too. */
static const char *const alloc_routes[] = {
    "GET /", "GET /users/me", "GET /users/{id:int}", "GET /users/{id:int:min(1)}/posts",
    "GET /users/{name:alpha:length(2,10)}", "GET /users/{name}", "GET /users/{*rest}",
    "PATCH /gists/{id}", "GET /gists/public", "GET /files/{**path}", "POST /files/{*path}",
    "GET /{controller=Home}/{action=Index}/{id?}", "GET /g/{id:guid}", "GET /d/{v:double}",
    "GET /b/{v:bool}", "GET /l/{v:long:range(-5,5)}", "PUT /m/{v:max(10)}",
    "GET /n/{v:minlength(2):maxlength(3)}", "GET /r/{x:regex(^[a-z]+\\d?$)}",
    "GET /c/{a}.{b:regex(^(png|jpe?g)$)}",
};

static const char *const alloc_requests[] = {
    "GET /", "GET /users/me", "GET /users/12", "GET /users/12/posts", "GET /users/ab",
    "GET /users/x1", "GET /users/a/b/c", "PATCH /gists/public", "DELETE /gists/public",
    "OPTIONS /gists/public", "HEAD /users/me", "GET /files/a%2Fb/c", "GET /files/",
    "GET /Home/Index/3", "GET /g/00000000-0000-0000-0000-000000000000", "GET /d/1.5e3",
    "GET /b/TRUE", "GET /l/-5", "PUT /m/11", "GET /n/abc", "GET /n/abcd", "GET /nope/nope/nope/x",
    "GET /r/abc1", "GET /r/ABC", "GET /r/a%FF", "GET /r/abc12", "GET /c/x.png", "GET /c/x.gif",
    "GET /a/%zz", "GET /a/%00", "GET relative", "PUT /users/me/", "GET /users/me/",
    "GET /a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/0/1/2/3/4/5/6/7/8/9",
};

static void run_alloc_requests(canal_router_t *r, long *allocs)
{
    char scratch[256];
    canal_match_t m;
    *allocs = 0;
    for (size_t i = 0; i < sizeof(alloc_requests) / sizeof(alloc_requests[0]); i++) {
        char line[256];
        snprintf(line, sizeof(line), "%s", alloc_requests[i]);
        char *sp = strchr(line, ' ');
        *sp = '\0';
        nallocs = 0;
        counting = 1;
        int st = canal_router_match(r, S(line), S(sp + 1), scratch, sizeof(scratch), &m);
        counting = 0;
        if (nallocs != 0)
            print_error("%s %s (%d) allocated %ld times\n", line, sp + 1, st, nallocs);
        *allocs += nallocs;
    }
}

static void test_match_allocates_nothing(void **state)
{
    if (!counting_usable())
        skip();
    static const canal_router_options_t optsets[] = {
        {0},
        {.case_sensitive = 1, .trailing_slash = CANAL_SLASH_STRICT},
        {.trailing_slash = CANAL_SLASH_REDIRECT, .no_head_from_get = 1, .no_auto_options = 1},
    };
    for (size_t o = 0; o < sizeof(optsets) / sizeof(optsets[0]); o++) {
        canal_router_t *r = canal_router_create(&optsets[o]);
        for (size_t i = 0; i < sizeof(alloc_routes) / sizeof(alloc_routes[0]); i++) {
            char line[256];
            snprintf(line, sizeof(line), "%s", alloc_routes[i]);
            char *sp = strchr(line, ' ');
            *sp = '\0';
            add_ok(r, line, sp + 1);
        }
        /* the counter works */
        counting = 1;
        nallocs = 0;
        void *volatile probe = malloc(1); /* volatile: the pair must not be optimised out */
        free(probe);
        counting = 0;
        assert_int_equal(nallocs, 1);
        long allocs;
        run_alloc_requests(r, &allocs);
        assert_int_equal(allocs, 0);
        canal_router_destroy(r);
    }
}

/* Registration under allocation failure: every allocation in turn fails once. The add must
 * report CANAL_ENOMEM (never crash), leave the router usable, and destroying the router must
 * give back everything (the live count returns to zero). */
static const char *const chaos_routes[] = {
    "GET /users/me", "GET /users/{id:int:min(1)}", "POST /users/{id:int}/x/{y?}",
    "GET /f/{**path}", "PUT /{a=1}/{b=2}", "GET /users/{name}", "GET /users/{*rest}",
    "DELETE /users/me", "GET /r/{x:regex(^[a-z]+\\d?$)}", "GET /s/{x:regex([[:alpha:]]\\s)}",
};

static void chaos(const char *const *routes, size_t nroutes)
{
    /* fail_at -1 is the clean run: nothing fails, and it counts the allocations to fail */
    long total = -1;
    for (long fail_at = -1; total < 0 || fail_at < total; fail_at++) {
        nallocs = 0;
        live = 0;
        counting = 1;
        fail_countdown = fail_at;
        canal_router_t *r = canal_router_create(NULL);
        int nok = 0;
        for (size_t i = 0; r != NULL && i < nroutes; i++) {
            char line[128];
            snprintf(line, sizeof(line), "%s", routes[i]);
            char *sp = strchr(line, ' ');
            *sp = '\0';
            canal_route_spec_t spec = {.method = line, .tmpl = sp + 1};
            canal_error_info_t err;
            int rc = canal_router_add(r, &spec, NULL, &err);
            if (rc == 0) {
                nok++;
            } else if (rc != CANAL_ENOMEM || fail_at < 0) {
                counting = 0;
                fail_msg("fail_at %ld: %s: %s %s", fail_at, routes[i], canal_err_name(rc),
                         err.message);
            }
        }
        if (fail_at < 0) {
            assert_non_null(r);
            assert_int_equal(nok, (int)nroutes);
            total = nallocs;
        }
        /* the router still answers for the routes it took */
        fail_countdown = -1;
        if (r != NULL) {
            char scratch[64];
            canal_match_t m;
            assert_int_equal(canal_router_route_count(r), (size_t)nok);
            (void)canal_router_match(r, S("GET"), S("/users/me"), scratch, sizeof(scratch), &m);
            (void)canal_router_match(r, S("GET"), S("/r/abc"), scratch, sizeof(scratch), &m);
        }
        canal_router_destroy(r);
        counting = 0;
        if (COUNTING_MALLOC == 1 && live != 0)
            fail_msg("fail_at %ld: %ld allocations not freed", fail_at, live);
    }
    print_message("chaos: %zu routes, each of their %ld allocations failed in turn\n", nroutes,
                  total);
}

/* PCRE2 running out of memory (compiling, JIT-compiling, the ECMA-262 translation) is
 * CANAL_ENOMEM, not a "bad regex"; every allocation is failed in turn. */
static void test_regex_espace(void **state)
{
    if (!counting_usable())
        skip();
    canal_router_t *r = canal_router_create(NULL);
    canal_route_spec_t spec = {.tmpl = "/r/{x:regex(^[a-z]+$)}"};
    counting = 1;
    nallocs = 0;
    fail_countdown = -1;
    const canal_route_t *rt;
    assert_int_equal(canal_router_add(r, &spec, &rt, NULL), 0);
    long total = nallocs;
    counting = 0;
    canal_router_destroy(r);
    for (long fail_at = 0; fail_at < total; fail_at++) {
        r = canal_router_create(NULL);
        canal_error_info_t err;
        counting = 1;
        fail_countdown = fail_at;
        int rc = canal_router_add(r, &spec, NULL, &err);
        counting = 0;
        fail_countdown = -1;
        if (rc != 0 && rc != CANAL_ENOMEM)
            fail_msg("fail_at %ld: %s: %s", fail_at, canal_err_name(rc), err.message);
        canal_router_destroy(r);
    }
    assert_true(total > 12); /* so the failures above reached into PCRE2 */
}

/* Without the JIT (lib/router/regex.c falls back to the interpreter when PCRE2 has none) the
 * same answers, and the interpreter's frames, which it takes from malloc, are given back. */
void canal__regex_use_jit(int on); /* lib/router/router_internal.h */
static void test_regex_without_jit(void **state)
{
    (void)state;
    canal__regex_use_jit(0);
    canal_router_t *r = canal_router_create(NULL);
    canal_route_spec_t spec = {.tmpl = "/r/{x:regex(^[a-z]+\\d?$)}"};
    assert_int_equal(canal_router_add(r, &spec, NULL, NULL), 0);
    canal__regex_use_jit(1);
    static const struct {
        const char *path;
        int status;
    } cases[] = {{"/r/abc1", 200}, {"/r/ABC", 200}, {"/r/abc12", 404}, {"/r/a%FF", 404},
                 {"/r/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa9", 200}};
    long before = live;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char scratch[256];
        canal_match_t m;
        counting = 1;
        int st = canal_router_match(r, S("GET"), S(cases[i].path), scratch, sizeof(scratch), &m);
        counting = 0;
        if (st != cases[i].status)
            fail_msg("%s: %d, expected %d", cases[i].path, st, cases[i].status);
    }
    if (COUNTING_MALLOC == 1)
        assert_int_equal(live, before);
    canal_router_destroy(r);
}

static void test_chaos_registration(void **state)
{
    if (!counting_usable())
        skip();
    chaos(chaos_routes, sizeof(chaos_routes) / sizeof(chaos_routes[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_files),
        cmocka_unit_test(test_allow_header),
        cmocka_unit_test(test_allow_header_empty_mask),
        cmocka_unit_test(test_match_get),
        cmocka_unit_test(test_match_defaults_and_absent),
        cmocka_unit_test(test_scratch_size),
        cmocka_unit_test(test_route_data),
        cmocka_unit_test(test_head_and_options_precedence),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_match_allocates_nothing),
        cmocka_unit_test(test_chaos_registration),
        cmocka_unit_test(test_regex_espace),
        cmocka_unit_test(test_regex_without_jit),
    };
    return cmocka_run_group_tests_name("router_match", tests, NULL, NULL);
}
