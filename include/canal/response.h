/* SPDX-License-Identifier: MIT */
/**
 * @file canal/response.h
 * The answer to a request: status, headers and body, plain, JSON or problem details.
 * json_t follows jansson's convention: functions ending in _new steal the reference, the
 * others borrow it.
 */
#ifndef CANAL_RESPONSE_H
#define CANAL_RESPONSE_H

#include <stddef.h>
#include <string.h>
#include <jansson.h>
#include "request.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the response: each call below but canal_res_header() sends it; one per request ---- */

/**
 * Adds a response header; name and value are copied. Before the answer is sent.
 * Returns 0, or CANAL_ESTATE once it has been sent, CANAL_EINVAL for CR/LF in either.
 */
CANAL_API int canal_res_header(canal_req_t *req, const char *name, const char *value);

/**
 * Sends status, Content-Type (content_type_len bytes at content_type; NULL for none) and a
 * body, which is copied. For HEAD requests the body is left out but Content-Length kept.
 * Returns 0, or CANAL_ESTATE if an answer was sent already.
 */
CANAL_API int canal_res_send_n(canal_req_t *req, int status, const char *content_type,
                               size_t content_type_len, const void *body, size_t len);

/**
 * As canal_res_send_n() without the copy: body must stay valid until the answer has been sent
 * (static data, or request memory from canal_req_alloc() or canal_req_json_dump()).
 */
CANAL_API int canal_res_send_static_n(canal_req_t *req, int status, const char *content_type,
                                      size_t content_type_len, const void *body, size_t len);

/**
 * canal_res_send_n() with a NUL-terminated content type (NULL for none). Inline, so that the
 * length of a literal content type is known when compiling, not counted on every answer.
 */
static inline int canal_res_send(canal_req_t *req, int status, const char *content_type,
                                 const void *body, size_t len)
{
    return canal_res_send_n(req, status, content_type,
                            content_type != NULL ? strlen(content_type) : 0, body, len);
}

/** canal_res_send_static_n() with a NUL-terminated content type (NULL for none). */
static inline int canal_res_send_static(canal_req_t *req, int status, const char *content_type,
                                        const void *body, size_t len)
{
    return canal_res_send_static_n(req, status, content_type,
                                   content_type != NULL ? strlen(content_type) : 0, body, len);
}

/** Sends text/plain (UTF-8); text is a NUL-terminated string and is copied. */
CANAL_API int canal_res_text(canal_req_t *req, int status, const char *text);

/** Sends a status with an empty body. */
CANAL_API int canal_res_status(canal_req_t *req, int status);

/**
 * Sends application/json: body is serialized compactly (jansson, keys in insertion order)
 * straight into request memory. Borrows body. CANAL_EINVAL if it cannot be serialized.
 */
CANAL_API int canal_res_json(canal_req_t *req, int status, const json_t *body);

/** As canal_res_json(), but steals the reference to body (even on failure). */
CANAL_API int canal_res_json_new(canal_req_t *req, int status, json_t *body);


/**
 * Sends an RFC 9457 problem details answer (application/problem+json) with "type"
 * ("about:blank"), "title" (the status's reason phrase), "status" and, if detail is not NULL,
 * "detail" (printf format); and "requestId" when request IDs are on.
 */
CANAL_API int canal_res_problem(canal_req_t *req, int status, const char *detail_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * A new RFC 9457 problem details object: {"type":"about:blank","title":REASON-PHRASE,
 * "status":status} and "detail" if detail is not NULL (and valid UTF-8). New reference.
 */
CANAL_API json_t *canal_problem(int status, const char *detail);

/**
 * Sends problem details built from members, a JSON object whose "type" and "title" are
 * filled in when missing and whose "status" is always status; other members are kept
 * (extensions such as "errors"), and "requestId" is added when request IDs are on.
 * Steals members.
 */
CANAL_API int canal_res_problem_new(canal_req_t *req, int status, json_t *members);

/** Sends a redirect (301, 302, 303, 307 or 308) to location, which is copied. */
CANAL_API int canal_res_redirect(canal_req_t *req, int status, const char *location);

/**
 * Answers that the request failed, as a handler returning canal_req_fail() would: the text
 * goes to the log and the client gets the production 500 or the development error page. For
 * answers given later (canal_req_defer()), where there is no handler to return from.
 */
CANAL_API int canal_res_fail(canal_req_t *req, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** 1 once an answer has been sent for req. */
CANAL_API int canal_res_sent(const canal_req_t *req);

/** The reason phrase of an HTTP status ("Not Found"), or "Unknown". Static. */
CANAL_API const char *canal_status_reason(int status);

#ifdef __cplusplus
}
#endif

#endif
