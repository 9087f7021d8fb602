/* SPDX-License-Identifier: MIT */
/**
 * @file canal/cache.h
 * A data cache: keyed values with a time to live and a size bound, safe from every worker
 * thread at once, for data that is costly to fetch (a row read on most requests, a rendered
 * fragment, TechEmpower's cached queries). It is not an answer cache: an app decides what to
 * keep and for how long.
 *
 *     canal_cache_t *worlds = canal_cache_create(app, &(canal_cache_options_t){
 *         .name = "worlds", .max_bytes = 1 << 20, .ttl_ms = 60000}, &err);
 *     world_t w;
 *     size_t len;
 *     if (canal_cache_get(worlds, &id, sizeof(id), &w, sizeof(w), &len) != 0) {
 *         ... read the row, then canal_cache_set(worlds, &id, sizeof(id), &w, sizeof(w), 0);
 *     }
 *
 * Keys and values are bytes, copied in and copied out, so nothing handed out can change or
 * go away under its reader. The cache is 16 shards, each a hash table and a least-recently-used
 * list under its own mutex; a shard holds at most max_bytes / 16 of keys and values (and a
 * small fixed cost per entry): a new value pushes the least recently used ones out. An entry
 * past its time to live is a miss, and goes when met. Hits, misses, evictions and the bytes
 * held are in /metrics (canal_cache_*{cache="NAME"}).
 *
 * The same file declares the output cache (below): whole answers of chosen routes, kept and
 * served again without running their handlers, like ASP.NET Core's OutputCache.
 */
#ifndef CANAL_CACHE_H
#define CANAL_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "error.h"
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A data cache, owned by its app (freed with it). Opaque. */
typedef struct canal_cache canal_cache_t;

/** A cache's settings; zero fields take the defaults. */
typedef struct canal_cache_options {
    const char *name;   /**< its label in /metrics (letters, digits, '_', '-'); NULL: "cache" */
    size_t max_bytes;   /**< the most bytes of keys, values and entries held; 0: 64 MiB */
    unsigned ttl_ms;    /**< an entry's time to live unless canal_cache_set() says; 0: none */
} canal_cache_options_t;

/** Most bytes of one key. */
#define CANAL_CACHE_MAX_KEY 1024

/**
 * Makes a cache owned by app, before or after canal_app_start(). NULL with err filled:
 * CANAL_EINVAL (a name with other characters), CANAL_ENOMEM.
 */
CANAL_API canal_cache_t *canal_cache_create(canal_app_t *app, const canal_cache_options_t *opts,
                                            canal_error_info_t *err);

/**
 * Stores value (vlen bytes, copied) under key (klen bytes, copied), replacing what was there,
 * for ttl_ms (0: the cache's). Returns 0; CANAL_EINVAL for an empty key or one over
 * CANAL_CACHE_MAX_KEY; CANAL_ELIMIT for an entry larger than a shard holds; CANAL_ENOMEM.
 */
CANAL_API int canal_cache_set(canal_cache_t *c, const void *key, size_t klen, const void *value, size_t vlen,
                              unsigned ttl_ms);

/**
 * Copies the value of key into buf (size bytes) and its length into *len. Returns 0 (a hit);
 * CANAL_ENOTFOUND (a miss: absent or expired); CANAL_ELIMIT when size is below the value's
 * length (*len says how much is needed; nothing copied; counted as a hit).
 */
CANAL_API int canal_cache_get(canal_cache_t *c, const void *key, size_t klen, void *buf, size_t size, size_t *len);

/** Removes key. Returns 0, or CANAL_ENOTFOUND. */
CANAL_API int canal_cache_delete(canal_cache_t *c, const void *key, size_t klen);

