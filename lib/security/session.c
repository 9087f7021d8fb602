/* SPDX-License-Identifier: MIT */
/*
 * Sessions (canal/session.h): a cookie carrying a signed session ID, and a store from IDs to
 * the app's data.
 *
 * The cookie holds canal_signer_sign() of the 16 random bytes of the ID (purpose: the cookie's
 * name). A request's session is found by verifying the cookie (a forged or foreign-key value
 * is no cookie), then asking the store for the ID: a revoked or expired ID is no session.
 *
 * The in-memory store is a chained hash table over a fixed array of max_sessions entries,
 * under one mutex, shared by every worker thread. All its sessions have the same lifetime,
 * so the order they were put in is the order they expire in: a FIFO list of the entries finds
 * the oldest in O(1), to drop when the store is full or when it has expired.
 *
 * With a Redis store (canal_app_redis(), --store) and no store of the app's, sessions are
 * keys "canal:sess:" + the 16 ID bytes (one binary-safe argument, sent only once the cookie's
 * MAC has verified), SET with an expiry of the session's lifetime and DEL on logout, shared
 * by every instance. The store's API is synchronous, Redis is not: a guard on every route
 * loads the session of a request whose cookie verifies before the handler runs (a route of a
 * request without one pays nothing), and canal_session_get() reads what it loaded;
 * canal_session_begin() and canal_session_end() hold the handler's answer until Redis has
 * the write (so that an answered logout is seen by every instance), and replace it with a
 * 503 when the write fails.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>
#include "security/security.h"
#include "canal/session.h"
#include "redis/redis.h"

#define ID_LEN 16

/* ---- the in-memory store ---- */

struct mem_entry {
    unsigned char id[ID_LEN];
    uint64_t expires;
    struct mem_entry *chain;      /* next in the same hash bucket */
    struct mem_entry *older, *newer; /* the FIFO, oldest first */
    size_t len;
    unsigned char *data;
};

struct mem_store {
    pthread_mutex_t lock;
    struct mem_entry **buckets;
    size_t mask;
    struct mem_entry *entries, *free_list; /* max entries; the unused ones chained by chain */
    struct mem_entry *oldest, *newest;
    size_t n, max;
};

static size_t id_hash(const struct mem_store *m, const unsigned char *id)
{
    uint64_t h;
    memcpy(&h, id, sizeof(h)); /* IDs are random bytes */
    return (size_t)h & m->mask;
}

static struct mem_entry **find_slot(struct mem_store *m, const unsigned char *id)
{
    struct mem_entry **p = &m->buckets[id_hash(m, id)];
    while (*p != NULL && memcmp((*p)->id, id, ID_LEN) != 0)
        p = &(*p)->chain;
    return p;
}

static void mem_drop(struct mem_store *m, struct mem_entry **slot)
{
    struct mem_entry *e = *slot;
    *slot = e->chain;
    if (e->older)
        e->older->newer = e->newer;
    else
        m->oldest = e->newer;
    if (e->newer)
        e->newer->older = e->older;
    else
        m->newest = e->older;
    free(e->data);
    e->data = NULL;
    e->chain = m->free_list;
    m->free_list = e;
    m->n--;
}

