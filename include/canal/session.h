/* SPDX-License-Identifier: MIT */
/**
 * @file canal/session.h
 * Server-side sessions carried by a signed cookie (a part of the security feature), in an
 * in-memory store or one of the app's (canal_session_store_ops_t). docs/security.md,
 * "Cookies and sessions".
 */
#ifndef CANAL_SESSION_H
#define CANAL_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include "app.h"
#include "cookie.h"
#include "signed.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Where sessions are kept: a table from session ID to the session's data. canal's own is in
 * memory (canal_session_store_memory()); an app may give its own (a database, a cache shared
 * by several processes). Every function is called from worker threads, several at once: they
 * must be thread-safe. IDs are 16 random bytes; data is the app's bytes.
 */
typedef struct canal_session_store_ops {
    /** Copies the live data of id into buf (size bytes): its length, CANAL_ENOTFOUND for an
     * unknown, expired or revoked id, CANAL_ELIMIT if size is short. now: canal's clock, ms. */
    int (*get)(void *store, canal_str_t id, uint64_t now_ms, void *buf, size_t size);
    /** Keeps data (copied) under a new id until now_ms + ttl_ms: 0 or a canal error. */
    int (*put)(void *store, canal_str_t id, canal_str_t data, uint64_t now_ms, uint64_t ttl_ms);
    /** Forgets id: 0, or CANAL_ENOTFOUND if it was not there. */
    int (*revoke)(void *store, canal_str_t id);
    /** Frees the store (with the sessions object). May be NULL. */
    void (*destroy)(void *store);
} canal_session_store_ops_t;

/*
 * With the app's Redis store (canal_app_redis(), --store, canal/redis.h) and no store_ops of
 * the app's, sessions are kept in Redis instead, shared by every instance: a key per session
 * with the session's lifetime as its expiry, deleted by canal_session_end(). A route's
 * session is then loaded before its handler runs (only for a cookie that verifies), and
 * canal_session_begin() and canal_session_end() make the handler's answer wait until Redis
 * has the write (a 503 replaces it if the write fails). They must be called from a handler
 * (not after canal_req_defer()). When Redis is unreachable, canal_session_get() and
 * canal_session_end() return CANAL_ECLOSED, and so does canal_session_begin() (answer with
 * canal_redis_unavailable()).
 */

/**
 * canal's in-memory store: a hash table under one mutex, shared by all worker threads, of at
 * most max_sessions sessions (0: 10,000). Expired sessions are dropped when met; when the
 * store is full, the oldest session (the first to expire, as they share one lifetime) is
 * dropped to make room, which logs its user out. *ops and *store receive it; the sessions
 * object frees it. Returns 0 or CANAL_ENOMEM.
 */
CANAL_API int canal_session_store_memory(size_t max_sessions, const canal_session_store_ops_t **ops,
                                         void **store);

/** Sessions of an app: the cookie, its signer and the store. Opaque; owned by the app. */
typedef struct canal_sessions canal_sessions_t;

/** How sessions are kept. Zero is a default except for signer. */
typedef struct canal_sessions_options {
    const char *cookie;             /**< the cookie's name; NULL: "sid" */
    const canal_signer_t *signer;   /**< required; borrowed: it must outlive the app */
    canal_cookie_options_t cookie_options; /**< the defaults: Path=/; HttpOnly; Secure;
                                            SameSite=Lax (max_age is set from ttl_s) */
    unsigned ttl_s;                 /**< a session's lifetime in seconds; 0: 8 hours */
    size_t max_data;                /**< the most bytes of data per session; 0: 1024 */
    const canal_session_store_ops_t *store_ops; /**< NULL: the in-memory store */
    void *store;                    /**< the store, owned by the sessions object from now on */
    size_t max_sessions;            /**< for the in-memory store (0: 10,000) */
} canal_sessions_options_t;

/**
 * Makes the app's sessions (freed with the app, store included). NULL with err filled:
 * CANAL_EINVAL (no signer, a bad cookie name), CANAL_ENOMEM.
 */
CANAL_API canal_sessions_t *canal_sessions_create(canal_app_t *app, const canal_sessions_options_t *opts,
                                                  canal_error_info_t *err);

/**
 * Replaces the sessions' signer, from any thread while the app runs (a reload hook's job,
 * canal_app_on_reload()): the cookies set from now on are signed with its first key, and a
 * cookie verifies with any of its keys. To rotate a secret without logging everyone out, give
 * the new key first and the old ones after it. Borrowed: signer, and each one it replaces,
 * must outlive the app (a request may still be using the one before). 0, or CANAL_EINVAL.
 */
CANAL_API int canal_sessions_set_signer(canal_sessions_t *s, const canal_signer_t *signer);

/**
 * Starts a new session holding data (copied): a new random ID (RAND_bytes) every time, so a
 * login never keeps an ID the client had (no session fixation), stored, and a Set-Cookie of
 * the signed ID added to the answer. Returns 0; CANAL_ELIMIT for data over max_data; the
 * store's error; CANAL_ESYS if no random bytes could be had.
 */
CANAL_API int canal_session_begin(canal_req_t *req, canal_sessions_t *s, canal_str_t data);

/**
 * The data of the request's session, copied into request memory: 0 with *data set, or
 * CANAL_ENOTFOUND (no cookie, one that does not verify, an unknown, expired or revoked
 * session) with *data left as it was.
 */
CANAL_API int canal_session_get(canal_req_t *req, canal_sessions_t *s, canal_str_t *data);

/**
 * Ends the request's session: revoked in the store (the cookie replayed later finds
 * nothing) and a Set-Cookie deleting the cookie added. Returns 0, or CANAL_ENOTFOUND when
 * the request has no cookie that verifies or the store does not hold its ID (nothing is
 * added then).
 */
CANAL_API int canal_session_end(canal_req_t *req, canal_sessions_t *s);

#ifdef __cplusplus
}
#endif

#endif
