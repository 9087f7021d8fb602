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
 * AddressSanitizer's redzone. The NUL is there so that a stray strlen stops (values are not
 * NUL-terminated and PCRE2 reads only the given range). Every outcome is checked for consistency: a status from the documented
 * set; captured values inside the scratch buffer, the target or the router; 405/204 with a
 * non-empty allow mask; a 308 location that is the target less its last '/'; the matched
 * route's link generation working on the captured values (for the fixed table).
 * And every outcome is compared with a naive matcher written apart from the router (below,
 * "the oracle"): it sees the routes only through the public introspection calls, tries every
 * route in registration order against the path split its own simple way, compares the
 * template segment by segment (literals, constraints, complex segments split from the right)
 * and picks the winner by the documented precedence (docs/routing.md, Priorities): at the
 * first segment where two candidates differ, a literal, then constrained parameters and
 * complex segments in the order their places were first registered, then a plain parameter,
 * then the catch-alls; at one place, the fewest segments left out, then the first registered.
 * It shares no code with lib/router/ but the public value parsers (canal_parse_*,
 * canal_str_chars, canal_utf8_valid), which have tests of their own. Its regexes are PCRE2 as
 * docs/routing.md describes them, compiled apart with the documented options and matched by
 * PCRE2's interpreter (the router uses the JIT), whose own UTF-8 check refuses what the
 * router's canal_utf8_valid() refuses.
 *
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include "canal/router.h"
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

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
    "GET /f/{name}.{ext}",
    "GET /f/{id:int}",
    "GET /f/index.html",
    "GET /l/{lang:alpha}-{region}",
    "GET /l/{a}-{b}/{*rest}",
    "GET /o/{p1}.{p2?}",
    "GET /o/x{p1:int}y",
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

static canal_router_t *fixed[8];
static struct oracle *fixed_oracle[8];
static struct oracle *oracle_create(const canal_router_t *r);

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
        check(fixed[i] != NULL, "router");
        for (size_t k = 0; k < sizeof(fixed_routes) / sizeof(fixed_routes[0]); k++)
            check(add_line(fixed[i], fixed_routes[k], strlen(fixed_routes[k])) == 0,
                  "fixed route accepted");
        fixed_oracle[i] = oracle_create(fixed[i]);
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

/* ---- the oracle: a naive matcher ------------------------------------------------------------ */

struct ncons {
    int kind;
    int64_t a, b;
    pcre2_code *re; /* CANAL_CONSTRAINT_REGEX */
};
struct nparam {
    const char *name, *def;
    int optional, catch_all;
    struct ncons *cons;
    size_t ncons;
};
struct npart {
    int param;  /* -1: a literal */
    char *text; /* a literal, braces unescaped */
    size_t len;
};
struct nseg {
    int kind;          /* canal_segment_kind_t */
    const char *text;  /* a literal's text */
    size_t param;
    struct npart *parts; /* complex */
    size_t nparts;
    char *key;         /* what the place in the tree is known by (see oracle_key()) */
    size_t first;      /* the first route registered with this place, and the ones before */
};
struct nroute {
    const canal_route_t *rt;
    int mi;
    size_t nsegs, req;
    struct nseg segs[CANAL_ROUTER_MAX_SEGMENTS];
    struct nparam params[CANAL_ROUTER_MAX_PARAMS];
    size_t nparams;
};
struct oracle {
    canal_router_options_t opts;
    size_t nroutes;
    struct nroute *routes;
};

static int o_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int o_same(const char *a, size_t an, const char *b, size_t bn, int fold)
{
    if (an != bn)
        return 0;
    for (size_t i = 0; i < an; i++)
        if (fold ? o_lower((unsigned char)a[i]) != o_lower((unsigned char)b[i]) : a[i] != b[i])
            return 0;
    return 1;
}

static int o_guid(const char *s, size_t n)
{
    if (n == 38 && ((s[0] == '{' && s[37] == '}') || (s[0] == '(' && s[37] == ')')))
        s++, n = 36;
    if (n != 32 && n != 36)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int dash = n == 36 && (i == 8 || i == 13 || i == 18 || i == 23);
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return 0;
    }
    return 1;
}

