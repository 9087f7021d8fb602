/* SPDX-License-Identifier: MIT */
/*
 * The output cache (canal/cache.h): whole answers of the routes that opt in, kept in a data
 * cache named "output" (data.c: shards, LRU, TTL, the size bound, its metrics) and served again
 * by a guard (core/feature.h) before the handler runs.
 *
 * A route with CANAL_OUTPUT_CACHE() gets, at start, a guard at order 45 (after the rate limit,
 * CORS, the policy and the body limit: a cached answer is never served to a request they
 * refuse) and a head. The guard builds the key on its stack; on a hit it copies the entry into
 * request memory under the shard's lock, puts back its headers and answers (the handler does
 * not run, the commit's own heads do); on a miss of a GET it notes, in the request's state,
 * the key, where the handler's headers begin, and the generation of each of the policy's
 * tags. The head, at the commit, stores the answer if it may be kept.
 *
 * Tags are generations: canal_cache_evict_tag() adds one to the tag's counter (an atomic, any
 * thread); an entry holds the generations of its tags as they were when its handler started,
 * and an entry whose generation is behind is dropped when met (a miss). So an eviction is
 * O(1), and an answer computed across an eviction is never served. Stale entries wait for the
 * LRU or a lookup; they count in the bytes held meanwhile.
 *
 * An entry's value: the number of tags and their generations (4 bytes, then 8 bytes each, the
 * policy's order), then the lengths of the head part and of the body (4 bytes each), the head part (the Content-Type,
 * NUL-terminated, then the header count and each header as name length, value length, name,
 * value), then the body.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include "core/feature.h"
#include "canal/cache.h"
#include "cache/internal.h"

#define GUARD_ORDER 45 /* after the body limit (40): core/feature.h */
#define DEFAULT_TTL_MS 60000u
#define DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define DEFAULT_MAX_BODY ((size_t)1 << 20)

static const struct canal__feature feature;

struct tag {
    char *name;
    atomic_uint_fast64_t gen;
};

/* a route's policy, as kept at registration */
struct policy {
    unsigned ttl_ms;
    int allow_credentials;
    size_t nvary, ntags;
    struct {
        const h2o_token_t *token; /* a header libh2o knows, else NULL: by name */
        char *name;
        size_t len;
    } vary[CANAL_OUTPUT_MAX_VARY];
    size_t tags[CANAL_OUTPUT_MAX_TAGS]; /* indices in the app's tags */
    struct policy *next;                /* the app's policies, to free them */
    struct state *st;                   /* the app's (set at start) */
};

struct state {
    canal_cache_t *store;
    size_t max_bytes, max_body;
    struct tag *tags; /* grows at registration only: fixed once started */
    size_t ntags;
    struct policy *policies;
    atomic_uint_fast64_t stores, skipped, tag_evictions;
};

/* a GET that missed: what the head needs to store its answer */
struct pending {
    const struct policy *p;
    struct state *st;
    size_t first;  /* the first response header of the handler's (the guards' are before) */
    char *key;
    size_t klen;
    uint64_t gens[CANAL_OUTPUT_MAX_TAGS];
};

/* ---- registration ---- */

static struct state *state_of(canal_app_t *app)
{
    struct state *st = canal__feature_state(app, &feature);
    if (st != NULL && st->store == NULL) {
        canal_cache_options_t o = {.name = "output", .max_bytes = st->max_bytes ? st->max_bytes : DEFAULT_MAX_BYTES};
        st->store = canal_cache_create(app, &o, NULL);
        if (st->store == NULL)
            return NULL;
    }
    return st;
}

static int is_token(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!(*s > ' ' && *s < 127 && strchr("\"(),/:;<=>?@[\\]{}", *s) == NULL))
            return 0;
    return 1;
}

static void policy_free(struct policy *p)
{
    for (size_t i = 0; i < p->nvary; i++)
        free(p->vary[i].name);
    free(p);
}

