/* SPDX-License-Identifier: MIT */
/**
 * @file canal/view.h
 * Views: Mustache templates (logic-less), compiled once, rendered into HTML answers.
 *
 * The language is Mustache's (https://mustache.github.io/mustache.5.html), checked against
 * the specification's cases of interpolation, sections, inverted sections, comments, partials
 * and set delimiters (test/unit/view_spec_test.c):
 *
 *   {{name}}            the value, HTML-escaped: & < > " ' become entities
 *   {{{name}}} {{&name}} the value as it is (raw)
 *   {{a.b.c}}           dotted names; {{.}} the current item (implicit iterator)
 *   {{#name}}..{{/name}} a section: once per item of a list, once with the value on top of the
 *                       context if it is truthy, never if it is false, null, missing or an
 *                       empty list
 *   {{^name}}..{{/name}} inverted: once if the value is falsey
 *   {{! comment }}      nothing
 *   {{> partial}}       another template of the set, in the current context (a standalone
 *                       partial is indented as its line)
 *   {{=<% %>=}}         new delimiters
 *
 * Lines holding nothing but whitespace and one section, inverted, closing, comment, partial or
 * delimiter tag are removed whole (the specification's standalone rule). A missing name renders
 * empty. Lambdas are not supported.
 *
 * A layout is a page around a body: a template that says {{>body}} where the page goes; the
 * page and the layout see the same data.
 *
 * Data comes from a json_t, from typed models (a C struct and its canal_schema_t,
 * canal/schema.h, or an array of them), or from a callback that answers names; see
 * canal_view_data_t. It is borrowed for the call.
 *
 * Two ways to use templates: a set of your own (canal_views_create(), canal_views_render(), for
 * e-mail bodies, tools, tests), or the app's (canal_app_views(), canal_res_view(), for
 * answers). The app's set is compiled at registration: a syntax error is a registration error
 * ("views/home.mustache:3:7: unclosed section"). In CANAL_ENV_DEVELOPMENT a template
 * file changed on disk is compiled again on the next request that renders a view; in
 * production never.
 *
 * Limits (each a defined error, never a crash): a template of at most CANAL_VIEW_MAX_SIZE
 * bytes, sections nested at most CANAL_VIEW_MAX_DEPTH deep (CANAL_ELIMIT at compile time),
 * partials nested at most CANAL_VIEW_MAX_PARTIALS deep while rendering (CANAL_ELIMIT: a
 * partial that includes itself without end).
 */
#ifndef CANAL_VIEW_H
#define CANAL_VIEW_H

#include <stddef.h>
#include <string.h>
#include <jansson.h>
#include "export.h"
#include "error.h"
#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The largest template, in bytes. */
#define CANAL_VIEW_MAX_SIZE (4u << 20)
/** The deepest nesting of sections in one template. */
#define CANAL_VIEW_MAX_DEPTH 64
/** The deepest nesting of partials while rendering. */
#define CANAL_VIEW_MAX_PARTIALS 32

/** A set of compiled templates, by name. */
typedef struct canal_views canal_views_t;
/** The controller layer's context (canal/controller.h). */
typedef struct canal_ctx canal_ctx_t;

/** What a canal_view_data_t holds. */
typedef enum canal_view_kind {
    CANAL_VIEW_NONE = 0, /**< nothing: every name renders empty */
    CANAL_VIEW_JSON,     /**< value: a json_t * (objects are contexts, arrays lists) */
    CANAL_VIEW_MODEL,    /**< value: a struct described by schema (its fields are the names) */
    CANAL_VIEW_MODELS,   /**< value: an array of n structs described by schema (a list) */
    CANAL_VIEW_TEXT,     /**< value: n bytes of text */
    CANAL_VIEW_BOOL,     /**< n: 0 is false, else true (for sections) */
    CANAL_VIEW_FN        /**< fn answers names, value is its argument */
} canal_view_kind_t;

/** Data for a template (struct canal_view_data below). */
typedef struct canal_view_data canal_view_data_t;

/**
 * A callback's answer to a name (one part of a dotted name, len bytes, not NUL-terminated):
 * fills *out and returns 1, or returns 0 for "no such name" (the lookup goes on down the
 * context). What *out points to must live until the render returns.
 */
typedef int (*canal_view_fn)(const char *name, size_t len, canal_view_data_t *out, void *arg);

/** Data for a template: one of the kinds above. The macros below make them. */
struct canal_view_data {
    canal_view_kind_t kind;       /**< what it holds */
    const void *value;            /**< the json_t, struct, array, text, or fn's argument */
    const canal_schema_t *schema; /**< MODEL, MODELS: the struct's schema */
    size_t n;                     /**< MODELS: count; TEXT: length; BOOL: the value */
    canal_view_fn fn;             /**< FN: the callback */
};

/** Data from a json_t (borrowed). */
#define CANAL_VIEW_JSON(j) ((canal_view_data_t){.kind = CANAL_VIEW_JSON, .value = (j)})
/** Data from a struct and its schema. */
#define CANAL_VIEW_MODEL(s, obj) ((canal_view_data_t){.kind = CANAL_VIEW_MODEL, .value = (obj), .schema = (s)})
/** A list of count structs (an array) and their schema. */
#define CANAL_VIEW_MODELS(s, objs, count) \
    ((canal_view_data_t){.kind = CANAL_VIEW_MODELS, .value = (objs), .schema = (s), .n = (count)})
