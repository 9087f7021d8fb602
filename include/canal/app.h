/* SPDX-License-Identifier: MIT */
/**
 * @file canal/app.h
 * The application: its configuration, routes, listeners (TCP, unix sockets, sockets from
 * systemd socket activation), worker threads and graceful shutdown, periodic timers, and the
 * health endpoints.
 *
 * An app owns a router (canal/router.h). Routes are added before canal_app_start(); then one
 * worker thread per core runs its own h2o event loop with its own listening socket per TCP
 * listener (SO_REUSEPORT), matches each request with the router and calls the route's handler
 * on that thread.
 *
 * This header does not include h2o.h: canal_req_t is opaque and apps need no h2o flags.
 * Configuration strings are copied by canal_app_create(); handler data is borrowed (unless a
 * dispose callback is given).
 */
#ifndef CANAL_APP_H
#define CANAL_APP_H

#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
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
    CANAL_ENV_PRODUCTION = 0, /**< errors answer a bare 500; details go to the log only */
    CANAL_ENV_DEVELOPMENT = 1 /**< errors answer an HTML page with the request's details */
} canal_env_t;

/** The access log's line format (canal_config_t.access_log_format; docs/operations.md). */
typedef enum canal_access_log_format {
    CANAL_ACCESS_LOG_CLF = 0, /**< Combined Log Format, plus the request ID with request IDs on */
    CANAL_ACCESS_LOG_JSON = 1 /**< one JSON object a line */
} canal_access_log_format_t;

/** How much a message matters (canal's own, canal_log(), canal_app_log()). */
typedef enum canal_log_level {
    CANAL_LOG_ERROR = 0, /**< something failed: a handler, a bind, a worker thread */
    CANAL_LOG_WARN = 1,  /**< canal went on, but not as asked (a shutdown deadline passed) */
    CANAL_LOG_INFO = 2   /**< the app's life (stopping, still serving while draining) */
} canal_log_level_t;

/** The built-in log sink's line format (canal_config_t.log_format; docs/operations.md). */
typedef enum canal_log_format {
    CANAL_LOG_TEXT = 0, /**< "2026-12-02T13:05:09.123Z error canal: the message request_id=..." */
    CANAL_LOG_JSON = 1  /**< one JSON object a line: time, level, source, msg, and the context */
} canal_log_format_t;

/** The longest message a log record carries, in bytes; a longer one is cut (on a UTF-8
 * boundary) and ends with CANAL_LOG_CUT_MARK and the number of bytes cut. */
#define CANAL_LOG_MAX 8192
/** What ends a message that was cut: "... [cut 1234 bytes]". */
#define CANAL_LOG_CUT_MARK "... [cut "

/**
 * One message: canal's own, or an application's (canal_log(), canal_app_log()), with the
 * request it is about. Strings are borrowed for the call; a canal_str_t with base NULL is
 * absent. msg is the message as formatted (at most CANAL_LOG_MAX bytes and the cut mark,
 * NUL-terminated), not escaped: it may hold any bytes the format put there (a request's
 * target, control characters, invalid UTF-8). The built-in sinks escape it.
 */
typedef struct canal_log_record {
    canal_log_level_t level; /**< how much it matters */
    const char *source;     /**< "canal" (canal's own) or "app" (canal_log(), canal_app_log()) */
    const char *msg;        /**< the message, NUL-terminated, not escaped */
    size_t len;             /**< strlen(msg) */
    canal_str_t request_id; /**< canal_req_id() (request_id on), or absent */
    canal_str_t route;      /**< the matched route's template, or absent */
    canal_str_t trace_id;   /**< canal_req_trace()'s (trace on), or absent */
    canal_str_t span_id;    /**< canal_req_trace()'s, or absent */
} canal_log_record_t;

/**
 * Receives each message (canal_config_t.log). Called on any thread (worker threads too),
 * possibly at the same time on several: it must be thread-safe. rec is borrowed for the
 * call. data is canal_config_t.log_data.
 */
typedef void (*canal_log_fn)(const canal_log_record_t *rec, void *data);