/* the index of tag name in the app's tags, added if new; -1 when out of memory */
static long tag_index(struct state *st, const char *name)
{
    for (size_t i = 0; i < st->ntags; i++)
        if (strcmp(st->tags[i].name, name) == 0)
            return (long)i;
    struct tag *t = realloc(st->tags, (st->ntags + 1) * sizeof(*t));
    if (t == NULL)
        return -1;
    st->tags = t;
    if ((t[st->ntags].name = strdup(name)) == NULL)
        return -1;
    atomic_init(&t[st->ntags].gen, 0);
    return (long)st->ntags++;
}

static int option_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err)
{
    const canal_output_policy_t *in = value;
    struct state *st = state_of(app);
    if (st == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "output cache: out of memory");
    if (in == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "an output cache option is CANAL_OUTPUT_CACHE(&policy)");
    size_t nvary = 0, ntags = 0;
    for (; in->vary != NULL && in->vary[nvary] != NULL; nvary++)
        if (nvary == CANAL_OUTPUT_MAX_VARY || !is_token(in->vary[nvary]))
            return canal_error_set(err, CANAL_EINVAL, 0, "output cache: vary header %zu: %s", nvary,
                                   nvary == CANAL_OUTPUT_MAX_VARY ? "too many headers" : "not a header name");
    for (; in->tags != NULL && in->tags[ntags] != NULL; ntags++)
        if (ntags == CANAL_OUTPUT_MAX_TAGS || in->tags[ntags][0] == '\0')
            return canal_error_set(err, CANAL_EINVAL, 0, "output cache: tag %zu: %s", ntags,
                                   ntags == CANAL_OUTPUT_MAX_TAGS ? "too many tags" : "empty");
    struct policy *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "output cache: out of memory");
    p->ttl_ms = in->ttl_ms ? in->ttl_ms : DEFAULT_TTL_MS;
    p->allow_credentials = in->allow_credentials != 0;
    for (; p->nvary < nvary; p->nvary++) {
        size_t len = strlen(in->vary[p->nvary]);
        char *name = malloc(len + 1);
        if (name == NULL) {
            policy_free(p);
            return canal_error_set(err, CANAL_ENOMEM, 0, "output cache: out of memory");
        }
        for (size_t i = 0; i <= len; i++)
            name[i] = (char)h2o_tolower(in->vary[p->nvary][i]);
        p->vary[p->nvary].name = name;
        p->vary[p->nvary].len = len;
        p->vary[p->nvary].token = h2o_lookup_token(name, len);
    }
    for (; p->ntags < ntags; p->ntags++) {
        long i = tag_index(st, in->tags[p->ntags]);
        if (i < 0) {
            policy_free(p);
            return canal_error_set(err, CANAL_ENOMEM, 0, "output cache: out of memory");
        }
        p->tags[p->ntags] = (size_t)i;
    }
    p->next = st->policies;
    st->policies = p;
    *kept = p;
    return 0;
}
const canal_option_kind_t canal_output_cache_option = {&feature, "output cache", option_attach, NULL};

int canal_app_output_cache(canal_app_t *app, const canal_output_cache_options_t *opts)
{
    if (app == NULL || opts == NULL)
        return CANAL_EINVAL;
    if (atomic_load(&app->state) != APP_CREATED)
        return canal__reg_fail(app, NULL, CANAL_ESTATE, "output cache: the app has started");
    struct state *st = canal__feature_on(app, &feature);
    if (st == NULL)
        return canal__reg_fail(app, NULL, CANAL_ENOMEM, "output cache: out of memory");
    st->max_bytes = opts->max_bytes ? opts->max_bytes : DEFAULT_MAX_BYTES;
    st->max_body = opts->max_body ? opts->max_body : DEFAULT_MAX_BODY;
    /* the store now: a data cache cannot be made once the app starts */
    if (state_of(app) == NULL)
        return canal__reg_fail(app, NULL, CANAL_ENOMEM, "output cache: out of memory");
    canal__cache_bound(st->store, st->max_bytes);
    return 0;
}

