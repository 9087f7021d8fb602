/* SPDX-License-Identifier: MIT */
/*
 * Router micro-benchmark: canal's router against libr3 (Debian libr3-dev 1.3.4).
 *
 * For each route table (static.routes, github.routes, and a generated table of 10,000 routes)
 * it builds a canal router and an r3 tree, instantiates every route into a request (method +
 * concrete path), shuffles the requests deterministically, checks that both routers answer
 * every request with the route it came from, then times lookups (median of several runs of
 * ~0.3 s each), counts heap allocations per lookup and heap bytes per route.
 *
 * Heap accounting interposes malloc/calloc/realloc/free (and the aligned variants) in this
 * binary; they forward to glibc's __libc_* entry points. The counting costs nothing more than
 * one predictable branch while timing: it is switched on only for the build and the separate
 * counting pass.
 *
 * Usage: router-bench [--data DIR] [--out FILE] [--runs N] [--ms MS] [--quick]
 *                     [--case-sensitive] [--verbose]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* r3_str.h tests its value */
#endif
#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "canal/router.h"
#include <r3.h>

void zfree(void *ptr); /* libr3's allocator (3rdparty/zmalloc.c), exported but not declared */

#ifndef DATA_DIR
#define DATA_DIR "bench/router/data"
#endif
#ifndef OUT_FILE
#define OUT_FILE "build/bench/router.md"
#endif

/* ------------------------------------------------------------------------------------------ */
/* heap accounting */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static int g_track;              /* 1: count allocations and live bytes */
static unsigned long long g_nallocs;
static long long g_live;         /* usable bytes of blocks allocated while tracking */

static inline void note_alloc(void *p)
{
    if (p != NULL) {
        g_nallocs++;
        g_live += (long long)malloc_usable_size(p);
    }
}

void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    if (__builtin_expect(g_track, 0))
        note_alloc(p);
    return p;
}

void *calloc(size_t a, size_t b)
{
    void *p = __libc_calloc(a, b);
    if (__builtin_expect(g_track, 0))
        note_alloc(p);
    return p;
}

void *realloc(void *old, size_t n)
{
    if (__builtin_expect(!g_track, 1))
        return __libc_realloc(old, n);
    long long before = old != NULL ? (long long)malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, n);
    if (p != NULL) {
        g_nallocs++;
        g_live += (long long)malloc_usable_size(p) - before;
    } else if (n == 0) {
        g_live -= before; /* glibc frees the block */
    }
    return p;
}

void free(void *p)
{
    if (__builtin_expect(g_track, 0) && p != NULL)
        g_live -= (long long)malloc_usable_size(p);
    __libc_free(p);
}

void *memalign(size_t align, size_t n)
{
    void *p = __libc_memalign(align, n);
    if (__builtin_expect(g_track, 0))
        note_alloc(p);
    return p;
}