/** The type of an app's own option (canal_option_t). */
typedef enum canal_option_type {
    CANAL_OPTION_STRING, /**< const char *: any text but empty; "off" is NULL (none) */
    CANAL_OPTION_NUMBER, /**< size_t: a whole number in [min, max] */
    CANAL_OPTION_SWITCH  /**< int: "on" is 1, "off" 0 */
} canal_option_type_t;

/**
 * One of an app's own options, declared with canal_config_options(): it then has what each of
 * canal's settings has, a flag (--NAME), an environment variable (CANAL_ and the name in
 * capitals, '-' written '_': "api-key" is CANAL_API_KEY), a key in the configuration file, a
 * line in canal_config_help() and a row in its docs table, and the same strict parsing.
 */
typedef struct canal_option {
    const char *name;         /**< the flag without "--": lower-case letters, digits, '-'; not
                                   one of canal's */
    canal_option_type_t type; /**< what the value is */
    void *value;              /**< the app's variable: const char ** (STRING), size_t *
                                   (NUMBER), int * (SWITCH); canal writes the default into it,
                                   then what the file, environment and flags say */
    const char *def;          /**< the default, written as on the command line ("4096", "on",
                                   "data"); NULL: none (NULL, min, off) */
    size_t min;               /**< NUMBER: the smallest value */
    size_t max;               /**< NUMBER: the largest value; 0 means no upper bound */
    const char *meta;         /**< what the value is in the usage text ("DIR"); NULL: from the
                                   type */
    const char *help;         /**< a few words, for the usage text and the docs table */
} canal_option_t;

/**
 * Application configuration. Initialise with canal_config_init(), declare the app's own options
 * (canal_config_options()), then read the file, the environment and the command line, all
 * three with canal_config_load(). Strings are borrowed until canal_app_create(), which copies
 * them.
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
    canal_access_log_format_t access_log_format; /**< default CANAL_ACCESS_LOG_CLF */
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
                                      X-Forwarded-For / Forwarded / X-Request-Id are believed,
                                      and "unix" for the peers of unix sockets; NULL (default):
                                      none */
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
    /* WebSockets (canal/websocket.h) */
    unsigned ws_idle_timeout_ms;   /**< a socket that receives nothing this long is pinged, and
                                        closed (1001) after as long again (default 60 s) */
    size_t ws_max_queued;          /**< unsent bytes a socket may have queued; past them the
                                        client is too far behind and is dropped (16 MiB) */
    int allow_unknown_flags;       /**< 1: canal_config_from_args() leaves --flags it does not
                                        know in argv for the app (default 0: CANAL_EINVAL) */
    canal_log_fn log;              /**< where messages go (canal's and canal_log()'s); NULL
                                        (default): the built-in sink, stderr, one line each
                                        in log_format */
    void *log_data;                /**< passed to log; borrowed */
    unsigned stream_timeout_ms;    /**< a streamed answer (canal/stream.h) with no progress for
                                        this long is cut: the client took nothing of what is
                                        queued, or nothing was written (default 60 s) */
    /* deployment (docs/deploy.md) */
    const char *listen;            /**< "unix:/run/app/http.sock": the default listener is
                                        that unix socket instead of host and port; NULL
                                        (default): host and port */
    unsigned unix_mode;            /**< the file mode of listen's socket (default 0660) */
    const char *unix_owner;        /**< "USER", "USER:GROUP" or ":GROUP" (names or numbers)
                                        of listen's socket; NULL (default): the process's
                                        own. Without listen, canal_app_start() fails */
    int reuse_port;                /**< 1: share a TCP port another process listens on, and
                                        replace a unix socket another process accepts on (a
                                        same-port restart); 0 (default): either is an error
                                        at canal_app_start() */
    /* observability (docs/operations.md; canal/trace.h) */
    canal_log_format_t log_format; /**< the built-in sink's lines (default CANAL_LOG_TEXT);
                                        unused with a log callback */
    canal_log_level_t log_level;   /**< messages that matter less are dropped, before any
                                        sink (default CANAL_LOG_INFO: none is) */
    int trace;                     /**< 1: W3C Trace Context on every request (canal/trace.h):
                                        in the JSON access log, in problem details as
                                        "traceId", in log records (default 0) */
    int trace_echo;                /**< 1: also echo traceparent in every answer, with the
                                        request's span as parent (turns trace on; default 0) */
    /* scale-out (docs/deploy.md) */
    const char *store;             /**< NULL: sessions and rate limits in process (default);
                                        "redis://HOST:PORT[/DB]": in that Redis, shared by
                                        every instance (canal/redis.h; canal_app_create()
                                        makes the client) */
    /* the app's own options and the configuration file (docs/operations.md) */
    const canal_option_t *options; /**< the app's options (canal_config_options()); borrowed,
                                        for the app's life */
    size_t noptions;               /**< how many options has */
    const char *config_file;       /**< the JSON file canal_config_load() read (--config,
                                        CANAL_CONFIG), which canal_app_reload() reads again;
                                        NULL (default): none */
    const void *loaded;            /**< private: canal_config_load()'s record for a reload */
} canal_config_t;

