/* SPDX-License-Identifier: MIT */
/*
 * The one h2o handler of a canal app, and the request accessors.
 *
 * For each request: the canal_req_t is taken from its HTTP/1 connection or h2o's request
 * memory and ends in canal__on_req_done() (see "the requests a worker is handling" below: that is how in-flight
 * requests are counted for graceful shutdown), the raw path is matched by the router, and the
 * outcome is either the route's handler or an answer of the router's own (400, 404, 405 with
 * Allow, 204 for OPTIONS, 308). The query string is checked for bad escapes up front (400) but
 * split into parameters only when a handler asks for one.
 *
 * Before routing, the request is held to the policies of docs/security.md: the framing of an
 * HTTP/1 request (Host, Content-Length, Transfer-Encoding: see canal__http1_framing_fault() in h2o_compat.c), the
 * method token, the limits, dot-segments, the query. The common request is let through by a
 * few tests; refused() looks at the rest in that order, and the method waits for the router
 * when nothing else is wrong (a method the router knows is a token).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core/core.h"

/* ---- a request's life ----
 *
 * canal's request object lives in h2o's request memory, from canal__on_req() to
 * canal__on_req_done(), the logger on canal's path, which h2o calls with the h2o_req_t just
 * before it releases that memory, whether the request was answered, timed out or its client
 * went away. The worker's request table (struct canal_reqmap) finds the object from the
 * h2o_req_t there; the end-of-request work (the in-flight counts, metrics, a parsed body, a
 * deferral's handle) is done the same way for HTTP/1 and HTTP/2.
 */

int canal__reqmap_init(struct canal_reqmap *m)
{
    m->n = 0;
    m->mask = 63;
    return (m->slots = calloc(m->mask + 1, sizeof(*m->slots))) == NULL ? -1 : 0;
}

void canal__reqmap_dispose(struct canal_reqmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->mask = m->n = 0;
}

int canal__reqmap_grow(struct canal_reqmap *m)
{
    size_t cap = (m->mask + 1) * 2;
    canal_req_t **slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return -1;
    struct canal_reqmap bigger = {slots, cap - 1, m->n};
    for (size_t i = 0; i <= m->mask; i++) {
        if (m->slots[i] == NULL)
            continue;
        size_t k = canal__reqmap_slot(&bigger, m->slots[i]->h2o);
        while (slots[k] != NULL)
            k = (k + 1) & bigger.mask;
        slots[k] = m->slots[i];
    }
    free(m->slots);
    *m = bigger;
    return 0;
}

void canal__on_req_done(h2o_logger_t *self, h2o_req_t *h)
{
    struct canal_worker *w = H2O_STRUCT_FROM_MEMBER(struct canal_worker, ctx, h->conn->ctx);
    canal_req_t *req = canal__reqmap_take(&w->reqs, h);
    /* the features' end of every answer (the access log's line), before anything of it goes */
    for (size_t i = 0; i < w->nends; i++)
        w->ends[i].fn(h, req, w->ends[i].state, w->ends[i].wstate);
    if (req == NULL)
        return; /* a static file, libh2o's own answer, or answered untracked (canal__reqmap_put failed) */
    if (req->pending != NULL)
        canal__pending_gone(req);
    if (req->stream != NULL)
        canal__stream_request_done(req->stream);
    json_decref(req->json);
    if (req->conn != NULL)
        canal__conn_request_done(req->conn); /* may free the connection */
    atomic_fetch_sub(&w->inflight, 1);
    canal__worker_touch(w);
}

/* A query may hold anything but bad percent-escapes and %00. */
static int query_ok(canal_str_t q)
{
    for (size_t i = 0; i < q.len; i++) {
        if (q.base[i] != '%')
            continue;
        unsigned char hi, lo;
        if (i + 2 >= q.len)
            return 0;
        hi = (unsigned char)q.base[i + 1];
        lo = (unsigned char)q.base[i + 2];
        if (!((hi >= '0' && hi <= '9') || ((hi | 32) >= 'a' && (hi | 32) <= 'f')) ||
            !((lo >= '0' && lo <= '9') || ((lo | 32) >= 'a' && (lo | 32) <= 'f')) ||
            (hi == '0' && lo == '0'))
            return 0;
        i += 2;
    }
    return 1;
}

