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
 * HTTP/1 request (Host, Content-Length, Transfer-Encoding: see http1_head_fault()), the
 * method token, the limits, dot-segments, the query. The common request is let through by a
 * few tests; refused() looks at the rest in that order, and the method waits for the router
 * when nothing else is wrong (a method the router knows is a token).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "server_internal.h"

/* ---- the requests a worker is handling ----
 *
 * canal's request object lives in its HTTP/1 connection (struct canal_conn: one request at a
 * time) or, for HTTP/2, in h2o's request memory. Its end-of-request work (the in-flight counts,
 * metrics, a parsed body, a deferral's handle) runs from canal__on_req_done(), the logger on
 * canal's path, which h2o calls with the h2o_req_t just before it releases that memory.
 * h2o_req_t has no field for a user's pointer: an HTTP/1 request is found through its socket's
 * connection, and each worker maps its HTTP/2 h2o_req_t's to canal's objects in a table with
 * open addressing, at most half full, by a hash of the pointer. (h2o_mem_alloc_shared() with a
 * destructor does the same job at the price of a malloc() and a free() per request.)
 *
 * h2o_mem_alloc_pool() takes anything of 1,020 bytes or more from malloc() (a quarter of its
 * 4 KiB chunks): the request object stays below that to cost no allocation of its own.
 */
_Static_assert(sizeof(canal_req_t) < 1020, "canal_req_t no longer fits h2o's pool chunks");

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
    struct canal_conn *c = h->version < 0x200 ? canal__conn_of(h) : NULL;
    canal_req_t *req;
    if (c != NULL && c->req.h2o == h)
        req = &c->req;
    else if ((req = canal__reqmap_take(&w->reqs, h)) == NULL)
        return; /* not one of canal's, or answered untracked (canal__reqmap_put failed) */
    if (w->app->metrics != NULL)
        canal__metrics_record(req);
    if (req->pending != NULL)
        canal__pending_gone(req);
    json_decref(req->json);
    if ((c = req->conn) != NULL) {
        if (req == &c->req)
            req->h2o = NULL; /* free for the connection's next request */
        canal__conn_request_done(c); /* last: it may free c, and req with it */
    }
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

/*
 * RFC 9112 wants a 400 for an HTTP/1.1 request without Host or with two, a request with both
 * Content-Length and Transfer-Encoding handled as an error (or at least the connection closed
 * after it), two Content-Lengths refused, and an obs-fold line refused or unfolded. libh2o
 * 2.2.5 does none of that and keeps none of those fields in req->headers: it keeps the last
 * Host as the authority (or the host configuration's name when there is none), uses the first
 * Content-Length, lets Transfer-Encoding win, and turns a folded line into a header with an
 * empty name.
 *
 * So: a missing Host shows as the configuration's own authority string, and a folded line as
 * an empty name, both cheap to see. For the rest canal reads the request head itself: it is
 * still in the connection's input buffer while the request is handled (libh2o consumes it
 * once the answer has been sent), with the field names lower-cased in place. Without a body,
 * libh2o's strings point into that buffer, and an earlier Host line can only sit between the
 * request line and the Host value libh2o kept: clients send Host first, so that is a few
 * bytes to look at. With a body (Content-Length or Transfer-Encoding: req->entity is set) the
 * whole head is read, and used only if it starts with this request's method and target.
 * sock: the connection's socket (NULL if unknown); folded: a header has an empty name.
 * Returns NULL, or why the request is refused (then the connection is closed: its framing is
 * in doubt).
 */
static const char *http1_head_read(h2o_req_t *h, const char *p, const char *end);
static inline const char *http1_head_fault(h2o_req_t *h, h2o_socket_t *sock, int folded)
{
    if (h->version >= 0x200)
        return NULL;
    if (folded)
        return "a header line folded onto the next (obs-fold)";
    const char *p = NULL, *end = NULL, *host = h->input.authority.base;
    if (sock != NULL && sock->input != NULL) {
        p = sock->input->bytes, end = p + sock->input->size;
        /* the usual head first, and alone: no body, and " HTTP/1.1\r\nhost: " with the one
         * space nearly every client sends right after the target, so Host is there, once */
        const char *v = h->input.path.base + h->input.path.len + 16;
        if (h->entity.base == NULL && v + 1 == host && (uintptr_t)h->input.method.base >= (uintptr_t)p &&
            (uintptr_t)host < (uintptr_t)end && memcmp(v - 7, "\r\nhost: ", 8) == 0)
            return NULL;
    }
    return http1_head_read(h, p, end);
}

