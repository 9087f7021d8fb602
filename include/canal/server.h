/* SPDX-License-Identifier: MIT */
/**
 * @file canal/server.h
 * canal's server core on libh2o: the application object (configuration, worker threads,
 * listeners, graceful shutdown, access log), the request and the response.
 *
 * An app owns a router (canal/router.h). Routes are added before canal_app_start(); then one
 * worker thread per core runs its own h2o event loop with its own listening socket
 * (SO_REUSEPORT), matches each request with the router and calls the route's handler on that
 * thread. A handler answers with one of the canal_res_* calls.
 *
 * This header does not include h2o.h: canal_req_t is opaque and apps need no h2o flags.
 *
 * Ownership in short: configuration strings are copied by canal_app_create(); handler data is
 * borrowed (unless a dispose callback is given); request memory (canal_req_alloc(), every
 * canal_str_t a request hands out) lives until the response has been sent; json_t follows
 * jansson's convention: functions ending in _new steal the reference, the others borrow it.
 * On out-of-memory inside a request, h2o's pool aborts the process (h2o's own policy).
 */
#ifndef CANAL_SERVER_H
#define CANAL_SERVER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <jansson.h>
#include "export.h"
#include "error.h"
#include "router.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An application: configuration, router, listeners and worker threads. Opaque;
 * canal_app_create() and canal_app_destroy(). */
typedef struct canal_app canal_app_t;
/** A request being answered. Opaque; valid until its answer has been sent (or, for a deferred
 * request, as canal_pending_req() says). */
typedef struct canal_req canal_req_t;

/** Development shows an HTML error page with the details; production answers without them. */
typedef enum canal_env {
    CANAL_ENV_PRODUCTION = 0, /**< errors answer a bare 500; details go to stderr only */
    CANAL_ENV_DEVELOPMENT = 1 /**< errors answer an HTML page with the request's details */
} canal_env_t;

/**
 * Application configuration. Initialise with canal_config_init(), then change fields, read
 * the environment (canal_config_from_env()) and the command line (canal_config_from_args()).
 * Strings are borrowed until canal_app_create(), which copies them.
 */
typedef struct canal_config {
    const char *host;          /**< listen address (default "127.0.0.1"); "0.0.0.0", "::" */
    uint16_t port;             /**< listen port (default 8080; 0 picks a free port) */
    unsigned threads;          /**< worker threads; 0 (default) means one per online core */
    canal_env_t env;           /**< default CANAL_ENV_PRODUCTION */
    size_t max_body_size;      /**< largest request body buffered; over it 413 (default 1 MiB) */
    size_t max_target_length;  /**< longest request target (path and query); over it 414 (8 KiB) */
    size_t max_header_count;   /**< most request header fields; over it 431 (default 64) */
    size_t max_header_bytes;   /**< most bytes of header names and values; over it 431 (16 KiB) */
    size_t max_query_params;   /**< most query parameters; over it 414 (default 256) */
    unsigned shutdown_timeout_ms; /**< graceful shutdown deadline for in-flight requests (10 s) */
    const char *access_log;    /**< NULL: no access log (default); "-": stdout; else a file */
    int no_signals;            /**< 0: canal_app_wait() stops on SIGINT/SIGTERM (default) */
    unsigned request_timeout_ms; /**< a deferred answer not given by then is a 504 (30 s) */
    unsigned offload_threads;  /**< threads of the blocking-work pool (default 4) */
    size_t offload_queue;      /**< jobs that may wait for them; more is a 503 (default 1024) */
    uint16_t tls_port;         /**< if not 0, also listen with TLS (HTTP/2 and HTTP/1.1 by ALPN) */
    const char *tls_cert;      /**< PEM certificate chain file for tls_port */
    const char *tls_key;       /**< PEM private key file for tls_port */
    /* behind a load balancer (see docs/deploy.md) */
    unsigned shutdown_delay_ms; /**< on a stop, keep listening and serving this long while
                                     readiness answers 503, then shut down (default 0) */
    int request_id;            /**< 1: every answer carries X-Request-Id, also in the access log
                                    and in problem details as "requestId" (default 0) */
    const char *trusted_proxies; /**< addresses and CIDRs ("127.0.0.1, 10.0.0.0/8, ::1") whose
                                      X-Forwarded-For / Forwarded / X-Request-Id are believed;
                                      NULL (default): none */
    canal_router_options_t router; /**< options of the app's router */
    /* slow and idle clients (HTTP/1.1; see docs/server.md, "Limits") */
    unsigned header_timeout_ms;    /**< whole request head within this, from its first byte;
                                        else 408 and close (default 10 s) */
    unsigned body_timeout_ms;      /**< most time without a byte while a body is incomplete;
                                        else 408 and close (default 10 s) */
    unsigned keepalive_timeout_ms; /**< an idle connection (no request, nothing received) is
                                        closed after this (default 60 s; HTTP/2 idle too) */
    size_t max_connections;        /**< open connections per worker; at the cap the worker
                                        stops accepting until one closes (default 10,000) */
    size_t max_json_depth;         /**< deepest JSON body canal_req_json() parses (64; jansson
                                        stops at 2048 whatever this says) */
} canal_config_t;

