/* SPDX-License-Identifier: MIT */
/**
 * @file canal/ratelimit.h
 * Rate limits: token buckets keyed by client, attached to routes, route groups or the app
 * (docs/security.md, "Rate limits").
 *
 * A limit of R requests per W seconds is a bucket of capacity R per key, refilled at R/W
 * tokens per second; each request takes one token, and a request that finds none is answered
 * 429 (problem details) before its handler runs and before its body is parsed, with
 * Retry-After (whole seconds, 1 to ceil(W): once that has passed the key has a token
 * again, unless its other requests took it) and RateLimit-Limit, RateLimit-Remaining (0) and
 * RateLimit-Reset. A request let through gets the same three RateLimit fields. After W
 * seconds without requests a key has its whole R again, so a burst then gets exactly R.
 *
 * One limit is one table, shared by every worker thread and keep-alive connection of the app:
 * a client is counted the same whichever connection or thread serves it. The table has a
 * fixed size (max_keys): a flood of distinct keys cannot grow it. When a new key finds its
 * set of the table full, it takes the place of a key whose bucket has refilled (forgetting
 * it changes nothing) or else of the least recently seen key, which then starts again with a
 * full bucket: eviction can only give an evicted key more requests, never fewer, so under a
 * flood of distinct keys larger than the table a limit is enforced less strictly, but no
 * client is refused because of others.
 *
 * With the app's Redis store (canal_app_redis(), --store; canal/redis.h) the buckets are in
 * Redis instead, shared by every instance: R per window holds over all of them, and a
 * Retry-After given by one is true on the others (one atomic script per check, on the
 * server's clock; a bucket's key expires a window after its last request). When Redis is
 * unreachable a limited route answers 503 problem details with Retry-After: 1.
 * canal_rate_limit_take() always uses the in-process table.
 */
#ifndef CANAL_RATELIMIT_H
#define CANAL_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a limit counts by. */
typedef enum canal_rate_key {
    CANAL_RATE_KEY_CLIENT_ADDR = 0, /**< canal_req_client_addr(): the TCP peer, or the client
                                         behind the trusted proxies (default) */
    CANAL_RATE_KEY_HEADER,          /**< the value of a request header (an API key); a request
                                         without it is counted by its client address */
    CANAL_RATE_KEY_CUSTOM           /**< key_fn's answer (the principal, a tenant, ...) */
} canal_rate_key_t;

/**
 * A custom key: sets *key (bytes, which must live as long as the request: request memory or
 * the request's own strings) and returns 0; or returns non-zero to count the request by its
 * client address. Called on worker threads, before the handler.
 */
typedef int (*canal_rate_key_fn)(canal_req_t *req, canal_str_t *key, void *data);

/** A rate limit's settings, for canal_rate_limit_create(). */
typedef struct canal_rate_limit_options {
    uint32_t requests;        /**< R, the bucket's capacity: 1 to 1,000,000 */
    uint32_t window_ms;       /**< W in milliseconds (R tokens are refilled per W): 1 ms to 1 day */
    canal_rate_key_t key;     /**< default CANAL_RATE_KEY_CLIENT_ADDR */
    const char *header;       /**< CANAL_RATE_KEY_HEADER: the header's name (copied) */
    canal_rate_key_fn key_fn; /**< CANAL_RATE_KEY_CUSTOM */
    void *key_data;           /**< passed to key_fn; borrowed */
    size_t max_keys;          /**< keys remembered at most (0: 65,536; rounded up to a power
                                   of 2, at least 64) */
    const char *name;         /**< a name for the metrics (copied; NULL: "limit<N>") */
} canal_rate_limit_options_t;

/* canal_rate_limit_t is declared in canal/app.h (CANAL_RATE_LIMIT()). */

/** The kind of CANAL_RATE_LIMIT() (canal_route_option_t). */
CANAL_API extern const canal_option_kind_t canal_rate_limit_option;
/**
 * A route's, an action's or a controller's rate limit (a canal_rate_limit_t * of the app's),
 * among its options: `.options = {CANAL_RATE_LIMIT(logins)}`. NULL is CANAL_EINVAL at
 * registration.
 */
#define CANAL_RATE_LIMIT(limit) {&canal_rate_limit_option, (limit)}

/**
 * Makes a rate limit owned by the app (freed with it). Attach it with
 * CANAL_RATE_LIMIT() among a route's options, canal_app_rate_limit() or both: one limit attached to
 * several routes is one budget for all of them. NULL with err filled: CANAL_EINVAL for a
 * setting out of range, CANAL_ESTATE once started, CANAL_ENOMEM.
 */
CANAL_API canal_rate_limit_t *canal_rate_limit_create(canal_app_t *app, const canal_rate_limit_options_t *opts,
                                                     canal_error_info_t *err);

/**
 * Attaches limit to every route of group (and of its subgroups), or with group NULL to every
 * route of the app. A route's own limit (CANAL_RATE_LIMIT()) wins over its
 * group's, the nearest group over outer ones, and any group over the app's; limit NULL
 * removes a group's or the app's. Settled when the app starts, so it covers routes
 * registered before or after the call. Returns 0, CANAL_ESTATE once started, CANAL_ENOMEM.
 */
CANAL_API int canal_app_rate_limit(canal_app_t *app, canal_route_group_t *group, const canal_rate_limit_t *limit);

/* ---- for tests and custom front ends: the bucket table without a request ---- */

/** The outcome of one request against a limit. */
typedef struct canal_rate_decision {
    int allowed;         /**< 1: a token was taken */
    uint32_t limit;      /**< R */
    uint32_t remaining;  /**< whole tokens left after this request */
    uint32_t retry_after; /**< not allowed: seconds until a token is back (>= 1) */
    uint32_t reset;      /**< seconds until the bucket is full again */
} canal_rate_decision_t;

/**
 * Changes a limit's numbers (the bounds of canal_rate_limit_options_t: 1 to 1,000,000
 * requests per 1 ms to 1 day), from any thread while the app runs: a reload hook's job
 * (canal_app_on_reload()). The requests from then on use them; a bucket keeps its tokens, cut
 * to the new capacity. Returns 0, or CANAL_EINVAL (a bound, or limit NULL), changing nothing.
 */
CANAL_API int canal_rate_limit_set(canal_rate_limit_t *limit, uint32_t requests, uint32_t window_ms);

/**
 * Takes a token for key at now_ms (any monotonic clock in milliseconds: canal passes its
 * own; tests pass a fake one) and says what happened. Thread-safe.
 */
CANAL_API void canal_rate_limit_take(canal_rate_limit_t *limit, canal_str_t key, uint64_t now_ms,
                                     canal_rate_decision_t *out);

/** Requests a limit has refused so far (429s). Any thread. */
CANAL_API uint64_t canal_rate_limit_refused(const canal_rate_limit_t *limit);

#ifdef __cplusplus
}
#endif

#endif