/** Sets every field of cfg to its default (the defaults are in canal_config_usage()). */
CANAL_API void canal_config_init(canal_config_t *cfg);

/**
 * Reads the environment into cfg: every flag of canal_config_from_args() has a variable,
 * its name in capitals with '_' for '-' after CANAL_ (--max-body: CANAL_MAX_BODY), taking
 * the same values. The strings stay owned by the environment. Returns 0, or CANAL_EINVAL for
 * a bad value (err, if given, names the variable); cfg may then be partly updated.
 */
CANAL_API int canal_config_from_env(canal_config_t *cfg, canal_error_info_t *err);

/**
 * Reads canal's flags (canal_config_usage() lists them: --host H, --port N, --threads N ...,
 * also written --flag=value; an on|off flag alone, last or before another flag, is on) and
 * the app's (canal_config_options()) from a command line into cfg and removes them from argv, leaving
 * the program name and the other arguments, in order, for the app (argv[*argc] is NULL).
 * Everything after a "--" argument is left as it is, the "--" too. Strings point into argv.
 *
 * Returns 0; CANAL_EINVAL for a missing or bad value (err names the flag), or for a --flag
 * canal does not know ("unknown flag --prot; see --help") unless cfg->allow_unknown_flags
 * (then the app parses what is left); CANAL_EHELP for --help or -h, with cfg and argv
 * unchanged and err->message "usage: PROGRAM [options]" (print it and canal_config_usage(),
 * and exit 0). err->code is the code returned. After CANAL_EINVAL cfg and argv may be partly
 * updated.
 */
CANAL_API int canal_config_from_args(canal_config_t *cfg, int *argc, char **argv,
                                     canal_error_info_t *err);

/**
 * The usage text of every flag canal_config_from_args() understands: per flag its value, what
 * it does, its default, its range and its environment variable. Static. Canal's own flags
 * only: canal_config_help() adds the app's.
 */
CANAL_API const char *canal_config_usage(void);

/**
 * Declares the app's own options (n of them, at most 64), before the configuration is read:
 * writes each default into its variable and keeps options (borrowed) in cfg, so that
 * canal_config_load() (and canal_config_from_env(), canal_config_from_args(),
 * canal_config_from_file()) set them as canal's own. Returns 0, or CANAL_EINVAL for a bad
 * declaration (a name that is not a flag's or is canal's, twice the same name, no variable or
 * help, a default that is not a value of its type): err says which, and cfg is unchanged.
 */
CANAL_API int canal_config_options(canal_config_t *cfg, const canal_option_t *options, size_t n,
                                   canal_error_info_t *err);

/**
 * Reads a JSON configuration file into cfg: one object whose keys are flags without "--"
 * (canal's and the app's: {"port": 8080, "max-body": 1048576, "log-format": "json"}), numbers
 * as JSON numbers, everything else as JSON strings written as on the command line ("on",
 * "0660", "off"). Strings stay valid for the process's life. Returns 0, or CANAL_EINVAL for a
 * file that cannot be read or is not such an object, an unknown key, a value of the wrong type
 * or out of range: err->message names the file and the key ("app.json: max-body: bad value
 * '-1' (0 or more)"); cfg may then be partly updated.
 */
