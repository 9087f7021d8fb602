/* SPDX-License-Identifier: MIT */
/*
 * The data cache (canal/cache.h): 16 shards, each a chained hash table and a least-recently
 * used list under its own mutex, so that worker threads touching different keys rarely wait
 * for each other. An entry is one allocation: its header, the key, the value. Keys are
 * hashed with SipHash-2-4 (canal__siphash()) under a random key per cache (RAND_bytes), so clients
 * that choose keys cannot aim collisions at a shard. Time comes from CLOCK_MONOTONIC.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>
#include "core/core.h"
#include "canal/cache.h"
#include "cache/internal.h"

#define SHARDS 16
#define ENTRY_COST 64 /* what an entry costs beside its bytes, in the size bound */

struct entry {
    struct entry *next;        /* in its bucket */
    struct entry *older, *newer; /* in its shard's LRU list */
    uint64_t hash, expires_ms; /* 0: never */
    size_t klen, vlen;
    unsigned char bytes[];     /* key, then value */
};

struct shard {
    pthread_mutex_t lock;
    struct entry **buckets;
    size_t nbuckets, n, bytes;
    struct entry *oldest, *newest;
};

struct canal_cache {
    struct canal_cache *next; /* the app's caches */
    char *name;
    size_t max_shard;         /* bytes one shard holds */
    unsigned ttl_ms;
    uint64_t k0, k1;          /* SipHash key */
    atomic_uint_fast64_t hits, misses, evictions;
    struct shard shards[SHARDS];
};

static const struct canal__feature feature;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- a shard ---- */

static size_t cost(const struct entry *e)
{
    return ENTRY_COST + e->klen + e->vlen;
}

static void lru_unlink(struct shard *s, struct entry *e)
{
    *(e->older ? &e->older->newer : &s->oldest) = e->newer;
    *(e->newer ? &e->newer->older : &s->newest) = e->older;
    e->older = e->newer = NULL;
}

static void lru_push(struct shard *s, struct entry *e)
{
    e->older = s->newest;
    e->newer = NULL;
    *(s->newest ? &s->newest->newer : &s->oldest) = e;
    s->newest = e;
}

/* The link that points at key's entry (or at the NULL that ends its bucket) */
static struct entry **find(struct shard *s, uint64_t hash, const void *key, size_t klen)
{
    struct entry **at = &s->buckets[hash & (s->nbuckets - 1)];
    while (*at != NULL && ((*at)->hash != hash || (*at)->klen != klen || memcmp((*at)->bytes, key, klen) != 0))
        at = &(*at)->next;
    return at;
}

static void drop(struct shard *s, struct entry **at)
{
    struct entry *e = *at;
    *at = e->next;
    lru_unlink(s, e);
    s->n--;
    s->bytes -= cost(e);
    free(e);
}