/** A NUL-terminated text. */
#define CANAL_VIEW_TEXT(t) ((canal_view_data_t){.kind = CANAL_VIEW_TEXT, .value = (t), .n = strlen(t)})
/** A boolean. */
#define CANAL_VIEW_BOOL(b) ((canal_view_data_t){.kind = CANAL_VIEW_BOOL, .n = (b) != 0})
/** Names answered by a callback. */
#define CANAL_VIEW_FN(f, arg) ((canal_view_data_t){.kind = CANAL_VIEW_FN, .value = (arg), .fn = (f)})

/** A new, empty set of templates; NULL when out of memory. */
CANAL_API canal_views_t *canal_views_create(void);

/** Frees a set and its templates. NULL: nothing. */
CANAL_API void canal_views_destroy(canal_views_t *views);

/**
 * Compiles len bytes of text as the template name (copied; a later one of the same name
 * replaces it). 0, or CANAL_ESYNTAX (err->message: "NAME:LINE:COLUMN: what", err->position:
 * the byte offset), CANAL_ELIMIT (too large, too deeply nested), CANAL_EINVAL, CANAL_ENOMEM;
 * on failure the set is unchanged.
 */
CANAL_API int canal_views_add(canal_views_t *views, const char *name, const char *text, size_t len,
                              canal_error_info_t *err);

/**
 * Compiles every file of the folder dir (and its subfolders) whose name ends in ".mustache",
 * named by its path under dir without the ending ("home", "layouts/main"). The errors of
 * canal_views_add(), with the file's path in the message, or CANAL_ESYS (a folder or file that
 * cannot be read); on failure the set is unchanged.
 */
CANAL_API int canal_views_load(canal_views_t *views, const char *dir, canal_error_info_t *err);

/**
 * Renders the template name with data into *out (malloc'd, NUL-terminated, *len bytes without
 * the NUL; free() it), inside the template layout (NULL: none). 0, or CANAL_ENOTFOUND (no such
 * template), CANAL_ELIMIT (partials nested too deep), CANAL_ENOMEM; *out is NULL on failure.
 */
CANAL_API int canal_views_render(const canal_views_t *views, const char *name, const char *layout,
                                 const canal_view_data_t *data, char **out, size_t *len, canal_error_info_t *err);

/** Writes len bytes of s to out HTML-escaped (& < > " ' as entities), NUL-terminated; out
 * holds at least 6 * len + 1 bytes. Returns the length written. */
CANAL_API size_t canal_html_escape(char *out, const char *s, size_t len);

/**
 * The app's templates: compiles the folder dir as canal_views_load() does (more than one call
 * adds up). A failure is the app's registration error (canal_app_error()); the file, line and
 * column are in its message.
 */
CANAL_API int canal_app_views(canal_app_t *app, const char *dir, canal_error_info_t *err);

/** The app's templates: compiles text as the template name (canal_views_add()). */
CANAL_API int canal_app_view(canal_app_t *app, const char *name, const char *text, canal_error_info_t *err);

/** The layout of the app's pages (canal_res_view()): a template of the app's, or NULL for none. */
CANAL_API int canal_app_view_layout(canal_app_t *app, const char *layout, canal_error_info_t *err);

/**
 * The answer status with the app's template name rendered with data (inside the app's layout,
 * if one is set), as text/html; charset=utf-8. A template that does not exist or fails to
 * render records a failure (canal_req_fail(): a 500) and returns its error.
 */
CANAL_API int canal_res_view(canal_req_t *req, int status, const char *name, const canal_view_data_t *data);

/**
 * The page streamed: as canal_res_view(), but rendered in parts of about 16 KiB, each handed
 * to the client (canal/stream.h) before the next is rendered, as fast as the client reads them;
 * a page of thousands of rows is never held whole. The first part is rendered before anything
 * is sent: a template that does not exist or fails there is answered as canal_res_view()
 * answers it (a 500, the error returned, done not called), and a page that ends within it is
 * answered whole, with its Content-Length. Otherwise the status is sent with the first part,
 * the body has no length (chunks on HTTP/1.1), and 0 is returned.
 *
 * *data is copied; what it points to must stay valid until done (may be NULL) is called: once
 * if and only if this returns 0, on the request's thread, possibly before this returns; rc 0
 * when the page has been handed to the client; CANAL_ECLOSED when the client went away, the
 * stream's idle limit or the app's shutdown ended it, or the request was a HEAD (the rest is
 * not rendered); or the error that stopped the render after the page had begun (CANAL_ELIMIT,
 * CANAL_ENOMEM: logged, and the body ends where it stopped). In the development environment
 * the templates are not compiled again while a streamed page is being rendered.
 */
CANAL_API int canal_res_view_stream(canal_req_t *req, int status, const char *name, const canal_view_data_t *data,
                                    void (*done)(int rc, void *arg), void *arg);

/** The controller layer's view result: canal_res_view() on the context's request. */
CANAL_API int canal_ctx_view(canal_ctx_t *ctx, int status, const char *name, const canal_view_data_t *data);

#ifdef __cplusplus
}
#endif

#endif
