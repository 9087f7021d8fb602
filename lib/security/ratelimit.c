/* SPDX-License-Identifier: MIT */
/*
 * Rate limits (canal/ratelimit.h): token buckets in a fixed-size table per limit, shared by
 * every worker thread.
 *
 * Tokens are counted exactly, in integers: a bucket holds tokens * W (W the window in ms), a
 * request costs W, and each millisecond refills R, so R requests per W ms need no division
 * and no floating point. The capacity is R * W.
 *
 * The table is set-associative: a key's 64-bit hash (SipHash-2-4 with a random key per
 * limit, so a client cannot choose keys that collide) picks a set of WAYS entries, and the key
 * is identified by its hash alone (two keys of one limit sharing a 64-bit keyed hash is a
 * 2^-64 event per pair). A new key takes an empty entry, one whose bucket has refilled, or
 * the least recently seen one. Sets are guarded by NLOCKS striped mutexes: two requests
 * contend only when their keys fall in sets of the same stripe.
 *
 * A feature (core/feature.h): each route's limit is settled at start (its own, its groups',
 * the app's) and checked by the route's guard, rate_check(), before the handler; a route
 * without one pays nothing.
 *
 * With a Redis store (canal_app_redis(), --store) the buckets are in Redis, shared by every
 * instance: the same bucket in one Lua script (EVALSHA; EVAL when the server does not have
 * it yet) that reads the server's clock (TIME), refills, takes and writes the bucket back
 * with an expiry of one window (a bucket untouched for a window is full, as a missing one),
 * so a check is one atomic round trip and R per window holds over all instances. The guard
 * waits for the reply (CANAL__GUARD_WAIT); Redis unreachable is a 503 with Retry-After.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>
#include "security/security.h"
#include "canal/ratelimit.h"
#include "redis/redis.h"
#include <openssl/sha.h>

#define WAYS 8
#define NLOCKS 64

struct way {
    uint64_t hash;   /* 0: empty */
    uint64_t tokens; /* tokens * window_ms */
    uint64_t last;   /* ms of the last refill */
};

struct canal_rate_limit {
    struct canal_rate_limit *next; /* the app's list */
    char *name, *header;
    canal_rate_key_t kind;
    canal_rate_key_fn key_fn;
    void *key_data;
    atomic_ullong rw; /* R << 32 | W: one load reads both (canal_rate_limit_set()) */
    size_t set_mask;
    struct way *ways;
    uint64_t k0, k1;
    pthread_mutex_t locks[NLOCKS];
    atomic_ullong refused;
    canal_redis_t *redis; /* the app's store, at start: the buckets are there */
};

/* ---- the table ---- */

static uint32_t ceil_div(uint64_t a, uint64_t b)
{
    uint64_t q = (a + b - 1) / b;
    return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

/* A limit's numbers as one request sees them: R, W and the bucket's capacity R * W */
struct rate {
    uint64_t r, w, cap;
};

static struct rate rate_of(const canal_rate_limit_t *l)
{
    unsigned long long rw = atomic_load_explicit(&l->rw, memory_order_relaxed);
    struct rate q = {rw >> 32, rw & 0xffffffffu, 0};
    q.cap = q.r * q.w;
    return q;
}

/* Refills e up to now; returns its tokens (at most the capacity: R or W may have changed) */
static uint64_t refill(const struct rate *l, struct way *e, uint64_t now)
{
    if (now > e->last) {
        uint64_t elapsed = now - e->last;
        e->tokens = elapsed >= l->w || e->tokens + elapsed * l->r >= l->cap ? l->cap : e->tokens + elapsed * l->r;
        e->last = now;
    }
    if (e->tokens > l->cap)
        e->tokens = l->cap;
    return e->tokens;
}

/* 1 if e's bucket has refilled by now: forgetting it changes nothing */
static int is_full(const struct rate *l, const struct way *e, uint64_t now)
{
    uint64_t elapsed = now > e->last ? now - e->last : 0;
    return elapsed >= l->w || e->tokens + elapsed * l->r >= l->cap;
}

static void decide(const struct rate *l, uint64_t t, canal_rate_decision_t *out);

static void take_hash(canal_rate_limit_t *l, uint64_t h, uint64_t now, canal_rate_decision_t *out)
{
    struct rate q = rate_of(l);
    h |= 1; /* 0 marks an empty entry */
    size_t set = (size_t)(h >> 20) & l->set_mask;
    struct way *ways = &l->ways[set * WAYS], *e = NULL;
    pthread_mutex_t *lock = &l->locks[set % NLOCKS];
    pthread_mutex_lock(lock);
    for (size_t i = 0; i < WAYS && e == NULL; i++)
        if (ways[i].hash == h)
            e = &ways[i];
    if (e == NULL) {
        /* an empty entry, else a refilled one, else the least recently seen */
        for (size_t i = 0; i < WAYS; i++) {
            if (ways[i].hash == 0 || is_full(&q, &ways[i], now)) {
                e = &ways[i];
                break;
            }
            if (e == NULL || ways[i].last < e->last)
                e = &ways[i];
        }
        *e = (struct way){h, q.cap, now};
    }
    uint64_t t = refill(&q, e, now);
    out->allowed = t >= q.w;
    if (out->allowed)
        t = e->tokens -= q.w;
    decide(&q, t, out);
    pthread_mutex_unlock(lock);
    if (!out->allowed)
        atomic_fetch_add_explicit(&l->refused, 1, memory_order_relaxed);
}

/* out's numbers for t tokens * W left (out->allowed set) */
static void decide(const struct rate *l, uint64_t t, canal_rate_decision_t *out)
{
    if (t > l->cap)
        t = l->cap; /* a bucket in Redis from before a change of R or W */
    out->limit = (uint32_t)l->r;
    out->remaining = (uint32_t)(t / l->w);
    out->retry_after = out->allowed ? 0 : ceil_div(ceil_div(l->w - t, l->r), 1000);
    if (!out->allowed && out->retry_after == 0)
        out->retry_after = 1;
    out->reset = ceil_div(ceil_div(l->cap - t, l->r), 1000);
}

int canal_rate_limit_set(canal_rate_limit_t *l, uint32_t requests, uint32_t window_ms)
{
    if (l == NULL || requests < 1 || requests > 1000000 || window_ms < 1 || window_ms > 86400000)
        return CANAL_EINVAL;
    atomic_store_explicit(&l->rw, (unsigned long long)requests << 32 | window_ms, memory_order_relaxed);
    return 0;
}

void canal_rate_limit_take(canal_rate_limit_t *l, canal_str_t key, uint64_t now_ms, canal_rate_decision_t *out)
{
    take_hash(l, canal__siphash(l->k0, l->k1, (const unsigned char *)key.base, key.len), now_ms, out);
}

uint64_t canal_rate_limit_refused(const canal_rate_limit_t *l)
{
    return atomic_load_explicit(&((canal_rate_limit_t *)l)->refused, memory_order_relaxed);
}

static void limit_free(canal_rate_limit_t *l)
{
    for (size_t i = 0; i < NLOCKS; i++)
        pthread_mutex_destroy(&l->locks[i]);
    free(l->ways);
    free(l->name);
    free(l->header);
    free(l);
}

/* The feature's state: every limit made, freed with the app */
struct limits {
    canal_rate_limit_t *head;
    size_t n;
};

/* The bucket in Redis: KEYS[1] the bucket, ARGV R and W; tokens * W as in take_hash() */
static const char script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local r, w = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "local cap = r * w\n"
    "local b = redis.call('HMGET', KEYS[1], 't', 'l')\n"
    "local tokens, last = tonumber(b[1]), tonumber(b[2])\n"
    "if tokens == nil or last == nil then tokens = cap; last = now end\n"
    "if now > last then\n"
    "  local e = now - last\n"
    "  if e >= w or tokens + e * r >= cap then tokens = cap else tokens = tokens + e * r end\n"
    "  last = now\n"
    "end\n"
    "local allowed = 0\n"
    "if tokens >= w then tokens = tokens - w; allowed = 1 end\n"
    "redis.call('HSET', KEYS[1], 't', tokens, 'l', last)\n"
    "redis.call('PEXPIRE', KEYS[1], w)\n"
    "return {allowed, tokens}\n";
static char script_sha[41]; /* its SHA-1 in hex, made at start */
static const struct canal__feature feature;
#define GUARD_ORDER 10 /* the first guard (core/feature.h) */

/* CANAL_RATE_LIMIT(): a route's own limit; its address is also the key of
 * canal_app_rate_limit()'s scoped setting */
static int option_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err)
{
    if (value == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "CANAL_RATE_LIMIT(NULL): a rate limit option needs a limit");
    *kept = value;
    return 0;
}
const canal_option_kind_t canal_rate_limit_option = {&feature, "rate limit", option_attach, NULL};