/* Doubles the table when it holds more entries than buckets; stays as it is when out of memory */
static void grow(struct shard *s)
{
    size_t n = s->nbuckets * 2;
    struct entry **b = calloc(n, sizeof(*b));
    if (b == NULL)
        return;
    for (size_t i = 0; i < s->nbuckets; i++)
        for (struct entry *e = s->buckets[i], *next; e != NULL; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

static struct shard *shard_of(canal_cache_t *c, uint64_t hash)
{
    return &c->shards[hash >> 60]; /* the top bits: the bucket takes the low ones */
}

/* ---- the calls ---- */

int canal_cache_set(canal_cache_t *c, const void *key, size_t klen, const void *value, size_t vlen, unsigned ttl_ms)
{
    if (key == NULL || klen == 0 || klen > CANAL_CACHE_MAX_KEY || (value == NULL && vlen > 0))
        return CANAL_EINVAL;
    if (ENTRY_COST + klen + vlen > c->max_shard)
        return CANAL_ELIMIT;
    struct entry *e = malloc(sizeof(*e) + klen + vlen);
    if (e == NULL)
        return CANAL_ENOMEM;
    unsigned ttl = ttl_ms ? ttl_ms : c->ttl_ms;
    *e = (struct entry){.hash = canal__siphash(c->k0, c->k1, key, klen), .klen = klen, .vlen = vlen,
                        .expires_ms = ttl ? now_ms() + ttl : 0};
    memcpy(e->bytes, key, klen);
    if (vlen > 0)
        memcpy(e->bytes + klen, value, vlen);
    struct shard *s = shard_of(c, e->hash);
    pthread_mutex_lock(&s->lock);
    struct entry **at = find(s, e->hash, key, klen);
    if (*at != NULL)
        drop(s, at);
    uint64_t evicted = 0;
    while (s->oldest != NULL && s->bytes + cost(e) > c->max_shard) {
        drop(s, find(s, s->oldest->hash, s->oldest->bytes, s->oldest->klen));
        evicted++;
    }
    at = &s->buckets[e->hash & (s->nbuckets - 1)];
    e->next = *at;
    *at = e;
    lru_push(s, e);
    s->n++;
    s->bytes += cost(e);
    if (s->n > s->nbuckets)
        grow(s);
    pthread_mutex_unlock(&s->lock);
    if (evicted)
        atomic_fetch_add(&c->evictions, evicted);
    return 0;
}

int canal_cache_get(canal_cache_t *c, const void *key, size_t klen, void *buf, size_t size, size_t *len)
{
    if (key == NULL || klen == 0 || klen > CANAL_CACHE_MAX_KEY) {
        atomic_fetch_add(&c->misses, 1);
        return CANAL_ENOTFOUND;
    }
    uint64_t hash = canal__siphash(c->k0, c->k1, key, klen);
    struct shard *s = shard_of(c, hash);
    int rc = CANAL_ENOTFOUND;
    pthread_mutex_lock(&s->lock);
    struct entry **at = find(s, hash, key, klen);
    if (*at != NULL && (*at)->expires_ms != 0 && (*at)->expires_ms <= now_ms())
        drop(s, at); /* expired: gone when met */
    else if (*at != NULL) {
        struct entry *e = *at;
        lru_unlink(s, e);
        lru_push(s, e);
        if (len != NULL)
            *len = e->vlen;
        rc = size < e->vlen ? CANAL_ELIMIT : 0;
        if (rc == 0 && e->vlen > 0)
            memcpy(buf, e->bytes + e->klen, e->vlen);
    }
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add(rc == CANAL_ENOTFOUND ? &c->misses : &c->hits, 1);
    return rc;
}

int canal__cache_visit(canal_cache_t *c, const void *key, size_t klen,
                       int (*fn)(const unsigned char *value, size_t vlen, void *arg), void *arg)
{
    uint64_t hash = canal__siphash(c->k0, c->k1, key, klen);
    struct shard *s = shard_of(c, hash);
    int rc = CANAL_ENOTFOUND;
    pthread_mutex_lock(&s->lock);
    struct entry **at = find(s, hash, key, klen);
    if (*at != NULL && (*at)->expires_ms != 0 && (*at)->expires_ms <= now_ms()) {
        drop(s, at);
    } else if (*at != NULL) {
        struct entry *e = *at;
        rc = fn(e->bytes + e->klen, e->vlen, arg);
        if (rc == CANAL__CACHE_STALE) {
            drop(s, at);
            rc = CANAL_ENOTFOUND;
        } else {
            lru_unlink(s, e);
            lru_push(s, e);
        }
    }
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(rc == CANAL_ENOTFOUND ? &c->misses : &c->hits, 1, memory_order_relaxed);
    return rc;
}

void canal__cache_bound(canal_cache_t *c, size_t max_bytes)
{
    c->max_shard = max_bytes / SHARDS;
}

int canal_cache_delete(canal_cache_t *c, const void *key, size_t klen)
{
    if (key == NULL || klen == 0 || klen > CANAL_CACHE_MAX_KEY)
        return CANAL_ENOTFOUND;
    uint64_t hash = canal__siphash(c->k0, c->k1, key, klen);
    struct shard *s = shard_of(c, hash);
    pthread_mutex_lock(&s->lock);
    struct entry **at = find(s, hash, key, klen);
    int found = *at != NULL;
    if (found)
        drop(s, at);
    pthread_mutex_unlock(&s->lock);
    return found ? 0 : CANAL_ENOTFOUND;
}

/* ---- the feature: the app's caches, their metrics ---- */

struct caches {
    canal_cache_t *head;
};

static void cache_free(canal_cache_t *c)
{
    for (size_t i = 0; i < SHARDS; i++) {
        struct shard *s = &c->shards[i];
        while (s->oldest != NULL)
            drop(s, find(s, s->oldest->hash, s->oldest->bytes, s->oldest->klen));
        free(s->buckets);
        pthread_mutex_destroy(&s->lock);
    }
    free(c->name);
    free(c);
}

static int name_ok(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

canal_cache_t *canal_cache_create(canal_app_t *app, const canal_cache_options_t *opts, canal_error_info_t *err)
{
    canal_cache_options_t o = opts != NULL ? *opts : (canal_cache_options_t){0};
    const char *name = o.name ? o.name : "cache";
    if (*name == '\0' || !name_ok(name)) {
        canal_error_set(err, CANAL_EINVAL, 0, "cache name '%.64s': letters, digits, '_' and '-' only", name);
        return NULL;
    }
    struct caches *all = canal__feature_on(app, &feature);
    canal_cache_t *c = all != NULL ? calloc(1, sizeof(*c)) : NULL;
    unsigned char k[16];
    if (c == NULL || (c->name = strdup(name)) == NULL || RAND_bytes(k, sizeof(k)) != 1) {
        if (c != NULL)
            free(c->name), free(c);
        canal_error_set(err, CANAL_ENOMEM, 0, "cache %s: out of memory", name);
        return NULL;
    }
    memcpy(&c->k0, k, 8);
    memcpy(&c->k1, k + 8, 8);
    c->max_shard = (o.max_bytes ? o.max_bytes : (size_t)64 << 20) / SHARDS;
    c->ttl_ms = o.ttl_ms;
    size_t ok = 0;
    for (; ok < SHARDS; ok++) {
        struct shard *s = &c->shards[ok];
        s->nbuckets = 16;
        if ((s->buckets = calloc(s->nbuckets, sizeof(*s->buckets))) == NULL || pthread_mutex_init(&s->lock, NULL) != 0) {
            free(s->buckets);
            break;
        }
    }
    if (ok < SHARDS) {
        for (size_t i = 0; i < ok; i++)
            free(c->shards[i].buckets), pthread_mutex_destroy(&c->shards[i].lock);
        free(c->name);
        free(c);
        canal_error_set(err, CANAL_ENOMEM, 0, "cache %s: out of memory", name);
        return NULL;
    }
    c->next = all->head;
    all->head = c;
    return c;
}

static void caches_metrics(canal_app_t *app, void *st, FILE *f)
{
    const struct caches *all = st;
    static const char *const counters[] = {"hits", "Values found", "misses", "Values absent or expired", "evictions",
                                           "Values pushed out by the size bound"};
    for (int k = 0; k < 4 && all->head != NULL; k++) {
        const char *what = k < 3 ? counters[2 * k] : "bytes";
        fprintf(f, "# HELP canal_cache_%s%s %s.\n# TYPE canal_cache_%s%s %s\n", what, k < 3 ? "_total" : "",
                k < 3 ? counters[2 * k + 1] : "Bytes of keys, values and entries held", what, k < 3 ? "_total" : "",
                k < 3 ? "counter" : "gauge");
        for (canal_cache_t *c = all->head; c != NULL; c = c->next) {
            uint64_t v = k == 0 ? atomic_load(&c->hits) : k == 1 ? atomic_load(&c->misses) : k == 2 ? atomic_load(&c->evictions) : 0;
            for (size_t i = 0; k == 3 && i < SHARDS; i++) {
                pthread_mutex_lock(&c->shards[i].lock);
                v += c->shards[i].bytes;
                pthread_mutex_unlock(&c->shards[i].lock);
            }
            fprintf(f, "canal_cache_%s%s{cache=\"", what, k < 3 ? "_total" : "");
            canal__metrics_label(f, c->name);
            fprintf(f, "\"} %llu\n", (unsigned long long)v);
        }
    }
}

static void caches_dispose(canal_app_t *app, void *st)
{
    struct caches *all = st;
    for (canal_cache_t *c = all->head, *next; c != NULL; c = next) {
        next = c->next;
        cache_free(c);
    }
}

static const struct canal__feature feature = {
    .name = "data caches",
    .size = sizeof(struct caches),
    .dispose = caches_dispose,
    .metrics = caches_metrics,
};