/* The rest of http1_head_fault(), out of line: the head at p..end (NULL if unknown). */
static __attribute__((noinline)) const char *http1_head_read(h2o_req_t *h, const char *p, const char *end)
{
    const char *host = h->input.authority.base;
    if (h->version == 0x101 && h->hostconf != NULL && h->authority.base == h->hostconf->authority.hostport.base)
        return "an HTTP/1.1 request without a Host header field";
    if (p == NULL)
        return NULL;
    if (h->entity.base == NULL) {
        const char *q = h->input.method.base;
        int n = 0;
        if ((uintptr_t)q < (uintptr_t)p || (uintptr_t)host <= (uintptr_t)q || (uintptr_t)host > (uintptr_t)end)
            return NULL; /* not pointers into this buffer after all */
        const char *v = h->input.path.base + h->input.path.len + 16;
        if (v <= host && memcmp(v - 7, "\r\nhost:", 7) == 0) {
            while (v < host && (*v == ' ' || *v == '\t'))
                v++;
            if (v == host)
                return NULL;
        }
        while ((q = memchr(q, '\n', (size_t)(host - q))) != NULL)
            n += ++q + 5 <= host && memcmp(q, "host:", 5) == 0;
        return n > 1 ? "more than one Host header field" : NULL;
    }
    while (p < end && (*p == '\r' || *p == '\n')) /* empty lines before a request are allowed */
        p++;
    h2o_iovec_t m = h->input.method, t = h->input.path;
    if ((size_t)(end - p) < m.len + t.len + 2 || memcmp(p, m.base, m.len) != 0 || p[m.len] != ' ' ||
        memcmp(p + m.len + 1, t.base, t.len) != 0)
        return NULL;
    int hosts = 0, length = 0, coding = 0;
    p += m.len + 1 + t.len; /* the rest of the request line: " HTTP/1.1" */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    while (nl != NULL) {
        p = nl + 1;
        if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
            return NULL; /* not the head libh2o parsed, after all */
        size_t n = (size_t)(nl - p) - (nl > p && nl[-1] == '\r');
        switch (n == 0 ? 0 : *p) {
        case 0:
            nl = NULL; /* the empty line that ends the head */
            break;
        case ' ':
        case '\t':
            return "a header line folded onto the next (obs-fold)";
        case 'h':
            hosts += n >= 5 && memcmp(p, "host:", 5) == 0;
            break;
        case 'c':
            length += n >= 15 && memcmp(p, "content-length:", 15) == 0;
            break;
        case 't':
            coding += n >= 18 && memcmp(p, "transfer-encoding:", 18) == 0;
            break;
        }
    }
    if (hosts > 1)
        return "more than one Host header field";
    if (length > 1)
        return "more than one Content-Length header field";
    if (coding > 1) /* libh2o reads the last one only; "chunked" twice is not HTTP either */
        return "more than one Transfer-Encoding header field";
    if (length > 0 && coding > 0)
        return "both Content-Length and Transfer-Encoding";
    if (coding > 0 && h->version < 0x101)
        return "Transfer-Encoding in an HTTP/1.0 request";
    return NULL;
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

/* The policies of docs/security.md after the framing (http1_head_fault), in their order; 1 if
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

/* What a handler's return says, when it is not the usual "answered, 0". */
static __attribute__((noinline)) void handler_outcome(canal_req_t *req, int rc)
{
    if (rc == CANAL_PENDING && (req->pending != NULL || req->responded))
        return;
    if (rc == CANAL_PENDING)
        rc = canal_req_fail(req, "the handler returned CANAL_PENDING without canal_req_defer()");
    if (rc != 0 && !req->responded) {
        if (req->error == NULL)
            req->error = canal_req_printf(req, "the handler failed (returned %d)", rc);
        canal__send_error_page(req);
    } else if (rc != 0 && !req->error_answered) { /* else logged when answered */
        canal__log(req->app, CANAL_LOG_ERROR, "%.*s %.*s: handler failed after answering: %s",
                   (int)req->method.len, req->method.base, (int)req->path.len, req->path.base,
                   req->error ? req->error : "(no message)");
    } else if (!req->responded) {
        req->error = "the handler returned without answering";
        canal__send_error_page(req);
    }
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
        char *loc = canal_req_printf(req, "%.*s%s%.*s", (int)req->match.location.len,
                                     req->match.location.base, req->query.len ? "?" : "",
                                     (int)req->query.len, req->query.base);
        canal_res_redirect(req, 308, loc);
        return;
    }
    case 204:
    case 405:
        /* OPTIONS without a route of its own: perhaps a CORS preflight, answered for the route
         * of the method it announces */
        if (app->ncors != 0 && h2o_memis(req->method.base, req->method.len, H2O_STRLIT("OPTIONS")) &&
            canal__cors_preflight(req))
            return;
        canal_router_allow_header(app->router, req->match.allow, allow, sizeof(allow));
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

static void dispatch(canal_req_t *req)
{
    size_t n = req->path.len + 1;
    char *scratch = n <= sizeof(req->scratch) ? req->scratch : h2o_mem_alloc_pool(&req->h2o->pool, n);
    int status = canal_router_match(req->app->router, req->method, req->path, scratch, n, &req->match);
    if (status != 200) {
        answer_unrouted(req, status);
        return;
    }
    req->endpoint = req->match.data;
    if (req->endpoint->ops && canal__ops_on_match(req))
        return;
    int rc = req->endpoint->fn(req, req->endpoint->data);
    if (rc != 0 || !req->responded)
        handler_outcome(req, rc);
}

int canal__on_req(h2o_handler_t *self, h2o_req_t *h)
{
    struct canal_worker *w = H2O_STRUCT_FROM_MEMBER(struct canal_worker, ctx, h->conn->ctx);
    canal_app_t *app = w->app;
    struct canal_conn *conn = canal__conn_of(h);
    int in_conn = conn != NULL && h->version < 0x200 && conn->req.h2o == NULL;
    canal_req_t *req = in_conn ? &conn->req : h2o_mem_alloc_pool(&h->pool, sizeof(*req));
    req->h2o = h;
    req->worker = w;
    req->app = app;
    memset(&req->is_head, 0, offsetof(canal_req_t, id) - offsetof(canal_req_t, is_head));
    req->id.base = req->client_addr.base = NULL;
    req->method = (canal_str_t){h->method.base, h->method.len};
    req->is_head = h2o_memis(h->method.base, h->method.len, H2O_STRLIT("HEAD"));
    /* h2o found the query (query_at) in an origin-form target */
    canal_str_t target = {h->path.base, h->path.len};
    const char *q = h->query_at != SIZE_MAX ? target.base + h->query_at : NULL;
    if (target.len == 0 || target.base[0] != '/') {
        target = origin_form(&h->pool, target);
        q = memchr(target.base, '?', target.len);
    }
    req->path = (canal_str_t){target.base, q ? (size_t)(q - target.base) : target.len};
    req->query = q ? (canal_str_t){q + 1, target.len - req->path.len - 1} : (canal_str_t){"", 0};
    atomic_fetch_add(&w->requests, 1);

    req->conn = conn;
    if (!in_conn && canal__reqmap_put(&w->reqs, req) != 0) {
        req->conn = NULL; /* not tracked: nothing of it is counted or waited for */
        h->http1_is_persistent = 0;
        canal_res_problem(req, 503, "out of memory");
        return 0;
    }
    if (req->conn != NULL) {
        req->conn->inflight++;
        if (!in_conn && h->version >= 0x200)
            req->conn->http2 = 1; /* for good: HTTP/1 may become HTTP/2, not back */
    }
    atomic_fetch_add(&w->inflight, 1);
    canal__worker_touch(w);

    if (app->log_client) {
        /* the access log's address: the client behind the trusted proxies */
        canal_str_t c = canal_req_client_addr(req);
        *h2o_req_getenv(h, H2O_STRLIT(CANAL__ENV_CLIENT), 1) = h2o_iovec_init(c.base, c.len);
    }
    size_t header_bytes = 0;
    int folded = 0;
    for (size_t i = 0; i < h->headers.size; i++) {
        size_t n = h->headers.entries[i].name->len;
        folded |= n == 0;
        header_bytes += n + h->headers.entries[i].value.len;
    }
    const canal_config_t *cfg = &app->cfg;
    const char *fault = http1_head_fault(h, req->conn != NULL ? req->conn->sock : NULL, folded);
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
    }
    return 0;
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

int canal_req_query_int(canal_req_t *req, const char *name, int64_t def, int64_t *out)
{
    canal_str_t v;
    size_t n = canal_req_query(req, name, &v);
    if (n == 0) {
        *out = def;
        return CANAL_ENOTFOUND;
    }
    if (n > 1)
        return CANAL_EINVAL;
    return canal_parse_int64(v, out);
}

canal_str_t canal_req_param(const canal_req_t *req, const char *name)
{
    const canal_str_t *v = req->endpoint ? canal_match_get(&req->match, name) : NULL;
    return v ? *v : (canal_str_t){NULL, 0};
}

int canal_req_param_int(const canal_req_t *req, const char *name, int32_t *out)
{
    canal_str_t v = canal_req_param(req, name);
    return v.base == NULL ? CANAL_ENOTFOUND : canal_parse_int32(v, out);
}

int canal_req_param_long(const canal_req_t *req, const char *name, int64_t *out)
{
    canal_str_t v = canal_req_param(req, name);
    return v.base == NULL ? CANAL_ENOTFOUND : canal_parse_int64(v, out);
}

const canal_route_t *canal_req_route(const canal_req_t *req)
{
    return req->endpoint ? req->match.route : NULL;
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
            /* where jansson 2.14 keeps the code that json_error_code() reads */
            err->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_stack_overflow;
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
    va_list ap;
    va_start(ap, fmt);
    req->error = vprintf_pool(req, fmt, ap);
    va_end(ap);
    return -1;
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
