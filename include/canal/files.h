/* SPDX-License-Identifier: MIT */
/**
 * @file canal/files.h
 * Static files and response compression (the files feature). docs/operations.md has the whole
 * story. Every call but canal_res_compress() configures the app before canal_app_start()
 * (CANAL_ESTATE afterwards); options are copied. Never switched on, it costs nothing.
 */
#ifndef CANAL_FILES_H
#define CANAL_FILES_H

#include <stddef.h>
#include "export.h"
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* The same for one answer: canal_res_compress() (canal/response.h). */

#ifdef __cplusplus
}
#endif

#endif