CANAL_API int canal_config_from_file(canal_config_t *cfg, const char *path, canal_error_info_t *err);

/**
 * Reads the whole configuration into cfg, each source over the one before: the defaults
 * already in cfg, then the file named by --config FILE or CANAL_CONFIG (if any), then the
 * environment, then the flags (removed from argv as canal_config_from_args() does). Keeps what
 * canal_app_reload() needs to read them again. Returns 0, CANAL_EHELP (--help, as
 * canal_config_from_args()), or CANAL_EINVAL (err names the file, variable or flag: print it
 * and exit with status 2).
 */
CANAL_API int canal_config_load(canal_config_t *cfg, int *argc, char **argv, canal_error_info_t *err);

/**
 * Writes the usage text of canal's flags and cfg's app options to f (as canal_config_usage()
 * does for canal's), or with markdown the table of docs/server.md for both. 0, or -1 when f
 * fails.
 */
CANAL_API int canal_config_help(const canal_config_t *cfg, int markdown, FILE *f);

/**
 * Copies the value of the setting name (a flag without "--", canal's or the app's) in cfg into
 * *value, typed as the field or the app's variable is (const char *, size_t, int, ...): for
 * an app's option of the configuration a reload passes (canal_reload_fn), its new value.
 * Returns 0, or CANAL_ENOTFOUND for no such setting.
 */
CANAL_API int canal_config_value(const canal_config_t *cfg, const char *name, void *value);

/**
 * A request handler. It sets the answer on the request (canal_res_text(), canal_res_json(),
 * canal_res_problem(), ... in canal/response.h) and returns 0; canal sends that answer when
 * the handler returns. It fails by returning canal_req_fail() (or any negative value): the
 * client then gets a 500 (production) or the developer error page (development), whatever
 * answer was set. Returning 0 without setting an answer is a bug, answered with a 500 too. A
 * handler that will answer later returns CANAL_PENDING (see canal/async.h).
 */
typedef int (*canal_handler_fn)(canal_req_t *req, void *data);

/** What a handler returns when it answers later. */
#define CANAL_PENDING 1

/**
 * Creates an app. cfg may be NULL for the defaults; it is copied. NULL when out of memory, or
 * when cfg->trusted_proxies is not a list of addresses and CIDRs (the reason is logged;
 * canal_config_from_args() and canal_config_from_env() check it first).
 */
CANAL_API canal_app_t *canal_app_create(const canal_config_t *cfg);

/** Stops the app if running (waiting for it), frees everything. NULL is a no-op. */
CANAL_API void canal_app_destroy(canal_app_t *app);

/** The app's configuration as copied at creation (a reload does not change it). Borrowed. */
CANAL_API const canal_config_t *canal_app_config(const canal_app_t *app);

/**
 * Reads the configuration again, as canal_config_load() read it (the same file, environment
 * and flags, in the same order), and applies what can change without dropping a connection:
 * --log-format and --access-log-format (from the next line on), the TLS certificates and keys
 * (each TLS listener reads its files again; new handshakes take them, connections made keep
 * theirs), then whatever the features and the app's reload hooks (canal_app_on_reload()) take.
 * Every other setting that changed is named in the log as not reloaded (a restart applies it);
 * the log names what changed. A file that cannot be read, or an unknown key or a bad value in
 * it, changes nothing: the log says why. canal_app_wait() calls it on SIGHUP; any thread may,
 * one reload at a time. An app whose configuration was not read by canal_config_load() reads
 * only its TLS files again and calls the hooks with its configuration as created.
 *
 * Returns 0; CANAL_EINVAL (nothing changed: the file, environment or flags are bad), or
 * CANAL_ESYS when a part failed (a certificate, a feature, a hook; logged; the rest applied).
 */
CANAL_API int canal_app_reload(canal_app_t *app);

