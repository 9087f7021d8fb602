/* SPDX-License-Identifier: MIT */
/**
 * @file canal/async.h
 * Answering later: deferred answers, completions posted from other threads, and the pool
 * of blocking threads (canal_offload()).
 */
#ifndef CANAL_ASYNC_H
#define CANAL_ASYNC_H

#include "request.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- answering later ---- */

/**
 * A deferred answer. A handler that cannot answer at once calls canal_req_defer(), keeps the
 * handle, and returns CANAL_PENDING. Later, on the request's own thread, it gets the request
 * back with canal_pending_req() (NULL if the client went away or the request timed out with a
 * 504) and answers it, then releases the handle. From any other thread it hands the
 * completion to the request's thread with canal_pending_post(). A request must be answered
 * only on the thread that owns its connection: these calls are how.
 */
typedef struct canal_pending canal_pending_t;

/** Callback run on the request's thread; req is NULL when there is nothing to answer any more. */
typedef void (*canal_pending_fn)(canal_req_t *req, void *data);

/**
 * Defers the answer to req. Returns a handle the caller owns until it passes it to
 * canal_pending_release() or canal_pending_post(). On the request's thread, from its handler.
 * A deferred request not answered within request_timeout_ms gets a 504.
 */
CANAL_API canal_pending_t *canal_req_defer(canal_req_t *req);

/**
 * The deferred request, or NULL once there is nothing to answer: the client went away, the
 * deadline answered 504, or h2o is done with the answer sent. Request's thread only.
 */
CANAL_API canal_req_t *canal_pending_req(const canal_pending_t *p);

/** Releases the handle. Request's thread only. */
CANAL_API void canal_pending_release(canal_pending_t *p);

/**
 * Runs fn(req, data) on the request's thread, req being canal_pending_req() there, and then
 * releases the handle. Safe from any thread. If the app has stopped meanwhile, fn runs at once
 * on the calling thread with req NULL, so that data can still be freed.
 */
CANAL_API void canal_pending_post(canal_pending_t *p, canal_pending_fn fn, void *data);

/**
 * Runs work(data) on the app's pool of blocking threads (for a database call, a file, a
 * sleep...) and then done(req, data) on the request's thread, req being NULL if there is no
 * one to answer any more. work must not touch req. Returns CANAL_PENDING, which the handler
 * returns; when the pool's queue is full it answers 503 with Retry-After at once, does not
 * call work or done, and returns 0.
 */
CANAL_API int canal_offload(canal_req_t *req, void (*work)(void *data), canal_pending_fn done,
                            void *data);

#ifdef __cplusplus
}
#endif

#endif
