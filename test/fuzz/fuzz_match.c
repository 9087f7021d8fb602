/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: matching. Two shapes of input:
 *   - no newline: byte 0 picks a router (option set) and a method, the rest is the request
 *     target, matched against a fixed table of routes;
 *   - with newlines: byte 0 picks the options, every line but the last is "METHOD TEMPLATE"
 *     (or just a template, for GET) registered into a fresh router, and the last line is the
 *     target, matched with several methods.
 * The target and the scratch buffer live on the heap with exactly one byte more than their
 * length, a NUL: the router must not touch it (checked), and any access further out is in
 * AddressSanitizer's redzone. The NUL is there because ASan's regexec interceptor measures
 * its string with strlen even under REG_STARTEND (glibc itself reads only the given range),
 * and values are not NUL-terminated. Every outcome is checked for consistency: a status from the documented
 * set; captured values inside the scratch buffer, the target or the router; 405/204 with a
 * non-empty allow mask; a 308 location that is the target less its last '/'; the matched
 * route's link generation working on the captured values (for the fixed table).
 * And every outcome is compared with a twin router that has the same routes but no table of
 * all-literal paths (its npaths is set to 0, through the router's private header), so the
 * walk answers everything there: the table is a shortcut and must never change an answer.
 *
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "canal/router.h"
#include "router/router_internal.h" /* the twin routers: npaths */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

static const char *const fixed_routes[] = {
    "GET /",
    "GET /users/me",
    "GET /users/{id:int}",
    "GET /users/{id:int:min(1)}/posts/{post:long}",
    "GET /users/{name:alpha:length(2,10)}",
    "GET /users/{name}",
    "GET /users/{*rest}",
    "PATCH /gists/{id}",
    "GET /gists/public",
    "DELETE /gists/{id}/star",
    "GET /files/{**path}",
    "POST /files/{*path:maxlength(20)}",
    "GET /m/{controller=Home}/{action=Index}/{id?}",
    "GET /g/{id:guid}",
    "GET /d/{v:double}/{w:bool}",
    "GET /r/{v:range(-5,5)}/{x:max(3)}/{y:min(-2)}",
    "GET /re/{v:regex(^[a-z]+[0-9]{{1,3}}$)}",
    "GET /lit/{{braces}}",
    "GET /o/{a?}/{b?}",
    "PUT /a/b/c",
    "PUT /a/{x}/d",
    "PUT /a/{x}/{y}/e",
    "OPTIONS /opt",
    "HEAD /h/{x}",
    "GET /caf\xc3\xa9/{x:minlength(2)}",
};

static const canal_router_options_t option_sets[8] = {
    {0},
    {.case_sensitive = 1},
    {.trailing_slash = CANAL_SLASH_STRICT},
    {.trailing_slash = CANAL_SLASH_REDIRECT},
    {.no_head_from_get = 1, .no_auto_options = 1},
    {.case_sensitive = 1, .trailing_slash = CANAL_SLASH_STRICT, .no_auto_options = 1},
    {.case_sensitive = 1, .trailing_slash = CANAL_SLASH_REDIRECT, .no_head_from_get = 1},
    {.trailing_slash = CANAL_SLASH_STRICT, .no_head_from_get = 1},
};

static const char *const methods[8] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                       "OPTIONS", "get"};

static canal_router_t *fixed[8], *fixed_twin[8];

/* The router's twin: its path table forgotten, so every match takes the walk. */
static void without_table(canal_router_t *r)
{
    r->npaths = 0;
}

/* glibc's regcomp can take gigabytes on a pattern of stacked quantifiers ("a+++...+"):
 * templates are the developer's, not the client's, so such regexes are not fuzzed here. */
static int regex_too_costly(const char *t, size_t n)
{
    int has_regex = 0, quantifiers = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 5 <= n && strncasecmp(t + i, "regex", 5) == 0)
            has_regex = 1;
        quantifiers += t[i] == '+' || t[i] == '*' || t[i] == '?' || t[i] == '{';
    }
    return has_regex && quantifiers > 8;
}