/** Sets every field of cfg to its default. */
CANAL_API void canal_config_init(canal_config_t *cfg);

/**
 * Reads CANAL_HOST, CANAL_PORT, CANAL_THREADS, CANAL_ENV, CANAL_ACCESS_LOG,
 * CANAL_SHUTDOWN_DELAY, CANAL_REQUEST_ID (on|off), CANAL_TRUSTED_PROXIES and the limits
 * CANAL_MAX_BODY, CANAL_MAX_TARGET, CANAL_MAX_HEADERS, CANAL_MAX_HEADER_BYTES,
 * CANAL_MAX_QUERY_PARAMS, CANAL_HEADER_TIMEOUT, CANAL_BODY_TIMEOUT, CANAL_KEEPALIVE_TIMEOUT
 * (milliseconds), CANAL_MAX_CONNECTIONS and CANAL_MAX_JSON_DEPTH into cfg.
 * The strings stay owned by the environment. Returns 0, or CANAL_EINVAL for a bad value
 * (err, if given, names it); cfg may then be partly updated.
 */
CANAL_API int canal_config_from_env(canal_config_t *cfg, canal_error_info_t *err);

/**
 * Reads canal's flags from a command line into cfg and removes them from argv, leaving the
 * program name and any other arguments (in order) for the app: --host H, --port N,
 * --threads N, --env development|production, --access-log PATH|-|off, --max-body BYTES,
 * --max-target BYTES, --max-headers N, --max-header-bytes BYTES, --max-query-params N,
 * --shutdown-timeout MS, --shutdown-delay MS, --request-id on|off, --trusted-proxies LIST|off,
 * --header-timeout MS, --body-timeout MS, --keepalive-timeout MS, --max-connections N,
 * --max-json-depth N (also written --flag=value; the others are in canal_config_usage()).
 * Strings point into argv.
 * Returns 0, or CANAL_EINVAL for a missing or bad value (err names the flag).
 */
CANAL_API int canal_config_from_args(canal_config_t *cfg, int *argc, char **argv,
                                     canal_error_info_t *err);

/** The usage text of the flags canal_config_from_args() understands. Static. */
CANAL_API const char *canal_config_usage(void);

/**
 * A request handler. It answers with one canal_res_* call and returns 0, or fails by
 * returning canal_req_fail() (or any value but 0 and CANAL_PENDING): the client then gets a
 * 500 (production)
 * or the developer error page (development). Returning 0 without answering is a bug, answered
 * with a 500 too. A handler that will answer later returns CANAL_PENDING (see
 * canal_req_defer() and canal_offload()).
 */
typedef int (*canal_handler_fn)(canal_req_t *req, void *data);

/** What a handler returns when it answers later. */
#define CANAL_PENDING 1

