/* SPDX-License-Identifier: MIT */
/**
 * @file canal/ops.h
 * What running a canal service in production asks of the framework: Prometheus metrics,
 * static files, response compression and CORS. docs/operations.md has the whole story.
 *
 * Every call here configures the app and is made before canal_app_start() (CANAL_ESTATE
 * afterwards). Policies and options are copied; nothing given here needs to outlive the call,
 * except where a comment says so.
 *
 * Cost: a feature that is not switched on costs nothing per request but a predictable branch;
 * metrics, when on, are per-worker counters summed only when scraped.
 */
#ifndef CANAL_OPS_H
#define CANAL_OPS_H

#include <stddef.h>
#include "export.h"
#include "server.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- metrics ---- */

/**
 * Switches metrics on and serves them in the Prometheus text format (version 0.0.4) at
 * GET path (a route template, e.g. "metrics"; the route is counted like any other):
 *   canal_http_requests_total{route,method,status}   counter, by route template (with a
 *                                                    leading '/'; "(unmatched)" for 404, 405
 *                                                    and early answers)
 *   canal_http_request_duration_seconds{route}       histogram, from the request's start
 *                                                    (h2o's loop clock when its first bytes
 *                                                    were read) until the answer is sent
 *   canal_http_requests_in_flight                    gauge (the scrape counts itself)
 *   canal_http_connections                           gauge, open connections
 *   canal_workers                                    gauge, worker threads
 * Each worker counts into its own memory (no shared atomics); a scrape sums the workers.
 * Requests served by canal_app_static() are not counted (h2o answers them without canal).
 * Returns 0, a router error for a bad path (err says why), CANAL_EEXIST if called twice,
 * CANAL_ESTATE once started.
 */
CANAL_API int canal_app_metrics(canal_app_t *app, const char *path, canal_error_info_t *err);

/* ---- static files ---- */

/** Flags of canal_app_static(). */
enum {
    CANAL_STATIC_GZIP = 1,     /**< serve "x.gz" for "x" when present and the client accepts gzip */
    CANAL_STATIC_NO_ETAG = 2,  /**< no ETag (Last-Modified and If-Modified-Since still work) */
    CANAL_STATIC_INDEX = 4     /**< a directory serves its index.html */
};

/**
 * Serves the files under dir at URL prefix (e.g. "/static") through libh2o's file handler:
 * GET and HEAD, Range requests (206), ETag and If-None-Match (304), Last-Modified, a MIME type
 * from the file name's extension. h2o resolves dot-segments and percent-escapes before the
 * path is looked up, so no request reaches outside dir. Requests under the prefix never reach
 * the router. prefix and dir are copied.
 * Returns 0; CANAL_EINVAL if prefix does not start with '/' or is "/" alone, or dir is not a
 * readable directory (err says which); CANAL_EEXIST for a prefix served already; CANAL_ESTATE
 * once started.
 */
CANAL_API int canal_app_static(canal_app_t *app, const char *prefix, const char *dir,
                               unsigned flags, canal_error_info_t *err);

/* ---- compression ---- */

/** Options of canal_app_compress(). All-zero means the defaults. */
typedef struct canal_compress_options {
    size_t min_size;   /**< smallest body compressed, in bytes (0: the default, 1024) */
    int gzip_level;    /**< 1 (fastest, default) to 9 */
    int brotli_level;  /**< 0: no brotli; 1-11: brotli when libh2o has it (Debian's 2.2.5 has
                            not: then CANAL_EINVAL) */
} canal_compress_options_t;

/**
 * Compresses answers (routes and static files) with gzip when the client's Accept-Encoding
 * allows it, the status is 200, the body is at least min_size bytes and its Content-Type is a
 * compressible one (text/..., application/json, +json, +xml, JavaScript, SVG...). Compressed
 * answers carry Content-Encoding and Vary: Accept-Encoding. opts may be NULL for the defaults.
 * Returns 0, CANAL_EINVAL for a bad level, CANAL_ESTATE once started.
 */
CANAL_API int canal_app_compress(canal_app_t *app, const canal_compress_options_t *opts);

/** 1 if this libh2o can compress with brotli. */
CANAL_API int canal_compress_has_brotli(void);

/**
 * Per route: on 0 never compresses the answers of the route registered for method and tmpl
 * (as given to canal_app_route()); on 1 compresses them even when their Content-Type is not in
 * the compressible list (the size and Accept-Encoding rules still apply). Has an effect only
 * with canal_app_compress(). Returns 0, CANAL_ENOTFOUND, CANAL_ESTATE.
 */
CANAL_API int canal_app_compress_route(canal_app_t *app, const char *method, const char *tmpl,
                                       int on);

/** The same for one answer, from its handler before it answers: on 0 never, 1 always. */
CANAL_API void canal_res_compress(canal_req_t *req, int on);

/* ---- CORS ---- */

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

/** As canal_app_cors() for one route. */
CANAL_API int canal_app_cors_route(canal_app_t *app, const canal_route_t *route,
                                   const canal_cors_t *policy);


#ifdef __cplusplus
}
#endif

#endif
