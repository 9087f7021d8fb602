/* SPDX-License-Identifier: MIT */
/**
 * @file canal/cookie.h
 * Cookies (RFC 6265): reading the Cookie fields of a request, writing Set-Cookie with safe
 * defaults, values signed with HMAC-SHA256 (key rotation), and server-side sessions carried by
 * a signed cookie (docs/security.md, "Cookies and sessions").
 *
 * Reading. canal_cookie_next() parses one Cookie field value, pair by pair; it is the parser
 * every other cookie reader uses (canal_req_cookie(), sessions, binding). The grammar is RFC
 * 6265 4.2.1 read leniently where browsers differ and strictly where it matters:
 *   - pairs are separated by ';' with optional spaces or tabs around it;
 *   - a name is an RFC 9110 token; a value is *cookie-octet, or the same between two
 *     DQUOTEs (the quotes are not part of the value);
 *   - a pair that breaks this (no '=', an empty or non-token name, a space, comma, backslash,
 *     DQUOTE, control byte, NUL or non-ASCII byte in the value) is malformed: it is skipped as
 *     if absent, and parsing goes on after its ';'. A client cannot smuggle a NUL-cut or
 *     space-padded value past a reader;
 *   - names are case-sensitive ("SID" is not "sid").
 * Duplicates: a request may carry a name twice (two paths, or a cookie set by a sibling
 * domain). canal_req_cookie() gives the first, which is the one with the longest path (RFC
 * 6265 5.4 has clients send those first); canal_req_cookie_signed() gives the first whose
 * signature verifies, so a forged cookie tossed in front of a real one does not hide it.
 * Several Cookie fields (HTTP/2 splits them, RFC 9113 8.2.3) are read in order as one list.
 */
#ifndef CANAL_COOKIE_H
#define CANAL_COOKIE_H

#include <stddef.h>
#include <stdint.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading cookies ---- */

/** One cookie of a Cookie field: slices of the field value (quotes removed). */
typedef struct canal_cookie {
    canal_str_t name;  /**< a token, case-sensitive */
    canal_str_t value; /**< cookie-octets, without the quotes if it had them */
} canal_cookie_t;

/**
 * Parses the next well-formed cookie-pair of a Cookie field value, starting at *at (0 to
 * begin), and moves *at past it. Returns 1 with *out set, or 0 at the end of the field.
 * Malformed pairs are skipped (see the header's top); *malformed (if not NULL) is increased
 * by the number skipped. Allocates nothing: out's slices point into field.
 */
CANAL_API int canal_cookie_next(canal_str_t field, size_t *at, canal_cookie_t *out, size_t *malformed);

/**
 * The value of the first well-formed cookie called name in the request's Cookie fields.
 * Returns 0 with *value set (it lives as long as the request), or CANAL_ENOTFOUND with
 * *value left as it was.
 */
CANAL_API int canal_req_cookie(const canal_req_t *req, const char *name, canal_str_t *value);

/* ---- writing cookies ---- */

/** The SameSite attribute of a cookie (RFC 6265bis). Zero is Lax. */
typedef enum canal_same_site {
    CANAL_SAME_SITE_LAX = 0, /**< sent on top-level navigations from other sites (default) */
    CANAL_SAME_SITE_STRICT,  /**< never sent on requests from other sites */
    CANAL_SAME_SITE_NONE     /**< always sent; needs Secure */
} canal_same_site_t;

/**
 * How a cookie is set. Zero is the safe default: `Path=/; HttpOnly; Secure; SameSite=Lax`,
 * host-only (no Domain), a session cookie (no Max-Age or Expires).
 */
typedef struct canal_cookie_options {
    const char *path;          /**< NULL: "/"; else a path of printable ASCII without ';' */
    const char *domain;        /**< NULL (default): host-only; else a domain name */
    int64_t max_age;           /**< seconds (> 0); 0: none (a session cookie) */
    int64_t expires;           /**< Unix time written as an IMF-fixdate Expires; 0: none */
    int not_http_only;         /**< 1: leave HttpOnly out (scripts may read the cookie) */
    int not_secure;            /**< 1: leave Secure out (sent over plain HTTP too) */
    canal_same_site_t same_site; /**< default Lax */
} canal_cookie_options_t;