int canal_cache_evict_tag(canal_app_t *app, const char *tag)
{
    if (app == NULL || tag == NULL)
        return CANAL_EINVAL;
    struct state *st = canal__feature_state(app, &feature);
    for (size_t i = 0; st != NULL && i < st->ntags; i++)
        if (strcmp(st->tags[i].name, tag) == 0) {
            atomic_fetch_add(&st->tags[i].gen, 1);
            atomic_fetch_add_explicit(&st->tag_evictions, 1, memory_order_relaxed);
            return 0;
        }
    return CANAL_ENOTFOUND;
}

/* ---- the request: the key, a hit, a miss ---- */

/* Appends len bytes of s to the key at *n; 0 when it would not fit */
static inline int put(char *key, size_t *n, const void *s, size_t len)
{
    if (len > CANAL_CACHE_MAX_KEY - *n)
        return 0;
    memcpy(key + *n, s, len);
    *n += len;
    return 1;
}

/* The request's key into key (CANAL_CACHE_MAX_KEY bytes); its length, or 0: too long */
static size_t make_key(canal_req_t *req, const struct policy *p, char *key)
{
    h2o_req_t *h = req->h2o;
    size_t n = 0;
    int ok = put(key, &n, "G", 1) && put(key, &n, h->authority.base, h->authority.len) && put(key, &n, "", 1) &&
             put(key, &n, req->path.base, req->path.len) && put(key, &n, "?", 1) &&
             put(key, &n, req->query.base, req->query.len);
    for (size_t v = 0; ok && v < p->nvary; v++) {
        /* each header: a NUL, then 0 (absent) or 1 and its values, ", " between them */
        ok = put(key, &n, "", 1);
        int seen = 0;
        for (ssize_t i = -1; ok;) {
            i = p->vary[v].token != NULL ? h2o_find_header(&h->headers, p->vary[v].token, i)
                                         : h2o_find_header_by_str(&h->headers, p->vary[v].name, p->vary[v].len, i);
            if (i < 0)
                break;
            const h2o_iovec_t *val = &h->headers.entries[i].value;
            ok = put(key, &n, seen ? ", " : "1", seen ? 2 : 1) && put(key, &n, val->base, val->len);
            seen = 1;
        }
        ok = ok && (seen || put(key, &n, "0", 1));
    }
    return ok ? n : 0;
}

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

struct hit {
    canal_req_t *req;
    const struct policy *p;
    const struct state *st;
    unsigned char *copy; /* the entry past its generations, in request memory */
    size_t head_len, body_len;
};

/* Under the shard's lock: a live entry is copied out (the head part alone for a HEAD) */
static int serve(const unsigned char *v, size_t vlen, void *arg)
{
    struct hit *hit = arg;
    const struct policy *p = hit->p;
    /* stored by a route of another policy (a HEAD route beside the GET one) or torn: dropped */
    size_t off = 4 + p->ntags * 8;
    if (vlen < off + 8 || rd32(v) != p->ntags || off + 8 + (size_t)rd32(v + off) + rd32(v + off + 4) != vlen)
        return CANAL__CACHE_STALE;
    for (size_t i = 0; i < p->ntags; i++) {
        uint64_t g;
        memcpy(&g, v + 4 + 8 * i, 8);
        if (g != atomic_load_explicit(&hit->st->tags[p->tags[i]].gen, memory_order_acquire))
            return CANAL__CACHE_STALE;
    }
    hit->head_len = rd32(v + off);
    hit->body_len = rd32(v + off + 4);
    off += 8;
    size_t n = hit->head_len + (hit->req->is_head ? 0 : hit->body_len);
    hit->copy = h2o_mem_alloc_pool(&hit->req->h2o->pool, n);
    memcpy(hit->copy, v + off, n);
    return CANAL__CACHE_SERVED;
}

/* The answer from a copied entry: its headers, its type, its body */
static void answer(canal_req_t *req, const struct hit *hit)
{
    h2o_req_t *h = req->h2o;
    const unsigned char *c = hit->copy;
    const char *type = (const char *)c;
    size_t tlen = strlen(type);
    const unsigned char *q = c + tlen + 1;
    uint32_t nh = rd32(q);
    q += 4;
    for (uint32_t i = 0; i < nh; i++) {
        uint32_t nlen = rd32(q), vlen = rd32(q + 4);
        q += 8;
        h2o_add_header_by_str(&h->pool, &h->res.headers, (const char *)q, nlen, 1, NULL, (const char *)q + nlen, vlen);
        q += nlen + vlen;
    }
    canal_res_body_static(req, 200, tlen ? type : NULL, req->is_head ? NULL : c + hit->head_len, hit->body_len);
}

