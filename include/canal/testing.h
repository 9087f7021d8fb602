/* SPDX-License-Identifier: MIT */
/**
 * @file canal/testing.h
 * A test client for canal apps: run an app in this process on an ephemeral 127.0.0.1 port and
 * talk HTTP/1.1 to it, from any test framework (cmocka, Unity, plain assert()).
 *
 *     canal_app_t *app = canal_app_create(NULL);
 *     canal_app_get(app, "api/woo", woo, NULL);
 *     canal_test_t *t = canal_test_start(app, NULL);
 *     canal_test_response_t *r = canal_test_get(t, "/api/woo");
 *     assert(r != NULL && r->status == 200);
 *     assert(strcmp(r->body, "{\"id\":1,\"name\":\"Woo\"}") == 0);
 *     canal_test_response_free(r);
 *     canal_test_stop(t);
 *     canal_app_destroy(app);
 *
 * canal_test_start() starts the app's worker threads in the background (as canal_app_start()
 * does) with one more listener, 127.0.0.1 on a port the kernel picks, which the client uses.
 * The client keeps one connection alive across requests, as a browser would, and opens a new
 * one when the server closed it. An answer the server sends before it has read the whole
 * request (a 413 for a body over the limit) is read and returned. Answers are read whole:
 * status, headers as sent, and the body (Content-Length, chunked or up to the close),
 * NUL-terminated for convenience.
 *
 * A client is for one thread at a time. This header is not included by canal.h: include it
 * from test code. The functions live in their own library, libcanal-testing (pkg-config
 * canal-testing), so that production builds do not carry them.
 */
#ifndef CANAL_TESTING_H
#define CANAL_TESTING_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "export.h"
#include "error.h"
#include "router.h"
#include "server.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A running app and a client connected to it. Opaque; from canal_test_start(). */
typedef struct canal_test canal_test_t;

/**
 * An answer, owned by the caller: one allocation that canal_test_response_free() releases,
 * strings and arrays included.
 */
typedef struct canal_test_response {
    int status;              /**< the status code (200) */
    const char *reason;      /**< the reason phrase as sent ("OK"), NUL-terminated */
    size_t nheaders;         /**< the number of entries in headers */
    const canal_kv_t *headers; /**< the header fields in the order received; names as sent */
    const char *body;        /**< the body, NUL-terminated (an empty string when none) */
    size_t body_len;         /**< the body's length, NUL not counted (the body may hold NULs) */
} canal_test_response_t;

/**
 * Starts app for testing: adds a listener on 127.0.0.1 with a port the kernel picks, then
 * canal_app_start(). If the app had no listener of its own, this is the only one (the
 * configuration's host and port are not bound); listeners the app added are bound as well.
 * The app must not have been started; it stays owned by the caller, who destroys it after
 * canal_test_stop().
 * @param app the app, with its routes registered.
 * @param err if not NULL, says why on failure.
 * @return the client, or NULL: CANAL_EINVAL (app NULL), CANAL_ESTATE (already started),
 *         CANAL_ESYS (a socket could not be bound; the reason is also logged), CANAL_ENOMEM.
 */
CANAL_API canal_test_t *canal_test_start(canal_app_t *app, canal_error_info_t *err);

/**
 * Closes the client's connection, stops the app gracefully (canal_app_stop() then
 * canal_app_wait()) and frees the client. The app can then be destroyed.
 * @return 0, or the error canal_app_wait() returned. NULL is a no-op returning 0.
 */
CANAL_API int canal_test_stop(canal_test_t *t);

/** The port the client talks to (the app's test listener). */
CANAL_API uint16_t canal_test_port(const canal_test_t *t);

/**
 * Sets how long one request may wait for its answer before it fails with "timed out"
 * (default 30000 ms; 0 restores it). Only a guard against a hung test: nothing here measures
 * time.
 */
CANAL_API void canal_test_set_timeout(canal_test_t *t, unsigned timeout_ms);

/**
 * Sends a request and reads its answer.
 * @param t       the client.
 * @param method  an HTTP method token ("GET", "POST", ...).
 * @param target  the request target in origin form, sent as given ("/users/42?full=1"): encode
 *                it yourself.
 * @param headers header fields to send (key: name, value: value), borrowed; may be NULL when
 *                nheaders is 0. Host is added unless given; Content-Length is added when body
 *                is not NULL or the method is POST, PUT or PATCH, unless given.
 * @param nheaders the number of entries in headers.
 * @param body    the body, borrowed; NULL for none.
 * @param body_len the length of body in bytes.
 * @return a new answer the caller frees with canal_test_response_free(), or NULL on an
 *         invalid argument (a method that is not a token, a target or header with a space, CR
 *         or LF where not allowed), a connection or protocol failure, an answer whose head
 *         is over 64 KiB or whose body is over 256 MiB, or a timeout: canal_test_error() says
 *         which. A failed request never aborts the process.
 */
CANAL_API canal_test_response_t *canal_test_request(canal_test_t *t, const char *method,
                                                    const char *target,
                                                    const canal_kv_t *headers, size_t nheaders,
                                                    const void *body, size_t body_len);