/* A method is a token (RFC 9110 5.6.2); libh2o 2.2.5 lets "G(T" and an empty one through. */
static int method_ok(canal_str_t m)
{
    static const unsigned char tchar[256] = {
        ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1,
        ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
        ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
        ['8'] = 1, ['9'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
        ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1,
        ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1,
        ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1,
        ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
        ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1,
        ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
    };
    unsigned ok = m.len > 0;
    for (size_t i = 0; i < m.len; i++)
        ok &= tchar[(unsigned char)m.base[i]];
    return ok;
}

/* The length of a '.' at p, raw or percent-encoded, or 0. */
static size_t dot_at(const char *p, const char *end)
{
    if (p < end && *p == '.')
        return 1;
    return end - p >= 3 && p[0] == '%' && p[1] == '2' && (p[2] | 32) == 'e' ? 3 : 0;
}

/* The length of a '/' at p, raw or percent-encoded, or 0. */
static size_t slash_at(const char *p, const char *end)
{
    if (p < end && *p == '/')
        return 1;
    return end - p >= 3 && p[0] == '%' && p[1] == '2' && (p[2] | 32) == 'f' ? 3 : 0;
}

/* canal routes on the raw path and does not resolve dot-segments (docs/security.md): a path
 * with a "." or ".." segment is refused, whether the dots are raw, percent-encoded, or the
 * segment is cut out of a value by an encoded slash ("..%2F..%2Fetc"), so no handler ever
 * gets a value that climbs out of a directory. */
static int has_dot_segment(canal_str_t path)
{
    const char *p = path.base, *end = p + path.len;
    while (p < end) {
        size_t n = slash_at(p, end);
        if (n == 0) {
            p++;
            continue;
        }
        p += n;
        if ((n = dot_at(p, end)) == 0)
            continue;
        const char *q = p + n;
        q += dot_at(q, end);
        if (q == end || slash_at(q, end))
            return 1;
    }
    return 0;
}

/* Whether the path may hold a dot-segment, for has_dot_segment() to look. libh2o has looked
 * already: h2o_url_normalize_path() (run on every request before the handler) keeps the raw
 * path as its normalized path unless it finds a "/." or a '%' before the query, and every
 * dot-segment, raw or encoded, has one of those. Its answer is only a shortcut: when it
 * rewrote the path (or when the target is not in origin-form) the raw path is looked at. The
 * probe's dot-segment cases (test/e2e/probe.cases) hold this to a new libh2o. */
static int may_have_dot_segment(const h2o_req_t *h, canal_str_t path)
{
    return h->path_normalized.base != h->path.base || path.base != h->path.base;
}

/* The number of parameters the query will split into (empty pieces do not count). */
static size_t count_params(canal_str_t q)
{
    size_t n = 0;
    for (size_t i = 0; i < q.len; i++)
        n += (q.base[i] != '&') && (i == 0 || q.base[i - 1] == '&');
    return n;
}

/* RFC 9112 asks servers to accept absolute-form targets (GET http://host/path): route on the
 * path part. libh2o 2.2.5 leaves the whole URL in req->path. */
static canal_str_t origin_form(h2o_mem_pool_t *pool, canal_str_t t)
{
    size_t skip = 0;
    if (t.len > 0 && t.base[0] == '/')
        return t; /* origin-form, nearly always */
    if (t.len >= 7 && strncasecmp(t.base, "http://", 7) == 0)
        skip = 7;
    else if (t.len >= 8 && strncasecmp(t.base, "https://", 8) == 0)
        skip = 8;
    if (skip == 0)
        return t;
    for (size_t i = skip; i < t.len; i++) {
        if (t.base[i] == '/')
            return (canal_str_t){t.base + i, t.len - i};
        if (t.base[i] == '?') { /* "http://host?q": the path is "/", the query stays */
            char *s = h2o_mem_alloc_pool(pool, t.len - i + 1);
            s[0] = '/';
            memcpy(s + 1, t.base + i, t.len - i);
            return (canal_str_t){s, t.len - i + 1};
        }
    }
    return (canal_str_t){"/", 1};
}

/* 400 and the connection closed for a method that is not a token; 1 if so. */
static int method_refused(canal_req_t *req)
{
    if (method_ok(req->method))
        return 0;
    req->h2o->http1_is_persistent = 0;
    canal_res_problem(req, 400, "the method is not a token");
    return 1;
}

/* The policies of docs/security.md after the framing (canal__http1_framing_fault()), in their order; 1 if
 * the request was refused. */
static __attribute__((noinline)) int refused(canal_req_t *req, size_t header_bytes)
{
    h2o_req_t *h = req->h2o;
    const canal_config_t *cfg = &req->app->cfg;
    if (method_refused(req)) {
    } else if (h->path.len > cfg->max_target_length) {
        h->http1_is_persistent = 0; /* a client this far off is not worth keeping */
        canal_res_problem(req, 414, "the request target is longer than %zu bytes", cfg->max_target_length);
    } else if (h->headers.size > cfg->max_header_count || header_bytes > cfg->max_header_bytes) {
        h->http1_is_persistent = 0;
        canal_res_problem(req, 431, "more than %zu header fields or %zu bytes of them", cfg->max_header_count,
                          cfg->max_header_bytes);
    } else if (may_have_dot_segment(h, req->path) && has_dot_segment(req->path)) {
        canal_res_problem(req, 400, "a '.' or '..' path segment");
    } else if (!query_ok(req->query)) {
        canal_res_problem(req, 400, "malformed percent-encoding in the query");
    } else if (count_params(req->query) > cfg->max_query_params) {
        canal_res_problem(req, 414, "more than %zu query parameters", cfg->max_query_params);
    } else {
        return 0;
    }
    return 1;
}

/* A handler's return that is not 0 (answer set) or CANAL_PENDING with a deferral: recorded as
 * the request's failure, unless the handler recorded its own (canal_req_fail()). */
static __attribute__((noinline)) void handler_failed(canal_req_t *req, int rc)
{
    if (req->error != NULL)
        return;
    if (rc == CANAL_PENDING)
        canal_req_fail(req, "the handler returned CANAL_PENDING without canal_req_defer()");
    else
        canal_req_fail(req, "the handler failed (returned %d: %s)", rc, canal_strerror(rc));
}

/* The router's own answers: everything but a matched route. */
static __attribute__((noinline)) void answer_unrouted(canal_req_t *req, int status)
{
    canal_app_t *app = req->app;
    char allow[256];
    /* a method the router knows is a token (routes are registered with tokens only): the check
     * of the method waits for the other outcomes */
    if (method_refused(req))
        return;
    switch (status) {
    case 308: {
        char *loc = canal_req_printf(req, "%.*s%s%.*s", (int)req->match->location.len,
                                     req->match->location.base, req->query.len ? "?" : "",
                                     (int)req->query.len, req->query.base);
        canal_res_redirect(req, 308, loc);
        return;
    }
    case 204:
    case 405:
        /* OPTIONS without a route of its own: perhaps a CORS preflight, answered for the route
         * of the method it announces */
        if (app->unrouted.fn != NULL && app->unrouted.fn(req, app->unrouted.arg))
            return;
        canal_router_allow_header(app->router, req->match->allow, allow, sizeof(allow));
        canal_res_header(req, "allow", allow);
        if (status == 204)
            canal_res_status(req, 204);
        else
            canal_res_problem(req, 405, "the method is not allowed here; allowed: %s", allow);
        return;
    case 404:
        canal_res_problem(req, 404, NULL);
        return;
    default:
        canal_res_problem(req, 400, "malformed request target (a bad percent-escape, %%00 or NUL, or no leading '/')");
        return;
    }
}

/* The features' begin phase (the request hooks), once the route is known or the request was
 * refused. */
static inline void run_begins(canal_req_t *req)
{
    const canal_app_t *app = req->app;
    for (size_t i = 0; i < app->nbegins; i++)
        app->begins[i].fn(req, app->begins[i].state);
}

/* The matched route's guards from the first-th, then its handler; the answer is committed
 * after it unless it is deferred, or held (canal__pending_hold()). */
static void run_route(canal_req_t *req, size_t first)
{
    const struct canal_endpoint *ep = req->endpoint;
    /* the guards, by order (rate limit, CORS, policy, body limit: core/feature.h); one that
     * answers ends the request before anything of the route runs */
    for (size_t i = first; i < ep->nguards; i++) {
        int g = ep->guards[i].fn(req, ep->guards[i].arg);
        if (g == CANAL__GUARD_WAIT) {
            req->guard_next = (unsigned char)(i + 1);
            return; /* canal__guard_done() goes on */
        }
        if (g) {
            canal__commit(req);
            return;
        }
    }
    int rc = ep->fn(req, ep->data);
    if (req->pending != NULL && (rc == CANAL_PENDING || (rc == 0 && req->held)))
        return; /* committed when the deferred answer completes */
    if (rc != 0)
        handler_failed(req, rc);
    canal__commit(req);
}

/* Routes the request and runs its handler; the answer is committed after it unless it is
 * deferred. */
static void dispatch(canal_req_t *req)
{
    /* the match and the decoded path it points into follow the request object (canal__on_req()) */
    req->match = (canal_match_t *)(req + 1);
    int status = canal_router_match(req->app->router, req->method, req->path, (char *)(req->match + 1),
                                    req->path.len + 1, req->match);
    const struct canal_endpoint *ep = NULL;
    if (status == 200 && req->match->index < req->app->nendpoints) /* routes come with one */
        req->endpoint = ep = &req->app->endpoints[req->match->index];
    run_begins(req);
    if (status != 200) {
        answer_unrouted(req, status);
    } else if (ep == NULL) { /* cannot be */
        canal_req_fail(req, "route %zu has no endpoint", req->match->index);
    } else {
        run_route(req, 0);
        return;
    }
    canal__commit(req);
}

void canal__guard_done(canal_req_t *req, int answered)
{
    if (answered)
        canal__commit(req);
    else
        run_route(req, req->guard_next);
}

int canal__on_req(h2o_handler_t *self, h2o_req_t *h)
{
    struct canal_worker *w = H2O_STRUCT_FROM_MEMBER(struct canal_worker, ctx, h->conn->ctx);
    canal_app_t *app = w->app;
    /* h2o found the query (query_at) in an origin-form target */
    canal_str_t target = {h->path.base, h->path.len};
    const char *q = h->query_at != SIZE_MAX ? target.base + h->query_at : NULL;
    if (target.len == 0 || target.base[0] != '/') {
        target = origin_form(&h->pool, target);
        q = memchr(target.base, '?', target.len);
    }
    size_t path_len = q ? (size_t)(q - target.base) : target.len;
    /* the request object, then room for the router's match and the decoded path (dispatch()),
     * which are written before they are read */
    canal_req_t *req = h2o_mem_alloc_pool(&h->pool, sizeof(*req) + sizeof(canal_match_t) + path_len + 1);
    *req = (canal_req_t){
        .h2o = h,
        .worker = w,
        .app = app,
        .conn = canal__conn_of(h),
        .method = {h->method.base, h->method.len},
        .path = {target.base, path_len},
        .query = q ? (canal_str_t){q + 1, target.len - path_len - 1} : (canal_str_t){"", 0},
        .is_head = h2o_memis(h->method.base, h->method.len, H2O_STRLIT("HEAD")),
    };
    atomic_fetch_add(&w->requests, 1);
    if (canal__reqmap_put(&w->reqs, req) != 0) {
        req->conn = NULL; /* not tracked: nothing of it is counted or waited for */
        h->http1_is_persistent = 0;
        canal_res_problem(req, 503, "out of memory");
        canal__commit(req);
        return 0;
    }
    if (req->conn != NULL) {
        req->conn->inflight++;
        if (h->version >= 0x200)
            req->conn->http2 = 1; /* for good: HTTP/1 may become HTTP/2, not back */
    }
    atomic_fetch_add(&w->inflight, 1);
    canal__worker_touch(w);

    size_t header_bytes = 0;
    int folded = 0;
    for (size_t i = 0; i < h->headers.size; i++) {
        size_t n = h->headers.entries[i].name->len;
        folded |= n == 0;
        header_bytes += n + h->headers.entries[i].value.len;
    }
    const canal_config_t *cfg = &app->cfg;
    const char *fault = canal__http1_framing_fault(h, req->conn != NULL ? req->conn->sock : NULL, folded);
    if (fault != NULL) {
        h->http1_is_persistent = 0;
        canal_res_problem(req, 400, "%s", fault);
    } else if ((h->path.len > cfg->max_target_length || h->headers.size > cfg->max_header_count ||
                header_bytes > cfg->max_header_bytes || req->query.len > 0 ||
                may_have_dot_segment(h, req->path)) &&
               refused(req, header_bytes)) {
        /* answered */
    } else {
        dispatch(req);
        return 0;
    }
    run_begins(req); /* refused before routing: no route */
    canal__commit(req);
    return 0;
}

/* ---- the features' per-request state ---- */

struct canal__rstate {
    struct canal__rstate *next;
    const void *key;
    void (*dispose)(void *state);
    void *pad; /* four words: the state after it keeps the 16-byte alignment of h2o's pool */
};

static void rstate_dispose(void *p)
{
    struct canal__rstate *s = p;
    s->dispose(s + 1);
}

void *canal__req_state_find(const canal_req_t *req, const void *key)
{
    for (struct canal__rstate *s = req->rstate; s != NULL; s = s->next)
        if (s->key == key)
            return s + 1;
    return NULL;
}

void *canal__req_state(canal_req_t *req, const void *key, size_t size, void (*dispose)(void *state))
{
    void *st = canal__req_state_find(req, key);
    if (st != NULL)
        return st;
    h2o_mem_pool_t *pool = &req->h2o->pool;
    struct canal__rstate *s = dispose != NULL ? h2o_mem_alloc_shared(pool, sizeof(*s) + size, rstate_dispose)
                                              : h2o_mem_alloc_pool(pool, sizeof(*s) + size);
    memset(s + 1, 0, size);
    *s = (struct canal__rstate){.next = req->rstate, .key = key, .dispose = dispose};
    req->rstate = s;
    return s + 1;
}

canal_str_t canal_req_method(const canal_req_t *req)
{
    return req->method;
}

canal_str_t canal_req_path(const canal_req_t *req)
{
    return req->path;
}

canal_str_t canal_req_query_string(const canal_req_t *req)
{
    return req->query;
}

static void parse_query(canal_req_t *req)
{
    canal_str_t q = req->query;
    size_t n = 1;
    req->query_parsed = 1;
    req->query_params = NULL;
    req->nquery = 0;
    if (q.len == 0)
        return;
    for (size_t i = 0; i < q.len; i++)
        n += q.base[i] == '&';
    req->query_params = canal_req_alloc(req, n * sizeof(canal_param_t));
    char *buf = canal_req_alloc(req, q.len);
    memcpy(buf, q.base, q.len);
    size_t at = 0;
    while (at <= q.len) {
        const char *amp = memchr(buf + at, '&', q.len - at);
        size_t end = amp ? (size_t)(amp - buf) : q.len;
        if (end > at) { /* empty pieces ("a=1&&b=2") are skipped */
            char *piece = buf + at, *eq = memchr(piece, '=', end - at);
            size_t klen = eq ? (size_t)(eq - piece) : end - at;
            size_t vlen = eq ? end - at - klen - 1 : 0;
            /* query_ok() checked every escape, so decoding cannot fail */
            int kd = canal_percent_decode((canal_str_t){piece, klen}, piece, 1);
            int vd = eq ? canal_percent_decode((canal_str_t){eq + 1, vlen}, eq + 1, 1) : 0;
            canal_param_t *p = &req->query_params[req->nquery++];
            p->name = (canal_str_t){piece, (size_t)(kd > 0 ? kd : 0)};
            p->value = (canal_str_t){eq ? eq + 1 : "", (size_t)(vd > 0 ? vd : 0)};
        }
        at = end + 1;
    }
}

size_t canal_req_query(canal_req_t *req, const char *name, canal_str_t *value)
{
    size_t count = 0, n = strlen(name);
    if (!req->query_parsed)
        parse_query(req);
    for (size_t i = 0; i < req->nquery; i++) {
        const canal_param_t *p = &req->query_params[i];
        if (p->name.len == n && memcmp(p->name.base, name, n) == 0) {
            if (count++ == 0 && value != NULL)
                *value = p->value;
        }
    }
    return count;
}

size_t canal_req_query_all(canal_req_t *req, const canal_param_t **params)
{
    if (!req->query_parsed)
        parse_query(req);
    *params = req->query_params;
    return req->nquery;
}

int canal_req_query_int64(canal_req_t *req, const char *name, int64_t *out)
{
    canal_str_t v;
    size_t n = canal_req_query(req, name, &v);
    if (n == 0)
        return CANAL_ENOTFOUND;
    if (n > 1)
        return CANAL_EINVAL;
    return canal_parse_int64(v, out);
}

canal_str_t canal_req_param(const canal_req_t *req, const char *name)
{
    const canal_str_t *v = req->endpoint ? canal_match_get(req->match, name) : NULL;
    return v ? *v : (canal_str_t){NULL, 0};
}

int canal_req_param_int32(const canal_req_t *req, const char *name, int32_t *out)
{
    canal_str_t v = canal_req_param(req, name);
    return v.base == NULL ? CANAL_ENOTFOUND : canal_parse_int32(v, out);
}

int canal_req_param_int64(const canal_req_t *req, const char *name, int64_t *out)
{
    canal_str_t v = canal_req_param(req, name);
    return v.base == NULL ? CANAL_ENOTFOUND : canal_parse_int64(v, out);
}

const canal_route_t *canal_req_route(const canal_req_t *req)
{
    return req->endpoint ? req->match->route : NULL;
}

canal_str_t canal_req_header(const canal_req_t *req, const char *name)
{
    size_t n = strlen(name);
    const h2o_headers_t *hs = &req->h2o->headers;
    for (size_t i = 0; i < hs->size; i++)
        if (hs->entries[i].name->len == n && strncasecmp(hs->entries[i].name->base, name, n) == 0)
            return (canal_str_t){hs->entries[i].value.base, hs->entries[i].value.len};
    return (canal_str_t){NULL, 0};
}

size_t canal_req_header_count(const canal_req_t *req)
{
    return req->h2o->headers.size;
}

int canal_req_header_at(const canal_req_t *req, size_t i, canal_str_t *name, canal_str_t *value)
{
    const h2o_headers_t *hs = &req->h2o->headers;
    if (i >= hs->size)
        return CANAL_EINVAL;
    *name = (canal_str_t){hs->entries[i].name->base, hs->entries[i].name->len};
    *value = (canal_str_t){hs->entries[i].value.base, hs->entries[i].value.len};
    return 0;
}

canal_str_t canal_req_body(const canal_req_t *req)
{
    const h2o_req_t *h = req->h2o;
    return h->entity.base ? (canal_str_t){h->entity.base, h->entity.len} : (canal_str_t){"", 0};
}

static int is_json_type(canal_str_t ct)
{
    size_t n = ct.len;
    const char *semi = memchr(ct.base, ';', ct.len);
    if (semi)
        n = (size_t)(semi - ct.base);
    while (n > 0 && ct.base[n - 1] == ' ')
        n--;
    if (n == 16 && strncasecmp(ct.base, "application/json", 16) == 0)
        return 1;
    return n > 17 && strncasecmp(ct.base, "application/", 12) == 0 &&
           strncasecmp(ct.base + n - 5, "+json", 5) == 0;
}

/* The deepest nesting of arrays and objects in a JSON text, skipping strings, or SIZE_MAX as
 * soon as it passes max. jansson's parser recurses up to its fixed 2048 levels; this bounds
 * the depth an app accepts (and what it later walks recursively) at a level it chooses, in one
 * pass with no allocation. A malformed text may be counted wrongly here: jansson rejects it
 * next anyway. *at is where the limit was passed. */
static size_t json_depth(const char *s, size_t len, size_t max, size_t *at)
{
    size_t depth = 0, deepest = 0;
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '"':
            for (i++; i < len && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            break;
        case '[':
        case '{':
            if (++depth > deepest && (deepest = depth) > max) {
                *at = i;
                return SIZE_MAX;
            }
            break;
        case ']':
        case '}':
            depth -= depth > 0;
            break;
        default:
            break;
        }
    }
    return deepest;
}

