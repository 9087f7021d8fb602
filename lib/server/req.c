/* SPDX-License-Identifier: MIT */
/*
 * The one h2o handler of a canal app, and the request accessors.
 *
 * For each request: the canal_req_t is allocated in h2o's request pool (with a destructor
 * that runs when h2o is done with the request, which is how in-flight requests are counted
 * for graceful shutdown), the raw path is matched by the router, and the outcome is either
 * the route's handler or an answer of the router's own (400, 404, 405 with Allow, 204 for
 * OPTIONS, 308). The query string is checked for bad escapes up front (400) but split into
 * parameters only when a handler asks for one.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "server_internal.h"

static void req_dispose(void *p)
{
    canal_req_t *req = p;
    struct canal_worker *w = req->worker;
    canal__pending_gone(req);
    json_decref(req->json);
    if (req->conn != NULL)
        canal__conn_request_done(req->conn);
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

static int too_many_headers(const h2o_req_t *h, const canal_config_t *cfg)
{
    size_t bytes = 0;
    if (h->headers.size > cfg->max_header_count)
        return 1;
    for (size_t i = 0; i < h->headers.size; i++)
        bytes += h->headers.entries[i].name->len + h->headers.entries[i].value.len;
    return bytes > cfg->max_header_bytes;
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

static void dispatch(canal_req_t *req)
{
    canal_app_t *app = req->app;
    h2o_req_t *h = req->h2o;
    char allow[256];

    char *scratch = h2o_mem_alloc_pool(&h->pool, req->path.len + 1);
    int status = canal_router_match(app->router, req->method, req->path, scratch, req->path.len + 1,
                                    &req->match);
    switch (status) {
    case 200: {
        req->endpoint = req->match.data;
        int rc = req->endpoint->fn(req, req->endpoint->data);
        if (rc == CANAL_PENDING && (req->pending != NULL || req->responded))
            return;
        if (rc == CANAL_PENDING)
            rc = canal_req_fail(req, "the handler returned CANAL_PENDING without canal_req_defer()");
        if (rc != 0 && !req->responded) {
            if (req->error == NULL)
                req->error = canal_req_printf(req, "the handler failed (returned %d)", rc);
            canal__send_error_page(req);
        } else if (rc != 0) {
            canal__log_error("%.*s %.*s: handler failed after answering: %s", (int)req->method.len,
                             req->method.base, (int)req->path.len, req->path.base,
                             req->error ? req->error : "(no message)");
        } else if (!req->responded) {
            req->error = "the handler returned without answering";
            canal__send_error_page(req);
        }
        return;
    }
    case 308: {
        char *loc = canal_req_printf(req, "%.*s%s%.*s", (int)req->match.location.len,
                                     req->match.location.base, req->query.len ? "?" : "",
                                     (int)req->query.len, req->query.base);
        canal_res_redirect(req, 308, loc);
        return;
    }
    case 204:
    case 405:
        canal_router_allow_header(app->router, req->match.allow, allow, sizeof(allow));
        canal_res_header(req, "allow", allow);
        if (status == 204)
            canal_res_status(req, 204);
        else
            canal_res_problem(req, 405, "%.*s is not allowed here; allowed: %s", (int)req->method.len,
                              req->method.base, allow);
        return;
    case 404:
        canal_res_problem(req, 404, NULL);
        return;
    default:
        canal_res_problem(req, 400, "malformed request target (a bad percent-escape, %%00 or NUL, or no leading '/')");
        return;
    }
}

int canal__on_req(h2o_handler_t *self, h2o_req_t *h)
{
    struct canal_worker *w = H2O_STRUCT_FROM_MEMBER(struct canal_worker, ctx, h->conn->ctx);
    canal_req_t *req = h2o_mem_alloc_shared(&h->pool, sizeof(*req), req_dispose);
    memset(req, 0, offsetof(canal_req_t, match));
    memset(&req->endpoint, 0, sizeof(*req) - offsetof(canal_req_t, endpoint));
    req->h2o = h;
    req->worker = w;
    req->app = w->app;
    if ((req->conn = canal__conn_of(h)) != NULL) {
        req->conn->inflight++;
        req->conn->http2 = h->version >= 0x200;
    }
    atomic_fetch_add(&w->inflight, 1);
    atomic_fetch_add(&w->requests, 1);
    canal__worker_touch(w);

    req->method = (canal_str_t){h->method.base, h->method.len};
    req->is_head = h2o_memis(h->method.base, h->method.len, H2O_STRLIT("HEAD"));
    canal_str_t target = origin_form(&h->pool, (canal_str_t){h->path.base, h->path.len});
    const char *q = memchr(target.base, '?', target.len);
    req->path = (canal_str_t){target.base, q ? (size_t)(q - target.base) : target.len};
    req->query = q ? (canal_str_t){q + 1, target.len - req->path.len - 1} : (canal_str_t){"", 0};

    const canal_config_t *cfg = &w->app->cfg;
    if (h->path.len > cfg->max_target_length) {
        h->http1_is_persistent = 0; /* a client this far off is not worth keeping */
        canal_res_problem(req, 414, "the request target is longer than %zu bytes", cfg->max_target_length);
    } else if (too_many_headers(h, cfg)) {
        h->http1_is_persistent = 0;
        canal_res_problem(req, 431, "more than %zu header fields or %zu bytes of them", cfg->max_header_count,
                          cfg->max_header_bytes);
    } else if (!query_ok(req->query)) {
        canal_res_problem(req, 400, "malformed percent-encoding in the query");
    } else if (count_params(req->query) > cfg->max_query_params) {
        canal_res_problem(req, 414, "more than %zu query parameters", cfg->max_query_params);
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