static int cache_guard(canal_req_t *req, const void *arg)
{
    const struct policy *p = arg;
    h2o_req_t *h = req->h2o;
    if (!req->is_head && !h2o_memis(h->method.base, h->method.len, H2O_STRLIT("GET")))
        return 0;
    for (size_t i = 0; !p->allow_credentials && i < h->headers.size; i++)
        if (h->headers.entries[i].name == &H2O_TOKEN_AUTHORIZATION->buf ||
            h->headers.entries[i].name == &H2O_TOKEN_COOKIE->buf)
            return 0; /* credentials: the answer may be the user's own */
    struct state *st = p->st;
    char key[CANAL_CACHE_MAX_KEY];
    size_t klen = make_key(req, p, key);
    if (klen == 0) {
        atomic_fetch_add_explicit(&st->skipped, 1, memory_order_relaxed);
        return 0;
    }
    struct hit hit = {req, p, st, NULL, 0, 0};
    if (canal__cache_visit(st->store, key, klen, serve, &hit) == CANAL__CACHE_SERVED) {
        answer(req, &hit);
        return 1;
    }
    if (req->is_head)
        return 0; /* its body is not kept (canal_res_body()): the next GET stores the answer */
    struct pending *m = canal__req_state(req, &feature, sizeof(*m), NULL);
    if (m == NULL)
        return 0;
    m->p = p;
    m->st = st;
    m->first = h->res.headers.size;
    m->klen = klen;
    m->key = h2o_mem_alloc_pool(&h->pool, klen);
    memcpy(m->key, key, klen);
    for (size_t i = 0; i < p->ntags; i++)
        m->gens[i] = atomic_load_explicit(&st->tags[p->tags[i]].gen, memory_order_acquire);
    return 0;
}

/* Whether the list s holds the directive word (a Cache-Control value; case-insensitive) */
static int has_directive(const h2o_iovec_t *s, const char *word, size_t len)
{
    for (size_t i = 0; i + len <= s->len; i++)
        if (h2o_lcstris(s->base + i, len, word, len) && (i == 0 || s->base[i - 1] == ',' || s->base[i - 1] == ' ') &&
            (i + len == s->len || s->base[i + len] == ',' || s->base[i + len] == ' ' || s->base[i + len] == '='))
            return 1;
    return 0;
}

/* Whether the answer may be kept: no cookie set, not private or no-store */
static int keepable(const h2o_headers_t *hs)
{
    for (size_t i = 0; i < hs->size; i++) {
        const h2o_header_t *e = &hs->entries[i];
        if (e->name == &H2O_TOKEN_SET_COOKIE->buf)
            return 0;
        if (e->name == &H2O_TOKEN_CACHE_CONTROL->buf &&
            (has_directive(&e->value, H2O_STRLIT("private")) || has_directive(&e->value, H2O_STRLIT("no-store"))))
            return 0;
    }
    return 1;
}

static void put32(unsigned char **q, size_t v)
{
    uint32_t w = (uint32_t)v;
    memcpy(*q, &w, 4);
    *q += 4;
}

