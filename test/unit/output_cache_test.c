/* SPDX-License-Identifier: MIT */
/*
 * The output cache (canal/cache.h, lib/cache/output.c), over HTTP through canal/testing.h:
 * a hit does not run the handler and gives the same answer (type, the handler's headers, the
 * body; HEAD from the GET's entry), the key (query, vary headers), every answer that is never
 * kept (other methods, non-200, Set-Cookie, Cache-Control private and no-store, streams, too
 * large, requests with Authorization or a Cookie unless the policy allows them), the time to
 * live (a tiny one, polled: nothing asserts on time), the size bound, tags evicted (from code,
 * from another thread, during the handler), the metrics, a controller action's option,
 * registration errors, and many client threads with evictions at once (run under TSan).
 */
#include "test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <canal.h>
#include <canal/cache.h>
#include <canal/controller.h>
#include <canal/etag.h>
#include <canal/headers.h>
#include <canal/stream.h>
#include <canal/testing.h>

/* a handler's calls, its answer saying how many there were */
struct counter {
    atomic_int calls;
    const char *header, *value; /* a header it sets, or NULL */
    int status;
    const char *evict;          /* a tag it evicts while it runs, or NULL */
    canal_app_t *app;
    size_t size;                /* a body of this many bytes, or 0 */
};

static int h_count(canal_req_t *req, void *data)
{
    struct counter *c = data;
    int n = atomic_fetch_add(&c->calls, 1) + 1;
    if (c->header != NULL)
        canal_res_header(req, c->header, c->value);
    if (c->evict != NULL)
        canal_cache_evict_tag(c->app, c->evict);
    if (c->size > 0) {
        char *b = canal_req_alloc(req, c->size);
        memset(b, 'x', c->size);
        snprintf(b, c->size, "%d", n);
        return canal_res_body_static(req, 200, "text/plain", b, c->size);
    }
    char body[64];
    snprintf(body, sizeof(body), "call %d", n);
    return canal_res_text(req, c->status ? c->status : 200, body);
}

static int h_stream(canal_req_t *req, void *data)
{
    struct counter *c = data;
    atomic_fetch_add(&c->calls, 1);
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", NULL, NULL);
    if (s == NULL)
        return -1;
    canal_stream_write(s, "streamed", 8);
    return canal_stream_end(s);
}

static canal_app_t *new_app(unsigned threads)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = threads;
    cfg.port = 1;
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    return app;
}

static int route(canal_app_t *app, const char *method, const char *tmpl, canal_handler_fn fn, void *data,
                 const canal_output_policy_t *p, canal_error_info_t *err)
{
    canal_endpoint_spec_t spec = {.method = method, .tmpl = tmpl, .handler = fn, .data = data};
    if (p != NULL)
        spec.options[0] = (canal_route_option_t)CANAL_OUTPUT_CACHE(p);
    return canal_app_route(app, &spec, NULL, err);
}

static const canal_output_policy_t plain = {0};

/* the body of an answer (freed), or "" */
static char *body_of(canal_test_response_t *r)
{
    static _Thread_local char buf[256];
    snprintf(buf, sizeof(buf), "%s", r != NULL ? r->body : "(no answer)");
    canal_test_response_free(r);
    return buf;
}

static char *req_body(canal_test_t *t, const char *method, const char *path, const char *hname, const char *hvalue)
{
    canal_kv_t h[] = {{hname, hvalue}};
    return body_of(canal_test_request(t, method, path, h, hname ? 1 : 0, NULL, 0));
}

