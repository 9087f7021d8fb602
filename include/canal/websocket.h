/* SPDX-License-Identifier: MIT */
/**
 * @file canal/websocket.h
 * WebSockets (RFC 6455, version 13, over HTTP/1.1: libh2o 2.2.5 has neither RFC 8441 nor
 * permessage-deflate): routes that upgrade, sockets, and groups that broadcast across the
 * worker threads.
 *
 * A WebSocket route is an ordinary route of the app's router (canal_app_ws()): its template's
 * values are read in on_open, the app's filters (CORS...) run before the upgrade, and the
 * handshake is checked by canal, which answers a bad one with problem details (405, 426, 400).
 * A socket lives on the worker thread that accepted its connection; its callbacks run there,
 * and canal_ws_send() and the other socket calls are made there. Other threads reach a socket
 * with canal_ws_post() (holding a reference, canal_ws_retain()) and groups with
 * canal_ws_group_send().
 *
 * Limits: a message over the route's max_message is refused with close code 1009 before its
 * payload is read; a socket whose unsent messages pass max_queued bytes (a client that stops
 * reading) is dropped, and counted, so that no loop ever waits for one client. A socket that
 * receives nothing for ws_idle_timeout_ms is pinged, and closed if it still says nothing for as
 * long again. On a graceful shutdown every socket is closed with 1001 within the drain.
 */
#ifndef CANAL_WEBSOCKET_H
#define CANAL_WEBSOCKET_H

#include <stddef.h>
#include "request.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An open WebSocket. Opaque; valid from on_open to the end of on_close, or longer while a
 * reference is held (canal_ws_retain()). */
typedef struct canal_ws canal_ws_t;

/** A group of sockets (a chat room) on any worker threads. Opaque. */
typedef struct canal_ws_group canal_ws_group_t;

/** What a message holds. */
typedef enum canal_ws_kind {
    CANAL_WS_TEXT = 1,  /**< UTF-8 text (checked: a client's invalid text is closed with 1007) */
    CANAL_WS_BINARY = 2 /**< bytes */
} canal_ws_kind_t;

/** The default largest message a route accepts (1 MiB; a message of exactly this is accepted). */
#define CANAL_WS_MAX_MESSAGE (1024 * 1024)

/**
 * Called when a handshake is valid, before the 101 answer: the request is readable (route
 * values, headers, query). Return 0 to accept the socket. To refuse it, set an answer on req
 * (canal_res_problem(req, 403, ...)) and return 1: that answer is sent instead. A negative
 * value fails the request as a handler's does (a 500). The socket may be sent messages and
 * join groups here; they go out after the 101. If it is refused, on_close is not called.
 */
typedef int (*canal_ws_open_fn)(canal_ws_t *ws, canal_req_t *req, void *data);

/** A whole message from the client (reassembled from its fragments). msg is borrowed for the
 * call and is not NUL-terminated. */
typedef void (*canal_ws_message_fn)(canal_ws_t *ws, canal_ws_kind_t kind, const void *msg, size_t len,
                                    void *data);

/**
 * The socket is closed (once, for every socket on_open accepted). code is the client's close
 * code (1005 if its Close had none), else the one canal sent (1002, 1007, 1009, 1001...), else
 * 1006 (the connection ended without a Close). reason (the client's, UTF-8) is borrowed for
 * the call. No message can be sent any more; references held keep the handle valid. The
 * socket is still a member of its groups during the call (so an app can leave them under a
 * lock of its own); it leaves the others after.
 */
typedef void (*canal_ws_close_fn)(canal_ws_t *ws, int code, canal_str_t reason, void *data);

/** A WebSocket route, for canal_app_ws(). Designated initializers: zero is a default. */
typedef struct canal_ws_spec {
    const char *tmpl;                /**< the route template (canal/router.h) */
    canal_ws_open_fn on_open;        /**< or NULL: every valid handshake is accepted */
    canal_ws_message_fn on_message;  /**< or NULL: messages are dropped */
    canal_ws_close_fn on_close;      /**< or NULL */
    void *data;                      /**< passed to the callbacks; also the route's data
                                          (canal_route_data()). Borrowed unless dispose is set */
    void (*dispose)(void *data);     /**< if set, called on data when the app is destroyed */
    const char *name;                /**< a route name for link generation, or NULL */
    canal_route_group_t *group;      /**< from canal_app_group(), or NULL */
    size_t max_message;              /**< largest message accepted; 0: CANAL_WS_MAX_MESSAGE */
    const char *const *subprotocols; /**< NULL-terminated, in order of preference: the first
                                          the client offers is selected; NULL: none */
} canal_ws_spec_t;

/**
 * Registers a WebSocket route: GET (and OPTIONS, answered 405) on spec->tmpl, whose handler
 * checks the handshake and upgrades. Strings are copied. Only before canal_app_start().
 * *route (if not NULL) receives the GET route. Returns 0 or a canal_app_route() error, with
 * err (if given) filled; the first failure is kept by the app (canal_app_error()).
 */
CANAL_API int canal_app_ws(canal_app_t *app, const canal_ws_spec_t *spec, const canal_route_t **route,
                           canal_error_info_t *err);