static int mem_get(void *store, canal_str_t id, uint64_t now, void *buf, size_t size)
{
    struct mem_store *m = store;
    if (id.len != ID_LEN)
        return CANAL_ENOTFOUND;
    int rc = CANAL_ENOTFOUND;
    pthread_mutex_lock(&m->lock);
    struct mem_entry **slot = find_slot(m, (const unsigned char *)id.base);
    if (*slot != NULL && (*slot)->expires <= now) {
        mem_drop(m, slot);
    } else if (*slot != NULL) {
        rc = (*slot)->len > size ? CANAL_ELIMIT : (int)(*slot)->len;
        if (rc >= 0)
            memcpy(buf, (*slot)->data, (*slot)->len);
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

static int mem_put(void *store, canal_str_t id, canal_str_t data, uint64_t now, uint64_t ttl)
{
    struct mem_store *m = store;
    if (id.len != ID_LEN)
        return CANAL_EINVAL;
    unsigned char *copy = malloc(data.len ? data.len : 1);
    if (copy == NULL)
        return CANAL_ENOMEM;
    memcpy(copy, data.base, data.len);
    pthread_mutex_lock(&m->lock);
    struct mem_entry **slot = find_slot(m, (const unsigned char *)id.base);
    if (*slot != NULL)
        mem_drop(m, slot); /* a fresh random ID never meets this: an app store may reuse one */
    /* the expired first, then, when full, the oldest live session */
    while (m->oldest != NULL && (m->oldest->expires <= now || m->n == m->max))
        mem_drop(m, find_slot(m, m->oldest->id));
    struct mem_entry *e = m->free_list;
    m->free_list = e->chain;
    memcpy(e->id, id.base, ID_LEN);
    e->expires = now + ttl;
    e->data = copy;
    e->len = data.len;
    slot = find_slot(m, e->id);
    e->chain = NULL;
    *slot = e;
    e->older = m->newest;
    e->newer = NULL;
    if (m->newest)
        m->newest->newer = e;
    else
        m->oldest = e;
    m->newest = e;
    m->n++;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

static int mem_revoke(void *store, canal_str_t id)
{
    struct mem_store *m = store;
    if (id.len != ID_LEN)
        return CANAL_ENOTFOUND;
    pthread_mutex_lock(&m->lock);
    struct mem_entry **slot = find_slot(m, (const unsigned char *)id.base);
    int found = *slot != NULL;
    if (found)
        mem_drop(m, slot);
    pthread_mutex_unlock(&m->lock);
    return found ? 0 : CANAL_ENOTFOUND;
}

static void mem_destroy(void *store)
{
    struct mem_store *m = store;
    if (m == NULL)
        return;
    for (size_t i = 0; m->entries != NULL && i < m->max; i++)
        free(m->entries[i].data);
    free(m->entries);
    free(m->buckets);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static const canal_session_store_ops_t mem_ops = {mem_get, mem_put, mem_revoke, mem_destroy};

int canal_session_store_memory(size_t max_sessions, const canal_session_store_ops_t **ops, void **store)
{
    struct mem_store *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return CANAL_ENOMEM;
    m->max = max_sessions ? max_sessions : 10000;
    size_t nb = 16;
    while (nb < m->max)
        nb *= 2;
    m->mask = nb - 1;
    m->buckets = calloc(nb, sizeof(*m->buckets));
    m->entries = calloc(m->max, sizeof(*m->entries));
    if (m->buckets == NULL || m->entries == NULL || pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m->buckets);
        free(m->entries);
        free(m);
        return CANAL_ENOMEM;
    }
    for (size_t i = 0; i < m->max; i++)
        m->entries[i].chain = i + 1 < m->max ? &m->entries[i + 1] : NULL;
    m->free_list = m->entries;
    *ops = &mem_ops;
    *store = m;
    return 0;
}

/* ---- sessions ---- */

static const struct canal__feature feature;

struct canal_sessions {
    struct canal_sessions *next; /* the app's list, freed with it */
    char *cookie;
    _Atomic(const canal_signer_t *) signer; /* canal_sessions_set_signer() replaces it */
    canal_cookie_options_t cookie_options;
    char *path, *domain;         /* owned copies of cookie_options' strings */
    uint64_t ttl_ms;
    size_t max_data;
    const canal_session_store_ops_t *ops;
    void *store;
    int own_store;               /* the in-memory store is ours (no store_ops given) */
    canal_redis_t *redis;        /* the app's Redis store, at start: the sessions are there */
};

/* a request's session, loaded from Redis by the guard (key: the sessions object) */
struct loaded {
    int found;
    int unavailable; /* Redis did not answer: get and end say CANAL_ECLOSED */
    canal_str_t id;  /* the cookie's, verified by the guard: get and end need not verify again */
    canal_str_t data;
};

#define KEY_PREFIX "canal:sess:"
#define KEY_LEN (sizeof(KEY_PREFIX) - 1 + ID_LEN)

static void redis_key(char *key, canal_str_t id)
{
    memcpy(key, KEY_PREFIX, sizeof(KEY_PREFIX) - 1);
    memcpy(key + sizeof(KEY_PREFIX) - 1, id.base, ID_LEN);
}

/* A write failed: the answer the handler set (its Set-Cookie too) becomes a 503 */
static int write_done(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    if (status == 0 && canal_redis_reply_type(reply) != CANAL_REDIS_ERROR)
        return 0;
    req->h2o->res.headers = (h2o_headers_t){NULL, 0, 0};
    canal_redis_unavailable(req);
    return 1;
}

canal_sessions_t *canal_sessions_create(canal_app_t *app, const canal_sessions_options_t *o, canal_error_info_t *err)
{
    if (o == NULL || o->signer == NULL) {
        canal__reg_fail(app, err, CANAL_EINVAL, "sessions need a signer");
        return NULL;
    }
    const char *name = o->cookie ? o->cookie : "sid";
    char probe[4096];
    canal_error_info_t e;
    if (canal_cookie_format(probe, sizeof(probe), name, (canal_str_t){"", 0}, &o->cookie_options, &e) < 0) {
        canal__reg_fail(app, err, e.code, "sessions: %s", e.message);
        return NULL;
    }
    canal_sessions_t *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->cookie = strdup(name)) == NULL ||
        (o->cookie_options.path && (s->path = strdup(o->cookie_options.path)) == NULL) ||
        (o->cookie_options.domain && (s->domain = strdup(o->cookie_options.domain)) == NULL))
        goto nomem;
    atomic_init(&s->signer, o->signer);
    s->cookie_options = o->cookie_options;
    s->cookie_options.path = s->path;
    s->cookie_options.domain = s->domain;
    s->ttl_ms = (uint64_t)(o->ttl_s ? o->ttl_s : 8 * 3600) * 1000;
    s->cookie_options.max_age = (int64_t)(s->ttl_ms / 1000);
    s->max_data = o->max_data ? o->max_data : 1024;
    if (o->store_ops != NULL) {
        s->ops = o->store_ops;
        s->store = o->store;
    } else if (canal_session_store_memory(o->max_sessions, &s->ops, &s->store) != 0) {
        goto nomem;
    } else {
        s->own_store = 1;
    }
    canal_sessions_t **all = canal__feature_on(app, &feature);
    if (all == NULL) {
        if (s->ops->destroy != NULL && o->store_ops == NULL)
            s->ops->destroy(s->store);
        goto nomem;
    }
    s->next = *all;
    *all = s;
    return s;
nomem:
    if (s != NULL) {
        free(s->cookie);
        free(s->path);
        free(s->domain);
        free(s);
    }
    canal__reg_fail(app, err, CANAL_ENOMEM, NULL);
    return NULL;
}

/* The feature's state (core/feature.h): every sessions object, freed with the app */
static void sessions_free(canal_app_t *app, void *st)
{
    canal_sessions_t **all = st;
    for (canal_sessions_t *s = *all, *next; s != NULL; s = next) {
        next = s->next;
        if (s->ops->destroy != NULL)
            s->ops->destroy(s->store);
        free(s->cookie);
        free(s->path);
        free(s->domain);
        free(s);
    }
}

/* The guard: the session of a request whose cookie verifies, from Redis (session_load()) */
static int session_id(canal_req_t *req, canal_sessions_t *s, canal_str_t *id);

static int loaded_cb(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
    struct loaded *l = data;
    int type = status == 0 ? canal_redis_reply_type(reply) : CANAL_REDIS_ERROR;
    if (type == CANAL_REDIS_ERROR) {
        l->unavailable = 1; /* the route goes on: one that does not need the session works */
        return 0;
    }
    canal_str_t v = canal_redis_reply_str(reply);
    if (type == CANAL_REDIS_STRING) { /* the reply goes after the callback: a copy */
        char *copy = canal_req_alloc(req, v.len + 1);
        memcpy(copy, v.base, v.len);
        copy[v.len] = 0;
        l->found = 1;
        l->data = (canal_str_t){copy, v.len};
    }
    return 0;
}

static int session_load(canal_req_t *req, const void *arg)
{
    canal_sessions_t *s = (canal_sessions_t *)arg;
    canal_str_t id;
    if (session_id(req, s, &id) != 0)
        return 0;
    struct loaded *l = canal__req_state(req, s, sizeof(*l), NULL);
    char *key = canal_req_alloc(req, KEY_LEN);
    if (l == NULL || key == NULL)
        return 0;
    l->id = id;
    redis_key(key, id);
    const char *argv[] = {"GET", key};
    size_t lens[] = {3, KEY_LEN};
    if (canal__redis_send(req, s->redis, CANAL__REDIS_GUARD, 2, argv, lens, loaded_cb, l) == CANAL_PENDING)
        return CANAL__GUARD_WAIT;
    l->unavailable = 1;
    return 0;
}

#define GUARD_ORDER 5 /* before the rate limit's (10): a policy (30) may need the session */

static int sessions_start(canal_app_t *app, void *st)
{
    canal_redis_t *redis = canal_app_redis_get(app);
    if (redis == NULL)
        return 0;
    for (canal_sessions_t *s = *(canal_sessions_t **)st; s != NULL; s = s->next) {
        if (!s->own_store)
            continue; /* the app's own store stays */
        s->ops->destroy(s->store);
        s->store = NULL;
        s->redis = redis;
        for (size_t i = 0; i < app->nendpoints; i++)
            if (canal__endpoint_guard(&app->endpoints[i], GUARD_ORDER, session_load, s) != 0) {
                canal__log(app, CANAL_LOG_ERROR, "route %zu: too many guards", i);
                return -1;
            }
    }
    return 0;
}

static const struct canal__feature feature = {
    .name = "sessions",
    .size = sizeof(canal_sessions_t *),
    .start = sessions_start,
    .dispose = sessions_free,
};

int canal_session_begin(canal_req_t *req, canal_sessions_t *s, canal_str_t data)
{
    unsigned char id[ID_LEN];
    if (data.len > s->max_data)
        return CANAL_ELIMIT;
    if (RAND_bytes(id, sizeof(id)) != 1)
        return CANAL_ESYS;
    int rc;
    if (s->redis != NULL) {
        char key[KEY_LEN], px[24];
        redis_key(key, (canal_str_t){(const char *)id, ID_LEN});
        snprintf(px, sizeof(px), "%llu", (unsigned long long)s->ttl_ms);
        const char *argv[] = {"SET", key, data.base ? data.base : "", "PX", px};
        size_t lens[] = {3, KEY_LEN, data.len, 2, strlen(px)};
        rc = canal__redis_send(req, s->redis, CANAL__REDIS_HOLD, 5, argv, lens, write_done, NULL);
        rc = rc == CANAL_PENDING ? 0 : rc;
    } else {
        rc = s->ops->put(s->store, (canal_str_t){(const char *)id, ID_LEN}, data, canal__now_ms(), s->ttl_ms);
    }
    if (rc != 0)
        return rc;
    size_t n = canal_signed_length(ID_LEN) + 1;
    char *value = canal_req_alloc(req, n);
    const canal_signer_t *signer = atomic_load_explicit(&s->signer, memory_order_acquire);
    int len = canal_signer_sign(signer, s->cookie, (canal_str_t){(const char *)id, ID_LEN}, value, n);
    return canal_res_cookie(req, s->cookie, (canal_str_t){value, (size_t)len}, &s->cookie_options, NULL);
}

int canal_sessions_set_signer(canal_sessions_t *s, const canal_signer_t *signer)
{
    if (s == NULL || signer == NULL)
        return CANAL_EINVAL;
    atomic_store_explicit(&s->signer, signer, memory_order_release);
    return 0;
}

/* The ID of the request's cookie, verified: 0, or CANAL_ENOTFOUND */
static int session_id(canal_req_t *req, canal_sessions_t *s, canal_str_t *id)
{
    canal_str_t v;
    const canal_signer_t *signer = atomic_load_explicit(&s->signer, memory_order_acquire);
    if (canal_req_cookie_signed(req, signer, s->cookie, &v) != 0 || v.len != ID_LEN)
        return CANAL_ENOTFOUND;
    *id = v;
    return 0;
}

int canal_session_get(canal_req_t *req, canal_sessions_t *s, canal_str_t *data)
{
    if (s->redis != NULL) { /* the guard verified the cookie and loaded the session */
        const struct loaded *l = canal__req_state_find(req, s);
        if (l == NULL || !l->found)
            return l != NULL && l->unavailable ? CANAL_ECLOSED : CANAL_ENOTFOUND;
        *data = l->data;
        return 0;
    }
    canal_str_t id;
    if (session_id(req, s, &id) != 0)
        return CANAL_ENOTFOUND;
    char *buf = canal_req_alloc(req, s->max_data);
    int n = s->ops->get(s->store, id, canal__now_ms(), buf, s->max_data);
    if (n < 0)
        return CANAL_ENOTFOUND;
    *data = (canal_str_t){buf, (size_t)n};
    return 0;
}

int canal_session_end(canal_req_t *req, canal_sessions_t *s)
{
    if (s->redis != NULL) { /* the guard verified the cookie and loaded the session */
        struct loaded *l = canal__req_state_find(req, s);
        if (l == NULL || !l->found)
            return l != NULL && l->unavailable ? CANAL_ECLOSED : CANAL_ENOTFOUND;
        char *key = canal_req_alloc(req, KEY_LEN);
        redis_key(key, l->id);
        const char *argv[] = {"DEL", key};
        size_t lens[] = {3, KEY_LEN};
        int rc = canal__redis_send(req, s->redis, CANAL__REDIS_HOLD, 2, argv, lens, write_done, NULL);
        if (rc != CANAL_PENDING)
            return rc;
        l->found = 0;
    } else {
        canal_str_t id;
        if (session_id(req, s, &id) != 0 || s->ops->revoke(s->store, id) != 0)
            return CANAL_ENOTFOUND;
    }
    return canal_res_cookie_delete(req, s->cookie, &s->cookie_options, NULL);
}

const char *canal__sessions_cookie(const canal_sessions_t *s)
{
    return s->cookie;
}
