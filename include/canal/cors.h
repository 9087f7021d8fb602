/* SPDX-License-Identifier: MIT */
/**
 * @file canal/cors.h
 * CORS policies (a part of the security feature), by route prefix or route, and for the
 * controller layer the filter canal_cors_filter() (canal/controller.h). docs/operations.md has
 * the whole story. Set before canal_app_start() (CANAL_ESTATE afterwards); policies are
 * copied. Routes without a policy pay nothing.
 */
#ifndef CANAL_CORS_H
#define CANAL_CORS_H

#include <stddef.h>
#include "export.h"
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A CORS policy. Strings are comma-separated lists (spaces allowed), matched
 * ASCII case-insensitively except origins, which are compared exactly.
 */
typedef struct canal_cors {
    const char *origins;   /**< "https://a.example, https://b.example", or "*" for any */
    const char *methods;   /**< allowed in preflights; NULL: the methods of the route */
    const char *headers;   /**< request headers allowed in preflights; NULL: none beyond the
                                CORS-safelisted ones; "*": any (not with credentials) */
    const char *expose;    /**< response headers scripts may read (Access-Control-Expose-Headers) */
    int credentials;       /**< 1: Access-Control-Allow-Credentials: true (the origin is then
                                echoed, never "*") */
    int max_age;           /**< seconds a preflight may be cached; 0: no Access-Control-Max-Age */
} canal_cors_t;

/**
 * Applies policy to every route whose template starts with the prefix (whole segments,
 * ASCII case-insensitive; "" or "/" for all routes), whenever it is registered, router and
 * controller routes alike. A later policy wins over an earlier one for the routes both cover.
 * A request with an Origin that the policy allows gets Access-Control-Allow-Origin (and
 * -Credentials, -Expose-Headers); every answer of the route gets Vary: Origin unless the
 * policy allows any origin without credentials. A preflight (OPTIONS with Origin and
 * Access-Control-Request-Method) to a path whose route for the requested method has a policy
 * is answered 204 with -Allow-Methods, -Allow-Headers and -Max-Age, or 403 (problem details)
 * when the origin, method or a requested header is not allowed. policy is copied.
 * Returns 0, CANAL_EINVAL (no origins), CANAL_ESTATE, CANAL_ENOMEM.
 */
CANAL_API int canal_app_cors(canal_app_t *app, const char *prefix, const canal_cors_t *policy);

/**
 * Reads policy again, the struct given to canal_app_cors(), canal_app_cors_route() or
 * canal_cors_filter() (the same address), after the app changed its fields: every route it
 * covers answers with its new values from then on, while the app runs (a reload hook's job,
 * canal_app_on_reload()). The routes it covers stay the same. Call it from one thread at a
 * time, not while the app is still registering routes. Returns 0; CANAL_EINVAL (no origins),
 * CANAL_ENOTFOUND (the app has no policy of that address), CANAL_ENOMEM (those done so far
 * have the new values).
 */
CANAL_API int canal_app_cors_reload(canal_app_t *app, const canal_cors_t *policy);

/** As canal_app_cors() for one route. */
CANAL_API int canal_app_cors_route(canal_app_t *app, const canal_route_t *route,
                                   const canal_cors_t *policy);

#ifdef __cplusplus
}
#endif

#endif