/**
 * A reload hook: takes from next (the configuration just read; canal_config_value() for the
 * app's options) what the app can change while its workers run (a secret for new cookies,
 * rate-limit numbers: through calls that are safe for that), on the reloading thread. Strings
 * in next are valid for the app's life. Returns 0, or -1 when it kept its old settings (it
 * logs why).
 */
typedef int (*canal_reload_fn)(canal_app_t *app, const canal_config_t *next, void *data);

/**
 * Adds a reload hook (at most 8), called by every canal_app_reload() after canal's own
 * settings, in the order added. With one, the app's options are reported as passed to the app
 * instead of "not reloaded". 0, CANAL_EINVAL (fn NULL), CANAL_ENOMEM (too many).
 */
CANAL_API int canal_app_on_reload(canal_app_t *app, canal_reload_fn fn, void *data);

/**
 * The app's router, to list its routes or generate links (canal/router.h). Borrowed and
 * read-only: routes are added with canal_app_route(), which gives each one its handler.
 */
CANAL_API const canal_router_t *canal_app_router(const canal_app_t *app);

/** A rate limit (canal/ratelimit.h). Opaque; owned by the app. */
typedef struct canal_rate_limit canal_rate_limit_t;
/** A security headers preset (canal/headers.h). */
typedef struct canal_security_headers canal_security_headers_t;

/** The kind of a route option: a feature's (opaque). */
typedef struct canal_option_kind canal_option_kind_t;

/**
 * A feature's setting of one route: canal_endpoint_spec_t.options, and an action's or a
 * controller's (canal/controller.h). Made with the feature's macro, never by hand:
 * CANAL_ARGS(schema) (canal/schema.h), CANAL_DOC(...) (canal/openapi.h),
 * CANAL_RATE_LIMIT(limit) (canal/ratelimit.h), CANAL_POLICY(policy) (canal/auth.h),
 * CANAL_SECURITY_HEADERS(preset) (canal/headers.h); a feature's settings come this way so
 * that a new feature adds its own without a field in the spec. An entry with kind NULL (all
 * zero) ends the list; a route has at most one option of each kind.
 */
typedef struct canal_route_option {
    const canal_option_kind_t *kind; /**< the feature's; NULL ends the list */
    const void *value;               /**< the setting, as the feature's macro says */
} canal_route_option_t;

/** The most options a route, an action or a controller carries. */
#define CANAL_MAX_ROUTE_OPTIONS 8

/** One route of an app, for canal_app_route(). Designated initializers: zero is a default. */
typedef struct canal_endpoint_spec {
    const char *method;       /**< an HTTP method token; NULL means "GET" */
    const char *tmpl;         /**< the route template (canal/router.h) */
    canal_handler_fn handler; /**< required */
    void *data;               /**< passed to handler; it is also the route's data
                                   (canal_route_data()). Borrowed unless dispose is set */
    void (*dispose)(void *data); /**< if set, called on data when the app is destroyed */
    const char *name;         /**< a route name for link generation, or NULL */
    canal_route_group_t *group; /**< from canal_app_group(): its prefix comes first; or NULL */
    canal_route_option_t options[CANAL_MAX_ROUTE_OPTIONS]; /**< the features' settings of this
                                   route (canal_route_option_t): its typed arguments
                                   (CANAL_ARGS()), its OpenAPI documentation (CANAL_DOC()), its
                                   rate limit, its policy, its security headers...; a feature
                                   without one here uses the group's or the app's, if any */
    size_t max_body;          /**< the largest request body this route takes, at most the app's
                                   max_body_size; a larger one is a 413 problem before the
                                   handler runs (after the rate limit, CORS and the policy).
                                   0: max_body_size alone (libh2o's 413) */
} canal_endpoint_spec_t;

/**
 * Registers a route and its handler. Strings are copied. Only before canal_app_start().
 * *route (if route is not NULL) receives the new route, owned by the app's router.
 * Returns 0 or a canal error, with err (if given) filled on every failure: a router error
 * (the position in the template and the reason), CANAL_EINVAL without a handler, with a
 * max_body above the app's max_body_size, with two options of one kind or an option its
 * feature refuses (a policy without a scheme, a security header value with CR or LF),
 * CANAL_ESTATE once started, CANAL_ENOMEM. The first failure of any registration call is
 * also kept by the app: canal_app_start() then fails with it, and canal_app_error() says
 * what it was, so a program may register everything and check once.
 */
