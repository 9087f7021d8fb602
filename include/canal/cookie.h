/* SPDX-License-Identifier: MIT */
/**
 * @file canal/cookie.h
 * Cookies (RFC 6265): reading the Cookie fields of a request and writing Set-Cookie with safe
 * defaults (docs/security.md, "Cookies and sessions"). Signed values are in canal/signed.h,
 * sessions in canal/session.h.
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

#ifdef __cplusplus
}
#endif

#endif
