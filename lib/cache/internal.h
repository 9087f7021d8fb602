/* SPDX-License-Identifier: MIT */
/*
 * The data cache's calls for the output cache (output.c), inside lib/cache.
 */
#ifndef CANAL_CACHE_INTERNAL_H
#define CANAL_CACHE_INTERNAL_H

#include <stddef.h>
#include "canal/cache.h"

/* What a visitor returns: the value served (a hit), or not served: it is dropped, a miss */
#define CANAL__CACHE_SERVED 0
#define CANAL__CACHE_STALE 1

/* Looks key up and, on a live entry, calls fn(value, vlen, arg) under the shard's lock (fn
 * copies what it needs; it must not call the cache). Returns fn's answer, or CANAL_ENOTFOUND
 * (absent, expired, or STALE: then the entry is gone). Counts a hit or a miss as
 * canal_cache_get(). */
int canal__cache_visit(canal_cache_t *c, const void *key, size_t klen,
                       int (*fn)(const unsigned char *value, size_t vlen, void *arg), void *arg);

/* Sets the size bound of a cache that holds nothing yet (registration) */
void canal__cache_bound(canal_cache_t *c, size_t max_bytes);

#endif