CANAL_API int canal_app_route(canal_app_t *app, const canal_endpoint_spec_t *spec,
                              const canal_route_t **route, canal_error_info_t *err);

/**
 * A route group: a template prefix for the routes registered with it (spec.group), under
 * parent (another group) or, if parent is NULL, at the root. Owned by the app's router.
 * NULL when out of memory (also kept as the app's registration error).
 */
CANAL_API canal_route_group_t *canal_app_group(canal_app_t *app, canal_route_group_t *parent,
                                               const char *prefix);

/**
 * The app's first registration error: 0 if none, else its code, with *err (if given) a copy
 * of the error info the failing call reported.
 *
 * The registration contract: every call that adds a route or a feature's setting before the
 * start (canal_app_route() and its shortcuts, canal_app_group(), canal_app_static(),
 * canal_app_compress*(), canal_app_cors*(), canal_app_metrics(), canal_app_health(),
 * canal_app_every(), canal_app_on_request(), canal_app_ws(), canal_app_openapi(),
 * canal_app_docs() but for its CANAL_ENOTFOUND, canal_app_schema(), canal_app_policy(),
 * canal_app_group_policy(), canal_app_rate_limit(), canal_rate_limit_create(),
 * canal_app_security_headers(), canal_sessions_create()) reports a failure the same way: the
 * code returned, its err (if it takes one) filled, and the first failure kept here, so that
 * canal_app_start() fails with it and a program may register everything and check once.
 * Listeners (canal_app_listen*()) report to their caller only.
 */
CANAL_API int canal_app_error(const canal_app_t *app, canal_error_info_t *err);

/**
 * Logs a message about req (printf format) to the app's sink (canal_config_t.log, or the
 * built-in one), as canal logs its own, with the request's context: its request ID (request
 * IDs on), its route's template, its trace and span IDs (trace on). On req's thread only
 * (a handler, a hook, a deferred answer's completion). A message longer than CANAL_LOG_MAX is
 * cut (CANAL_LOG_CUT_MARK).
 */