json_t *canal_req_json(canal_req_t *req, json_error_t *err)
{
    if (req->json != NULL)
        return req->json;
    canal_str_t ct = canal_req_header(req, "content-type");
    if (ct.base == NULL || !is_json_type(ct)) {
        if (err != NULL) {
            memset(err, 0, sizeof(*err));
            snprintf(err->text, sizeof(err->text), "the content type is not application/json");
            canal__json_error_set_code(err, json_error_wrong_type);
        }
        return NULL;
    }
    canal_str_t body = canal_req_body(req);
    size_t max = req->app->cfg.max_json_depth, at = 0;
    if (json_depth(body.base, body.len, max, &at) == SIZE_MAX) {
        if (err != NULL) {
            memset(err, 0, sizeof(*err));
            err->line = -1;
            err->column = -1;
            err->position = (int)(at < INT32_MAX ? at : INT32_MAX);
            snprintf(err->text, sizeof(err->text), "JSON nested deeper than %zu levels", max);
            canal__json_error_set_code(err, json_error_stack_overflow);
        }
        return NULL;
    }
    req->json = json_loadb(body.base, body.len, JSON_REJECT_DUPLICATES, err);
    return req->json;
}

void *canal_req_alloc(canal_req_t *req, size_t size)
{
    return h2o_mem_alloc_pool(&req->h2o->pool, size ? size : 1);
}

