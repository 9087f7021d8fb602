/* SPDX-License-Identifier: MIT */
/**
 * @file canal/json.h
 * The streaming JSON writer: a document written value by value into request memory.
 */
#ifndef CANAL_JSON_H
#define CANAL_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "request.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the streaming JSON writer ---- */

/**
 * A streaming JSON writer: a handler writes a document value by value straight into request
 * memory, with no json_t in between, and sends it with canal_res_jw_send() (or, in the
 * controller layer, canal_result_jw()). The bytes are exactly those json_dumpb(doc,
 * JSON_COMPACT | JSON_ENCODE_ANY) gives for the same document built with jansson: the same
 * string escaping (control characters as \\uXXXX but \\b \\f \\n \\r \\t, '"' and '\\'
 * escaped, '/' and non-ASCII left as they are) and the same numbers (integers in decimal,
 * reals as "%.17g" with ".0" added to whole ones).
 *
 * The writer places the commas and checks the nesting (at most CANAL_JW_MAX_DEPTH open
 * objects and arrays). Its errors are sticky: the first misuse or failure is recorded, every
 * later call does nothing and returns it, and the send answers 500 instead of a half-written
 * body. So a handler may ignore the return values and check once, at the send:
 *
 *     canal_jw_t *w = canal_res_jw(req);
 *     canal_jw_object_begin(w);
 *     canal_jw_key(w, "id");
 *     canal_jw_int(w, 1);
 *     canal_jw_key(w, "name");
 *     canal_jw_string(w, "Woo");
 *     canal_jw_object_end(w);
 *     return canal_res_jw_send(req, 200, w);     // {"id":1,"name":"Woo"}
 *
 * Every call below returns 0, or the writer's first error (negative):
 *   - CANAL_ESTATE: out of order: a value where an object key is expected, a key outside an
 *     object or twice in a row, an end that does not match the open container (or after a
 *     key), a second value at the top level, or a document not complete when sent;
 *   - CANAL_EINVAL: a string or key that is not valid UTF-8 (NUL bytes are allowed with
 *     the n variants, as \\u0000), a NULL string, a NaN or infinite real, a json_t jansson
 *     could not write either;
 *   - CANAL_ELIMIT: more than CANAL_JW_MAX_DEPTH containers open;
 *   - CANAL_ENOMEM: the body could not grow (large bodies grow in heap memory that is
 *     freed with the request; a failed allocation there is this error, not an abort).
 * A writer belongs to its request and to its thread; it needs no freeing.
 */
typedef struct canal_jw canal_jw_t;

/** Most objects and arrays a canal_jw_t may have open at once. */
#define CANAL_JW_MAX_DEPTH 64

/** A new, empty writer in req's memory, valid until the request ends. Never NULL. */
CANAL_API canal_jw_t *canal_res_jw(canal_req_t *req);

/** Opens an object (as a value: at the top, in an array, or after a key). */
CANAL_API int canal_jw_object_begin(canal_jw_t *w);
/** Closes the innermost open object; CANAL_ESTATE if it is an array or a key waits. */
CANAL_API int canal_jw_object_end(canal_jw_t *w);
/** Opens an array (as a value). */
CANAL_API int canal_jw_array_begin(canal_jw_t *w);
/** Closes the innermost open array; CANAL_ESTATE if it is an object. */
CANAL_API int canal_jw_array_end(canal_jw_t *w);
/** Writes an object key (NUL-terminated, UTF-8); the next call must write its value. */
CANAL_API int canal_jw_key(canal_jw_t *w, const char *key);
/** canal_jw_key() with a length: key may hold NUL bytes. */
CANAL_API int canal_jw_keyn(canal_jw_t *w, const char *key, size_t len);
/** Writes a string value (NUL-terminated, UTF-8), escaped as jansson escapes it. */
CANAL_API int canal_jw_string(canal_jw_t *w, const char *s);
/** canal_jw_string() with a length: s may hold NUL bytes. */
CANAL_API int canal_jw_stringn(canal_jw_t *w, const char *s, size_t len);
/** Writes an integer. */
CANAL_API int canal_jw_int(canal_jw_t *w, int64_t v);
/** Writes a real as jansson does ("%.17g", 1.0 as "1.0"); CANAL_EINVAL for NaN and infinities. */
CANAL_API int canal_jw_real(canal_jw_t *w, double v);
/** Writes true (v not 0) or false. */
CANAL_API int canal_jw_bool(canal_jw_t *w, int v);
/** Writes null. */
CANAL_API int canal_jw_null(canal_jw_t *w);
/**
 * Writes an existing jansson value as a value of the document (as canal_res_json() would
 * serialize it). Borrows v. CANAL_EINVAL for NULL or a value that cannot be written (invalid
 * UTF-8, nested more than 2048 deep).
 */
CANAL_API int canal_jw_json(canal_jw_t *w, const json_t *v);

/** The writer's sticky error: 0, or the first error a call returned. */
CANAL_API int canal_jw_error(const canal_jw_t *w);
/** What went wrong, in words ("a value where an object key is expected"), or "" if
 * nothing did. Static. */
CANAL_API const char *canal_jw_error_text(const canal_jw_t *w);

/**
 * Ends the document: on success *body and *len (not NUL-terminated) are the bytes, in request
 * memory until the request ends. Returns the sticky error, or CANAL_ESTATE (which then sticks)
 * when a container is still open or nothing was written; CANAL_EINVAL if w is NULL.
 * canal_res_jw_send() calls it; it is for sending a writer's bytes in other ways.
 */
CANAL_API int canal_jw_finish(canal_jw_t *w, const char **body, size_t *len);

/**
 * Sends the writer's document as application/json with status. If the writer failed (or the
 * document is not complete) it answers 500 instead, as a failing handler is answered (the
 * reason, "JSON writer: ...", goes to the log and to the development error page), and returns
 * the error, which the handler may return. Returns 0, the writer's error, or CANAL_ESTATE
 * when an answer was sent already.
 */
CANAL_API int canal_res_jw_send(canal_req_t *req, int status, canal_jw_t *w);

#ifdef __cplusplus
}
#endif

#endif