/**
 * Queues a message (copied). The socket's thread only. Returns 0; CANAL_ESTATE once the socket
 * is closing; CANAL_EINVAL for text that is not UTF-8 or an unknown kind; CANAL_ELIMIT when the
 * message would take the socket's unsent bytes past max_queued: the socket is then dropped
 * (closed at once, without a Close) and counted in canal_ws_dropped_total.
 */
CANAL_API int canal_ws_send(canal_ws_t *ws, canal_ws_kind_t kind, const void *msg, size_t len);

/** Queues a ping (payload at most 125 bytes, copied; CANAL_EINVAL otherwise). As
 * canal_ws_send() for the rest. The client's pong is not reported. */
CANAL_API int canal_ws_ping(canal_ws_t *ws, const void *payload, size_t len);

/**
 * Starts the closing handshake: a Close with code (1000-1003, 1007-1014 or 3000-4999; else
 * CANAL_EINVAL) and reason (UTF-8, at most 123 bytes; may be NULL), after the messages queued
 * before it. Nothing more is sent; the connection ends when the client answers, or a second
 * later. The socket's thread only. Returns 0, CANAL_EINVAL or CANAL_ESTATE (closing already).
 */
CANAL_API int canal_ws_close(canal_ws_t *ws, int code, const char *reason);

/** The app's data for this socket (canal_ws_set_user()), or NULL. */
CANAL_API void *canal_ws_user(const canal_ws_t *ws);
/** Attaches the app's own data to the socket (borrowed: free it in on_close). */
CANAL_API void canal_ws_set_user(canal_ws_t *ws, void *user);

/** The selected subprotocol (one of spec.subprotocols), or NULL. Borrowed. */
CANAL_API const char *canal_ws_subprotocol(const canal_ws_t *ws);

/** The app the socket belongs to. */
CANAL_API canal_app_t *canal_ws_app(const canal_ws_t *ws);

/** Takes a reference to the handle, so another thread can post to it. Any thread. */
CANAL_API canal_ws_t *canal_ws_retain(canal_ws_t *ws);
/** Drops a reference taken with canal_ws_retain(). Any thread. */
CANAL_API void canal_ws_release(canal_ws_t *ws);

/** A callback run on a socket's thread; ws is NULL when the socket has closed meanwhile. */
typedef void (*canal_ws_post_fn)(canal_ws_t *ws, void *data);

/**
 * Runs fn(ws, data) on the socket's thread, ws being NULL there if the socket has closed by
 * then. Safe from any thread while the caller holds a reference (canal_ws_retain()); the
 * reference is the caller's still. If the app has stopped, fn runs at once on the calling
 * thread with ws NULL, so that data can be freed.
 */
CANAL_API void canal_ws_post(canal_ws_t *ws, canal_ws_post_fn fn, void *data);

/**
 * Creates an empty group. Only while the app runs (its worker count is known): NULL before
 * or after, or when out of memory. The caller owns a reference (canal_ws_group_release()).
 * Any thread.
 */
CANAL_API canal_ws_group_t *canal_ws_group_create(canal_app_t *app);

/** Drops the creator's reference (and ends the link to the store, if shared: no send after
 * it). The group lives on while it has members (each holds a reference) or messages on their
 * way to them. NULL is a no-op. Any thread. */
CANAL_API void canal_ws_group_release(canal_ws_group_t *g);

/** Adds the socket to the group (CANAL_EEXIST if a member; CANAL_ESTATE if the socket is
 * closing; CANAL_ENOMEM). The socket's thread only. A socket leaves its groups when it closes. */
CANAL_API int canal_ws_join(canal_ws_t *ws, canal_ws_group_t *g);

/** Takes the socket out of the group (CANAL_ENOTFOUND if not a member). The socket's thread. */
CANAL_API int canal_ws_leave(canal_ws_t *ws, canal_ws_group_t *g);

/** Members of the group on every thread. Any thread (a count that may already have moved). */
CANAL_API size_t canal_ws_group_size(const canal_ws_group_t *g);

/**
 * Sends a message (copied once) to every member, on every worker thread. Any thread; never
 * waits: each worker gets it through its queue (the calling worker's own members at once),
 * so each member receives one sender thread's messages in the order they were sent. A member
 * too far behind is dropped as canal_ws_send() says. Returns 0; CANAL_EINVAL (bad text or
 * kind); CANAL_ENOMEM.
 */
CANAL_API int canal_ws_group_send(canal_ws_group_t *g, canal_ws_kind_t kind, const void *msg, size_t len);

/**
 * Shares the group with the app's other instances through its store (`--store`,
 * canal/redis.h), on the channel "canal:ws:" name (len bytes, binary safe): from then on a
 * message sent on any instance whose group shares the name reaches the members of every
 * instance, each once, in order per sender. The sending instance publishes the message and
 * delivers what comes back from Redis, as every instance does. While the store is unreachable,
 * a message sent on a worker reaches this instance's members only (see docs/realtime.md).
 * Call it once, right after the create. Returns 0; CANAL_ENOTFOUND when the app has no store
 * (the group stays in process, at no cost); CANAL_EEXIST when shared already; CANAL_ENOMEM.
 * Any thread. The link ends with canal_ws_group_release(), the creator's, which for a shared
 * group must come before canal_app_destroy() (the store's subscriptions go with the app).
 */
CANAL_API int canal_ws_group_share(canal_ws_group_t *g, const char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif
