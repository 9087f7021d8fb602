/* SPDX-License-Identifier: MIT */
/*
 * The core's private structures and calls, shared by its files (lib/core/), and by the
 * features above it, which attach through core/feature.h (docs/architecture.md):
 *   app.c        the app's life: create, start, wait (graceful shutdown), destroy, signals
 *   feature.c    the feature interface: switching on, the phases, per-worker state
 *   config.c     the configuration table: defaults, environment, command line, usage
 *   listen.c     listeners and their sockets, TLS
 *   worker.c     a worker thread: its loop, context and part of a shutdown
 *   conn.c       connections: the cap, slow and idle clients
 *   routes.c     the endpoint table and the registration calls, route groups, scoped settings
 *   req.c        the h2o handler (one request's path through the router), request accessors
 *   res.c        the answer: set, committed once; problem details, error pages
 *   async.c      deferred answers, posted completions, the offload pool
 *   stream.c     streamed answers (backpressure, idle limit, shutdown)
 *   json.c       the JSON writer;  log.c  the log callback;  proxy.c  trusted proxies, IDs
 *   timer.c      periodic callbacks on worker 0's loop (canal_app_every())
 *   trace.c      W3C trace context (canal/trace.h)
 *   h2o_compat.c everything that depends on libh2o 2.2.5's or jansson 2.14's internals
 */
#ifndef CANAL_CORE_H
#define CANAL_CORE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <h2o.h>
#include "canal/server.h"
#include "canal/cookie.h"
#include "canal/form.h"
#include "canal/ratelimit.h"
#include "canal/headers.h"
#include "canal/schema.h"
#include "core/feature.h"
#include "common/common.h"

/* The server's record of a route, at the route's number in app->endpoints (routes.c). */
struct canal_endpoint {
    canal_handler_fn fn;
    void *data;
    void (*dispose)(void *);
    const canal_route_t *route;
    const canal_route_group_t *group; /* the group it was registered in, or NULL */
    /* the features' options of the route (feature.h), as their kinds kept them */
    struct canal__route_option {
        const struct canal_option_kind *kind;
        const void *value;
    } options[CANAL_MAX_ROUTE_OPTIONS];
    size_t max_body;                       /* a larger body is a 413; 0: the app's limit */
    /* the features' guards (by order) and heads, built at start (feature.h) */
    unsigned char nguards, nheads;
    struct canal__guard guards[CANAL__MAX_GUARDS];
    struct canal__head heads[CANAL__MAX_HEADS];
};

/* What canal_app_group() records of a group (routes.c): its parent, for the scoped settings */
struct canal__group {
    const canal_route_group_t *group, *parent;
};

/* A feature's setting of a scope (routes.c, canal__scope_set()): the app's (group NULL) or a
 * group's; key is the feature's own address for the setting */
struct canal__scoped {
    const void *key;
    const canal_route_group_t *group;
    const void *value;
};

/* A listener: TCP (host, port), a unix socket (path), or a socket inherited from systemd
 * (inherited_fd). A TCP listener gets one socket per worker (SO_REUSEPORT); the other two have
 * one socket, which each worker reads through its own dup() of it. */
struct canal_listener {
    char *host;          /* TCP: as configured; NULL for the others */
    uint16_t port;       /* as configured */
    uint16_t bound_port; /* after bind (differs with port 0), or an inherited TCP socket's */
    char *path;          /* a unix socket canal makes, or NULL */
    unsigned mode;       /* its file mode */
    uid_t uid;           /* its owner and group ((uid_t)-1, (gid_t)-1: unchanged) */
    gid_t gid;
    dev_t dev;           /* the socket file made, removed at the end if it is still ours */
    ino_t ino;
    int inherited_fd;    /* a socket from systemd (LISTEN_FDS), or -1 */
    char addr[128];      /* canal_app_listener_addr(): "127.0.0.1:8080", "unix:/run/a.sock" */
    int *fds;            /* one socket per worker */
    SSL_CTX *ssl_ctx;    /* TLS listeners only */
    struct canal_tls *tls; /* and their files, the certificate a reload read (listen.c) */
};

