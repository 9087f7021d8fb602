/* SPDX-License-Identifier: MIT */
/**
 * @file canal/response.h
 * The answer to a request: one model for every handler, router or controller mode.
 *
 * A handler sets status, headers and body on the request with the calls below and returns;
 * canal then sends that answer (it "commits" it). Nothing is sent before: every call may be
 * made again, the last status and body win, headers add up. In controller mode the
 * after-filters run between the action and the commit, and can still see and change the
 * answer. A deferred answer (canal/async.h) is set the same way and committed when it
 * completes.
 *
 * A failure is recorded, not answered: canal_req_fail() (canal/request.h) makes the answer a
 * 500 (or the development error page) whatever else was set.
 *
 * Bodies given to canal_res_body() are copied; canal_res_body_static() borrows (static data,
 * or request memory). json_t follows jansson's convention: functions ending in _new steal the
 * reference, the others borrow it. Every call returns 0, or CANAL_ESTATE once the answer has
 * been committed.
 */
#ifndef CANAL_RESPONSE_H
#define CANAL_RESPONSE_H

#include <stddef.h>
#include <jansson.h>
#include "request.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Sets the status (100-599), keeping any body set so far. With no body: an empty one
 * (canal_res_status(req, 204)).
 */
CANAL_API int canal_res_status(canal_req_t *req, int status);

/**
 * Adds a response header; name and value are copied. CANAL_EINVAL for an empty name, or CR,
 * LF or (in the name) ':'.
 */
CANAL_API int canal_res_header(canal_req_t *req, const char *name, const char *value);

/**
 * Sets status, Content-Type (a NUL-terminated string that must outlive the request, typically
 * a literal; NULL for none) and body, which is copied. For HEAD requests the body is left out
 * but Content-Length kept.
 */
CANAL_API int canal_res_body(canal_req_t *req, int status, const char *content_type,
                             const void *body, size_t len);

/**
 * As canal_res_body() without the copy: body must stay valid until the request ends (static
 * data, or request memory from canal_req_alloc() or canal_req_json_dump()).
 */
CANAL_API int canal_res_body_static(canal_req_t *req, int status, const char *content_type,
                                    const void *body, size_t len);

/** text/plain (UTF-8); text is a NUL-terminated string and is copied. */
CANAL_API int canal_res_text(canal_req_t *req, int status, const char *text);

/**
 * application/json: body is serialized compactly (jansson, keys in insertion order) now,
 * straight into request memory. Borrows body. CANAL_EINVAL if it cannot be serialized (then
 * nothing is set).
 */
CANAL_API int canal_res_json(canal_req_t *req, int status, const json_t *body);

/** As canal_res_json(), but steals the reference to body (even on failure). */
CANAL_API int canal_res_json_new(canal_req_t *req, int status, json_t *body);

/**
 * application/json with the document of the writer w (canal/json.h; no copy: it is in request
 * memory). If the writer failed, or its document is not complete, it records the failure
 * instead ("JSON writer: ...", as canal_req_fail() does: the answer is a 500) and returns the
 * writer's error, which the handler may return.
 */
CANAL_API int canal_res_jw(canal_req_t *req, int status, canal_jw_t *w);

/**
 * An RFC 9457 problem details answer (application/problem+json) with "type" ("about:blank"),
 * "title" (the status's reason phrase), "status" and, if detail_fmt is not NULL, "detail"
 * (printf format); and "requestId" when request IDs are on, and "traceId" (the W3C form
 * "00-TRACE-SPAN-FLAGS", canal_trace_t.traceparent) when tracing is on. Marked as problem details
 * (canal_res_is_problem()).
 */
CANAL_API int canal_res_problem(canal_req_t *req, int status, const char *detail_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * Problem details built from members, a JSON object whose "type" and "title" are filled in
 * when missing and whose "status" is always status; other members are kept (extensions such
 * as "errors"), and "requestId" and "traceId" are added (replacing any given) when request
 * IDs and tracing are on. Steals members.
 */
CANAL_API int canal_res_problem_new(canal_req_t *req, int status, json_t *members);

/**
 * A new RFC 9457 problem details object: {"type":"about:blank","title":REASON-PHRASE,
 * "status":status} and "detail" if detail is not NULL (and valid UTF-8). New reference.
 */
CANAL_API json_t *canal_problem(int status, const char *detail);

/** A redirect (301, 302, 303, 307 or 308; else CANAL_EINVAL) to location, which is copied. */
CANAL_API int canal_res_redirect(canal_req_t *req, int status, const char *location);

/** The status of the answer set so far, or 0 if none is. */
CANAL_API int canal_res_status_code(const canal_req_t *req);

/** 1 if the answer set so far is problem details (canal_res_problem*()). */
CANAL_API int canal_res_is_problem(const canal_req_t *req);

/** 1 once the answer has been committed (handed to h2o): nothing can change it any more. */
CANAL_API int canal_res_committed(const canal_req_t *req);

/** A function canal calls just before it commits the answer (canal_res_on_commit()). */
typedef void (*canal_commit_fn)(canal_req_t *req, void *data);

/**
 * Has fn(req, data) called on the request's thread just before the answer is committed,
 * whether it was set at once or completes later; fn may still change the answer, or fail the
 * request (canal_req_fail()). One per request: CANAL_EEXIST if one is set (in controller mode
 * the controller layer has set it: use an after-filter).
 */
CANAL_API int canal_res_on_commit(canal_req_t *req, canal_commit_fn fn, void *data);

/** The reason phrase of an HTTP status ("Not Found"), or "Unknown". Static. */
CANAL_API const char *canal_status_reason(int status);

/** Compression of this answer, from its handler before it answers, when the app compresses
 * (canal_app_compress(), canal/files.h): on 0 never, 1 even if its type or size would not be. */
CANAL_API void canal_res_compress(canal_req_t *req, int on);

#ifdef __cplusplus
}
#endif

#endif