/**
 * Creates an app. cfg may be NULL for the defaults; it is copied. NULL when out of memory, or
 * when cfg->trusted_proxies is not a list of addresses and CIDRs (the reason is on stderr;
 * canal_config_from_args() and canal_config_from_env() check it first).
 */
CANAL_API canal_app_t *canal_app_create(const canal_config_t *cfg);

/** Stops the app if running (waiting for it), frees everything. NULL is a no-op. */
CANAL_API void canal_app_destroy(canal_app_t *app);

/** The app's configuration as copied at creation. Borrowed. */
CANAL_API const canal_config_t *canal_app_config(const canal_app_t *app);

/** The app's router, to register routes at the router level or list them. Borrowed. */
CANAL_API canal_router_t *canal_app_router(canal_app_t *app);

/**
 * Registers a handler for a method and a route template (see canal/router.h).
 * data is borrowed; if dispose is given it is called on data when the app is destroyed.
 * name may be NULL; a named route can be used for link generation.
 * Returns 0 or a router error (err, if given, has the position and the reason). Only before
 * canal_app_start(): CANAL_ESTATE afterwards.
 */
CANAL_API int canal_app_route(canal_app_t *app, const char *method, const char *tmpl,
                              const char *name, canal_handler_fn handler, void *data,
                              void (*dispose)(void *), canal_error_info_t *err);

/** canal_app_route() for GET with no name, no dispose, no error details. */
CANAL_API int canal_app_get(canal_app_t *app, const char *tmpl, canal_handler_fn h, void *data);
/** canal_app_route() for POST. */
CANAL_API int canal_app_post(canal_app_t *app, const char *tmpl, canal_handler_fn h, void *data);
/** canal_app_route() for PUT. */
CANAL_API int canal_app_put(canal_app_t *app, const char *tmpl, canal_handler_fn h, void *data);
/** canal_app_route() for DELETE. */
CANAL_API int canal_app_delete(canal_app_t *app, const char *tmpl, canal_handler_fn h,
                               void *data);
/** canal_app_route() for PATCH. */
CANAL_API int canal_app_patch(canal_app_t *app, const char *tmpl, canal_handler_fn h, void *data);

/**
 * Adds a listener (host:port). Without any, the app listens on the configuration's host and
 * port. Only before canal_app_start(). Returns 0, CANAL_ESTATE or CANAL_ENOMEM.
 */
CANAL_API int canal_app_listen(canal_app_t *app, const char *host, uint16_t port);

/**
 * Adds a TLS listener: HTTP/2 and HTTP/1.1 offered by ALPN (cleartext listeners speak HTTP/1.1
 * and HTTP/2 with prior knowledge or by upgrade). The certificate chain and key (PEM files) are
 * loaded now: a missing, unreadable or mismatched file is CANAL_EINVAL with the reason in err.
 * Only before canal_app_start().
 */
CANAL_API int canal_app_listen_tls(canal_app_t *app, const char *host, uint16_t port,
                                   const char *cert_file, const char *key_file,
                                   canal_error_info_t *err);

/** 1 if listener i uses TLS (after canal_app_start(), listener 0 is the first added). */
CANAL_API int canal_app_listener_tls(const canal_app_t *app, size_t i);

/**
 * Binds the listeners and starts the worker threads; returns at once.
 * Returns 0; CANAL_ESYS when a socket cannot be bound (the reason is on stderr), CANAL_ESTATE
 * if already started.
 */
CANAL_API int canal_app_start(canal_app_t *app);

/**
 * Blocks until the app is stopped (canal_app_stop(), or SIGINT/SIGTERM unless no_signals),
 * then shuts down gracefully: readiness turns 503 at once (canal_app_draining()); for
 * shutdown_delay_ms the app goes on listening and serving (a second stop ends that wait);
 * then it stops accepting, lets in-flight requests finish within the shutdown timeout,
 * closes the connections and joins the workers. Returns 0, or CANAL_ESTATE if the app was
 * not started.
 */
CANAL_API int canal_app_wait(canal_app_t *app);