static char *vprintf_pool(canal_req_t *req, const char *fmt, va_list ap)
{
    char small[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    if (n < 0)
        n = 0;
    char *out = canal_req_alloc(req, (size_t)n + 1);
    if ((size_t)n < sizeof(small))
        memcpy(out, small, (size_t)n + 1);
    else
        vsnprintf(out, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return out;
}

char *canal_req_printf(canal_req_t *req, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vprintf_pool(req, fmt, ap);
    va_end(ap);
    return s;
}

int canal_req_fail(canal_req_t *req, const char *fmt, ...)
{
    if (req->error != NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    req->error = vprintf_pool(req, fmt, ap);
    va_end(ap);
    return -1;
}

const char *canal_req_failure(const canal_req_t *req)
{
    return req->error;
}

void canal_req_note(canal_req_t *req, const char *key, const char *value)
{
    h2o_mem_pool_t *pool = &req->h2o->pool;
    struct canal_note *n = h2o_mem_alloc_pool(pool, sizeof(*n));
    n->key = h2o_strdup(pool, key, SIZE_MAX).base;
    n->value = h2o_strdup(pool, value, SIZE_MAX).base;
    n->next = req->notes;
    req->notes = n;
}

canal_app_t *canal_req_app(const canal_req_t *req)
{
    return req->app;
}
