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

#ifdef __cplusplus
}
#endif

#endif
