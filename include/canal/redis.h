/* SPDX-License-Identifier: MIT */
/**
 * @file canal/redis.h
 * An asynchronous Redis client on the worker loops (hiredis's async API driven by canal's own
 * adapter on libh2o's event loop). docs/deploy.md, "Redis".
 *
 * Each worker thread has one command connection of its own to the server, on which the
 * commands of its requests are pipelined; the answer to a command comes back on the
 * request's own thread, in a callback that sets the request's answer. Commands are argument
 * vectors, each argument a binary-safe length and bytes: request data never becomes command
 * text. Every command has a deadline: when the server does not answer in time (paused, gone,
 * a network fault) the command fails with CANAL_ECLOSED, the connection is dropped and made
 * again with a backoff (100 ms doubling up to 1 s) until the server answers a PING; a command
 * asked for while it is down fails at once. Nothing waits longer than the deadline.
 *
 * Worker 0 also keeps a subscriber connection for pub/sub: the groups an app shares across
 * instances (canal_ws_group_share(), canal_sse_group_share()) publish on the sending worker's
 * command connection and receive through it; it subscribes again to every shared group's
 * channel each time it has reconnected. docs/realtime.md, "Rooms across instances".
 */
#ifndef CANAL_REDIS_H
#define CANAL_REDIS_H

#include <stddef.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An app's Redis client (canal_app_redis()). Opaque; owned by the app. */
typedef struct canal_redis canal_redis_t;

/** A reply, valid during the callback only (read it with the calls below). Opaque. */
typedef struct canal_redis_reply canal_redis_reply_t;

/** The types of a reply (the RESP2 types). */
typedef enum canal_redis_type {
    CANAL_REDIS_STRING = 1,  /**< a bulk string: canal_redis_reply_str() */
    CANAL_REDIS_ARRAY = 2,   /**< canal_redis_reply_count() elements, canal_redis_reply_at() */
    CANAL_REDIS_INTEGER = 3, /**< canal_redis_reply_int() */
    CANAL_REDIS_NIL = 4,     /**< a missing key's value */
    CANAL_REDIS_STATUS = 5,  /**< +OK: canal_redis_reply_str() */
    CANAL_REDIS_ERROR = 6,   /**< -ERR ...: canal_redis_reply_str() is the server's message */
} canal_redis_type_t;

/** How the client works. Zero is the default for every field. */
typedef struct canal_redis_options {
    unsigned timeout_ms;   /**< a command's deadline, and the connect's: 0 is 1,000 ms */
    size_t max_inflight;   /**< commands waiting for a reply per worker: 0 is 4,096; past it
                                canal_redis_command() returns CANAL_EAGAIN */
} canal_redis_options_t;

/**
 * The app's Redis client, for url `redis://[:PASSWORD@]HOST:PORT[/DB]` (HOST an IPv4 or IPv6
 * address or a name resolved at each connect; PORT default 6379; DB default 0, selected with
 * SELECT on every connection; a password is sent with AUTH first). opts may be NULL. One
 * client per app; each worker connects when it starts. Returns the client (freed with the
 * app), or NULL with err filled: CANAL_ESYNTAX (a bad URL), CANAL_EEXIST (the app has one),
 * CANAL_ESTATE (started), CANAL_ENOMEM. The error also sticks to the app (canal_app_start()
 * fails with it).
 */
CANAL_API canal_redis_t *canal_app_redis(canal_app_t *app, const char *url, const canal_redis_options_t *opts,
                                         canal_error_info_t *err);

/** The app's Redis client, or NULL when it has none. */
CANAL_API canal_redis_t *canal_app_redis_get(const canal_app_t *app);

/**
 * Called on the request's thread with the request, the reply and 0, or with reply NULL and
 * a negative status: CANAL_ECLOSED (the server did not answer within the deadline, or the
 * connection was lost). It sets the answer, as a handler does (or sends another command on
 * req). Never called once the request is gone (the client left, or the request's own
 * deadline answered 504): data should live in the request's memory (canal_req_alloc()).
 */
typedef void (*canal_redis_fn)(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data);

/**
 * Sends the command argv[0..argc) (each argv[i] of lens[i] bytes, copied: binary safe) on the
 * worker's connection, and defers the request's answer (canal/async.h): the handler returns
 * CANAL_PENDING. When the command's reply arrives, cb runs; when the last command of the
 * request has had its callback, the answer is committed. From a handler, or from a callback
 * of this request. Returns CANAL_PENDING; or, with nothing sent and no callback to come:
 * CANAL_ECLOSED (the server is unreachable now: answer with canal_redis_unavailable()),
 * CANAL_EAGAIN (max_inflight commands wait already), CANAL_EINVAL (argc < 1), CANAL_ESTATE
 * (the request was deferred by someone else, or is answered), CANAL_ENOMEM.
 */
CANAL_API int canal_redis_command(canal_req_t *req, canal_redis_t *r, int argc, const char *const *argv,
                                  const size_t *lens, canal_redis_fn cb, void *data);

/** Sets a 503 problem with `Retry-After: 1` on req: "the store is unreachable". Returns 0. */
CANAL_API int canal_redis_unavailable(canal_req_t *req);

/** 1 when every worker's connection has answered its last PING or command, else 0. Any thread. */
CANAL_API int canal_redis_ready(const canal_redis_t *r);

/** The reply's type (canal_redis_type_t). */
CANAL_API int canal_redis_reply_type(const canal_redis_reply_t *reply);
/** An integer reply's value; 0 for other types. */
CANAL_API long long canal_redis_reply_int(const canal_redis_reply_t *reply);
/** A string, status or error reply's bytes (not copied); {NULL, 0} for other types. */
CANAL_API canal_str_t canal_redis_reply_str(const canal_redis_reply_t *reply);
/** An array reply's number of elements; 0 for other types. */
CANAL_API size_t canal_redis_reply_count(const canal_redis_reply_t *reply);
/** An array reply's element i, or NULL when out of range or not an array. */
CANAL_API const canal_redis_reply_t *canal_redis_reply_at(const canal_redis_reply_t *reply, size_t i);

#ifdef __cplusplus
}
#endif

#endif