/* At the commit of a GET that missed: stores the answer if it may be kept */
static void cache_head(canal_req_t *req, h2o_req_t *h, const void *arg)
{
    struct pending *m = req != NULL ? canal__req_state_find(req, &feature) : NULL;
    if (m == NULL || m->p != arg)
        return;
    struct state *st = m->st;
    size_t max_body = st->max_body ? st->max_body : DEFAULT_MAX_BODY;
    if (req->res.status != 200 || req->stream != NULL || (req->res.body == NULL && req->res.len > 0) ||
        req->res.len > max_body || !keepable(&h->res.headers)) {
        atomic_fetch_add_explicit(&st->skipped, 1, memory_order_relaxed);
        return;
    }
    const struct policy *p = m->p;
    size_t last = req->res.nheaders < h->res.headers.size ? req->res.nheaders : h->res.headers.size;
    size_t head = req->res.type.len + 1 + 4;
    for (size_t i = m->first; i < last; i++)
        head += 8 + h->res.headers.entries[i].name->len + h->res.headers.entries[i].value.len;
    size_t vlen = 4 + p->ntags * 8 + 8 + head + req->res.len;
    unsigned char *v = malloc(vlen), *q = v;
    if (v == NULL) {
        atomic_fetch_add_explicit(&st->skipped, 1, memory_order_relaxed);
        return;
    }
    put32(&q, p->ntags);
    memcpy(q, m->gens, p->ntags * 8);
    q += p->ntags * 8;
    put32(&q, head);
    put32(&q, req->res.len);
    if (req->res.type.len > 0)
        memcpy(q, req->res.type.base, req->res.type.len);
    q += req->res.type.len;
    *q++ = '\0';
    put32(&q, last > m->first ? last - m->first : 0);
    for (size_t i = m->first; i < last; i++) {
        const h2o_header_t *e = &h->res.headers.entries[i];
        put32(&q, e->name->len);
        put32(&q, e->value.len);
        memcpy(q, e->name->base, e->name->len);
        q += e->name->len;
        memcpy(q, e->value.base, e->value.len);
        q += e->value.len;
    }
    if (req->res.len > 0)
        memcpy(q, req->res.body, req->res.len);
    int rc = canal_cache_set(st->store, m->key, m->klen, v, vlen, p->ttl_ms);
    free(v);
    atomic_fetch_add_explicit(rc == 0 ? &st->stores : &st->skipped, 1, memory_order_relaxed);
}

/* ---- the feature ---- */

static int cache_start(canal_app_t *app, void *vst)
{
    /* the store was made at registration (a route's option, canal_app_output_cache()) */
    for (struct policy *p = ((struct state *)vst)->policies; p != NULL; p = p->next)
        p->st = vst;
    for (size_t i = 0; i < app->nendpoints; i++) {
        struct canal_endpoint *ep = &app->endpoints[i];
        const struct policy *p = canal__endpoint_option(ep, &canal_output_cache_option);
        if (p == NULL)
            continue;
        if (canal__endpoint_guard(ep, GUARD_ORDER, cache_guard, p) != 0 || canal__endpoint_head(ep, cache_head, p) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "route %zu: too many guards or heads", i);
            return -1;
        }
    }
    return 0;
}

static void cache_dispose(canal_app_t *app, void *vst)
{
    struct state *st = vst;
    for (struct policy *p = st->policies, *next; p != NULL; p = next) {
        next = p->next;
        policy_free(p);
    }
    for (size_t i = 0; i < st->ntags; i++)
        free(st->tags[i].name);
    free(st->tags);
    /* the store is the data caches' feature's: freed with it */
}

static void cache_metrics(canal_app_t *app, void *vst, FILE *f)
{
    struct state *st = vst;
    fprintf(f,
            "# HELP canal_output_cache_stores_total Answers stored by the output cache.\n"
            "# TYPE canal_output_cache_stores_total counter\ncanal_output_cache_stores_total %llu\n"
            "# HELP canal_output_cache_skipped_total Answers of cached routes that could not be kept.\n"
            "# TYPE canal_output_cache_skipped_total counter\ncanal_output_cache_skipped_total %llu\n"
            "# HELP canal_output_cache_tag_evictions_total Tags evicted (canal_cache_evict_tag()).\n"
            "# TYPE canal_output_cache_tag_evictions_total counter\ncanal_output_cache_tag_evictions_total %llu\n",
            (unsigned long long)atomic_load(&st->stores), (unsigned long long)atomic_load(&st->skipped),
            (unsigned long long)atomic_load(&st->tag_evictions));
}

static const struct canal__feature feature = {
    .name = "output cache",
    .size = sizeof(struct state),
    .start = cache_start,
    .dispose = cache_dispose,
    .metrics = cache_metrics,
};