/* An IP address: family 4 (bytes 0-3) or 6; IPv4-mapped IPv6 addresses are folded to 4. */
struct canal_addr {
    uint8_t family;
    uint8_t bytes[16];
};

/* A trusted proxy: an address and a prefix length (32 or 128 for a single address). */
struct canal_cidr {
    struct canal_addr addr;
    uint8_t bits;
};

/* A request being handled. It lives in h2o's request memory, made by canal__on_req() (req.c)
 * and ended by canal__on_req_done() (the logger h2o calls when it is done with the request;
 * the worker's table finds the object there). Initialised whole, from the fields
 * named in canal__on_req(): every other field starts at zero. */
struct canal_req {
    h2o_req_t *h2o;
    struct canal_worker *worker;
    canal_app_t *app;
    struct canal_conn *conn;      /* its connection, NULL if unknown */
    canal_str_t method, path, query;
    unsigned char is_head;
    unsigned char query_parsed;
    unsigned char held;           /* a feature's write holds the answer (canal__pending_hold()) */
    unsigned char guard_next;     /* the guard after one that waits (CANAL__GUARD_WAIT) */
    const struct canal_endpoint *endpoint; /* the matched route's, or NULL */
    canal_match_t *match;         /* the router's outcome (endpoint set: a route matched) */
    char *error;                  /* canal_req_fail() text */
    json_t *json;                 /* parsed body, released with the request */
    struct canal_pending *pending; /* canal_req_defer() */
    struct canal_stream *stream;  /* canal_res_stream_begin(): told when the request ends */
    struct canal_note {
        struct canal_note *next;
        const char *key, *value;
    } *notes;                     /* canal_req_note(), newest first */
    canal_str_t id;               /* canal_req_id(), made on first use */
    canal_str_t client_addr;      /* canal_req_client_addr(), made on first use */
    canal_param_t *query_params;  /* parsed on first use (query_parsed) */
    size_t nquery;
    /* the answer (res.c) */
    struct {
        int status;               /* 0: none set yet */
        unsigned char problem;    /* problem details */
        unsigned char committed;  /* handed to h2o: nothing can change any more */
        canal_str_t type;         /* Content-Type ({NULL, 0}: none) */
        const void *body;         /* in request memory or static */
        size_t len;
        size_t nheaders;          /* at the commit: the header fields set before it (by the
                                   * guards and the handler), ahead of the commit's own */
    } res;
    canal_commit_fn on_commit;    /* canal_res_on_commit() */
    void *on_commit_data;
    canal_trace_t *trace;         /* trace.c: canal_req_trace(), made on first use */
    struct canal__rstate *rstate; /* the features' per-request state (canal__req_state()) */
};

/* Every accepted connection, tracked until h2o closes its socket and no request of it is left:
 * for shutdown (closing idle keep-alive connections, which h2o 2.2.5 offers no call for), the
 * connection cap, and the slow-client and keep-alive timeouts (app.c, "sweep"). */
struct canal_conn {
    h2o_linklist_t link;
    h2o_socket_t *sock;          /* NULL once h2o closed it */
    struct canal_worker *worker;
    size_t inflight;             /* requests of this connection being handled */
    size_t seen_bytes;           /* sock->bytes_read at the last sweep */
    uint64_t since;              /* start of the current phase, or the last progress in a body */
    enum { CONN_IDLE, CONN_HEAD, CONN_BODY } phase;
    int http2;                   /* h2o's own HTTP/2 timeouts apply */
    int upgraded;                /* a WebSocket now (websocket.c): not swept */
    int tls;                     /* accepted by a TLS listener (HSTS: headers.c) */
    unsigned char peer_len;      /* the access log's text of the peer address, made on first use
                                  * (acclog.c); 0: not yet */
    char peer[63];
};

/* A worker's listening socket for one listener. */
struct canal_listen_sock {
    struct canal_worker *worker;
    h2o_socket_t *sock;
    h2o_accept_ctx_t accept_ctx;
};