static int o_accepts(const struct nparam *p, const char *v, size_t n)
{
    canal_str_t s = {n ? v : "", n};
    for (size_t i = 0; i < p->ncons; i++) {
        const struct ncons *c = &p->cons[i];
        int32_t i32;
        int64_t i64;
        double d;
        int b;
        size_t chars = canal_str_chars(s);
        int ok = 1;
        switch (c->kind) {
        case CANAL_CONSTRAINT_INT: ok = canal_parse_int32(s, &i32) == 0; break;
        case CANAL_CONSTRAINT_LONG: ok = canal_parse_int64(s, &i64) == 0; break;
        case CANAL_CONSTRAINT_BOOL: ok = canal_parse_bool(s, &b) == 0; break;
        case CANAL_CONSTRAINT_DOUBLE: ok = canal_parse_double(s, &d) == 0; break;
        case CANAL_CONSTRAINT_GUID: ok = o_guid(s.base, n); break;
        case CANAL_CONSTRAINT_ALPHA:
            ok = n > 0;
            for (size_t k = 0; k < n; k++)
                ok = ok && isalpha((unsigned char)v[k]) && (unsigned char)v[k] < 128;
            break;
        case CANAL_CONSTRAINT_MIN: ok = canal_parse_int64(s, &i64) == 0 && i64 >= c->a; break;
        case CANAL_CONSTRAINT_MAX: ok = canal_parse_int64(s, &i64) == 0 && i64 <= c->a; break;
        case CANAL_CONSTRAINT_RANGE:
            ok = canal_parse_int64(s, &i64) == 0 && i64 >= c->a && i64 <= c->b;
            break;
        case CANAL_CONSTRAINT_LENGTH: ok = (int64_t)chars >= c->a && (int64_t)chars <= c->b; break;
        case CANAL_CONSTRAINT_MINLENGTH: ok = (int64_t)chars >= c->a; break;
        case CANAL_CONSTRAINT_MAXLENGTH: ok = (int64_t)chars <= c->a; break;
        case CANAL_CONSTRAINT_REGEX: {
            /* the documented match limit, 1,000,000; an invalid UTF-8 value is an error here */
            pcre2_match_data *md = pcre2_match_data_create(1, NULL);
            pcre2_match_context *mc = pcre2_match_context_create(NULL);
            check(md != NULL && mc != NULL, "malloc");
            pcre2_set_match_limit(mc, 1000000);
            ok = pcre2_match(c->re, (PCRE2_SPTR)(s.base ? s.base : ""), n, 0, 0, md, mc) >= 0;
            pcre2_match_context_free(mc);
            pcre2_match_data_free(md);
            break;
        }
        default: ok = canal_utf8_valid(s); break; /* utf8, the one after regex */
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* A complex segment as ASP.NET Core reads one: literals from the right, each at its last place
 * that ends before the (at least one character long) value of the parameter after it, but a
 * leading literal only at the start (canal's one difference); the first parameter takes what
 * is left. Parts 0..last only. vals[k]: part k's value. */
static int o_complex_parts(const struct nseg *g, size_t last, const char *v, size_t n, int fold,
                           canal_str_t *vals)
{
    size_t pos = n;
    for (size_t k = last + 1; k-- > 0;) {
        const struct npart *pt = &g->parts[k];
        if (pt->param >= 0) {
            if (k == 0) {
                if (pos == 0)
                    return 0;
                vals[0] = (canal_str_t){v, pos};
            }
            continue;
        }
        size_t keep = k < last; /* a parameter follows: it needs a character */
        if (pos < pt->len + keep)
            return 0;
        size_t q = pos - keep - pt->len + 1;
        int found = 0;
        if (k == 0) /* a leading literal is looked for at the start only (canal, not ASP.NET) */
            found = o_same(v, pt->len, pt->text, pt->len, fold), q = 0;
        else
            while (!found && q-- > 0)
                found = o_same(v + q, pt->len, pt->text, pt->len, fold);
        if (!found || (k == last && q + pt->len != n))
            return 0;
        if (keep)
            vals[k + 1] = (canal_str_t){v + q + pt->len, pos - q - pt->len};
        pos = q;
    }
    return g->parts[0].param >= 0 || pos == 0;
}

static int o_complex(const struct nroute *nr, const struct nseg *g, const char *v, size_t n,
                     int fold, canal_str_t *vals)
{
    size_t last = g->nparts - 1;
    for (size_t k = 0; k <= last; k++)
        vals[k] = (canal_str_t){NULL, 0};
    if (!o_complex_parts(g, last, v, n, fold, vals)) {
        const struct npart *pt = &g->parts[last];
        if (pt->param < 0 || !nr->params[pt->param].optional || last < 2 || (n > 0 && v[n - 1] == '.'))
            return 0;
        for (size_t k = 0; k <= last; k++)
            vals[k] = (canal_str_t){NULL, 0};
        if (!o_complex_parts(g, last - 2, v, n, fold, vals))
            return 0;
    }
    for (size_t k = 0; k <= last; k++)
        if (g->parts[k].param >= 0 && vals[k].base != NULL &&
            !o_accepts(&nr->params[g->parts[k].param], vals[k].base, vals[k].len))
            return 0;
    return 1;
}

/* One candidate: a route that matches the path. */
struct ocand {
    const struct nroute *nr;
    size_t depth;    /* template segments walked */
    int catchall;    /* the walk ended in the catch-all at depth */
    size_t omitted;
    canal_str_t val[CANAL_ROUTER_MAX_PARAMS];
    int has[CANAL_ROUTER_MAX_PARAMS];
};

/* The path, split and decoded the oracle's way. */
struct opath {
    char *seg[4096];
    size_t len[4096];
    size_t n;
    char *joined; /* the decoded path after its '/' */
};

static int o_route(const struct oracle *o, const struct nroute *nr, const struct opath *p,
                   size_t n, struct ocand *c)
{
    int fold = !o->opts.case_sensitive;
    memset(c, 0, sizeof(*c));
    c->nr = nr;
    for (size_t k = 0; k < nr->nsegs; k++) {
        const struct nseg *g = &nr->segs[k];
        if (k == n) { /* the path ends: the rest of the template must be omissible */
            if (k < nr->req)
                return 0;
            for (size_t j = k; j < nr->nsegs; j++) {
                const struct nparam *pp = &nr->params[nr->segs[j].param];
                if (nr->segs[j].kind == CANAL_SEGMENT_CATCHALL && pp->def == NULL && !o_accepts(pp, "", 0))
                    return 0;
            }
            c->depth = k;
            c->omitted = nr->nsegs - k;
            return 1;
        }
        const char *v = p->seg[k];
        size_t vn = p->len[k];
        if (g->kind == CANAL_SEGMENT_LITERAL) {
            if (!o_same(v, vn, g->text, strlen(g->text), fold))
                return 0;
        } else if (g->kind == CANAL_SEGMENT_PARAM) {
            if (vn == 0 || !o_accepts(&nr->params[g->param], v, vn))
                return 0;
            c->val[g->param] = (canal_str_t){v, vn};
            c->has[g->param] = 1;
        } else if (g->kind == CANAL_SEGMENT_COMPLEX) {
            canal_str_t vals[2 * CANAL_ROUTER_MAX_PARAMS + 1];
            if (!o_complex(nr, g, v, vn, fold, vals))
                return 0;
            for (size_t x = 0; x < g->nparts; x++)
                if (g->parts[x].param >= 0 && vals[x].base != NULL) {
                    c->val[g->parts[x].param] = vals[x];
                    c->has[g->parts[x].param] = 1;
                }
        } else { /* the catch-all takes the rest, '/'s and all */
            size_t from = (size_t)(p->seg[k] - p->joined), to = from;
            for (size_t j = k; j < n; j++)
                to = (size_t)(p->seg[j] - p->joined) + p->len[j];
            if (!o_accepts(&nr->params[g->param], p->joined + from, to - from))
                return 0;
            c->val[g->param] = (canal_str_t){p->joined + from, to - from};
            c->has[g->param] = 1;
            c->depth = k;
            c->catchall = 1;
            return 1;
        }
    }
    if (n != nr->nsegs)
        return 0;
    c->depth = n;
    return 1;
}

/* The rank of a candidate's step j: literal 0, constrained or complex 1, plain 2, constrained
 * catch-all 3, plain catch-all 4; ties among 1 and 3 go to the place registered first. */
static void o_step(const struct ocand *c, size_t j, int *cls, size_t *order)
{
    const struct nseg *g = &c->nr->segs[j];
    const struct nparam *pp = &c->nr->params[g->param];
    *order = 0;
    if (g->kind == CANAL_SEGMENT_LITERAL)
        *cls = 0;
    else if (g->kind == CANAL_SEGMENT_COMPLEX || (g->kind == CANAL_SEGMENT_PARAM && pp->ncons > 0))
        *cls = 1, *order = g->first;
    else if (g->kind == CANAL_SEGMENT_PARAM)
        *cls = 2;
    else if (pp->ncons > 0)
        *cls = 3, *order = g->first;
    else
        *cls = 4;
}

/* 1 if a comes before b in the documented precedence. */
static int o_before(const struct ocand *a, const struct ocand *b)
{
    size_t la = a->depth + (size_t)a->catchall, lb = b->depth + (size_t)b->catchall;
    for (size_t j = 0; j < la && j < lb; j++) {
        int ca, cb;
        size_t oa, ob;
        o_step(a, j, &ca, &oa);
        o_step(b, j, &cb, &ob);
        if (ca != cb)
            return ca < cb;
        if (oa != ob)
            return oa < ob;
        if (ca == 0 && strcmp(a->nr->segs[j].key, b->nr->segs[j].key) != 0)
            return 0; /* cannot be: both literals equal the same path segment */
    }
    if (a->omitted != b->omitted)
        return a->omitted < b->omitted;
    return canal_route_index(a->nr->rt) < canal_route_index(b->nr->rt);
}

static int o_search(const struct oracle *o, int mi, const struct opath *p, size_t n, struct ocand *best)
{
    int found = 0;
    struct ocand c;
    if (mi < 0)
        return 0;
    for (size_t i = 0; i < o->nroutes; i++)
        if (o->routes[i].mi == mi && o_route(o, &o->routes[i], p, n, &c) && (!found || o_before(&c, best)))
            *best = c, found = 1;
    return found;
}

static int o_method(const canal_router_t *r, const char *m)
{
    for (size_t i = 0; i < canal_router_method_count(r); i++)
        if (strcmp(canal_router_method_name(r, i), m) == 0)
            return (int)i;
    return -1;
}

/* The key of a template segment: kind, then literals folded per the case policy and
 * constraints by value; two segments of the same place in the tree have the same key. */
static char *oracle_key(const canal_route_t *rt, const struct nroute *nr, const struct nseg *g,
                        int fold)
{
    char *k = malloc(8192);
    size_t o = 0;
    check(k != NULL, "malloc");
    k[o++] = (char)('0' + g->kind);
    const struct npart one = {(int)g->param, NULL, 0};
    const struct npart *parts = g->kind == CANAL_SEGMENT_COMPLEX ? g->parts : &one;
    size_t nparts = g->kind == CANAL_SEGMENT_COMPLEX ? g->nparts : 1;
    if (g->kind == CANAL_SEGMENT_LITERAL) {
        for (const char *t = g->text; *t && o < 8000; t++)
            k[o++] = fold ? (char)o_lower((unsigned char)*t) : *t;
        k[o] = '\0';
        return k;
    }
    for (size_t x = 0; x < nparts && o < 7000; x++) {
        if (parts[x].param < 0) {
            o += (size_t)snprintf(k + o, 8192 - o, "|L%zu:", parts[x].len);
            for (size_t i = 0; i < parts[x].len && o < 8000; i++)
                k[o++] = fold ? (char)o_lower((unsigned char)parts[x].text[i]) : parts[x].text[i];
            continue;
        }
        const struct nparam *pp = &nr->params[parts[x].param];
        o += (size_t)snprintf(k + o, 8192 - o, "|P%d", g->kind == CANAL_SEGMENT_COMPLEX && pp->optional);
        for (size_t c = 0; c < pp->ncons && o < 7000; c++) {
            canal_constraint_info_t ci;
            canal_route_param_constraint(rt, (size_t)parts[x].param, c, &ci);
            o += (size_t)snprintf(k + o, 8192 - o, ":%d,%lld,%lld,%.900s", ci.kind, (long long)ci.a,
                                  (long long)ci.b, ci.regex ? ci.regex : "");
        }
    }
    k[o < 8191 ? o : 8191] = '\0';
    return k;
}

/* A complex segment's parts, from its text as written ("{name}.{ext}"). */
static void oracle_parts(struct nseg *g)
{
    const char *t = g->text;
    size_t n = strlen(t), i = 0, param = g->param;
    g->parts = calloc(n + 1, sizeof(*g->parts));
    check(g->parts != NULL, "malloc");
    while (i < n) {
        struct npart *pt = &g->parts[g->nparts++];
        if (t[i] == '{' && t[i + 1] != '{') { /* a parameter, to its single '}' */
            i++;
            while (i < n && !(t[i] == '}' && t[i + 1] != '}'))
                i += (t[i] == '}' || t[i] == '{') ? 2 : 1;
            i++;
            pt->param = (int)param++;
            continue;
        }
        pt->param = -1;
        pt->text = malloc(n + 1);
        check(pt->text != NULL, "malloc");
        while (i < n && !(t[i] == '{' && t[i + 1] != '{')) {
            pt->text[pt->len++] = t[i];
            i += (t[i] == '{' || t[i] == '}') ? 2 : 1;
        }
    }
}

static struct oracle *oracle_create(const canal_router_t *r)
{
    struct oracle *o = calloc(1, sizeof(*o));
    check(o != NULL, "malloc");
    o->opts = *canal_router_options(r);
    o->nroutes = canal_router_route_count(r);
    o->routes = calloc(o->nroutes + 1, sizeof(*o->routes));
    check(o->routes != NULL, "malloc");
    int fold = !o->opts.case_sensitive;
    for (size_t i = 0; i < o->nroutes; i++) {
        struct nroute *nr = &o->routes[i];
        nr->rt = canal_router_route_at(r, i);
        nr->mi = o_method(r, canal_route_method(nr->rt));
        nr->nsegs = canal_route_segment_count(nr->rt);
        nr->req = canal_route_required_segments(nr->rt);
        nr->nparams = canal_route_param_count(nr->rt);
        for (size_t k = 0; k < nr->nparams; k++) {
            struct nparam *pp = &nr->params[k];
            canal_route_param_info_t pi;
            canal_route_param_info(nr->rt, k, &pi);
            *pp = (struct nparam){pi.name, pi.def, pi.optional, pi.catch_all, NULL, pi.nconstraints};
            pp->cons = calloc(pi.nconstraints + 1, sizeof(*pp->cons));
            check(pp->cons != NULL, "malloc");
            for (size_t c = 0; c < pi.nconstraints; c++) {
                canal_constraint_info_t ci;
                canal_route_param_constraint(nr->rt, k, c, &ci);
                pp->cons[c].kind = ci.kind, pp->cons[c].a = ci.a, pp->cons[c].b = ci.b;
                if (ci.kind == CANAL_CONSTRAINT_REGEX) {
                    int e;
                    PCRE2_SIZE off;
                    pp->cons[c].re = pcre2_compile((PCRE2_SPTR)ci.regex, PCRE2_ZERO_TERMINATED,
                                                   PCRE2_UTF | PCRE2_DOLLAR_ENDONLY |
                                                       PCRE2_NEVER_UCP | (fold ? PCRE2_CASELESS : 0),
                                                   &e, &off, NULL);
                    check(pp->cons[c].re != NULL, "a regex the router took compiles");
                    check(ci.ecma != NULL, "a regex the router took has an ECMA-262 form");
                }
            }
        }
        for (size_t k = 0; k < nr->nsegs; k++) {
            struct nseg *g = &nr->segs[k];
            canal_segment_info_t si;
            canal_route_segment(nr->rt, k, &si);
            g->kind = si.kind, g->text = si.text, g->param = si.param;
            if (g->kind == CANAL_SEGMENT_COMPLEX)
                oracle_parts(g);
            g->key = oracle_key(nr->rt, nr, g, fold);
        }
    }
    /* the first route registered at each place: the same keys all the way down */
    for (size_t i = 0; i < o->nroutes; i++)
        for (size_t k = 0; k < o->routes[i].nsegs; k++) {
            size_t first = i;
            for (size_t j = 0; j < i && first == i; j++) {
                size_t x = 0;
                while (x <= k && x < o->routes[j].nsegs && strcmp(o->routes[j].segs[x].key, o->routes[i].segs[x].key) == 0)
                    x++;
                if (x == k + 1)
                    first = j;
            }
            o->routes[i].segs[k].first = first;
        }
    return o;
}

static void oracle_destroy(struct oracle *o)
{
    if (o == NULL)
        return;
    for (size_t i = 0; i < o->nroutes; i++) {
        struct nroute *nr = &o->routes[i];
        for (size_t k = 0; k < nr->nparams; k++) {
            for (size_t c = 0; c < nr->params[k].ncons; c++)
                if (nr->params[k].cons[c].kind == CANAL_CONSTRAINT_REGEX)
                    pcre2_code_free(nr->params[k].cons[c].re);
            free(nr->params[k].cons);
        }
        for (size_t k = 0; k < nr->nsegs; k++) {
            for (size_t x = 0; x < nr->segs[k].nparts; x++)
                free(nr->segs[k].parts[x].text);
            free(nr->segs[k].parts);
            free(nr->segs[k].key);
        }
    }
    free(o->routes);
    free(o);
}

/* The oracle's outcome for (method, target): the status, and in *best, loc or *allow what
 * goes with it. p is filled with the decoded path (the caller frees p->joined). */
static int oracle_match(const struct oracle *o, const canal_router_t *r, const char *method,
                        const char *t, size_t len, struct opath *p, struct ocand *best,
                        size_t *loc, uint64_t *allow)
{
    size_t cut = 0;
    p->joined = NULL;
    p->n = 0;
    if (len == 0 || t[0] != '/')
        return 400;
    while (cut < len && t[cut] != '?')
        cut++;
    if (memchr(t, '\0', cut) != NULL)
        return 400;
    p->joined = malloc(cut + 1);
    check(p->joined != NULL, "malloc");
    size_t w = 0;
    if (cut > 1) {
        p->seg[0] = p->joined;
        p->n = 1;
    }
    for (size_t i = 1; i < cut; i++) {
        char ch = t[i];
        if (ch == '%') { /* two hex digits, not both 0 */
            if (i + 2 >= cut || !isxdigit((unsigned char)t[i + 1]) || !isxdigit((unsigned char)t[i + 2]))
                return 400;
            char hex[3] = {t[i + 1], t[i + 2], '\0'};
            if ((ch = (char)strtol(hex, NULL, 16)) == '\0')
                return 400;
            i += 2;
        } else if (ch == '/') {
            p->len[p->n - 1] = (size_t)(p->joined + w - p->seg[p->n - 1]);
            p->joined[w++] = '/';
            check(p->n < 4096, "segments");
            p->seg[p->n++] = p->joined + w;
            continue;
        }
        p->joined[w++] = ch;
    }
    p->joined[w] = '\0';
    if (p->n > 0)
        p->len[p->n - 1] = (size_t)(p->joined + w - p->seg[p->n - 1]);
    size_t n = p->n;
    int trailing = n > 0 && t[cut - 1] == '/';
    if (trailing && o->opts.trailing_slash == CANAL_SLASH_IGNORE)
        n--;
    int mi = o_method(r, method), fb = -1;
    if (!o->opts.no_head_from_get && strcmp(method, "HEAD") == 0)
        fb = o_method(r, "GET");
    if (o_search(o, mi, p, n, best) || o_search(o, fb, p, n, best))
        return 200;
    if (trailing && o->opts.trailing_slash == CANAL_SLASH_REDIRECT &&
        (o_search(o, mi, p, n - 1, best) || o_search(o, fb, p, n - 1, best))) {
        *loc = cut - 1;
        return 308;
    }
    *allow = 0;
    for (size_t i = 0; i < o->nroutes; i++) {
        struct ocand c;
        if (o_route(o, &o->routes[i], p, n, &c))
            *allow |= (uint64_t)1 << o->routes[i].mi;
    }
    if (*allow == 0)
        return 404;
    if (!o->opts.no_auto_options && strcmp(method, "OPTIONS") == 0)
        return 204;
    return 405;
}

/* The router's outcome (st, m) must be the oracle's. */
static void same_as_oracle(const struct oracle *o, const canal_router_t *r, const char *method,
                           const char *target, size_t len, int st, const canal_match_t *m)
{
    static struct opath p; /* large: not on the stack */
    struct ocand best;
    size_t loc = 0;
    uint64_t allow = 0;
    int ost = oracle_match(o, r, method, target, len, &p, &best, &loc, &allow);
    if (st != ost)
        fprintf(stderr, "router %d, oracle %d\n", st, ost);
    check(st == ost, "the oracle's status");
    if (st == 200) {
        if (m->route != best.nr->rt)
            fprintf(stderr, "router %s %s, oracle %s %s\n", canal_route_method(m->route),
                    canal_route_template(m->route), canal_route_method(best.nr->rt),
                    canal_route_template(best.nr->rt));
        check(m->route == best.nr->rt && m->index == canal_route_index(best.nr->rt), "the oracle's route");
        size_t k = 0;
        for (size_t i = 0; i < best.nr->nparams; i++) {
            const struct nparam *pp = &best.nr->params[i];
            canal_str_t v;
            if (best.has[i])
                v = best.val[i];
            else if (pp->def != NULL)
                v = (canal_str_t){pp->def, strlen(pp->def)};
            else if (pp->catch_all)
                v = (canal_str_t){"", 0};
            else
                continue;
            check(k < m->nparams && same_str(m->params[k].name, (canal_str_t){pp->name, strlen(pp->name)}) &&
                      same_str(m->params[k].value, v),
                  "the oracle's values");
            k++;
        }
        check(k == m->nparams, "the oracle's number of values");
    } else if (st == 405 || st == 204) {
        check(m->allow == allow, "the oracle's allow mask");
    } else if (st == 308) {
        check(m->location.base == target && m->location.len == loc, "the oracle's location");
    }
    free(p.joined);
}

static void one_match(const canal_router_t *r, const struct oracle *o, const char *method,
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
    same_as_oracle(o, r, method, target, len, st, &m);
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
        one_match(fixed[sel & 7], fixed_oracle[sel & 7], methods[(sel >> 3) & 7], target, n, 1);
        free(target);
        return 0;
    }

    canal_router_t *r = canal_router_create(&option_sets[sel & 7]);
    if (r == NULL)
        return 0;
    const char *line = in;
    while (line < last_nl) {
        const char *eol = memchr(line, '\n', (size_t)(last_nl - line) + 1);
        if (memchr(line, '\0', (size_t)(eol - line)) == NULL)
            add_line(r, line, (size_t)(eol - line));
        line = eol + 1;
    }
    struct oracle *o = oracle_create(r);
    size_t tlen = n - (size_t)(last_nl + 1 - in);
    char *target = malloc(tlen + 1);
    if (target != NULL) {
        memcpy(target, last_nl + 1, tlen);
        target[tlen] = '\0';
        for (int k = 0; k < 8; k++)
            one_match(r, o, methods[k], target, tlen, 0);
        free(target);
    }
    oracle_destroy(o);
    canal_router_destroy(r);
    return 0;
}
