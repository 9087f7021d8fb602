/* SPDX-License-Identifier: MIT */
/**
 * @file canal/stream.h
 * Streamed answers and server-sent events: the answer of canal/response.h, committed early
 * and written in parts.
 *
 * A handler (router mode or a controller action: the same calls) sets status and headers as
 * for any answer, then calls canal_res_stream_begin(). That commits the answer at once, as
 * the end of a handler would (the commit hook, and so the controller's after-filters, run
 * then), with no Content-Length: libh2o frames the body as chunks on HTTP/1.1, as DATA frames
 * on HTTP/2, and closes the connection at its end on HTTP/1.0. Afterwards every setter of
 * canal/response.h returns CANAL_ESTATE. The handler returns 0 and writes the body then or
 * later, on the request's thread:
 *
 *     static int ticks(canal_req_t *req, void *data)
 *     {
 *         canal_stream_t *s = canal_sse_begin(req, &callbacks, state);
 *         if (s == NULL)
 *             return CANAL_ENOMEM;
 *         canal_sse_keepalive(s, 1000);
 *         canal_stream_timer(s, 0, tick); // tick() writes canal_sse_event(s, ...), starts
 *         return 0;                       // the next timer, and at the end canal_stream_end(s)
 *     }
 *
 * **The handle** is the caller's from canal_res_stream_begin() until it calls
 * canal_stream_end(), which it must do exactly once, whatever happened to the client. Until
 * then the handle stays valid even after the client has gone (writes then return
 * CANAL_ECLOSED).
 *
 * **Backpressure.** One write is handed to libh2o at a time; while it is being sent, later
 * writes wait in the stream's queue. A write that would make the queue hold more than
 * max_queued bytes (CANAL_STREAM_MAX_QUEUED unless canal_stream_cb_t says otherwise) returns
 * CANAL_EAGAIN and queues nothing (a write to an empty queue is always taken, however big):
 * the writer stops, and canal calls its writable callback once the queue has been handed to
 * the client. So a slow client never makes canal buffer more than that, and a writer that
 * follows the callbacks produces its body as fast as the client reads it.
 *
 * **The end of a stream.** The closed callback says, once, that the stream can no longer be
 * written, before the owner ended it: the client went away (FIN or RST: libh2o learns it when
 * a write fails, or when an HTTP/2 stream is reset), the stream's idle limit passed
 * (stream_timeout_ms, `--stream-timeout`: a queue the client did not take any of for that
 * long, or a stream nothing was written to for that long), or the app is shutting down (what
 * is queued is still sent, then the body ends properly, within the shutdown drain). After it,
 * writes return CANAL_ECLOSED and the owner calls canal_stream_end() to release the handle.
 * A HEAD request gets the status and headers only (so does a status without a body): writes
 * return CANAL_ECLOSED at once, and the closed callback (CANAL_STREAM_GONE) comes when the
 * request ends, never within canal_res_stream_begin(), so an owner that registered the stream
 * somewhere hears that it is over. A stream begun while the app is shutting down has an empty
 * body, the same way: writes return CANAL_ECLOSED, the closed callback comes at the request's
 * end.
 *
 * **Threads.** Every call but canal_stream_post(), canal_stream_retain() and
 * canal_stream_release() is for the stream's own thread (the request's). Other threads hand
 * their writes over with canal_stream_post(), which takes the same queue as
 * canal_pending_post() (canal/async.h). A thread that keeps the handle (a subscriber list, a
 * group) holds a reference (canal_stream_retain()) for as long as it may post: the handle then
 * stays valid after the owner's canal_stream_end(), and a post that runs after the end finds
 * the stream ended (writes return CANAL_ESTATE) instead of freed memory.
 *
 * **Deadlines.** A stream is not a deferred answer: request_timeout_ms (the 504) does not
 * apply to it; stream_timeout_ms does.
 *
 * **Compression.** libh2o's gzip filter (canal_app_compress(), canal/files.h) compresses a stream
 * as it compresses any answer of unknown length (a compressible Content-Type, or
 * canal_res_compress(req, 1) before the begin), and flushes the compressor at every send
 * (Z_SYNC_FLUSH), so each write reaches the client at once. Each compressed stream holds a
 * deflate state of 256 KiB for its life: canal_sse_begin() turns compression off for event
 * streams unless the handler asked for it with canal_res_compress(req, 1). docs/realtime.md
 * has the numbers.
 */