/* The requests a worker is handling, by their h2o_req_t (req.c): a request object lives in h2o's
 * request memory, and its end-of-request work runs from the logger on canal's path, which h2o
 * calls with the h2o_req_t when it is done with it (h2o_req_t has no field for a user's pointer;
 * a destructor on the request memory, h2o_mem_alloc_shared(), costs a malloc() and a free() per
 * request, 2.7% of a plaintext answer). Open addressing, at most half full. */
struct canal_reqmap {
    canal_req_t **slots;
    size_t mask, n;
};

struct canal_worker {
    canal_app_t *app;
    size_t index;
    pthread_t thread;
    h2o_evloop_t *loop;
    h2o_context_t ctx;
    struct canal_listen_sock *socks; /* this worker's listening sockets, one per listener */
    h2o_linklist_t conns;          /* its open connections (struct canal_conn) */
    int accept_paused;             /* at max_connections: listeners not read */
    h2o_timeout_t *sweep_list;     /* slow and idle clients (app.c): the sweep's timer list, */
    h2o_timeout_t sweep_timeout;   /* which is h2o's own or, for short periods, this one */
    h2o_timeout_entry_t sweep_entry;
    uint64_t next_sweep;
    h2o_multithread_receiver_t stop_receiver;
    h2o_multithread_message_t stop_message;
    size_t json_hint;              /* size of the last JSON answer, to dump once */
    struct canal__streams *streams; /* stream.c: open streams and their timers; NULL until the first */
    uint64_t next_id;              /* the last generated request ID's counter (proxy.c) */
    uint64_t trace_rng;            /* trace.c: this worker's ID generator (splitmix64) */
    int trace_seeded;              /* trace_rng was seeded from getrandom() */
    char id_prefix[32];            /* "5f3a09c1-0-": the app's prefix and this worker's index */
    size_t id_prefix_len;          /* 0 until the first ID is made */
    /* canal__post() (async.c): every hand-off from other threads, and deferred answers */
    h2o_multithread_receiver_t post_receiver;
    h2o_timeout_t pending_timeout; /* made on the first deferral (pending_ready) */
    int pending_ready;
    pthread_mutex_t post_lock;     /* guards accepting_posts against the worker's end */
    int accepting_posts;
    int post_lock_ready;           /* destroyed with the app, not with the worker */
    /* counters: written by the worker, read by anyone */
    atomic_size_t inflight, connections;
    atomic_ullong requests;
    struct canal_reqmap reqs;      /* req.c: the requests being handled */
    void *fstate[CANAL__MAX_FEATURES]; /* the features' per-worker state (feature.h) */
    struct canal__end ends[CANAL__MAX_FEATURES]; /* their end phase, with that state */
    size_t nends;
    /* shutdown state, worker only (done: written by the worker, read by canal_app_wait) */
    int stopping, exit;
    atomic_int done;
    int started;                   /* worker_init() done: 1 running, -1 failed (under start_lock) */
    uint64_t deadline, last_activity;
};

/* The pool of blocking threads behind canal_offload() (async.c). */
struct canal_offload_pool {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    struct canal_job *head, *tail;
    size_t queued, max_queued;
    pthread_t *threads;
    size_t nthreads;
    int stopping;
    canal_offload_hooks_t hooks;  /* canal_app_offload_hooks() */
    size_t inits, init_failed;    /* threads whose thread_init has run, and failed */
};

/* A periodic callback (timer.c), run on worker 0's loop. */
struct canal_timer {
    canal_app_t *app;
    canal_timer_fn fn;
    void *data;
    unsigned interval_ms;
    h2o_loop_t *loop;        /* worker 0's, while it runs */
    h2o_timeout_t timeout;   /* a list of its own: one interval per list */
    h2o_timeout_entry_t entry;
};

/* Where an app is in its life (canal_app_t.state). */
enum canal_app_state { APP_CREATED = 0, APP_STARTED, APP_STOPPING, APP_STOPPED };