/** canal_app_start() then canal_app_wait(). */
CANAL_API int canal_app_run(canal_app_t *app);

/** Asks a running app to stop. Safe from any thread and from a signal handler. */
CANAL_API void canal_app_stop(canal_app_t *app);

/** The port listener i is bound to (useful with port 0), or 0 before start or past the end. */
CANAL_API uint16_t canal_app_port(const canal_app_t *app, size_t i);

/** The number of worker threads (after canal_app_start(); the configured count before). */
CANAL_API size_t canal_app_worker_count(const canal_app_t *app);

/** Requests worker i has dispatched so far (0 past the end). Safe from any thread. */
CANAL_API uint64_t canal_app_worker_requests(const canal_app_t *app, size_t i);

/** 1 once the app has been asked to stop (its readiness then answers 503). Any thread. */
CANAL_API int canal_app_draining(const canal_app_t *app);

/* ---- health endpoints (docs/deploy.md) ---- */

/**
 * An app's own readiness: return 1 when it can serve (its database is reachable, its caches
 * are warm...), 0 when not. Called on worker threads, possibly at the same time on several:
 * it must be thread-safe and quick (it is probed often).
 */
typedef int (*canal_ready_fn)(canal_app_t *app, void *data);

/**
 * Mounts the health endpoints under prefix ("/health"): GET (and HEAD) prefix/live answers
 * 200 {"status":"live"} while the app's loops run; prefix/ready answers 200
 * {"status":"ready"}, or 503 {"status":"draining"} once a stop was asked for (see
 * shutdown_delay_ms), or 503 {"status":"not ready"} when ready (may be NULL) returns 0.
 * Neither is cached (Cache-Control: no-store). data is borrowed. Returns 0 or a
 * canal_app_route() error (CANAL_EEXIST if those routes exist, CANAL_ESTATE once started).
 */
CANAL_API int canal_app_health(canal_app_t *app, const char *prefix, canal_ready_fn ready,
                               void *data);

/* ---- the request ---- */

/** The method, as sent. */
CANAL_API canal_str_t canal_req_method(const canal_req_t *req);
/** The path as sent (percent-encoded), without the query. */
CANAL_API canal_str_t canal_req_path(const canal_req_t *req);
/** The raw query string after '?', without it; empty if none. */
CANAL_API canal_str_t canal_req_query_string(const canal_req_t *req);

/**
 * Looks a query parameter up (percent-decoded, '+' as space; the query is parsed on first
 * use). Returns how many times name occurs (0: absent), and sets *value (if not NULL) to the
 * first occurrence. Values live as long as the request.
 */
CANAL_API size_t canal_req_query(canal_req_t *req, const char *name, canal_str_t *value);

/** All query parameters in order, repeated keys included; returns their count. Borrowed. */
CANAL_API size_t canal_req_query_all(canal_req_t *req, const canal_param_t **params);

/**
 * Reads a query parameter as an integer (canal_parse_int64 rules).
 * Returns 0; CANAL_ENOTFOUND when absent (*out = def); CANAL_ETYPE, CANAL_ERANGE for a bad
 * value; CANAL_EINVAL when the key is repeated.
 */
CANAL_API int canal_req_query_int(canal_req_t *req, const char *name, int64_t def, int64_t *out);

/** A captured route value by parameter name, or an empty string with base NULL if none. */
CANAL_API canal_str_t canal_req_param(const canal_req_t *req, const char *name);

/**
 * Reads a route value as a 32-bit integer. Returns 0, CANAL_ENOTFOUND, CANAL_ETYPE or
 * CANAL_ERANGE (the canal_parse_int32 rules).
 */
CANAL_API int canal_req_param_int(const canal_req_t *req, const char *name, int32_t *out);
/** As canal_req_param_int() for 64-bit integers. */
CANAL_API int canal_req_param_long(const canal_req_t *req, const char *name, int64_t *out);