#ifndef CANAL_STREAM_H
#define CANAL_STREAM_H

#include <stddef.h>
#include "request.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A streamed answer (opaque). */
typedef struct canal_stream canal_stream_t;

/** Bytes a stream's queue holds at most by default (64 KiB). */
#define CANAL_STREAM_MAX_QUEUED 65536

/** Why a stream was closed before its owner ended it (canal_stream_cb_t.closed). */
typedef enum canal_stream_close {
    CANAL_STREAM_GONE = 1,     /**< the client went away, or the request ended (HEAD) */
    CANAL_STREAM_TIMEOUT = 2,  /**< no progress for stream_timeout_ms: the stream was cut */
    CANAL_STREAM_SHUTDOWN = 3  /**< the app is stopping: the body was ended after the queue */
} canal_stream_close_t;

/** The owner's callbacks; every member may be NULL. Copied by canal_res_stream_begin(). */
typedef struct canal_stream_cb {
    /** The queue has been handed to the client after a write returned CANAL_EAGAIN. */
    void (*writable)(canal_stream_t *s, void *data);
    /** The stream can no longer be written (see the file's notes); called once at most. */
    void (*closed)(canal_stream_t *s, canal_stream_close_t why, void *data);
    /** Most bytes the queue holds (0: CANAL_STREAM_MAX_QUEUED). */
    size_t max_queued;
} canal_stream_cb_t;

/**
 * Commits the answer set so far (status, 200 if none is set; the headers; Content-Type if
 * content_type is not NULL: a string that must outlive the request, typically a literal) and
 * starts its body. cb (may be NULL) is copied; data is passed to its callbacks. Returns the
 * handle, or NULL if the answer was committed already or memory is short (then nothing was
 * sent and the handler answers as usual). If the commit hook failed the request
 * (canal_req_fail()), the failure's 500 is sent instead and NULL is returned.
 */
CANAL_API canal_stream_t *canal_res_stream_begin(canal_req_t *req, const char *content_type,
                                                 const canal_stream_cb_t *cb, void *data);

/**
 * Writes len bytes, copied. Returns 0; CANAL_EAGAIN when the queue is full (nothing was
 * queued: wait for the writable callback); CANAL_ECLOSED once the stream is closed;
 * CANAL_ESTATE after canal_stream_end(); CANAL_ENOMEM.
 */
CANAL_API int canal_stream_write(canal_stream_t *s, const void *buf, size_t len);

/**
 * As canal_stream_write() without the copy: buf must stay valid until canal calls
 * release(data), once, when it is done with it (sent, or the stream closed). On an error
 * release is not called and buf stays the caller's.
 */
CANAL_API int canal_stream_write_borrowed(canal_stream_t *s, const void *buf, size_t len,
                                          void (*release)(void *data), void *data);

/**
 * The stream's own JSON writer (canal/json.h), which lives as long as the handle: write values
 * into it and hand them to the stream with canal_stream_jw_flush(). Never NULL.
 */
CANAL_API canal_jw_t *canal_stream_jw(canal_stream_t *s);

/**
 * Writes what the stream's JSON writer holds and empties it, keeping its place in the
 * document: for a streamed JSON array, flush after each element (the commas and brackets are
 * the writer's). When the writer holds one whole value (NDJSON: one object per line) a newline
 * follows it and the writer starts a new document. Returns canal_stream_write()'s codes, or
 * the writer's sticky error (then nothing is written).
 */
CANAL_API int canal_stream_jw_flush(canal_stream_t *s);

/**
 * Ends the body after what is queued and releases the handle, which must not be used again.
 * Safe after the closed callback (it then only releases). Returns 0, or CANAL_ESTATE if it was
 * called already (a bug: the handle may be gone).
 */
CANAL_API int canal_stream_end(canal_stream_t *s);

/**
 * Takes a reference to the handle, so that another thread may keep it and post to it
 * (canal_stream_post()) even after the owner's canal_stream_end(). Returns s. Any thread.
 */