canal_rate_limit_t *canal_rate_limit_create(canal_app_t *app, const canal_rate_limit_options_t *o,
                                           canal_error_info_t *err)
{
    struct limits *all = canal__feature_on(app, &feature);
    if (atomic_load(&app->state) != APP_CREATED) {
        canal__reg_fail(app, err, CANAL_ESTATE, "rate limits are made before the app starts");
        return NULL;
    }
    if (o == NULL || o->requests < 1 || o->requests > 1000000 || o->window_ms < 1 || o->window_ms > 86400000 ||
        (o->key == CANAL_RATE_KEY_HEADER && (o->header == NULL || *o->header == '\0')) ||
        (o->key == CANAL_RATE_KEY_CUSTOM && o->key_fn == NULL) || o->key > CANAL_RATE_KEY_CUSTOM) {
        canal__reg_fail(app, err, CANAL_EINVAL,
                        "a rate limit needs 1 to 1000000 requests per 1 ms to 1 day, and its key's header or function");
        return NULL;
    }
    canal_rate_limit_t *l = all != NULL ? calloc(1, sizeof(*l)) : NULL;
    size_t keys = 64, want = o->max_keys ? o->max_keys : 65536;
    while (keys < want && keys < ((size_t)1 << 30))
        keys *= 2;
    char name[32];
    snprintf(name, sizeof(name), "limit%zu", all != NULL ? all->n : 0);
    if (l == NULL || (l->ways = calloc(keys, sizeof(struct way))) == NULL ||
        (l->name = strdup(o->name ? o->name : name)) == NULL ||
        (o->header != NULL && (l->header = strdup(o->header)) == NULL)) {
        if (l != NULL) {
            free(l->ways);
            free(l->name);
            free(l);
        }
        canal__reg_fail(app, err, CANAL_ENOMEM, "rate limit: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < NLOCKS; i++)
        pthread_mutex_init(&l->locks[i], NULL);
    unsigned char seed[16];
    if (RAND_bytes(seed, sizeof(seed)) != 1) {
        limit_free(l);
        canal__reg_fail(app, err, CANAL_ESYS, "no random bytes for the rate limit's hash key");
        return NULL;
    }
    memcpy(&l->k0, seed, 8);
    memcpy(&l->k1, seed + 8, 8);
    l->kind = o->key;
    l->key_fn = o->key_fn;
    l->key_data = o->key_data;
    atomic_init(&l->rw, (unsigned long long)o->requests << 32 | o->window_ms);
    l->set_mask = keys / WAYS - 1;
    l->next = all->head;
    all->head = l;
    all->n++;
    return l;
}

int canal_app_rate_limit(canal_app_t *app, canal_route_group_t *group, const canal_rate_limit_t *limit)
{
    int rc = canal__scope_set(app, &canal_rate_limit_option, group, limit);
    return rc == 0 ? 0
                   : canal__reg_fail(app, NULL, rc, "rate limit: %s",
                                     rc == CANAL_ESTATE ? "set before the app starts"
                                     : rc == CANAL_EINVAL ? "not a route group of this app" : "out of memory");
}

/* ---- on the request path ---- */

/* A header field of an unsigned integer, in request memory */
static void add_uint(canal_req_t *req, const char *name, size_t nlen, uint32_t v)
{
    char *s = canal_req_alloc(req, 11), *e = s + 11, *p = e;
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    h2o_add_header_by_str(&req->h2o->pool, &req->h2o->res.headers, name, nlen, 0, NULL, p, (size_t)(e - p));
}

/* The answer to a decision: 0 if allowed, else 1 with the 429 set */
static int answer(canal_req_t *req, canal_rate_limit_t *l, const canal_rate_decision_t *dd)
{
    canal_rate_decision_t d = *dd;
    add_uint(req, H2O_STRLIT("ratelimit-limit"), d.limit);
    add_uint(req, H2O_STRLIT("ratelimit-remaining"), d.remaining);
    add_uint(req, H2O_STRLIT("ratelimit-reset"), d.reset);
    if (d.allowed)
        return 0;
    add_uint(req, H2O_STRLIT("retry-after"), d.retry_after);
    canal_res_problem(req, 429, "rate limit %s: %u requests per %.3g s; retry after %u s", l->name, d.limit,
                      (double)rate_of(l).w / 1000, d.retry_after);
    return 1;
}

/* ---- the buckets in Redis ---- */

struct rcheck {
    canal_rate_limit_t *l;
    canal_str_t key; /* the bucket's Redis key, in request memory */
    struct rate q;   /* the numbers sent, for the decision */
    char r[24], w[24];
};

static int send_check(canal_req_t *req, struct rcheck *c, int eval);

static int redis_decided(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    struct rcheck *c = data;
    if (status == 0 && canal_redis_reply_type(reply) == CANAL_REDIS_ERROR) {
        canal_str_t e = canal_redis_reply_str(reply);
        if (e.len >= 8 && memcmp(e.base, "NOSCRIPT", 8) == 0 && send_check(req, c, 1) == CANAL_PENDING)
            return 0; /* the next reply decides */
        canal__log_req(req, CANAL_LOG_ERROR, "rate limit %s: redis: %.*s", c->l->name, (int)e.len, e.base);
        status = CANAL_ECLOSED;
    }
    const canal_redis_reply_t *a = status == 0 ? canal_redis_reply_at(reply, 0) : NULL;
    const canal_redis_reply_t *t = status == 0 ? canal_redis_reply_at(reply, 1) : NULL;
    if (a == NULL || t == NULL || canal_redis_reply_int(t) < 0) {
        canal_redis_unavailable(req);
        return 1;
    }
    canal_rate_decision_t d = {.allowed = canal_redis_reply_int(a) == 1};
    decide(&c->q, (uint64_t)canal_redis_reply_int(t), &d);
    if (!d.allowed)
        atomic_fetch_add_explicit(&c->l->refused, 1, memory_order_relaxed);
    return answer(req, c->l, &d);
}

static int send_check(canal_req_t *req, struct rcheck *c, int eval)
{
    const char *argv[] = {eval ? "EVAL" : "EVALSHA", eval ? script : script_sha, "1", c->key.base, c->r, c->w};
    size_t lens[] = {eval ? 4 : 7, eval ? sizeof(script) - 1 : 40, 1, c->key.len, strlen(c->r), strlen(c->w)};
    return canal__redis_send(req, c->l->redis, CANAL__REDIS_GUARD, 6, argv, lens, redis_decided, c);
}

/* "canal:rl:NAME:KIND:" and the key's bytes (one binary-safe argument) */
static int redis_check(canal_req_t *req, canal_rate_limit_t *l, unsigned char kind, canal_str_t key)
{
    struct rcheck *c = canal_req_alloc(req, sizeof(*c));
    size_t nlen = strlen(l->name);
    char *k = canal_req_alloc(req, 9 + nlen + 3 + key.len);
    memcpy(k, "canal:rl:", 9);
    memcpy(k + 9, l->name, nlen);
    k[9 + nlen] = ':';
    k[10 + nlen] = (char)('0' + kind);
    k[11 + nlen] = ':';
    memcpy(k + 12 + nlen, key.base, key.len);
    *c = (struct rcheck){.l = l, .key = {k, 12 + nlen + key.len}, .q = rate_of(l)};
    snprintf(c->r, sizeof(c->r), "%llu", (unsigned long long)c->q.r);
    snprintf(c->w, sizeof(c->w), "%llu", (unsigned long long)c->q.w);
    if (send_check(req, c, 0) == CANAL_PENDING)
        return CANAL__GUARD_WAIT;
    canal_redis_unavailable(req);
    return 1;
}

/* The guard of a route with a limit: 1 if refused (the 429 is set) */
static int rate_check(canal_req_t *req, const void *arg)
{
    canal_rate_limit_t *l = (canal_rate_limit_t *)arg;
    canal_str_t key = {NULL, 0};
    unsigned char kind = 0;
    if (l->kind == CANAL_RATE_KEY_HEADER)
        key = canal_req_header(req, l->header), kind = 1;
    else if (l->kind == CANAL_RATE_KEY_CUSTOM && l->key_fn(req, &key, l->key_data) != 0)
        key.base = NULL;
    else if (l->kind == CANAL_RATE_KEY_CUSTOM)
        kind = 2;
    if (key.base == NULL)
        key = canal_req_client_addr(req), kind = 0;
    if (l->redis != NULL)
        return redis_check(req, l, kind, key);
    /* the kind of key is hashed in: a header value cannot pose as an address */
    uint64_t h = canal__siphash(l->k0 + kind, l->k1, (const unsigned char *)key.base, key.len);
    canal_rate_decision_t d;
    take_hash(l, h, canal__now_ms(), &d);
    return answer(req, l, &d);
}

/* canal_http_rate_limited_total lines for the metrics */
static void limits_metrics(canal_app_t *app, void *st, FILE *f)
{
    const struct limits *all = st;
    if (all->head == NULL)
        return;
    fputs("# HELP canal_http_rate_limited_total Requests refused (429) by a rate limit.\n"
          "# TYPE canal_http_rate_limited_total counter\n",
          f);
    for (const canal_rate_limit_t *l = all->head; l != NULL; l = l->next) {
        fputs("canal_http_rate_limited_total{limit=\"", f);
        canal__metrics_label(f, l->name);
        fprintf(f, "\"} %llu\n", (unsigned long long)canal_rate_limit_refused(l));
    }
}

/* ---- the feature ---- */

/* Each route's limit: its own, its groups', the app's; a guard where there is one */
static int limits_start(canal_app_t *app, void *st)
{
    canal_redis_t *redis = canal_app_redis_get(app);
    if (redis != NULL) {
        unsigned char md[SHA_DIGEST_LENGTH];
        SHA1((const unsigned char *)script, sizeof(script) - 1, md);
        for (size_t i = 0; i < sizeof(md); i++)
            snprintf(script_sha + 2 * i, 3, "%02x", md[i]);
        for (canal_rate_limit_t *l = ((struct limits *)st)->head; l != NULL; l = l->next)
            l->redis = redis;
    }
    for (size_t i = 0; i < app->nendpoints; i++) {
        struct canal_endpoint *ep = &app->endpoints[i];
        const void *l = canal__scope_get(app, &canal_rate_limit_option, ep, canal__endpoint_option(ep, &canal_rate_limit_option));
        if (l != NULL && canal__endpoint_guard(ep, GUARD_ORDER, rate_check, l) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "route %zu: too many guards", i);
            return -1;
        }
    }
    return 0;
}

static void limits_dispose(canal_app_t *app, void *st)
{
    struct limits *all = st;
    for (canal_rate_limit_t *l = all->head, *next; l != NULL; l = next) {
        next = l->next;
        limit_free(l);
    }
}

static const struct canal__feature feature = {
    .name = "rate limits",
    .size = sizeof(struct limits),
    .start = limits_start,
    .dispose = limits_dispose,
    .metrics = limits_metrics,
};