/*
 * ---- The output cache ----
 *
 * Opt-in per route (or controller action, or controller): CANAL_OUTPUT_CACHE(&policy) among
 * its options. The first GET of a key runs the handler; its answer, if it may be kept, is
 * stored; later GETs and HEADs of the same key are answered from the store, without the
 * handler, until the entry's time to live is over, the size bound pushes it out, or one of its
 * tags is evicted.
 *
 *     static const char *const vary[] = {"accept-language", NULL}, *const tags[] = {"fortunes", NULL};
 *     static const canal_output_policy_t cached = {.ttl_ms = 10000, .vary = vary, .tags = tags};
 *     canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "fortunes", .handler = fortunes,
 *                                                  .options = {CANAL_OUTPUT_CACHE(&cached)}}, NULL, NULL);
 *     ...
 *     canal_cache_evict_tag(app, "fortunes");    // a fortune was added: from any thread
 *
 * The key: the method (GET; a HEAD is answered from the GET's entry, with no body), the Host,
 * the path and the query as the client sent them (?a=1&b=2 and ?b=2&a=1 are two keys), and
 * the values of the request headers the policy varies by (absent and empty differ). A key
 * longer than CANAL_CACHE_MAX_KEY is not cached.
 *
 * What is kept: only the answer to a GET, status 200, whole (not a stream), of at most
 * max_body bytes: its Content-Type, the headers its handler set and its body. Headers the
 * commit adds (a request ID, a traceparent, an ETag, security headers, CORS) are not kept:
 * they are made again for every answer, a cached one too, as are the guards (rate limit,
 * CORS, policy) that run before the cache is asked.
 *
 * Never kept: an answer that sets a cookie (Set-Cookie), or carries Cache-Control private or
 * no-store; and, unless the policy sets allow_credentials, never the answer to (nor a cached
 * answer for) a request with credentials: an Authorization header or any Cookie header. canal
 * cannot tell which cookie says who the user is (a session, a token, an app's own), so a
 * request with any cookie is taken as authenticated; such requests run the handler.
 *
 * Tags: a policy names tags; canal_cache_evict_tag() drops every entry stored under one, from
 * any thread. An answer stored while its tag was evicted (its handler ran before the eviction)
 * is dropped too: the eviction wins.
 *
 * Bounds: the answers share one store of max_bytes (canal_app_output_cache()); a new answer
 * pushes the least recently used out. In /metrics the store is canal_cache_*{cache="output"}
 * (hits, misses, evictions by the size bound, bytes), and canal_output_cache_stores_total,
 * canal_output_cache_skipped_total (answers that could not be kept) and
 * canal_output_cache_tag_evictions_total count the rest.
 */

/** A route's output cache policy (CANAL_OUTPUT_CACHE()); copied at registration. */
typedef struct canal_output_policy {
    unsigned ttl_ms;             /**< how long an answer is served; 0: 60000 */
    const char *const *vary;     /**< request header names the key includes, NULL-terminated;
                                      NULL: none */
    const char *const *tags;     /**< tags of its answers (canal_cache_evict_tag()),
                                      NULL-terminated; NULL: none */
    int allow_credentials;       /**< 1: requests with Authorization or a Cookie are cached too
                                      (an answer for everyone, whoever asks) */
} canal_output_policy_t;

/** Most vary headers of one policy. */
#define CANAL_OUTPUT_MAX_VARY 8
/** Most tags of one policy. */
#define CANAL_OUTPUT_MAX_TAGS 8

/** The kind of CANAL_OUTPUT_CACHE() (canal_route_option_t). */
CANAL_API extern const canal_option_kind_t canal_output_cache_option;

/** A route's (or an action's, or a controller's) output cache:
 * `.options = {CANAL_OUTPUT_CACHE(&policy)}`. A policy with a header name that is not a
 * token, an empty tag, or more than CANAL_OUTPUT_MAX_VARY headers or CANAL_OUTPUT_MAX_TAGS
 * tags is the route's registration error (CANAL_EINVAL). */
#define CANAL_OUTPUT_CACHE(policy) {&canal_output_cache_option, (const canal_output_policy_t *)(policy)}

/** The output cache's store; zero fields take the defaults. */
typedef struct canal_output_cache_options {
    size_t max_bytes;            /**< the most bytes of keys, answers and entries; 0: 64 MiB */
    size_t max_body;             /**< the largest body kept; 0: 1 MiB */
} canal_output_cache_options_t;

/**
 * Sizes the app's output cache (by default 64 MiB, bodies to 1 MiB). Before canal_app_start().
 * 0, CANAL_EINVAL, CANAL_ESTATE (started), CANAL_ENOMEM; a failure is also the app's
 * registration error.
 */
CANAL_API int canal_app_output_cache(canal_app_t *app, const canal_output_cache_options_t *opts);

/**
 * Evicts every answer of the output cache stored under tag: the next request of each runs its
 * handler. From any thread, after canal_app_start() too. Returns 0, CANAL_ENOTFOUND (no route's
 * policy names that tag), CANAL_EINVAL (NULL).
 */
CANAL_API int canal_cache_evict_tag(canal_app_t *app, const char *tag);

#ifdef __cplusplus
}
#endif

#endif