struct canal_app {
    canal_config_t cfg;
    char *host, *access_log, *tls_cert, *tls_key, *trusted_proxies; /* owned copies of cfg's strings */
    char *listen, *unix_owner;
    canal_router_t *router;
    struct canal_endpoint *endpoints; /* routes.c: one per route, at the route's number */
    size_t nendpoints, cap_endpoints;
    canal_error_info_t reg_err;   /* the first registration error (code 0: none) */
    h2o_globalconf_t globalconf;
    h2o_hostconf_t *hostconf;
    h2o_pathconf_t *pathconf;
    struct canal_listener *listeners;
    size_t nlisteners;
    struct canal_worker *workers;
    size_t nworkers;
    int stop_pipe[2];
    struct canal_offload_pool offload;
    atomic_int state;             /* an enum canal_app_state */
    atomic_int draining;          /* 1 once a stop was asked for: readiness answers 503 */
    struct canal_cidr *proxies;   /* parsed trusted_proxies */
    size_t nproxies;
    char id_prefix[10];           /* "5f3a09c1-": this process's request ID prefix */
    atomic_int force;             /* a second stop: workers leave without draining */
    struct canal__group *groups; /* routes.c: one per group made with canal_app_group() */
    size_t ngroups;
    struct canal__scoped *scoped; /* routes.c: the features' settings of the app and its groups */
    size_t nscoped;
    /* the features switched on (feature.h), and what the request path runs of them */
    struct canal__attached features[CANAL__MAX_FEATURES];
    size_t nfeatures, nbegins;
    unsigned char nheads;
    struct canal__begin begins[CANAL__MAX_FEATURES];
    struct canal__head heads[CANAL__MAX_HEADS]; /* on answers without a route */
    struct canal__guard unrouted; /* before the router's own 405 and OPTIONS 204, or {NULL} */
    /* canal_app_start() waits for each worker thread to have made its own loop and context */
    pthread_mutex_t start_lock;
    pthread_cond_t start_cond;
    size_t nstarted;              /* workers that said how their start went */
    int start_sync;               /* start_lock and start_cond exist */
    struct canal_timer *timers;   /* timer.c: canal_app_every(), run by worker 0 */
    size_t ntimers;
    atomic_int timers_stopped;    /* set by canal_app_stop(): no timer calls the app after it */
    /* a reload (canal_app_reload(), lib/app/reload.c, set there): SIGHUP writes to the pipe,
     * canal_app_wait() calls reload; log_format and log_level are cfg's as the last reload
     * set them */
    int reload_pipe[2];
    int (*reload)(canal_app_t *app);
    atomic_int log_format;
    atomic_int log_level;
};

/* listen.c: reads each TLS listener's certificate and key files again; the new ones serve the
 * handshakes from now on, a connection made keeps its own. 0, or -1 when one failed (logged;
 * that listener keeps what it had). Any thread; one at a time (the caller's lock). */
int canal__tls_reload(canal_app_t *app);
void canal__tls_dispose(struct canal_tls *t); /* NULL: nothing */

/* proxy.c: the client address behind the trusted proxies (the peer's without), in h's memory */
canal_str_t canal__client_addr(const canal_app_t *app, h2o_req_t *h);

/* routes.c: the endpoint of one of the app's routes (NULL if it is not one), and the end */
struct canal_endpoint *canal__endpoint_of(canal_app_t *app, const canal_route_t *route);
/* app.c: an app with its configuration and no feature on; canal_app_create() (lib/app/)
 * switches on the features the configuration names. NULL on failure (logged). */
canal_app_t *canal__app_new(const canal_config_t *cfg);
void canal__endpoints_dispose(canal_app_t *app);
/* routes.c: the core's own guard (a route's max_body), at start */
int canal__endpoints_start(canal_app_t *app);
/* routes.c: keeps err as the app's registration error if it is the first; returns err->code */
int canal__reg_error(canal_app_t *app, const canal_error_info_t *err);
/* routes.c: the failure of a registration call, the same way for every one: code and the
 * message (printf; NULL: canal_strerror(code)) into err (if given) and, if it is the first,
 * into the app's registration error (canal_app_error(); canal_app_start() fails with it).
 * Returns code. */
