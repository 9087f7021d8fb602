/* SPDX-License-Identifier: MIT */
/**
 * @file canal/openapi.h
 * An OpenAPI 3.1 document built from an app's routes, served at a path of the app's choice,
 * and an interactive page (Swagger UI) that renders it.
 *
 * Router mode: canal_openapi_build() describes every route: its template becomes an OpenAPI
 * path ("home/employee/{id:int}" -> "/home/employee/{id}"), each parameter a path parameter
 * whose schema says what its constraints accept (int -> integer/int32, range(1,9) ->
 * minimum/maximum, length(2,5) -> minLength/maxLength, regex(...) -> pattern, ...). A route
 * with optional parameters, defaults or a catch-all matches shorter paths too: each shorter
 * form is a path of its own. A catch-all is a path parameter marked "x-canal-catch-all" that
 * may hold '/'. Routes with parameters answer 404 problem details when a value fails its
 * constraints; the 400 validation problem and the 404 problem are described once in
 * "components" as application/problem+json.
 *
 * Controller mode: canal_mvc_openapi() (canal/controller.h) builds the same document and adds
 * what the actions declare: query, header and body parameters with their types and rules,
 * summaries, tags and response statuses.
 *
 * Then canal_app_openapi() serves the document and canal_app_docs() a page that renders it.
 */
#ifndef CANAL_OPENAPI_H
#define CANAL_OPENAPI_H

#include <jansson.h>
#include "export.h"
#include "error.h"
#include "router.h"
#include "server.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The document's "info" and "servers". Strings are copied into the document. */
typedef struct canal_openapi_info {
    const char *title;       /**< info.title; NULL: "canal app" */
    const char *version;     /**< info.version, the API's own version; NULL: "0.1.0" */
    const char *description; /**< info.description (CommonMark), or NULL */
    const char *server_url;  /**< servers[0].url; NULL: "/" (the server that serves it) */
    const char *license;     /**< info.license's name and SPDX identifier ("MIT"), or NULL */
} canal_openapi_info_t;

/** A header a documented answer carries (canal_response_def_t.headers), for OpenAPI. */
typedef struct canal_header_def {
    const char *name;        /**< e.g. "Location"; NULL ends a list */
    const char *description; /**< NULL: none */
} canal_header_def_t;

/** A documented answer of a route or an action (canal_route_doc_t.responses). */
typedef struct canal_response_def {
    int status;                   /**< 0 ends a list */
    const canal_schema_t *schema; /**< the body: one schema object (or an array of them with
                                       array set); NULL: no schema (problem details for >= 400) */
    int array;                    /**< 1: the body is an array of schema */
    const char *content_type;     /**< NULL: application/json, application/problem+json >= 400 */
    const char *description;      /**< NULL: the status's reason phrase */
    const canal_header_def_t *headers; /**< headers the answer carries (the Location of a 201),
                                            a list ended by a NULL name; NULL: none */
    int no_body;                  /**< 1: the answer has no body, whatever its status:
                                       documented without "content". Without it, 1xx, 204,
                                       205, 304, a 3xx with no schema and no content_type,
                                       and every answer of a HEAD operation have none */
} canal_response_def_t;

/** Most documented answers one route or action lists. */
#define CANAL_MAX_RESPONSES 8

/** The OpenAPI documentation of one route or action: CANAL_DOC(). */
typedef struct canal_route_doc {
    const char *summary;     /**< the operation's one-line summary; NULL: "METHOD /path" */
    const char *description; /**< its longer description (CommonMark), or NULL */
    canal_response_def_t responses[CANAL_MAX_RESPONSES]; /**< the documented answers (status
                                  0 ends); none: a "default" answer */
} canal_route_doc_t;

/** The kind of CANAL_DOC() (canal_route_option_t, canal/app.h). */
CANAL_API extern const canal_option_kind_t canal_doc_option;
/**
 * A route's or an action's OpenAPI documentation, among its options, written as the members
 * of a canal_route_doc_t:
 *
 *     .options = {CANAL_DOC(.summary = "One employee",
 *                           .responses = {{.status = 200, .schema = &employee_schema},
 *                                         {.status = 404}})}
 *
 * Copied at registration, but for the strings, which are borrowed (literals: they must live
 * as long as the app). The answers' schemas are registered (canal_app_schema()); a status
 * outside 100..599 or a header name that is not a token is CANAL_EINVAL.
 */
#define CANAL_DOC(...) {&canal_doc_option, &(const canal_route_doc_t){__VA_ARGS__}}

/**
 * Called by canal_openapi_build() for each operation it makes, to add to or change it.
 * operation is the operation object (borrowed; edit it in place), route the route it
 * describes, path its OpenAPI path (a route with parameters that may be left out gives
 * several). Return 0 to keep the operation, 1 to leave it out, negative to fail the build.
 */
typedef int (*canal_openapi_fn)(json_t *operation, const canal_route_t *route, const char *path,
                                void *data);

/**
 * Builds an OpenAPI 3.1 document describing every route of app (those of canal_app_openapi()
 * and canal_app_docs() excepted), in registration order. Operations get an operationId (the
 * route's name, else one made of the method and the path; unique), "x-canal-template" (the
 * template as registered) and, unless fn gives them better ones, a "default" response.
 * Methods OpenAPI has no field for (only GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH and
 * TRACE have one) are left out. When two routes give the same path and method, the first
 * registered is described. info may be NULL; fn may be NULL.
 * @return a new reference; NULL when out of memory or when fn failed.
 */
CANAL_API json_t *canal_openapi_build(canal_app_t *app, const canal_openapi_info_t *info,
                                      canal_openapi_fn fn, void *data);

/**
 * Serves doc at path (a literal template such as "/openapi.json") as application/json.
 * The document is serialized now, once: build it after the routes it describes. Steals doc
 * (even on failure). Before canal_app_start() only.
 * @return 0; CANAL_EINVAL if doc is NULL or cannot be serialized; a canal_app_route() error.
 */
CANAL_API int canal_app_openapi(canal_app_t *app, const char *path, json_t *doc,
                                canal_error_info_t *err);

/**
 * Serves an interactive API page at path ("/docs") that renders the OpenAPI document found at
 * openapi_url ("/openapi.json") with Swagger UI. The page is canal's own; the Swagger UI files
 * (swagger-ui-bundle.js, swagger-ui.css, from npm's swagger-ui-dist) are read now from
 * assets_dir into memory and served from path/ (only those files: nothing else of the
 * directory is reachable). When they cannot be read, path answers 503 with a page saying how
 * to install them, and this returns CANAL_ENOTFOUND (err says which file) after registering
 * the routes, so the app may warn and go on. Before canal_app_start() only.
 * @return 0; CANAL_ENOTFOUND (see above); CANAL_EINVAL when openapi_url has characters other
 *         than URL ones (quotes, '<', '\\', spaces); a canal_app_route() error; CANAL_ENOMEM.
 */
CANAL_API int canal_app_docs(canal_app_t *app, const char *path, const char *openapi_url,
                             const char *assets_dir, canal_error_info_t *err);

#ifdef __cplusplus
}
#endif

#endif