static int add_line(canal_router_t *r, const char *line, size_t len)
{
    if (regex_too_costly(line, len))
        return CANAL_EINVAL;
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return CANAL_ENOMEM;
    memcpy(copy, line, len);
    copy[len] = '\0';
    char *sp = strchr(copy, ' ');
    canal_route_spec_t spec = {.tmpl = copy};
    if (sp != NULL && sp != copy) {
        *sp = '\0';
        spec.method = copy;
        spec.tmpl = sp + 1;
    }
    canal_error_info_t err;
    int rc = canal_router_add(r, &spec, NULL, &err);
    if (rc != 0)
        check(err.code == rc && err.position <= strlen(spec.tmpl), "error info");
    free(copy);
    return rc;
}

static void init(void)
{
    for (int i = 0; i < 8; i++) {
        fixed[i] = canal_router_create(&option_sets[i]);
        fixed_twin[i] = canal_router_create(&option_sets[i]);
        check(fixed[i] != NULL && fixed_twin[i] != NULL, "router");
        for (size_t k = 0; k < sizeof(fixed_routes) / sizeof(fixed_routes[0]); k++)
            check(add_line(fixed[i], fixed_routes[k], strlen(fixed_routes[k])) == 0 &&
                      add_line(fixed_twin[i], fixed_routes[k], strlen(fixed_routes[k])) == 0,
                  "fixed route accepted");
        without_table(fixed_twin[i]);
    }
}

static int inside(const char *p, size_t n, const char *base, size_t size)
{
    return n == 0 || (p >= base && p + n <= base + size);
}

/* strict_link: the router's defaults all pass their own constraints (the fixed table), so
 * linking the captured values must work; templates from the input may carry a default its
 * constraints refuse ({x:int=abc}), which matches but cannot be linked. */
static int same_str(canal_str_t a, canal_str_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.base, b.base, a.len) == 0);
}

/* The twin (no path table) must give the same outcome as r gave (st, m). */
static void same_as_twin(const canal_router_t *twin, const char *method, const char *target,
                         size_t len, int st, const canal_match_t *m)
{
    char *scratch = malloc(len + 1);
    if (scratch == NULL)
        return;
    scratch[len] = '\0'; /* for ASan's regexec, as in one_match() */
    canal_match_t t;
    memset(&t, 0x5A, sizeof(t));
    int st2 = canal_router_match(twin, (canal_str_t){method, strlen(method)},
                                 (canal_str_t){target, len}, scratch, len, &t);
    check(st == st2, "the same status without the path table");
    if (st == 200) {
        check(strcmp(canal_route_template(m->route), canal_route_template(t.route)) == 0 &&
                  strcmp(canal_route_method(m->route), canal_route_method(t.route)) == 0,
              "the same route without the path table");
        check(m->nparams == t.nparams, "the same values without the path table");
        for (size_t i = 0; i < m->nparams; i++)
            check(same_str(m->params[i].name, t.params[i].name) &&
                      same_str(m->params[i].value, t.params[i].value),
                  "the same values without the path table");
    } else if (st == 405 || st == 204) {
        check(m->allow == t.allow, "the same allow mask without the path table");
    } else if (st == 308) {
        check(m->location.base == t.location.base && m->location.len == t.location.len,
              "the same location without the path table");
    }
    free(scratch);
}