int canal__reg_fail(canal_app_t *app, canal_error_info_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* listen.c: the listeners (canal_app_start() binds them, once per worker) */
int canal__listener_add(canal_app_t *app, const char *host, uint16_t port);
int canal__listener_add_tls(canal_app_t *app, const char *host, uint16_t port, const char *cert_file,
                            const char *key_file, canal_error_info_t *err);
int canal__listener_add_unix(canal_app_t *app, const char *path, unsigned mode, const char *owner,
                             canal_error_info_t *err);
int canal__listeners_adopt(canal_app_t *app); /* systemd's LISTEN_FDS: how many, or -1 (logged) */
int canal__listener_bind(canal_app_t *app, struct canal_listener *l); /* l->fds[]: 0, or -1 (logged) */
void canal__listeners_close(canal_app_t *app); /* and removes the unix socket files made */
/* conn.c: accepting (paused at the connection cap), and the sweep of slow and idle clients */
void canal__on_accept(h2o_socket_t *listener, const char *err);
void canal__accept_one(struct canal_listen_sock *ls, h2o_socket_t *sock); /* a new connection */
uint64_t canal__sweep_period(const canal_config_t *cfg);
void canal__sweep_start(struct canal_worker *w);
/* timer.c: worker 0 arms the app's timers when its loop starts, and disposes of them */
void canal__timers_start(struct canal_worker *w);
void canal__timers_dispose(struct canal_worker *w);
/* worker.c: a worker thread (canal_app_start() prepares and starts them) */
int canal__worker_prepare(canal_app_t *app, size_t k);
void *canal__worker_main(void *arg);
struct canal_worker *canal__worker_current(void); /* this thread's worker, or NULL */
uint64_t canal__now_ms(void); /* a monotonic clock */

/* worker.c: records activity while a worker drains for shutdown (a monotonic clock: h2o's loop
 * time is cached per iteration and a blocking handler can make it stale) */
void canal__worker_touch_now(struct canal_worker *w);
static inline void canal__worker_touch(struct canal_worker *w)
{
    if (w->stopping)
        canal__worker_touch_now(w);
}
/* conn.c: the end of a connection that has no request left */
void canal__conn_free(struct canal_conn *c);
/* a request of c ends (canal__on_req_done()): with none left, c is idle from now, or freed if h2o
 * closed its socket first */
static inline void canal__conn_request_done(struct canal_conn *c)
{
    if (--c->inflight > 0)
        return;
    if (c->sock == NULL) {
        canal__conn_free(c);
        return;
    }
    c->phase = CONN_IDLE;
    c->since = h2o_now(c->worker->loop);
    c->seen_bytes = c->sock->bytes_read;
}

/* async.c */
int canal__worker_async_init(struct canal_worker *w);
void canal__worker_async_dispose(struct canal_worker *w);
void canal__worker_async_free(struct canal_worker *w); /* with the app: after any late post */
int canal__offload_start(canal_app_t *app);
void canal__offload_stop(canal_app_t *app);
/* A message run on a worker's loop (canal__post()): m is then run's to free. */
struct canal__post {
    h2o_multithread_message_t super;
    void (*run)(struct canal__post *m);
};
/* queues m for w's loop from any thread; -1 when w has stopped taking them (m is not queued) */
int canal__post(struct canal_worker *w, struct canal__post *m);
/* a deferred request (req->pending set, which the callers test on their hot paths) was
 * answered, or ends */
void canal__pending_answered(canal_req_t *req);
void canal__pending_gone(canal_req_t *req);
void canal__pending_abort_all(struct canal_worker *w); /* 503 to every unanswered one */
/* async.c: for a feature's deferral that is no answer of its own: canal__pending_hold() makes
 * the handler's answer (returned 0) wait for the deferral's completion (a store's write it
 * depends on); canal__pending_resume() ends the deferral without committing, and releases
 * the handle (a guard that waited: the request goes on) */
void canal__pending_hold(canal_req_t *req);
void canal__pending_resume(canal_pending_t *p);

/* proxy.c: parses a list of addresses and CIDRs (out may be NULL to only check it) */
int canal__proxies_parse(const char *list, struct canal_cidr **out, size_t *count,
                         canal_error_info_t *err);
int canal__proxies_trust(const canal_app_t *app, const struct canal_addr *a);
/* the client address from Forwarded (fwd, preferred) or X-Forwarded-For field values, if peer
 * is trusted (returns 1; 0 and client = peer otherwise) */
int canal__client_from_headers(const canal_app_t *app, const struct canal_addr *peer,
                               const canal_str_t *fwd, size_t nfwd, const canal_str_t *xff,
                               size_t nxff, struct canal_addr *client);
void canal__request_id_init(canal_app_t *app);

/* req.c: the handler of every request, and the logger that ends each one (both on the app's
 * path) */
int canal__on_req(h2o_handler_t *self, h2o_req_t *req);
void canal__on_req_done(h2o_logger_t *self, h2o_req_t *req);
int canal__reqmap_init(struct canal_reqmap *m);
void canal__reqmap_dispose(struct canal_reqmap *m);
int canal__reqmap_grow(struct canal_reqmap *m); /* twice the slots; -1: no memory */
static inline size_t canal__reqmap_slot(const struct canal_reqmap *m, const h2o_req_t *h)
{
    return (size_t)(((uintptr_t)h >> 4) * 0x9E3779B97F4A7C15ULL >> 32) & m->mask;
}

/* Puts req in, keyed by req->h2o; -1 when the table cannot grow. */
static inline int canal__reqmap_put(struct canal_reqmap *m, canal_req_t *req)
{
    if (2 * (m->n + 1) > m->mask + 1 && canal__reqmap_grow(m) != 0)
        return -1;
    size_t k = canal__reqmap_slot(m, req->h2o);
    while (m->slots[k] != NULL)
        k = (k + 1) & m->mask;
    m->slots[k] = req;
    m->n++;
    return 0;
}

/* Takes out and returns the request of h, or NULL. Deletion without tombstones: the entries
 * after the removed one in its run move back where their own slot allows. */
static inline canal_req_t *canal__reqmap_take(struct canal_reqmap *m, const h2o_req_t *h)
{
    size_t k = canal__reqmap_slot(m, h);
    canal_req_t *req;
    while ((req = m->slots[k]) != NULL && req->h2o != h)
        k = (k + 1) & m->mask;
    if (req == NULL)
        return NULL;
    size_t gap = k;
    for (size_t i = (k + 1) & m->mask; m->slots[i] != NULL; i = (i + 1) & m->mask) {
        size_t home = canal__reqmap_slot(m, m->slots[i]->h2o);
        /* the entry at i may fill the gap unless its home lies cyclically in (gap, i] */
        if (((i - home) & m->mask) >= ((i - gap) & m->mask)) {
            m->slots[gap] = m->slots[i];
            gap = i;
        }
    }
    m->slots[gap] = NULL;
    m->n--;
    return req;
}


/* json.c: writes json as json_dumpb(JSON_COMPACT | JSON_ENCODE_ANY) would, into pool memory
 * (starting with hint bytes); NULL if it cannot be written (invalid UTF-8, too deep) */
char *canal__json_write(h2o_mem_pool_t *pool, const json_t *json, size_t hint, size_t *len);

/* json.c: the streaming writer (canal_jw_t). Its buffer starts in pool memory and, when it
 * must grow, moves to heap memory freed when the pool is (so that running out of memory is
 * an error, not h2o's abort). st[d] says what level d is: JW_OBJ an object (else an array,
 * or the top level at 0), JW_ITEMS something was written in it, JW_KEY a key waits for its
 * value. */
enum { JW_OBJ = 1, JW_ITEMS = 2, JW_KEY = 4 };
struct canal_jw {
    h2o_mem_pool_t *pool;
    char *buf;
    size_t len, cap;
    char **heap;                   /* the holder that frees a heap buffer, or NULL */
    struct canal_worker *worker;   /* whose size hint finish() updates, or NULL */
    int err;                       /* sticky: 0 or a negative canal error */
    const char *why;
    unsigned depth;
    uint8_t st[CANAL_JW_MAX_DEPTH + 1];
};
/* a writer on a bare pool (tests, canal__json_write); hint: the first buffer's size */
void canal__jw_init(struct canal_jw *w, h2o_mem_pool_t *pool, size_t hint);
/* room for n more bytes in w's buffer: 0, or the sticky error */
int canal__jw_room(struct canal_jw *w, size_t n);

/* json.c: records err as w's sticky error (if it has none) and returns w's error */
int canal__jw_fail(struct canal_jw *w, int err, const char *why);
/* json.c, for a caller that writes the same keys many times (schema.c's rows): appends the
 * JSON form of a key ("key", escaped) to w as raw bytes, outside the value order (0, or -1
 * for invalid UTF-8); then writes such a form as the next key, as canal_jw_keyn() would */
int canal__jw_key_form(struct canal_jw *w, const char *key, size_t len);
int canal__jw_key_json(struct canal_jw *w, const char *form, size_t len);

/* h2o_compat.c: what libh2o 2.2.5 and jansson 2.14 make canal do (read the file's top) */
struct canal_conn *canal__conn_of(h2o_req_t *h); /* the request's connection record, or NULL */
/* RFC 9112 framing faults of an HTTP/1 request (sock: its socket, or NULL; folded: a header
 * has an empty name): NULL, or why it is refused */
const char *canal__http1_framing_fault(h2o_req_t *h, h2o_socket_t *sock, int folded);
/* rewrites libh2o's own error answers on the app's path into problem details, with the app's
 * security headers preset */
void canal__h2o_errors_as_problems(canal_app_t *app);
size_t canal__sock_unread(h2o_socket_t *sock); /* bytes waiting in sock's input buffer */
int canal__sock_has_head(h2o_socket_t *sock);   /* 1 if they hold a whole request head */
void canal__h2_graceful_timer_unlink(h2o_context_t *ctx);
h2o_timeout_entry_t *canal__timeout_first(h2o_timeout_t *t); /* NULL if empty */
void canal__json_error_set_code(json_error_t *err, enum json_error_code code);

/* res.c: sends the answer set on req, or the failure's; once (later calls do nothing) */
void canal__commit(canal_req_t *req);
/* res.c: commits the head of the answer set on req for a body streamed by gen (stream.c):
 * 0, or -1 when the commit hook failed the request (its failure answer has been sent) */
int canal__commit_stream(canal_req_t *req, h2o_generator_t *gen);

/* stream.c: the request of s ends (canal__on_req_done(): h2o is done with everything it was
 * sending, and the request's memory goes next); its reference to s goes */
void canal__stream_request_done(struct canal_stream *s);
/* stream.c, for the groups of event streams (realtime): the stream's slot for its group
 * memberships, and gone, which canal calls once with the slot on the stream's thread when the
 * stream is closed or ended, whichever comes first. NULL (nothing set) once that happened. */
void **canal__stream_groups(struct canal_stream *s, void (*gone)(void **slot));

/* stream.c: a stopping worker ends its open streams (begin_shutdown()); a worker about to stop
 * closes those still open (before it takes no more posts) and disposes of their timers */
void canal__streams_shutdown(struct canal_worker *w);
void canal__streams_abort(struct canal_worker *w);
void canal__streams_dispose(struct canal_worker *w);

/* trace.c: the parsers (plain C, for the unit test and the fuzzer). traceparent: 0 and t's
 * trace_id, parent_id and flags set, or -1 (malformed: t is left alone). tracestate: 1 if
 * the joined value s is well-formed and within the bounds, else 0. */
int canal__traceparent_parse(const char *s, size_t len, canal_trace_t *t);
int canal__tracestate_ok(const char *s, size_t len);
void canal__hex64(char *out, uint64_t v); /* 16 lower-case hex digits, no NUL */
/* log.c: every message canal prints goes here, to app's log callback (canal_config_t.log)
 * or, with none or no app (NULL), to the built-in sink (stderr). */
void canal__log(const canal_app_t *app, canal_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* log.c: canal's own message about req, with its context (as canal_log() gives) */
void canal__log_req(canal_req_t *req, canal_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