CANAL_API void canal_log(canal_req_t *req, canal_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** canal_log() without a request: no context. Any thread; app may be NULL (the built-in
 * text sink, on stderr). */
CANAL_API void canal_app_log(const canal_app_t *app, canal_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** canal_app_route() for GET with no name, no dispose, no group; the error is kept by the app
 * (canal_app_error()). */
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

/**
 * Adds a listener on a unix domain socket at path (at most 107 bytes), e.g. for a proxy on the
 * same machine (nginx's "proxy_pass http://unix:/run/app/http.sock:"). The socket file is
 * made by canal_app_start() with the file mode mode (0660, say; at most 0777) and, if owner is
 * not NULL, the owner and group "USER", "USER:GROUP" or ":GROUP" (names or numbers; changing
 * the owner needs the privilege to), all before anyone can connect. A file already at path
 * that connecting to is refused (left by a process that died) is replaced; a live one is an
 * error at start unless cfg.reuse_port; anything else at path is an error. The file is removed
 * when the app stops, if it is still the one made. Requests on it have no peer address: see
 * canal_req_client_addr() for what a handler sees. Only before canal_app_start(). Returns 0,
 * or CANAL_EINVAL (a path too long or empty, a mode above 0777, an unknown user or group),
 * CANAL_ESTATE, CANAL_ENOMEM, with err (if given) filled.
 */
CANAL_API int canal_app_listen_unix(canal_app_t *app, const char *path, unsigned mode,
                                    const char *owner, canal_error_info_t *err);

/**
 * What listener i listens on, after canal_app_start(): "127.0.0.1:8080", "[::1]:8080",
 * "unix:/run/app/http.sock", also for the sockets inherited from systemd. Borrowed from the
 * app; NULL before start or past the end.
 */
CANAL_API const char *canal_app_listener_addr(const canal_app_t *app, size_t i);

/** 1 if listener i uses TLS (after canal_app_start(), listener 0 is the first added). */
CANAL_API int canal_app_listener_tls(const canal_app_t *app, size_t i);

/**
 * Binds the listeners and starts the worker threads; returns at once.
 *
 * Listeners, in order: those added with canal_app_listen*(); then, if the process was started
 * by systemd socket activation (LISTEN_PID is this process, LISTEN_FDS sockets from
 * descriptor 3 on, LISTEN_FDNAMES), every inherited socket (TCP or unix, cleartext; only the
 * first app started in a process takes them); then, if neither gave a listener, the
 * configuration's (cfg.listen's unix socket, or host and port); then cfg.tls_port.
 *
 * A TCP port another process listens on is an error ("another process listens there"), unless
 * cfg.reuse_port: then both processes share the port and the kernel spreads new connections
 * over them (a same-port restart; Linux allows it for the same user only). The check is made
 * by the bind itself, not by a probe (docs/deploy.md: what it cannot see).
 *
 * Returns 0; CANAL_ESYS when a socket cannot be bound or an inherited one is not a listening
 * stream socket (the reason is logged), CANAL_ESTATE if already started.
 */
CANAL_API int canal_app_start(canal_app_t *app);

/**
 * Blocks until the app is stopped (canal_app_stop(), or SIGINT/SIGTERM unless no_signals),
 * meanwhile reopening the access log on SIGUSR1 (canal_app_reopen_log(); unless no_signals),
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

/**
 * Asks a running app to reopen its access log file by its path (after logrotate moved it):
 * the next write of any worker opens the path anew (created with mode 0644 if it is not
 * there) and writes there from then on; no line is lost or split between the two files. If
 * the path cannot be opened, the old file stays in use and the error is logged. No effect
 * without an access log file (none, or stdout). Safe from any thread and from a signal
 * handler; canal_app_wait() calls it on SIGUSR1 unless no_signals.
 */
CANAL_API void canal_app_reopen_log(canal_app_t *app);

/** The port listener i is bound to (useful with port 0), or 0 before start or past the end. */
CANAL_API uint16_t canal_app_port(const canal_app_t *app, size_t i);

/** The number of worker threads (after canal_app_start(); the configured count before). */
CANAL_API size_t canal_app_worker_count(const canal_app_t *app);

/** Requests worker i has dispatched so far (0 past the end). Safe from any thread. */
CANAL_API uint64_t canal_app_worker_requests(const canal_app_t *app, size_t i);

/** 1 once the app has been asked to stop (its readiness then answers 503). Any thread. */
CANAL_API int canal_app_draining(const canal_app_t *app);

/* ---- periodic work (docs/operations.md) ---- */

/** A periodic callback (canal_app_every()). data is the one given there. */
typedef void (*canal_timer_fn)(canal_app_t *app, void *data);

/**
 * Calls fn(app, data) about every interval_ms milliseconds while the app runs, for periodic
 * work such as refreshing a cache: the first call interval_ms after canal_app_start(), each
 * next one interval_ms after the previous one's turn of the loop, so calls never overlap and
 * a slow call delays the next. Every timer runs on worker 0's thread, on its event loop: fn
 * must be quick (it holds up that worker's requests) and, if it shares state with handlers,
 * thread-safe (handlers run on every worker); hand blocking work to a thread of your own.
 * Once canal_app_stop() has returned (also from a SIGTERM), no call begins; a call running
 * at that moment finishes, and none runs after canal_app_wait() returns. Each timer costs
 * every turn of worker 0's loop a look, so keep them few. data is borrowed. Only before
 * canal_app_start(). Returns 0, CANAL_EINVAL (fn NULL or interval_ms 0), CANAL_ESTATE or
 * CANAL_ENOMEM; a failure is also kept as the app's registration error (canal_app_error()).
 */
CANAL_API int canal_app_every(canal_app_t *app, unsigned interval_ms, canal_timer_fn fn,
                              void *data);

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

#ifdef __cplusplus
}
#endif

#endif