/**
 * The request's ID when request_id is on: the X-Request-Id a trusted proxy sent (1 to 128
 * printable characters), else one made here, unique within the process ("5f3a09c1-0-1a":
 * a random per-process prefix, the worker, a counter). The answer echoes it in X-Request-Id.
 * base NULL when request_id is off. Lives as long as the request; request's thread only.
 */
CANAL_API canal_str_t canal_req_id(canal_req_t *req);

/**
 * The client's address as text ("203.0.113.7", "2001:db8::1"; "-" if the connection is not
 * over IP). It is the connection's peer, unless the peer is a trusted proxy: then the hops of
 * Forwarded (RFC 7239; preferred when present) or else X-Forwarded-For are walked from the
 * nearest, and the first address that is not a trusted proxy is the client. Found on first
 * use; lives as long as the request.
 */
CANAL_API canal_str_t canal_req_client_addr(canal_req_t *req);

/** The matched route (for its template and name), or NULL. Borrowed. */
CANAL_API const canal_route_t *canal_req_route(const canal_req_t *req);

/** The first request header with this name (ASCII case-insensitive); base NULL if none. */
CANAL_API canal_str_t canal_req_header(const canal_req_t *req, const char *name);

/** The number of request headers; with canal_req_header_at() to walk them all. */
CANAL_API size_t canal_req_header_count(const canal_req_t *req);
/** Header i: its name (lower-case) and value. Returns 0, or CANAL_EINVAL past the end. */
CANAL_API int canal_req_header_at(const canal_req_t *req, size_t i, canal_str_t *name,
                                  canal_str_t *value);

/** The request body (buffered whole, at most max_body_size bytes); empty if none. */
CANAL_API canal_str_t canal_req_body(const canal_req_t *req);

/**
 * The body parsed as JSON (Content-Type must be application/json or +json). A borrowed
 * reference that lives until the response is sent. NULL when absent, of another type,
 * malformed or nested deeper than max_json_depth; err (if given) says why (jansson's position
 * and text, or the content-type; json_error_code() is json_error_stack_overflow for depth).
 */
CANAL_API json_t *canal_req_json(canal_req_t *req, json_error_t *err);

/**
 * Serializes json compactly (jansson, keys in insertion order) into request memory and returns
 * it (not NUL-terminated) with its length in *len; NULL if json cannot be serialized.
 * Borrows json.
 */
CANAL_API char *canal_req_json_dump(canal_req_t *req, const json_t *json, size_t *len);

/**
 * Attaches a note (key and value, both copied) to the request; the development error page
 * lists the notes (the controller layer notes the controller and the action).
 */
CANAL_API void canal_req_note(canal_req_t *req, const char *key, const char *value);

/** Allocates size bytes of request memory, freed when the request ends. Never NULL. */
CANAL_API void *canal_req_alloc(canal_req_t *req, size_t size);

/** printf into request memory. Never NULL. */
CANAL_API char *canal_req_printf(canal_req_t *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Records why the handler failed and returns -1, so a handler can `return
 * canal_req_fail(req, "db: %s", why);`. The text goes to stderr and, in development, to the
 * error page; production clients never see it.
 */
CANAL_API int canal_req_fail(canal_req_t *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The app the request belongs to. */
CANAL_API canal_app_t *canal_req_app(const canal_req_t *req);

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
 * reason, "JSON writer: ...", goes to stderr and to the development error page), and returns
 * the error, which the handler may return. Returns 0, the writer's error, or CANAL_ESTATE
 * when an answer was sent already.
 */
CANAL_API int canal_res_jw_send(canal_req_t *req, int status, canal_jw_t *w);

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
 * goes to stderr and the client gets the production 500 or the development error page. For
 * answers given later (canal_req_defer()), where there is no handler to return from.
 */
CANAL_API int canal_res_fail(canal_req_t *req, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** 1 once an answer has been sent for req. */
CANAL_API int canal_res_sent(const canal_req_t *req);

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

/** The reason phrase of an HTTP status ("Not Found"), or "Unknown". Static. */
CANAL_API const char *canal_status_reason(int status);

#ifdef __cplusplus
}
#endif

#endif