/**
 * Writes "name=value; attributes" (a Set-Cookie field value, no CRLF) into buf (size bytes,
 * NUL-terminated). opts may be NULL for the defaults. Returns the length written (without the
 * NUL), or a negative error with err (if given) saying why: CANAL_EINVAL for a name that is
 * not a token, a value that is not cookie-octets, a bad path or domain, a negative max_age,
 * SameSite=None without Secure; CANAL_ELIMIT when buf is too small.
 */
CANAL_API int canal_cookie_format(char *buf, size_t size, const char *name, canal_str_t value,
                                  const canal_cookie_options_t *opts, canal_error_info_t *err);

/**
 * Adds a Set-Cookie header to the answer (canal_cookie_format()'s field, at most 4096 bytes).
 * Returns 0, CANAL_EINVAL or CANAL_ELIMIT (err says why; nothing is added), CANAL_ESTATE
 * once committed.
 */
CANAL_API int canal_res_cookie(canal_req_t *req, const char *name, canal_str_t value,
                               const canal_cookie_options_t *opts, canal_error_info_t *err);

/**
 * Adds a Set-Cookie header that deletes the cookie name: an empty value, Max-Age=0 and an
 * Expires in 1970. The path and domain must be those the cookie was set with (opts; NULL:
 * the defaults); max_age and expires of opts are ignored. Returns as canal_res_cookie().
 */
CANAL_API int canal_res_cookie_delete(canal_req_t *req, const char *name,
                                      const canal_cookie_options_t *opts, canal_error_info_t *err);

/* ---- signed values ---- */

/**
 * A set of HMAC-SHA256 keys: the first signs, every one verifies (key rotation: put the new
 * key first and keep the old ones until their values have expired). Opaque; immutable once
 * made, so it may be used from every thread at once.
 */
typedef struct canal_signer canal_signer_t;

/** The most keys a signer holds. */
#define CANAL_SIGNER_MAX_KEYS 8

/**
 * Makes a signer of nkeys keys (1 to CANAL_SIGNER_MAX_KEYS, each at least 16 bytes; 32
 * random bytes are right), which are copied. NULL with err (if given) filled: CANAL_EINVAL
 * for a bad count or a short key, CANAL_ENOMEM.
 */
CANAL_API canal_signer_t *canal_signer_create(const canal_str_t *keys, size_t nkeys, canal_error_info_t *err);

/** Wipes and frees the keys. NULL is a no-op. */
CANAL_API void canal_signer_destroy(canal_signer_t *s);

/** The length of the signed value of content_len bytes (canal_signer_sign()). */
CANAL_API size_t canal_signed_length(size_t content_len);

/**
 * Signs content for a purpose (a cookie's name: a value signed for one cookie does not verify
 * as another's). Writes base64url(content) "." base64url(HMAC-SHA256(key, purpose NUL
 * base64url(content))), unpadded, into out (at least canal_signed_length() + 1 bytes,
 * NUL-terminated): cookie-octets only. Returns the length, or CANAL_ELIMIT if size is short.
 */
CANAL_API int canal_signer_sign(const canal_signer_t *s, const char *purpose, canal_str_t content,
                                char *out, size_t size);

/**
 * Verifies a signed value for purpose with each key in turn (the MAC compared in constant
 * time, CRYPTO_memcmp) and decodes its content into out (size bytes; at least the value's
 * length is always enough). Returns the content's length, or CANAL_EINVAL when the value
 * does not verify with any key (changed, truncated, extended, another key or purpose, not
 * the format) and CANAL_ELIMIT when out is too small.
 */
CANAL_API int canal_signer_verify(const canal_signer_t *s, const char *purpose, canal_str_t value,
                                  char *out, size_t size);

/**
 * The content of the first cookie called name in the request that verifies with s (purpose:
 * the cookie's name), decoded into request memory. Returns 0 with *content set, or
 * CANAL_ENOTFOUND (no such cookie, or none verifies: a forged value is as good as none),
 * leaving *content as it was.
 */
CANAL_API int canal_req_cookie_signed(const canal_req_t *req, const canal_signer_t *s, const char *name,
                                      canal_str_t *content);

/* ---- sessions ---- */

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
