/* SPDX-License-Identifier: MIT */
/**
 * @file canal/headers.h
 * The security headers preset (docs/security.md, "Security headers"): response fields that
 * tell browsers not to sniff types, leak referrers, frame the page or use plain HTTP, on
 * every answer canal gives for the app, a route group or a route.
 *
 * "Every answer" means every answer that leaves through canal's commit: the handlers', problem
 * details, the router's 404 and 405, refused requests, 500s, streams. For a request that
 * matched no route the app's preset applies. Answers libh2o writes before canal sees the
 * request (a head it cannot parse, a body over the limit) do not carry them.
 */
#ifndef CANAL_HEADERS_H
#define CANAL_HEADERS_H

#include <stdint.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The preset. Zero is the safe default: X-Content-Type-Options: nosniff, Referrer-Policy:
 * strict-origin-when-cross-origin, X-Frame-Options: DENY, and over TLS only (RFC 6797 7.2)
 * Strict-Transport-Security: max-age=31536000. No Content-Security-Policy unless csp is set
 * (put frame-ancestors there for browsers past X-Frame-Options).
 */
struct canal_security_headers {
    const char *referrer_policy; /**< NULL: "strict-origin-when-cross-origin"; "": none */
    const char *frame_options;   /**< X-Frame-Options; NULL: "DENY"; "SAMEORIGIN"; "": none */
    const char *csp;             /**< Content-Security-Policy; NULL (default): none */
    uint32_t hsts_max_age;       /**< seconds; 0: one year (31536000) */
    int hsts_include_subdomains; /**< 1: "; includeSubDomains" */
    int no_hsts;                 /**< 1: no Strict-Transport-Security, even over TLS */
    int no_nosniff;              /**< 1: no X-Content-Type-Options */
};

/* canal_security_headers_t is declared in canal/app.h (CANAL_SECURITY_HEADERS()). */

/** The kind of CANAL_SECURITY_HEADERS() (canal_route_option_t). */
CANAL_API extern const canal_option_kind_t canal_security_headers_option;
/**
 * A route's, an action's or a controller's preset (a const canal_security_headers_t *,
 * copied at registration), among its options: `.options = {CANAL_SECURITY_HEADERS(&strict)}`.
 * A value with CR, LF or NUL is CANAL_EINVAL at registration.
 */
#define CANAL_SECURITY_HEADERS(preset) {&canal_security_headers_option, (preset)}

/**
 * Applies preset (copied) to every answer of group's routes (and its subgroups'), or with
 * group NULL to every answer of the app, unrouted ones included. A route's own preset
 * (CANAL_SECURITY_HEADERS(), copied at registration) wins over its group's,
 * the nearest group over outer ones, any group over the app's; preset NULL removes a group's
 * or the app's. Settled when the app starts. Returns 0; CANAL_EINVAL for a value with CR, LF
 * or NUL; CANAL_ESTATE once started; CANAL_ENOMEM.
 */
CANAL_API int canal_app_security_headers(canal_app_t *app, canal_route_group_t *group,
                                         const canal_security_headers_t *preset);

#ifdef __cplusplus
}
#endif

#endif
