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

/**
 * A deferred answer. A handler that cannot answer at once calls canal_req_defer(), keeps the
 * handle, and returns CANAL_PENDING. Later, on the request's own thread, it gets the request
 * back with canal_pending_req() (NULL if the client went away or the request timed out with a
 * 504), sets the answer as any handler does (canal/response.h, or canal_req_fail()), and
 * calls canal_pending_complete(), which commits it and releases the handle. From any other
 * thread it hands the work to the request's thread with canal_pending_post(), which commits
 * after the callback. A request must be answered only on the thread that owns its
 * connection: these calls are how. In controller mode the after-filters run at the commit.
 */
typedef struct canal_pending canal_pending_t;

/** Callback run on the request's thread; req is NULL when there is nothing to answer any more. */
typedef void (*canal_pending_fn)(canal_req_t *req, void *data);

/**
 * Defers the answer to req. Returns a handle the caller owns until it passes it to
 * canal_pending_complete() or canal_pending_post(); NULL when out of memory or deferred
 * already. On the request's thread, from its handler. A deferred request not completed
 * within request_timeout_ms gets a 504 problem.
 */
CANAL_API canal_pending_t *canal_req_defer(canal_req_t *req);

/**
 * The deferred request, or NULL once there is nothing to answer: the client went away, the
 * deadline answered 504, or the answer was committed. Request's thread only.
 */
CANAL_API canal_req_t *canal_pending_req(const canal_pending_t *p);

/**
 * Commits the answer set on the deferred request (a 500 if none is, or a failure was
 * recorded), if there still is one, and releases the handle. Request's thread only.
 */
CANAL_API void canal_pending_complete(canal_pending_t *p);

/**
 * Runs fn(req, data) on the request's thread, req being canal_pending_req() there, then
 * completes the answer as canal_pending_complete() does. Safe from any thread. If the app has
 * stopped meanwhile, fn runs at once on the calling thread with req NULL, so that data can
 * still be freed.
 */
CANAL_API void canal_pending_post(canal_pending_t *p, canal_pending_fn fn, void *data);

/**
 * Runs work(data) on the app's pool of blocking threads (for a database call, a file, a
 * sleep...) and then done(req, data) on the request's thread, req being NULL if there is no
 * one to answer any more; done sets the answer, which is committed when it returns. work must
 * not touch req. Returns CANAL_PENDING, which the handler returns. When the pool's queue is
 * full it sets a 503 problem with Retry-After instead, calls neither work nor done, and
 * returns 0 (the handler returns that too: the 503 is its answer).
 */
CANAL_API int canal_offload(canal_req_t *req, void (*work)(void *data), canal_pending_fn done,
                            void *data);

/**
 * canal_offload() without a request, from a worker's thread (a timer of canal_app_every(), a
 * WebSocket or stream callback, a deferred answer's fn): work(data) on the pool, then
 * done(data) back on the calling worker's thread, or, if that worker has stopped meanwhile,
 * at once on the pool's thread (so data can still be freed). Returns 0; CANAL_ESTATE from a
 * thread that is not one of the app's workers; CANAL_EAGAIN when the pool's queue is full or
 * it has no thread (neither work nor done runs); CANAL_ENOMEM.
 */
CANAL_API int canal_offload_job(canal_app_t *app, void (*work)(void *data), void (*done)(void *data), void *data);

/** The offload pool's threads' own start and end (canal_app_offload_hooks()). */
typedef struct canal_offload_hooks {
    /** On each pool thread before its first job (a connection of the thread's own to a library
     * that blocks, kept in a _Thread_local): 0, or not 0 and canal_app_start() fails. */
    int (*thread_init)(void *data);
    /** On each pool thread after its last job, when the app stops. */
    void (*thread_exit)(void *data);
    void *data; /**< passed to both; borrowed */
} canal_offload_hooks_t;

/** Sets the pool threads' hooks (copied). Before canal_app_start(): CANAL_ESTATE after it. */
CANAL_API int canal_app_offload_hooks(canal_app_t *app, const canal_offload_hooks_t *hooks);

#ifdef __cplusplus
}
#endif

#endif