/**
 * The client's cookie jar, on from the start, as a browser's: every Set-Cookie of an answer
 * is kept (replacing the cookie of the same name and path; Max-Age, else Expires, in the past
 * removes it) and sent back in a Cookie field with the requests whose path it matches (RFC
 * 6265 5.1.4; the longest paths first) until it expires. Secure cookies are sent too (the app
 * is on 127.0.0.1), Domain and SameSite are not looked at. A request given its own Cookie
 * field sends that one only. canal_test_raw() sends what it is given.
 * canal_test_set_cookies(t, 0) switches the jar off (and empties it); 1 back on.
 */
CANAL_API void canal_test_set_cookies(canal_test_t *t, int on);

/** The value of the jar's cookie name (the first of that name, unexpired), or NULL; valid
 * until the next request or canal_test_clear_cookies(). */
CANAL_API const char *canal_test_cookie(const canal_test_t *t, const char *name);

/** Empties the jar (a new visitor). */
CANAL_API void canal_test_clear_cookies(canal_test_t *t);

/** An answer read as it comes (canal_test_stream_open()). Opaque. */
typedef struct canal_test_stream canal_test_stream_t;

/**
 * Sends a request without a body on a connection of its own and reads the answer's head;
 * the body is then read as it comes, with canal_test_stream_read() or, for an event stream,
 * canal_test_stream_event(). The jar's cookies are sent and its Set-Cookie kept, as for
 * canal_test_request(). Returns the stream (canal_test_stream_close() it), or NULL
 * (canal_test_error() says why: a bad argument, no connection, no head within the client's
 * timeout).
 */
CANAL_API canal_test_stream_t *canal_test_stream_open(canal_test_t *t, const char *method, const char *target,
                                                     const canal_kv_t *headers, size_t nheaders);

/** The answer's status and headers (its body is empty); owned by the stream. */
CANAL_API const canal_test_response_t *canal_test_stream_head(const canal_test_stream_t *s);

/**
 * Reads body bytes as they come (chunks decoded), at most size, waiting at most timeout_ms
 * for the first. Returns how many (> 0), 0 at the body's end, CANAL_EAGAIN when nothing came
 * in time (the stream goes on: call again), or -1 (canal_test_error() of the stream's client
 * says why: the connection closed mid-body, a malformed chunk).
 */
CANAL_API long canal_test_stream_read(canal_test_stream_t *s, char *buf, size_t size, unsigned timeout_ms);

/** A server-sent event (canal_test_stream_event()); strings owned by the stream, valid until
 * its next call. */
typedef struct canal_test_event {
    const char *event; /**< its "event:", or "message" */
    const char *data;  /**< its "data:" lines joined by "\n" */
    const char *id;    /**< the last "id:" seen, or NULL */
} canal_test_event_t;

/**
 * The next event of a text/event-stream body (the HTML standard's format: comments and
 * "retry:" are skipped, an event is dispatched at its blank line when it has data), waiting at
 * most timeout_ms for its bytes. Returns 1 with *ev filled, 0 when the stream ended,
 * CANAL_EAGAIN when no whole event came in time (what came is kept), or -1.
 */
CANAL_API int canal_test_stream_event(canal_test_stream_t *s, canal_test_event_t *ev, unsigned timeout_ms);

/** Closes the stream's connection (the server sees the client go) and frees it; NULL is a
 * no-op. */
CANAL_API void canal_test_stream_close(canal_test_stream_t *s);

/** canal_test_request() for GET with no header and no body. */
CANAL_API canal_test_response_t *canal_test_get(canal_test_t *t, const char *target);

/**
 * Sends json (borrowed; serialized compactly) with the header fields given (borrowed; may be
 * NULL when nheaders is 0) and Content-Type: application/json unless they have one. A NULL
 * json sends no body. NULL on failure, as canal_test_request().
 */
CANAL_API canal_test_response_t *canal_test_json(canal_test_t *t, const char *method,
                                                 const char *target, const canal_kv_t *headers,
                                                 size_t nheaders, const json_t *json);

/**
 * Sends bytes exactly as given on a new connection of their own, then reads one answer and
 * closes that connection: for requests the other calls refuse to build (malformed request
 * lines, bad headers, pipelining). A HEAD request (the bytes start with "HEAD ") is read
 * without a body. NULL on failure (canal_test_error() says why): no bytes (len 0), or the
 * server closed the connection without answering, for example.
 */
CANAL_API canal_test_response_t *canal_test_raw(canal_test_t *t, const void *bytes, size_t len);

/**
 * How many connections the client has opened so far (canal_test_raw() included): one for any
 * number of requests while the server keeps the connection alive.
 */
CANAL_API size_t canal_test_connection_count(const canal_test_t *t);

/** Why the last request of t failed: a static or client-owned sentence; "" after a success. */
CANAL_API const char *canal_test_error(const canal_test_t *t);

/**
 * The value of the first header field called name (ASCII case-insensitive) in r, or NULL.
 * Borrowed from r.
 */
CANAL_API const char *canal_test_header(const canal_test_response_t *r, const char *name);

/**
 * The body parsed as JSON. A new reference (json_decref() it), or NULL when the body is not
 * JSON; err (if given) has jansson's position and text.
 */
CANAL_API json_t *canal_test_response_json(const canal_test_response_t *r, json_error_t *err);

/** Frees an answer and everything it points to. NULL is a no-op. */
CANAL_API void canal_test_response_free(canal_test_response_t *r);

#ifdef __cplusplus
}
#endif

#endif