static void one_match(const canal_router_t *r, const canal_router_t *twin, const char *method,
                      const char *target, size_t len, int strict_link)
{
    char *scratch = malloc(len + 1);
    if (scratch == NULL)
        return;
    scratch[len] = '\0';
    canal_match_t m;
    memset(&m, 0xA5, sizeof(m));
    int st = canal_router_match(r, (canal_str_t){method, strlen(method)},
                                (canal_str_t){target, len}, scratch, len, &m);
    check(st == 200 || st == 204 || st == 308 || st == 400 || st == 404 || st == 405,
          "status");
    if (st == 200) {
        check(m.route != NULL && m.data == canal_route_data(m.route), "route and data");
        check(m.nparams <= canal_route_param_count(m.route), "param count");
        canal_kv_t kv[CANAL_ROUTER_MAX_PARAMS];
        char *vals[CANAL_ROUTER_MAX_PARAMS];
        for (size_t i = 0; i < m.nparams; i++) {
            canal_str_t v = m.params[i].value;
            /* from the scratch, straight from the target, or a default in the router */
            int ok = inside(v.base, v.len, scratch, len) || inside(v.base, v.len, target, len);
            if (!ok)
                ok = strlen(v.base) >= v.len; /* a default: NUL-terminated router memory */
            check(ok, "value memory");
            check(memchr(v.base, 0, v.len) == NULL, "no NUL in a value");
            char *name = malloc(m.params[i].name.len + 1);
            check(name != NULL, "malloc");
            memcpy(name, m.params[i].name.base, m.params[i].name.len);
            name[m.params[i].name.len] = '\0';
            const canal_str_t *got = canal_match_get(&m, name);
            check(got != NULL && got->base == v.base && got->len == v.len, "canal_match_get");
            free(name);
            vals[i] = malloc(v.len + 1);
            check(vals[i] != NULL, "malloc");
            memcpy(vals[i], v.base, v.len);
            vals[i][v.len] = '\0';
            kv[i] = (canal_kv_t){canal_route_param_name(m.route, 0), vals[i]};
            /* the parameter's own name */
            for (size_t p = 0; p < canal_route_param_count(m.route); p++)
                if (strlen(canal_route_param_name(m.route, p)) == m.params[i].name.len &&
                    memcmp(canal_route_param_name(m.route, p), m.params[i].name.base,
                           m.params[i].name.len) == 0)
                    kv[i].key = canal_route_param_name(m.route, p);
        }
        /* captured values satisfy the constraints, so the route can link them back */
        char buf[512];
        int len2 = canal_route_link(m.route, kv, m.nparams, buf, sizeof(buf));
        check(len2 > 0 || (!strict_link && len2 == CANAL_EINVAL), "link from matched values");
        for (size_t i = 0; i < m.nparams; i++)
            free(vals[i]);
    } else if (st == 405 || st == 204) {
        check(m.allow != 0, "allow mask");
        check(m.allow >> canal_router_method_count(r) == 0 ||
                  canal_router_method_count(r) == 64,
              "allow mask within the known methods");
        char hdr[16];
        size_t need = canal_router_allow_header(r, m.allow, hdr, sizeof(hdr));
        check(need > 0 && strlen(hdr) == (need < sizeof(hdr) ? need : sizeof(hdr) - 1),
              "allow header");
    } else if (st == 308) {
        check(canal_router_options(r)->trailing_slash == CANAL_SLASH_REDIRECT, "308 policy");
        check(m.location.base == target && m.location.len >= 1 && m.location.len < len &&
                  target[m.location.len] == '/',
              "308 location");
    }
    check(scratch[len] == '\0', "nothing written past the scratch size");
    if (twin != NULL)
        same_as_twin(twin, method, target, len, st, &m);
    free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fixed[0] == NULL)
        init();
    if (size < 1 || size > 8192)
        return 0;
    unsigned sel = data[0];
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    const char *last_nl = NULL;
    for (size_t i = 0; i < n; i++)
        if (in[i] == '\n')
            last_nl = in + i;

    if (last_nl == NULL) {
        /* the target on the heap, exactly n bytes, so reads past it are caught */
        char *target = malloc(n + 1);
        if (target == NULL)
            return 0;
        memcpy(target, in, n);
        target[n] = '\0';
        one_match(fixed[sel & 7], fixed_twin[sel & 7], methods[(sel >> 3) & 7], target, n, 1);
        free(target);
        return 0;
    }

    canal_router_t *r = canal_router_create(&option_sets[sel & 7]);
    canal_router_t *twin = canal_router_create(&option_sets[sel & 7]);
    if (r == NULL || twin == NULL) {
        canal_router_destroy(r);
        canal_router_destroy(twin);
        return 0;
    }
    const char *line = in;
    while (line < last_nl) {
        const char *eol = memchr(line, '\n', (size_t)(last_nl - line) + 1);
        if (memchr(line, '\0', (size_t)(eol - line)) == NULL) {
            int rc = add_line(r, line, (size_t)(eol - line));
            check(add_line(twin, line, (size_t)(eol - line)) == rc, "the twin takes the same routes");
        }
        line = eol + 1;
    }
    without_table(twin);
    size_t tlen = n - (size_t)(last_nl + 1 - in);
    char *target = malloc(tlen + 1);
    if (target != NULL) {
        memcpy(target, last_nl + 1, tlen);
        target[tlen] = '\0';
        for (int k = 0; k < 8; k++)
            one_match(r, twin, methods[k], target, tlen, 0);
        free(target);
    }
    canal_router_destroy(r);
    canal_router_destroy(twin);
    return 0;
}