CANAL_API canal_stream_t *canal_stream_retain(canal_stream_t *s);

/** Drops a reference taken with canal_stream_retain(); NULL is a no-op. Any thread. */
CANAL_API void canal_stream_release(canal_stream_t *s);

/** The request of the stream, or NULL once the stream is closed. Stream's thread only. */
CANAL_API canal_req_t *canal_stream_req(const canal_stream_t *s);

/**
 * Calls fn(s, data) once, ms milliseconds from now (to the millisecond, on the stream's
 * loop), unless the stream is closed or ended first: the way to pace a stream (one tick, then
 * the next timer). A stream has one such timer: a new call replaces the waiting one, and fn
 * NULL cancels it. Returns 0, CANAL_ECLOSED, or CANAL_ESTATE after canal_stream_end().
 */
CANAL_API int canal_stream_timer(canal_stream_t *s, unsigned ms, void (*fn)(canal_stream_t *s, void *data));

/**
 * Runs fn(s, data) on the stream's thread, from any thread; fn may write and end the stream
 * as the owner does. If the app has stopped, fn(s, data) runs at once on the calling thread
 * instead, with the stream closed (writes return CANAL_ECLOSED) and that thread then the only
 * one using it, so that the owner can still end it and free data. Returns 0, or CANAL_ENOMEM
 * (fn is not called).
 */
CANAL_API int canal_stream_post(canal_stream_t *s, void (*fn)(canal_stream_t *s, void *data), void *data);

/* ---- server-sent events (text/event-stream, WHATWG HTML "Server-sent events") ---- */

/**
 * canal_res_stream_begin() for an event stream: status 200 (or the one set), Content-Type
 * text/event-stream, Cache-Control: no-cache, and no compression unless the handler asked
 * for it (canal_res_compress(req, 1)). Same returns.
 */
CANAL_API canal_stream_t *canal_sse_begin(canal_req_t *req, const canal_stream_cb_t *cb, void *data);

/**
 * Writes one event: "id: ID", "event: EVENT" (each left out when NULL), a "data: " line per
 * line of data (len bytes; lines split at CR, LF and CRLF, so a line break inside data
 * survives the client's parser; an empty data is one empty data line) and the blank line that
 * dispatches it. id and event are NUL-terminated and must not hold CR or LF (id not NUL
 * either: CANAL_EINVAL). One write: canal_stream_write()'s codes.
 */
CANAL_API int canal_sse_event(canal_stream_t *s, const char *id, const char *event, const char *data,
                              size_t len);

/** Writes "retry: MS", the client's reconnection delay. canal_stream_write()'s codes. */
CANAL_API int canal_sse_retry(canal_stream_t *s, unsigned ms);

/**
 * Writes a comment line (": TEXT"), which clients ignore; text NUL-terminated, without CR or
 * LF (CANAL_EINVAL). canal_stream_write()'s codes.
 */
CANAL_API int canal_sse_comment(canal_stream_t *s, const char *text);

/**
 * From now on, whenever nothing has been written to the stream for interval_ms, canal writes
 * a comment line (":\n") itself, which keeps proxies and clients from timing the stream out
 * (and keeps the idle limit away); 0 stops it. Returns 0, CANAL_ECLOSED, or CANAL_ESTATE after
 * canal_stream_end().
 */
CANAL_API int canal_sse_keepalive(canal_stream_t *s, unsigned interval_ms);

/**
 * The request's Last-Event-ID header (the id of the last event a reconnecting client saw), or
 * {NULL, 0} if it has none. Borrowed from the request.
 */
CANAL_API canal_str_t canal_sse_last_event_id(const canal_req_t *req);

/**
 * Writes the lines of one event into out (size bytes) without the stream: what
 * canal_sse_event() writes. Returns the length (not NUL-terminated), CANAL_EINVAL for a bad
 * id or event, or CANAL_ELIMIT when size is too small; canal_sse_event_size() bounds it.
 */
CANAL_API long canal_sse_format(char *out, size_t size, const char *id, const char *event, const char *data,
                                size_t len);

/** The most bytes canal_sse_format() may write for these arguments. */
CANAL_API size_t canal_sse_event_size(const char *id, const char *event, size_t len);

#ifdef __cplusplus
}
#endif

#endif