void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = memalign(align, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* splitmix64: a small deterministic generator */
static uint64_t g_seed;
static uint64_t rnd(void)
{
    uint64_t z = (g_seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static size_t rndn(size_t n)
{
    return (size_t)(rnd() % n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------------------------------------ */
/* route tables and requests */

enum { K_LIT, K_PARAM, K_CATCHALL };

struct tseg {
    int kind;
    const char *s; /* literal text (points into the template) */
    size_t len;
};

struct route {
    char method[16];
    int r3method;
    char *tmpl;    /* canal syntax */
    char *r3tmpl;  /* r3 syntax: {*x} becomes {x:.*} */
    char *shape;   /* the template with parameter names dropped, to spot same-shape routes */
    struct tseg segs[CANAL_ROUTER_MAX_SEGMENTS];
    size_t nsegs;
};

struct req {
    canal_str_t method;
    canal_str_t path;
    int r3method;
    size_t route;    /* the route it was made from */
    int comparable;  /* exactly one route shape matches the path */
};

struct table {
    const char *name;
    struct route *routes;
    size_t nroutes, cap;
    struct req *reqs;
    size_t nreqs;
    canal_router_t *canal;
    node *r3;
    route **r3routes;
    long long canal_bytes, r3_bytes;
};

static int r3_method(const char *m)
{
    static const struct {
        const char *name;
        int bit;
    } map[] = {{"GET", METHOD_GET},       {"POST", METHOD_POST},   {"PUT", METHOD_PUT},
               {"DELETE", METHOD_DELETE}, {"PATCH", METHOD_PATCH}, {"HEAD", METHOD_HEAD},
               {"OPTIONS", METHOD_OPTIONS}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].name, m) == 0)
            return map[i].bit;
    return 0;
}

/* Splits a template into segments; converts it to r3's syntax and to its shape. */
static int parse_template(struct route *rt)
{
    const char *t = rt->tmpl;
    size_t n = strlen(t);
    char *r3 = xmalloc(2 * n + 8), *shape = xmalloc(n + 2);
    size_t r3len = 0, shlen = 0;
    rt->nsegs = 0;
    if (t[0] != '/')
        return -1;
    const char *p = t + 1, *end = t + n;
    r3[r3len++] = '/';
    shape[shlen++] = '/';
    while (p < end) {
        const char *q = memchr(p, '/', (size_t)(end - p));
        if (q == NULL)
            q = end;
        if (rt->nsegs == CANAL_ROUTER_MAX_SEGMENTS)
            return -1;
        struct tseg *s = &rt->segs[rt->nsegs++];
        size_t len = (size_t)(q - p);
        if (len >= 2 && p[0] == '{' && p[len - 1] == '}') {
            int star = p[1] == '*';
            s->kind = star ? K_CATCHALL : K_PARAM;
            s->s = p + 1 + star;
            s->len = len - 2 - (size_t)star;
            if (memchr(s->s, ':', s->len) != NULL || memchr(s->s, '?', s->len) != NULL)
                return -1; /* constraints and optionals are not in the comparable syntax */
            r3[r3len++] = '{';
            memcpy(r3 + r3len, s->s, s->len);
            r3len += s->len;
            if (star)
                memcpy(r3 + r3len, ":.*", 3), r3len += 3;
            r3[r3len++] = '}';
            memcpy(shape + shlen, star ? "{*}" : "{}", star ? 3 : 2);
            shlen += star ? 3 : 2;
        } else {
            if (memchr(p, '{', len) != NULL || memchr(p, '}', len) != NULL)
                return -1;
            s->kind = K_LIT;
            s->s = p;
            s->len = len;
            memcpy(r3 + r3len, p, len);
            r3len += len;
            memcpy(shape + shlen, p, len);
            shlen += len;
        }
        p = q + 1;
        if (q < end) {
            r3[r3len++] = '/';
            shape[shlen++] = '/';
        }
    }
    r3[r3len] = '\0';
    shape[shlen] = '\0';
    rt->r3tmpl = r3;
    rt->shape = shape;
    return 0;
}

static int add_route(struct table *t, const char *method, const char *tmpl)
{
    if (t->nroutes == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->routes = realloc(t->routes, t->cap * sizeof(*t->routes));
        if (t->routes == NULL)
            exit(1);
    }
    struct route *rt = &t->routes[t->nroutes];
    memset(rt, 0, sizeof(*rt));
    snprintf(rt->method, sizeof(rt->method), "%s", method);
    rt->r3method = r3_method(method);
    rt->tmpl = strdup(tmpl);
    if (rt->r3method == 0 || parse_template(rt) != 0) {
        fprintf(stderr, "%s: unsupported route %s %s\n", t->name, method, tmpl);
        exit(1);
    }
    t->nroutes++;
    return 0;
}

static void load_routes(struct table *t, const char *file)
{
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s: %s (use --data DIR)\n", file, strerror(errno));
        exit(1);
    }
    char line[1024], method[64], tmpl[900];
    while (fgets(line, sizeof(line), f) != NULL) {
        if (line[0] == '#' || sscanf(line, "%63s %899s", method, tmpl) != 2)
            continue;
        add_route(t, method, tmpl);
    }
    fclose(f);
}

#ifndef PARAM_PCT
#define PARAM_PCT 30
#endif
#ifndef FANOUT
#define FANOUT 8
#endif

/* FNV-1a, to give every prefix of the generated tree a fixed kind */
static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

/* The generated table: n routes of 2-6 segments under 24 top-level resources. Below that,
 * every tree position (path prefix) is either a parameter position (30% of them, decided by a
 * hash of the prefix; the parameter is named after its depth) or a literal position (a word
 * from a pool of 48). So no position has both literal and parameter children: the table is
 * conflict-free in httprouter's sense, like github.routes, which is what libr3 needs (it does
 * not backtrack from a parameter edge to a literal one, and its r3_tree_compile_patterns()
 * writes the alternatives of a node into a fixed 192-byte buffer, which a parameter with a few
 * dozen literal siblings overflows). Methods: GET 50%, POST 20%, PUT, DELETE, PATCH 10% each.
 * Each literal position offers FANOUT (8) of the 48 words, picked by the prefix's hash, so the
 * tree branches like a real API rather than like random text. Deterministic (fixed seed). */
static void generate_routes(struct table *t, size_t n)
{
    static const char *top[] = {"api",      "users",   "orders",   "products", "accounts",
                                "invoices", "payments", "projects", "teams",    "files",
                                "admin",    "reports", "events",   "search",   "catalog",
                                "billing",  "support", "media",    "auth",     "metrics",
                                "v1",       "v2",      "internal", "public"};
    static const char *words[] = {
        "items",    "comments",  "images",    "tags",      "labels",    "members",   "roles",
        "settings", "history",   "versions",  "releases",  "builds",    "logs",      "alerts",
        "jobs",     "queues",    "reviews",   "ratings",   "notes",     "threads",   "messages",
        "contacts", "addresses", "shipments", "refunds",   "coupons",   "discounts", "prices",
        "stock",    "variants",  "options",   "sessions",  "tokens",    "keys",      "hooks",
        "status",   "summary",   "export",    "import",    "archive",   "children",  "parents",
        "owners",   "followers", "stars",     "downloads", "snapshots", "regions"};
    static const char *methods[] = {"GET", "GET", "GET", "GET", "GET", "POST", "POST",
                                    "PUT", "DELETE", "PATCH"};
    g_seed = 0x5eed0001;
    canal_router_t *check = canal_router_create(NULL); /* only to reject duplicates */
    char tmpl[512];
    while (t->nroutes < n) {
        size_t nsegs = 2 + rndn(5), len = 0;
        len += (size_t)snprintf(tmpl + len, sizeof(tmpl) - len, "/%s", top[rndn(24)]);
        for (size_t d = 1; d < nsegs; d++) {
            uint64_t h = fnv(tmpl, len);
            if (h % 100 < PARAM_PCT)
                len += (size_t)snprintf(tmpl + len, sizeof(tmpl) - len, "/{p%zu}", d);
            else /* one of the FANOUT words this position offers */
                len += (size_t)snprintf(tmpl + len, sizeof(tmpl) - len, "/%s",
                                        words[(h / 100 + 7 * rndn(FANOUT)) % 48]);
        }
        const char *m = methods[rndn(10)];
        if (canal_router_add(check, &(canal_route_spec_t){.method = m, .tmpl = tmpl}, NULL,
                             NULL) != 0)
            continue; /* the same method and template again */
        add_route(t, m, tmpl);
    }
    canal_router_destroy(check);
}

/* A concrete value for a parameter: 3-12 lower-case letters and digits, starting with a digit
 * so that it never equals a literal segment of the tables. */
static size_t make_value(char *out)
{
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    size_t len = 3 + rndn(10);
    out[0] = (char)('0' + rndn(10));
    for (size_t i = 1; i < len; i++)
        out[i] = alnum[rndn(36)];
    return len;
}

static int seg_matches(const struct route *rt, const canal_str_t *ps, size_t nps)
{
    for (size_t i = 0; i < rt->nsegs; i++) {
        const struct tseg *s = &rt->segs[i];
        if (s->kind == K_CATCHALL)
            return 1;
        if (i >= nps)
            return 0;
        if (s->kind == K_LIT) {
            if (s->len != ps[i].len || memcmp(s->s, ps[i].base, s->len) != 0)
                return 0;
        } else if (ps[i].len == 0) {
            return 0;
        }
    }
    return rt->nsegs == nps;
}

static void make_requests(struct table *t)
{
    g_seed = 0xbe7c4 ^ (uint64_t)t->nroutes;
    t->nreqs = t->nroutes;
    t->reqs = xmalloc(t->nreqs * sizeof(*t->reqs));
    for (size_t i = 0; i < t->nroutes; i++) {
        const struct route *rt = &t->routes[i];
        char path[1024];
        size_t len = 0;
        for (size_t k = 0; k < rt->nsegs; k++) {
            const struct tseg *s = &rt->segs[k];
            path[len++] = '/';
            if (s->kind == K_LIT) {
                memcpy(path + len, s->s, s->len);
                len += s->len;
            } else {
                len += make_value(path + len);
                if (s->kind == K_CATCHALL) {
                    path[len++] = '/';
                    len += make_value(path + len);
                }
            }
        }
        if (len == 0)
            path[len++] = '/';
        struct req *q = &t->reqs[i];
        /* one buffer per request, "METHOD /path", as a request line sits in a read buffer */
        size_t mlen = strlen(rt->method);
        char *line = xmalloc(mlen + 1 + len + 1);
        memcpy(line, rt->method, mlen);
        line[mlen] = ' ';
        memcpy(line + mlen + 1, path, len);
        line[mlen + 1 + len] = '\0';
        q->method = (canal_str_t){line, mlen};
        q->path = (canal_str_t){line + mlen + 1, len};
        q->r3method = rt->r3method;
        q->route = i;
    }
    /* Fisher-Yates */
    for (size_t i = t->nreqs; i > 1; i--) {
        size_t j = rndn(i);
        struct req tmp = t->reqs[i - 1];
        t->reqs[i - 1] = t->reqs[j];
        t->reqs[j] = tmp;
    }
    /* comparable: the path fits exactly one route shape (any method), so no priority rule
     * between a literal and a parameter (or backtracking) decides the outcome */
    for (size_t i = 0; i < t->nreqs; i++) {
        struct req *q = &t->reqs[i];
        canal_str_t ps[CANAL_ROUTER_MAX_SEGMENTS + 1];
        size_t nps = 0;
        const char *p = q->path.base + 1, *end = q->path.base + q->path.len;
        while (p < end && nps <= CANAL_ROUTER_MAX_SEGMENTS) {
            const char *s = memchr(p, '/', (size_t)(end - p));
            if (s == NULL)
                s = end;
            ps[nps++] = (canal_str_t){p, (size_t)(s - p)};
            p = s + 1;
        }
        const char *shape = NULL;
        q->comparable = 1;
        for (size_t r = 0; r < t->nroutes && q->comparable; r++) {
            if (!seg_matches(&t->routes[r], ps, nps))
                continue;
            if (shape == NULL)
                shape = t->routes[r].shape;
            else if (strcmp(shape, t->routes[r].shape) != 0)
                q->comparable = 0;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* building */

/* The length of the alternation r3_tree_compile_patterns() (libr3 1.3.4) writes for a node
 * with parameter edges, into a buffer of 192 bytes that it does not check: the largest over
 * the tree. Literal edge: "^(text)"; parameter edge: r3_slug_compile()'s "^before([^/]+)after"
 * or "^before(pattern)after"; '|' between them. */
static size_t r3_worst_pattern(const node *n)
{
    size_t len = 0, worst = 0;
    int slug = 0;
    for (unsigned i = 0; i < n->edge_len; i++) {
        const edge *e = n->edges[i];
        const char *b = strchr(e->pattern, '{'), *c = b != NULL ? strchr(b, '}') : NULL;
        if (b != NULL && c != NULL) {
            const char *colon = memchr(b, ':', (size_t)(c - b));
            slug = 1;
            len += 1 + (size_t)(b - e->pattern) + (colon ? (size_t)(c - colon - 1) + 2 : 7) +
                   strlen(c + 1);
        } else {
            len += e->pattern_len + 3;
        }
        if (i + 1 < n->edge_len)
            len++;
        size_t below = r3_worst_pattern(e->child);
        if (below > worst)
            worst = below;
    }
    return slug && len > worst ? len : worst;
}

static void build(struct table *t, int case_sensitive)
{
    g_track = 1;
    long long live0 = g_live;
    canal_router_options_t opts = {.case_sensitive = case_sensitive};
    t->canal = canal_router_create(&opts);
    for (size_t i = 0; i < t->nroutes; i++) {
        canal_error_info_t err;
        canal_route_spec_t spec = {.method = t->routes[i].method,
                                   .tmpl = t->routes[i].tmpl,
                                   .data = (void *)(uintptr_t)(i + 1)};
        if (canal_router_add(t->canal, &spec, NULL, &err) != 0) {
            fprintf(stderr, "%s: canal rejects %s %s: %s\n", t->name, spec.method, spec.tmpl,
                    err.message);
            exit(1);
        }
    }
    t->canal_bytes = g_live - live0;

    /* the r3 route array is the bench's bookkeeping (to free the routes), not r3's memory */
    g_track = 0;
    t->r3routes = xmalloc(t->nroutes * sizeof(*t->r3routes));
    g_track = 1;
    live0 = g_live;
    t->r3 = r3_tree_create(10);
    for (size_t i = 0; i < t->nroutes; i++) {
        const struct route *rt = &t->routes[i];
        char *err = NULL;
        t->r3routes[i] = r3_tree_insert_routel_ex(t->r3, rt->r3method, rt->r3tmpl,
                                                  (int)strlen(rt->r3tmpl),
                                                  (void *)(uintptr_t)(i + 1), &err);
        if (t->r3routes[i] == NULL) {
            fprintf(stderr, "%s: r3 rejects %s %s: %s\n", t->name, rt->method, rt->r3tmpl,
                    err ? err : "?");
            exit(1);
        }
    }
    size_t worst = r3_worst_pattern(t->r3);
    if (worst > 191) {
        fprintf(stderr, "%s: libr3 would overflow its 192-byte pattern buffer (%zu bytes needed) "
                        "in r3_tree_compile(); not comparable\n", t->name, worst);
        exit(1);
    }
    char *err = NULL;
    if (r3_tree_compile(t->r3, &err) != 0) {
        fprintf(stderr, "%s: r3_tree_compile: %s\n", t->name, err ? err : "?");
        exit(1);
    }
    t->r3_bytes = g_live - live0;
    g_track = 0;
}

static void teardown(struct table *t)
{
    canal_router_destroy(t->canal);
    for (size_t i = 0; i < t->nroutes; i++)
        r3_route_free(t->r3routes[i]);
    r3_tree_free(t->r3);
}

/* ------------------------------------------------------------------------------------------ */
/* lookups: each pass does n lookups cycling through the requests and returns a checksum */

static char g_scratch[4096];

static uintptr_t pass_canal(const struct table *t, size_t n)
{
    canal_match_t m;
    uintptr_t sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct req *q = &t->reqs[k];
        if (++k == t->nreqs)
            k = 0;
        int rc = canal_router_match(t->canal, q->method, q->path, g_scratch, sizeof(g_scratch),
                                    &m);
        sum += rc == 200 ? (uintptr_t)m.data + m.nparams : (uintptr_t)rc;
    }
    return sum;
}

/* r3 as its README shows it: a match_entry per request (it collects the captured values) */
static uintptr_t pass_r3(const struct table *t, size_t n)
{
    uintptr_t sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct req *q = &t->reqs[k];
        if (++k == t->nreqs)
            k = 0;
        match_entry *e = match_entry_createl(q->path.base, (int)q->path.len);
        e->request_method = q->r3method;
        e->host = NULL;
        e->remote_addr = NULL;
        route *rt = r3_tree_match_route(t->r3, e);
        sum += rt != NULL ? (uintptr_t)rt->data + (uintptr_t)e->vars->len : 0;
        match_entry_free(e);
    }
    return sum;
}

/* r3's best case: one match_entry reused; only the captured values are freed per request */
static uintptr_t pass_r3_reuse(const struct table *t, size_t n)
{
    uintptr_t sum = 0;
    size_t k = 0;
    match_entry *e = match_entry_createl("", 0);
    e->host = NULL;
    e->remote_addr = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct req *q = &t->reqs[k];
        if (++k == t->nreqs)
            k = 0;
        e->path = q->path.base;
        e->path_len = (int)q->path.len;
        e->request_method = q->r3method;
        route *rt = r3_tree_match_route(t->r3, e);
        sum += rt != NULL ? (uintptr_t)rt->data + (uintptr_t)e->vars->len : 0;
        for (int v = 0; v < e->vars->len; v++)
            zfree(e->vars->tokens[v]); /* r3 allocates them with zmalloc (size prefix) */
        e->vars->len = 0;
    }
    match_entry_free(e);
    return sum;
}

typedef uintptr_t (*pass_fn)(const struct table *, size_t);

static volatile uintptr_t g_sink;

/* lookups per run so that a run lasts about ms milliseconds */
static size_t calibrate(pass_fn fn, const struct table *t, double ms)
{
    size_t n = t->nreqs;
    double t0 = now_ns();
    size_t done = 0;
    do {
        g_sink += fn(t, n);
        done += n;
    } while (now_ns() - t0 < 50e6);
    double per = (now_ns() - t0) / (double)done;
    size_t want = (size_t)(ms * 1e6 / per);
    return want < t->nreqs ? t->nreqs : want;
}

static double time_run(pass_fn fn, const struct table *t, size_t n)
{
    double t0 = now_ns();
    g_sink += fn(t, n);
    return (now_ns() - t0) / (double)n;
}

static double allocs_per_lookup(pass_fn fn, const struct table *t)
{
    g_track = 1;
    unsigned long long a0 = g_nallocs;
    g_sink += fn(t, t->nreqs);
    unsigned long long a1 = g_nallocs;
    g_track = 0;
    return (double)(a1 - a0) / (double)t->nreqs;
}

/* ------------------------------------------------------------------------------------------ */
/* correctness */

struct check {
    size_t comparable, canal_wrong, r3_wrong, disagree, disagree_comparable;
    size_t r3_nonode, r3_other_route;
};

static void check_agreement(const struct table *t, struct check *c, int verbose)
{
    memset(c, 0, sizeof(*c));
    size_t shown = 0;
    for (size_t i = 0; i < t->nreqs; i++) {
        const struct req *q = &t->reqs[i];
        uintptr_t want = q->route + 1;
        canal_match_t m;
        int rc = canal_router_match(t->canal, q->method, q->path, g_scratch, sizeof(g_scratch),
                                    &m);
        uintptr_t got_c = rc == 200 ? (uintptr_t)m.data : 0;
        match_entry *e = match_entry_createl(q->path.base, (int)q->path.len);
        e->request_method = q->r3method;
        e->host = NULL;
        e->remote_addr = NULL;
        route *rt = r3_tree_match_route(t->r3, e);
        uintptr_t got_r = rt != NULL ? (uintptr_t)rt->data : 0;
        node *nd = rt == NULL ? r3_tree_matchl(t->r3, q->path.base, (int)q->path.len, NULL) : NULL;
        match_entry_free(e);

        c->comparable += q->comparable;
        if (got_c != got_r) {
            c->disagree++;
            c->disagree_comparable += q->comparable;
        }
        if (!q->comparable)
            continue;
        if (got_c != want)
            c->canal_wrong++;
        if (got_r != want) {
            c->r3_wrong++;
            if (rt == NULL && nd == NULL)
                c->r3_nonode++;
            else
                c->r3_other_route++;
        }
        if ((got_c != want || got_r != want) && verbose && shown++ < 10) {
            fprintf(stderr, "  [%s] %.*s %s (from %s): canal %s, r3 %s%s\n", t->name,
                    (int)q->method.len, q->method.base, q->path.base, t->routes[q->route].tmpl,
                    got_c == 0      ? "none"
                    : got_c == want ? "ok"
                                    : t->routes[got_c - 1].tmpl,
                    got_r == 0      ? "none"
                    : got_r == want ? "ok"
                                    : t->routes[got_r - 1].tmpl,
                    rt == NULL ? (nd == NULL ? " (r3: path reaches no node)"
                                             : " (r3: node has no route for the method)")
                               : "");
        }
    }
}

/* ------------------------------------------------------------------------------------------ */

struct result {
    const char *name;
    size_t routes;
    double canal_ns, r3_ns, r3r_ns;
    double canal_min, canal_max, r3_min, r3_max, r3r_min, r3r_max;
    double canal_allocs, r3_allocs, r3r_allocs;
    double canal_bpr, r3_bpr;
    struct check chk;
    size_t reqs;
};

static void measure(pass_fn fn, const struct table *t, size_t n, double *samples, int run)
{
    samples[run] = time_run(fn, t, n);
}

static void summarize(double *s, int runs, double *med, double *mn, double *mx)
{
    qsort(s, (size_t)runs, sizeof(double), cmp_double);
    *med = runs % 2 ? s[runs / 2] : (s[runs / 2 - 1] + s[runs / 2]) / 2;
    *mn = s[0];
    *mx = s[runs - 1];
}

static void run_table(struct table *t, int runs, double ms, int case_sensitive, int verbose,
                      struct result *res)
{
    build(t, case_sensitive);
    memset(res, 0, sizeof(*res));
    res->name = t->name;
    res->routes = t->nroutes;
    res->reqs = t->nreqs;
    res->canal_bpr = (double)t->canal_bytes / (double)t->nroutes;
    res->r3_bpr = (double)t->r3_bytes / (double)t->nroutes;
    check_agreement(t, &res->chk, verbose);

    res->canal_allocs = allocs_per_lookup(pass_canal, t);
    res->r3_allocs = allocs_per_lookup(pass_r3, t);
    res->r3r_allocs = allocs_per_lookup(pass_r3_reuse, t);

    size_t nc = calibrate(pass_canal, t, ms);
    size_t nr = calibrate(pass_r3, t, ms);
    size_t nrr = calibrate(pass_r3_reuse, t, ms);
    double sc[64], sr[64], srr[64];
    for (int i = 0; i < runs; i++) { /* interleaved, so drift hits all alike */
        measure(pass_canal, t, nc, sc, i);
        measure(pass_r3, t, nr, sr, i);
        measure(pass_r3_reuse, t, nrr, srr, i);
    }
    summarize(sc, runs, &res->canal_ns, &res->canal_min, &res->canal_max);
    summarize(sr, runs, &res->r3_ns, &res->r3_min, &res->r3_max);
    summarize(srr, runs, &res->r3r_ns, &res->r3r_min, &res->r3r_max);
    teardown(t);
}

static void cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p != NULL) {
                p += 1 + (p[1] == ' ');
                p[strcspn(p, "\n")] = '\0';
                snprintf(buf, size, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

static void report(FILE *f, const struct result *res, size_t nres, int runs, double ms,
                   int case_sensitive)
{
    char cpu[256], aff[256] = "";
    cpu_model(cpu, sizeof(cpu));
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        size_t len = 0;
        int count = CPU_COUNT(&set);
        for (int i = 0; i < CPU_SETSIZE && len < sizeof(aff) - 8; i++)
            if (CPU_ISSET(i, &set))
                len += (size_t)snprintf(aff + len, sizeof(aff) - len, "%s%d", len ? "," : "", i);
        if (count > 8)
            snprintf(aff, sizeof(aff), "%d CPUs (not pinned)", count);
    }
    fprintf(f, "# Router micro-benchmark: canal vs libr3 1.3.4\n\n");
    fprintf(f, "CPU: %s; affinity: %s; %d runs of ~%.0f ms per router and table, median shown; "
               "canal %s literals.\n\n",
            cpu, aff, runs, ms, case_sensitive ? "case-sensitive" : "case-insensitive (default)");
    fprintf(f, "| table | routes | canal ns/lookup | r3 ns/lookup | speedup (r3/canal) | canal "
               "allocs/match | r3 allocs/match | canal bytes/route | r3 bytes/route |\n");
    fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < nres; i++) {
        const struct result *r = &res[i];
        fprintf(f, "| %s | %zu | %.1f | %.1f | %.2fx | %.2f | %.2f | %.0f | %.0f |\n", r->name,
                r->routes, r->canal_ns, r->r3_ns, r->r3_ns / r->canal_ns, r->canal_allocs,
                r->r3_allocs, r->canal_bpr, r->r3_bpr);
    }
    fprintf(f, "\nr3 is timed as its README uses it: match_entry_createl() + "
               "r3_tree_match_route() + match_entry_free() per request. Its best case, one "
               "match_entry reused (only the captured strings freed per request):\n\n");
    fprintf(f, "| table | r3 reused-entry ns/lookup | speedup (r3 reused/canal) | r3 reused "
               "allocs/match |\n|---|---:|---:|---:|\n");
    for (size_t i = 0; i < nres; i++)
        fprintf(f, "| %s | %.1f | %.2fx | %.2f |\n", res[i].name, res[i].r3r_ns,
                res[i].r3r_ns / res[i].canal_ns, res[i].r3r_allocs);
    fprintf(f, "\nSpread over the runs (min-max ns/lookup):\n\n| table | canal | r3 | r3 "
               "reused |\n|---|---|---|---|\n");
    for (size_t i = 0; i < nres; i++)
        fprintf(f, "| %s | %.1f-%.1f | %.1f-%.1f | %.1f-%.1f |\n", res[i].name,
                res[i].canal_min, res[i].canal_max, res[i].r3_min, res[i].r3_max,
                res[i].r3r_min, res[i].r3r_max);
    fprintf(f, "\nCorrectness: every route instantiated once as a request. \"Comparable\" "
               "requests fit exactly one route shape, so no literal-over-parameter priority or "
               "backtracking decides them. A wrong answer is a different route or none.\n\n");
    fprintf(f, "| table | requests | comparable | canal wrong | r3 wrong (no node / other) | "
               "canal vs r3 disagree (all / comparable) |\n|---|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < nres; i++) {
        const struct check *c = &res[i].chk;
        fprintf(f, "| %s | %zu | %zu | %zu | %zu (%zu / %zu) | %zu / %zu |\n", res[i].name,
                res[i].reqs, c->comparable, c->canal_wrong, c->r3_wrong, c->r3_nonode,
                c->r3_other_route, c->disagree, c->disagree_comparable);
    }
}

int main(int argc, char **argv)
{
    const char *data = DATA_DIR, *out = OUT_FILE;
    int runs = 7, case_sensitive = 0, verbose = 0, list = 0;
    const char *profile = NULL; /* ENGINE:TABLE, e.g. canal:github: only loop that, for perf */
    size_t fixed_lookups = 0;   /* --lookups N: with --profile, exactly N lookups a run (callgrind) */
    double ms = 300;
    size_t gen = 10000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
            ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--generated") == 0 && i + 1 < argc)
            gen = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
            profile = argv[++i];
        else if (strcmp(argv[i], "--lookups") == 0 && i + 1 < argc)
            fixed_lookups = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--list") == 0)
            list = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            runs = 3, ms = 50;
        else if (strcmp(argv[i], "--case-sensitive") == 0)
            case_sensitive = 1;
        else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--data DIR] [--out FILE|-] [--runs N] [--ms MS] "
                    "[--generated N] [--quick] [--case-sensitive] [--verbose] [--list]\n"
                    "       [--profile canal|r3|r3reuse:static|github|generated]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1 || runs > 64)
        runs = 7;

    static struct table tables[3];
    char file[1024];
    tables[0].name = "static";
    snprintf(file, sizeof(file), "%s/static.routes", data);
    load_routes(&tables[0], file);
    tables[1].name = "github";
    snprintf(file, sizeof(file), "%s/github.routes", data);
    load_routes(&tables[1], file);
    tables[2].name = "generated";
    generate_routes(&tables[2], gen);
    if (list) { /* the generated table, in the .routes format */
        for (size_t i = 0; i < tables[2].nroutes; i++)
            printf("%s %s\n", tables[2].routes[i].method, tables[2].routes[i].tmpl);
        return 0;
    }

    if (profile != NULL) {
        const char *colon = strchr(profile, ':');
        pass_fn fn = strncmp(profile, "canal:", 6) == 0  ? pass_canal
                     : strncmp(profile, "r3:", 3) == 0   ? pass_r3
                     : strncmp(profile, "r3reuse:", 8) == 0 ? pass_r3_reuse
                                                         : NULL;
        for (size_t i = 0; i < 3 && fn != NULL && colon != NULL; i++) {
            if (strcmp(tables[i].name, colon + 1) != 0)
                continue;
            make_requests(&tables[i]);
            build(&tables[i], case_sensitive);
            size_t n = fixed_lookups ? fixed_lookups : calibrate(fn, &tables[i], ms);
            double t0 = now_ns();
            for (int r = 0; r < runs; r++)
                g_sink += fn(&tables[i], n);
            fprintf(stderr, "%s: %.1f ns/lookup\n", profile, (now_ns() - t0) / (double)n / runs);
            return 0;
        }
        fprintf(stderr, "--profile wants canal|r3|r3reuse:static|github|generated\n");
        return 2;
    }

    struct result res[3];
    for (size_t i = 0; i < 3; i++) {
        make_requests(&tables[i]);
        fprintf(stderr, "%s: %zu routes ...\n", tables[i].name, tables[i].nroutes);
        run_table(&tables[i], runs, ms, case_sensitive, verbose, &res[i]);
    }
    report(stdout, res, 3, runs, ms, case_sensitive);
    if (strcmp(out, "-") != 0) {
        FILE *f = fopen(out, "w");
        if (f == NULL) {
            fprintf(stderr, "cannot write %s: %s\n", out, strerror(errno));
            return 1;
        }
        report(f, res, 3, runs, ms, case_sensitive);
        fclose(f);
        fprintf(stderr, "wrote %s\n", out);
    }
    return 0;
}