static void hit_and_head(void **state)
{
    canal_app_t *app = new_app(1);
    struct counter c = {.header = "x-made", .value = "by the handler"};
    assert_int_equal(route(app, "GET", "page", h_count, &c, &plain, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    /* a HEAD first: it runs the handler and stores nothing (its body is not kept) */
    canal_test_response_t *r = canal_test_request(t, "HEAD", "/page", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_string_equal(req_body(t, "GET", "/page", NULL, NULL), "call 2");
    r = canal_test_get(t, "/page");
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "call 2"); /* served, not run */
    assert_string_equal(canal_test_header(r, "content-type"), "text/plain; charset=utf-8");
    assert_string_equal(canal_test_header(r, "x-made"), "by the handler");
    int made = 0;
    for (size_t i = 0; i < r->nheaders; i++)
        made += strcasecmp(r->headers[i].key, "x-made") == 0;
    assert_int_equal(made, 1);
    canal_test_response_free(r);
    /* a HEAD from the GET's entry: the length, no body, the handler not run */
    r = canal_test_request(t, "HEAD", "/page", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 200);
    assert_string_equal(canal_test_header(r, "content-length"), "6");
    assert_string_equal(canal_test_header(r, "x-made"), "by the handler");
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);
    assert_int_equal(atomic_load(&c.calls), 2);
    /* the query is part of the key */
    assert_string_equal(req_body(t, "GET", "/page?a=1", NULL, NULL), "call 3");
    assert_string_equal(req_body(t, "GET", "/page?a=2", NULL, NULL), "call 4");
    assert_string_equal(req_body(t, "GET", "/page?a=1", NULL, NULL), "call 3");
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

/* the number of header fields named name in r */
static int count_headers(const canal_test_response_t *r, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < r->nheaders; i++)
        n += strcasecmp(r->headers[i].key, name) == 0;
    return n;
}

/* the commit's own headers (a request ID, an ETag, security headers) are made for each answer,
 * a cached one too, once; an ETag's 304 works on a hit */
static void commit_heads(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 1;
    cfg.port = 1;
    cfg.request_id = 1;
    canal_app_t *app = canal_app_create(&cfg);
    static const canal_security_headers_t strict = {0};
    struct counter c = {.header = "x-made", .value = "1"};
    canal_endpoint_spec_t spec = {.tmpl = "h", .handler = h_count, .data = &c,
                                  .options = {CANAL_OUTPUT_CACHE(&plain), CANAL_ETAG(1), CANAL_SECURITY_HEADERS(&strict)}};
    assert_int_equal(canal_app_route(app, &spec, NULL, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    canal_test_response_t *a = canal_test_get(t, "/h"), *b = canal_test_get(t, "/h");
    assert_int_equal(atomic_load(&c.calls), 1);
    assert_string_equal(a->body, b->body);
    static const char *const once[] = {"x-made", "x-request-id", "etag", "x-content-type-options", "content-type",
                                       "content-length"};
    for (size_t i = 0; i < sizeof(once) / sizeof(*once); i++) {
        assert_int_equal(count_headers(a, once[i]), 1);
        assert_int_equal(count_headers(b, once[i]), 1);
    }
    assert_string_equal(canal_test_header(a, "etag"), canal_test_header(b, "etag"));
    assert_string_not_equal(canal_test_header(a, "x-request-id"), canal_test_header(b, "x-request-id"));
    canal_kv_t inm = {"If-None-Match", canal_test_header(a, "etag")};
    canal_test_response_t *r = canal_test_request(t, "GET", "/h", &inm, 1, NULL, 0);
    assert_int_equal(r->status, 304);
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);
    assert_int_equal(atomic_load(&c.calls), 1);
    canal_test_response_free(a);
    canal_test_response_free(b);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

static void never_kept(void **state)
{
    canal_app_t *app = new_app(1);
    struct counter post = {0}, missing = {.status = 404}, cookie = {.header = "set-cookie", .value = "a=1"},
                   priv = {.header = "Cache-Control", .value = "max-age=60, Private"},
                   nostore = {.header = "cache-control", .value = "no-store"},
                   public = {.header = "cache-control", .value = "public, max-age=60"}, stream = {0},
                   big = {.size = 2048}, who = {0}, anyone = {0};
    static const canal_output_policy_t allow = {.allow_credentials = 1};
    assert_int_equal(route(app, "POST", "post", h_count, &post, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "missing", h_count, &missing, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "cookie", h_count, &cookie, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "private", h_count, &priv, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "nostore", h_count, &nostore, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "public", h_count, &public, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "stream", h_stream, &stream, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "big", h_count, &big, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "who", h_count, &who, &plain, NULL), 0);
    assert_int_equal(route(app, "GET", "anyone", h_count, &anyone, &allow, NULL), 0);
    assert_int_equal(canal_app_output_cache(app, &(canal_output_cache_options_t){.max_body = 1024}), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    canal_test_set_cookies(t, 0);
    for (int i = 0; i < 3; i++) {
        canal_test_response_free(canal_test_request(t, "POST", "/post", NULL, 0, "", 0));
        canal_test_response_free(canal_test_get(t, "/missing"));
        canal_test_response_free(canal_test_get(t, "/cookie"));
        canal_test_response_free(canal_test_get(t, "/private"));
        canal_test_response_free(canal_test_get(t, "/nostore"));
        canal_test_response_free(canal_test_get(t, "/public"));
        canal_test_response_free(canal_test_get(t, "/stream"));
        canal_test_response_free(canal_test_get(t, "/big"));
    }
    assert_int_equal(atomic_load(&post.calls), 3);    /* only GET and HEAD */
    assert_int_equal(atomic_load(&missing.calls), 3); /* only 200 */
    assert_int_equal(atomic_load(&cookie.calls), 3);  /* sets a cookie */
    assert_int_equal(atomic_load(&priv.calls), 3);    /* Cache-Control: private (any case) */
    assert_int_equal(atomic_load(&nostore.calls), 3); /* Cache-Control: no-store */
    assert_int_equal(atomic_load(&public.calls), 1);  /* other Cache-Control: kept */
    assert_int_equal(atomic_load(&stream.calls), 3);  /* a stream */
    assert_int_equal(atomic_load(&big.calls), 3);     /* over max_body */
    /* credentials: never served from the cache, never stored */
    assert_string_equal(req_body(t, "GET", "/who", "Authorization", "Bearer x"), "call 1");
    assert_string_equal(req_body(t, "GET", "/who", NULL, NULL), "call 2"); /* the first was not kept */
    assert_string_equal(req_body(t, "GET", "/who", NULL, NULL), "call 2"); /* this one was */
    assert_string_equal(req_body(t, "GET", "/who", "Authorization", "Bearer x"), "call 3");
    assert_string_equal(req_body(t, "GET", "/who", "Cookie", "sid=abc"), "call 4");
    assert_string_equal(req_body(t, "GET", "/who", "cookie", "theme=dark"), "call 5");
    assert_string_equal(req_body(t, "GET", "/who", NULL, NULL), "call 2");
    /* ... unless the policy allows them */
    assert_string_equal(req_body(t, "GET", "/anyone", "Authorization", "Bearer x"), "call 1");
    assert_string_equal(req_body(t, "GET", "/anyone", "Cookie", "sid=abc"), "call 1");
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

static void vary(void **state)
{
    canal_app_t *app = new_app(1);
    static const char *const by[] = {"Accept-Language", "X-Tenant", NULL};
    static const canal_output_policy_t p = {.vary = by};
    struct counter c = {0};
    assert_int_equal(route(app, "GET", "v", h_count, &c, &p, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    assert_string_equal(req_body(t, "GET", "/v", NULL, NULL), "call 1");
    assert_string_equal(req_body(t, "GET", "/v", "Accept-Language", "fr"), "call 2");
    assert_string_equal(req_body(t, "GET", "/v", "accept-language", "de"), "call 3");
    assert_string_equal(req_body(t, "GET", "/v", "Accept-Language", ""), "call 4"); /* empty is not absent */
    assert_string_equal(req_body(t, "GET", "/v", "X-Tenant", "a"), "call 5");      /* a header libh2o has no token for */
    assert_string_equal(req_body(t, "GET", "/v", "x-tenant", "b"), "call 6");
    assert_string_equal(req_body(t, "GET", "/v", "Accept-Language", "fr"), "call 2");
    assert_string_equal(req_body(t, "GET", "/v", "X-Tenant", "a"), "call 5");
    assert_string_equal(req_body(t, "GET", "/v", NULL, NULL), "call 1");
    assert_string_equal(req_body(t, "GET", "/v", "X-Other", "z"), "call 1"); /* not varied by */
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

static void ttl(void **state)
{
    canal_app_t *app = new_app(1);
    static const canal_output_policy_t p = {.ttl_ms = 20};
    struct counter c = {0};
    assert_int_equal(route(app, "GET", "t", h_count, &c, &p, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    assert_string_equal(req_body(t, "GET", "/t", NULL, NULL), "call 1");
    /* polled until the entry expires (the handler runs again): no assertion on time */
    int again = 0;
    for (int i = 0; i < 400 && !again; i++) {
        again = strcmp(req_body(t, "GET", "/t", NULL, NULL), "call 2") == 0;
        if (!again)
            usleep(5000);
    }
    assert_true(again);
    assert_int_equal(atomic_load(&c.calls), 2);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

/* the metrics line name's value, or -1 */
static long metric(canal_test_t *t, const char *name)
{
    canal_test_response_t *r = canal_test_get(t, "/metrics");
    char line[128];
    snprintf(line, sizeof(line), "\n%s", name);
    const char *at = r != NULL ? strstr(r->body, line) : NULL;
    long v = at != NULL ? atol(at + strlen(line)) : -1;
    canal_test_response_free(r);
    return v;
}

static void size_bound_and_metrics(void **state)
{
    canal_app_t *app = new_app(1);
    struct counter c = {.size = 1500};
    assert_int_equal(route(app, "GET", "b", h_count, &c, &plain, NULL), 0);
    /* 16 shards of 4 KiB: two answers of 1.5 KiB a shard at most */
    assert_int_equal(canal_app_output_cache(app, &(canal_output_cache_options_t){.max_bytes = 16 * 4096}), 0);
    assert_int_equal(canal_app_metrics(app, "metrics", NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    char path[32];
    for (int i = 0; i < 200; i++) {
        snprintf(path, sizeof(path), "/b?k=%d", i);
        canal_test_response_free(canal_test_get(t, path));
    }
    assert_int_equal(atomic_load(&c.calls), 200);
    /* newest first: the least recently used go first, so the last stored are there */
    int hits = 0;
    for (int i = 199; i >= 0; i--) {
        snprintf(path, sizeof(path), "/b?k=%d", i);
        canal_test_response_t *r = canal_test_get(t, path);
        assert_int_equal(r->body_len, 1500);
        canal_test_response_free(r);
    }
    hits = 200 - (atomic_load(&c.calls) - 200);
    assert_true(hits > 0 && hits <= 32); /* what the bound holds */
    assert_int_equal(metric(t, "canal_cache_hits_total{cache=\"output\"} "), hits);
    assert_int_equal(metric(t, "canal_cache_misses_total{cache=\"output\"} "), 400 - hits);
    assert_true(metric(t, "canal_cache_evictions_total{cache=\"output\"} ") >= 200 - 32);
    assert_true(metric(t, "canal_cache_bytes{cache=\"output\"} ") <= 16 * 4096);
    assert_int_equal(metric(t, "canal_output_cache_stores_total "), 400 - hits);
    assert_int_equal(metric(t, "canal_output_cache_skipped_total "), 0);
    assert_int_equal(metric(t, "canal_output_cache_tag_evictions_total "), 0);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

struct evictor {
    canal_app_t *app;
    const char *tag;
    int rc;
};

static void *evict_thread(void *p)
{
    struct evictor *e = p;
    e->rc = canal_cache_evict_tag(e->app, e->tag);
    return NULL;
}

static void tags(void **state)
{
    canal_app_t *app = new_app(2);
    static const char *const ta[] = {"a", "all", NULL}, *const tb[] = {"b", "all", NULL}, *const tc[] = {"c", NULL};
    static const canal_output_policy_t pa = {.tags = ta}, pb = {.tags = tb}, pc = {.tags = tc};
    struct counter a = {0}, b = {0}, c = {.evict = "c"};
    c.app = app;
    assert_int_equal(route(app, "GET", "a", h_count, &a, &pa, NULL), 0);
    assert_int_equal(route(app, "GET", "b", h_count, &b, &pb, NULL), 0);
    assert_int_equal(route(app, "GET", "c", h_count, &c, &pc, NULL), 0);
    assert_int_equal(canal_app_metrics(app, "metrics", NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    assert_string_equal(req_body(t, "GET", "/a", NULL, NULL), "call 1");
    assert_string_equal(req_body(t, "GET", "/b", NULL, NULL), "call 1");
    assert_string_equal(req_body(t, "GET", "/a", NULL, NULL), "call 1");
    assert_int_equal(canal_cache_evict_tag(app, "a"), 0);
    assert_string_equal(req_body(t, "GET", "/a", NULL, NULL), "call 2"); /* evicted */
    assert_string_equal(req_body(t, "GET", "/b", NULL, NULL), "call 1"); /* not */
    assert_string_equal(req_body(t, "GET", "/a", NULL, NULL), "call 2"); /* stored again */
    /* from another thread, a tag both carry */
    struct evictor e = {app, "all", -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, evict_thread, &e), 0);
    pthread_join(th, NULL);
    assert_int_equal(e.rc, 0);
    assert_string_equal(req_body(t, "GET", "/a", NULL, NULL), "call 3");
    assert_string_equal(req_body(t, "GET", "/b", NULL, NULL), "call 2");
    /* evicted while its handler ran: that answer is never served */
    assert_string_equal(req_body(t, "GET", "/c", NULL, NULL), "call 1");
    assert_string_equal(req_body(t, "GET", "/c", NULL, NULL), "call 2");
    assert_int_equal(canal_cache_evict_tag(app, "nobody's"), CANAL_ENOTFOUND);
    assert_int_equal(canal_cache_evict_tag(app, NULL), CANAL_EINVAL);
    assert_int_equal(canal_cache_evict_tag(NULL, "a"), CANAL_EINVAL);
    assert_int_equal(metric(t, "canal_output_cache_tag_evictions_total "), 4);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

static int a_page(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    static atomic_int n;
    char body[32];
    snprintf(body, sizeof(body), "action %d", atomic_fetch_add(&n, 1) + 1);
    return canal_res_text(req, 200, body);
}

static void controller_action(void **state)
{
    canal_app_t *app = new_app(1);
    canal_mvc_t *mvc = canal_mvc_create(app);
    static const canal_action_def_t actions[] = {
        {.name = "Cached", .handler = a_page, .routes = {"cached"}, .options = {CANAL_OUTPUT_CACHE(&plain)}},
        {.name = "Fresh", .handler = a_page, .routes = {"fresh"}},
        {.name = NULL}};
    static const canal_controller_def_t home = {.name = "Home", .prefix = "home", .actions = actions};
    canal_error_info_t err;
    assert_int_equal(canal_mvc_add_controller(mvc, &home, NULL, &err), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    char first[256];
    snprintf(first, sizeof(first), "%s", req_body(t, "GET", "/home/cached", NULL, NULL));
    assert_string_equal(req_body(t, "GET", "/home/cached", NULL, NULL), first);
    snprintf(first, sizeof(first), "%s", req_body(t, "GET", "/home/fresh", NULL, NULL));
    assert_string_not_equal(req_body(t, "GET", "/home/fresh", NULL, NULL), first); /* an action without it */
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
}

/* a HEAD route beside the GET route of the same path, with another policy: the GET's entry is
 * not read through the HEAD route's policy (dropped instead) */
static void head_route_of_its_own(void **state)
{
    canal_app_t *app = new_app(1);
    static const char *const tg[] = {"t", NULL};
    static const canal_output_policy_t tagged = {.tags = tg};
    struct counter get = {0}, head = {.header = "x-head", .value = "1"};
    assert_int_equal(route(app, "GET", "dual", h_count, &get, &plain, NULL), 0);
    assert_int_equal(route(app, "HEAD", "dual", h_count, &head, &tagged, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    assert_string_equal(req_body(t, "GET", "/dual", NULL, NULL), "call 1");
    canal_test_response_t *r = canal_test_request(t, "HEAD", "/dual", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 200);
    assert_string_equal(canal_test_header(r, "x-head"), "1"); /* its own handler ran */
    canal_test_response_free(r);
    assert_int_equal(atomic_load(&head.calls), 1);
    assert_string_equal(req_body(t, "GET", "/dual", NULL, NULL), "call 2"); /* the entry was dropped */
    assert_string_equal(req_body(t, "GET", "/dual", NULL, NULL), "call 2");
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

static void registration(void **state)
{
    canal_app_t *app = new_app(1);
    struct counter c = {0};
    canal_error_info_t err;
    static const char *const bad_vary[] = {"Accept Language", NULL}, *const empty_tag[] = {"", NULL},
                             *const many[] = {"1", "2", "3", "4", "5", "6", "7", "8", "9", NULL};
    static const canal_output_policy_t p1 = {.vary = bad_vary}, p2 = {.tags = empty_tag}, p3 = {.tags = many},
                                       p4 = {.vary = many};
    assert_int_equal(route(app, "GET", "a", h_count, &c, &p1, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "not a header name"));
    assert_int_equal(route(app, "GET", "b", h_count, &c, &p2, &err), CANAL_EINVAL);
    assert_int_equal(route(app, "GET", "c", h_count, &c, &p3, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "too many tags"));
    assert_int_equal(route(app, "GET", "d", h_count, &c, &p4, &err), CANAL_EINVAL);
    canal_route_option_t none = CANAL_OUTPUT_CACHE(NULL);
    canal_endpoint_spec_t spec = {.tmpl = "e", .handler = h_count, .data = &c, .options = {none}};
    assert_int_equal(canal_app_route(app, &spec, NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_output_cache(app, NULL), CANAL_EINVAL);
    assert_int_equal(canal_app_output_cache(NULL, &(canal_output_cache_options_t){0}), CANAL_EINVAL);
    canal_app_destroy(app);
    /* sized, with no route using it: the app starts; after the start, sizing is refused */
    app = new_app(1);
    assert_int_equal(canal_app_output_cache(app, &(canal_output_cache_options_t){.max_bytes = 1 << 20}), 0);
    assert_int_equal(canal_app_get(app, "x", h_count, &c), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    assert_string_equal(req_body(t, "GET", "/x", NULL, NULL), "call 1");
    assert_int_equal(canal_app_output_cache(app, &(canal_output_cache_options_t){0}), CANAL_ESTATE);
    assert_int_equal(canal_cache_evict_tag(app, "none"), CANAL_ENOTFOUND);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

/* ---- many threads: clients on their own connections, and evictions, at once ---- */

struct client {
    uint16_t port;
    int id, bad, ok;
    canal_app_t *app;
};

/* one GET on a new connection; the body into buf */
static int raw_get(uint16_t port, const char *path, char *buf, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[128];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < size && (r = read(fd, buf + got, size - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(fd);
    return 0;
}

static void *client_thread(void *p)
{
    struct client *c = p;
    char path[32], buf[1024], want[32];
    for (int i = 0; i < 150; i++) {
        int k = (c->id * 7 + i) % 10;
        snprintf(path, sizeof(path), "/k?k=%d", k);
        if (i % 25 == 0)
            canal_cache_evict_tag(c->app, k % 2 ? "odd" : "even");
        if (raw_get(c->port, path, buf, sizeof(buf)) != 0) {
            c->bad++;
            continue;
        }
        snprintf(want, sizeof(want), "key %d", k);
        if (strstr(buf, "HTTP/1.1 200") != buf || strstr(buf, want) == NULL)
            c->bad++;
        else
            c->ok++;
    }
    return NULL;
}

static int h_key(canal_req_t *req, void *data)
{
    canal_str_t k = {0};
    canal_req_query(req, "k", &k);
    char body[64];
    snprintf(body, sizeof(body), "key %.*s", (int)k.len, k.base);
    return canal_res_text(req, 200, body);
}

static void threads(void **state)
{
    canal_app_t *app = new_app(4);
    static const char *const tg[] = {"odd", "even", NULL};
    static const canal_output_policy_t p = {.tags = tg};
    assert_int_equal(route(app, "GET", "k", h_key, NULL, &p, NULL), 0);
    /* a small store: evictions by size while the threads run */
    assert_int_equal(canal_app_output_cache(app, &(canal_output_cache_options_t){.max_bytes = 16 * 256}), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    pthread_t th[6];
    struct client c[6];
    for (int i = 0; i < 6; i++) {
        c[i] = (struct client){canal_test_port(t), i, 0, 0, app};
        assert_int_equal(pthread_create(&th[i], NULL, client_thread, &c[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(c[i].bad, 0);
        ok += c[i].ok;
    }
    assert_int_equal(ok, 6 * 150);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hit_and_head),
        cmocka_unit_test(commit_heads),
        cmocka_unit_test(never_kept),
        cmocka_unit_test(vary),
        cmocka_unit_test(ttl),
        cmocka_unit_test(size_bound_and_metrics),
        cmocka_unit_test(tags),
        cmocka_unit_test(controller_action),
        cmocka_unit_test(head_route_of_its_own),
        cmocka_unit_test(registration),
        cmocka_unit_test(threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
