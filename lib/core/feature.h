/* SPDX-License-Identifier: MIT */
/*
 * The feature interface: how a feature (an access log, rate limits, CORS, a database client)
 * attaches to the core without the core naming it. h2o is the model: its core knows nothing
 * of its handlers, filters and loggers, which plug in and keep their state in slots of their
 * own.
 *
 * A feature is one static const struct canal__feature. Its own canal_app_*() call switches it
 * on (canal__feature_on(), once per app: it gets its state, zeroed, owned by the core); a
 * feature never switched on costs nothing. What it does, it does in phases:
 *
 *   phase         when                                       how it attaches
 *   start         canal_app_start(), before the workers      feature.start: settles its
 *                                                            settings, adds guards and heads
 *   guard         a matched route, before the handler        canal__endpoint_guard(): may
 *                 (by order: rate limit 10, CORS 20,           answer (returns 1), and then
 *                 policy 30, the body limit 40, the            the handler does not run
 *                 output cache 45)
 *   unrouted      the router's own 405 or OPTIONS 204        canal__app_unrouted(): may answer
 *   head          the commit: status and headers are set     canal__endpoint_head(), and
 *                                                            canal__app_head() for answers
 *                                                            without a route (libh2o's too)
 *   begin         every request, once routed or refused      feature.begin
 *   end           every answer h2o is done with              feature.end (req NULL: a static
 *                                                            file or libh2o's own answer)
 *   worker        init on the worker's thread; drain when    feature.worker_*, with the
 *                 a stop begins; busy keeps the drain          feature's per-worker state
 *                 waiting; stop before the loop's context
 *                 goes, exit after it
 *   reopen        canal_app_reopen_log(), SIGUSR1            feature.reopen (a flag only)
 *   reload        canal_app_reload(), SIGHUP                 feature.reload (the new
 *                                                            configuration, workers running)
 *   dispose       canal_app_destroy()                        feature.dispose
 *
 * The guards and heads of an endpoint, and the app's begin and end lists, are built once at
 * start: the request path runs a few short loops over them.
 */
#ifndef CANAL_FEATURE_H
#define CANAL_FEATURE_H

#include <stdio.h>
#include <h2o.h>
#include "canal/server.h"

struct canal_worker;
struct canal_endpoint;

/* Features an app can have on, guards and heads an endpoint can have. */
#define CANAL__MAX_FEATURES 16
#define CANAL__MAX_GUARDS 6
#define CANAL__MAX_HEADS 4

/* A guard: 1 if it answered the request (the handler does not run), else 0; or
 * CANAL__GUARD_WAIT when it decides later (a store's reply): it then calls
 * canal__guard_done(req, answered) once, on the request's thread, unless the request ends
 * first (it deferred it: canal_req_defer(), canal__pending_resume()). (req.c) */
typedef int (*canal__guard_fn)(canal_req_t *req, const void *arg);
#define CANAL__GUARD_WAIT 2
void canal__guard_done(canal_req_t *req, int answered);
/* A head: adds to the answer's head at the commit. req is NULL for libh2o's own answers. */
typedef void (*canal__head_fn)(canal_req_t *req, h2o_req_t *h, const void *arg);

struct canal__guard {
    canal__guard_fn fn;
    const void *arg;
    int order;
};

struct canal__head {
    canal__head_fn fn;
    const void *arg;
};

struct canal__feature {
    const char *name;
    size_t size;        /* its per-app state (zeroed), from canal__feature_on() */
    size_t worker_size; /* its per-worker state (zeroed), 0 for none */
    /* the app's life; start returns 0 or -1 (then it has logged why, and the start fails) */
    int (*start)(canal_app_t *app, void *st);
    void (*dispose)(canal_app_t *app, void *st); /* its state's insides: the core frees it */
    /* a worker's life, on the worker's thread; init returns 0 or -1 */
    int (*worker_init)(struct canal_worker *w, void *st, void *wst);
    void (*worker_drain)(struct canal_worker *w, void *st, void *wst);
    int (*worker_busy)(struct canal_worker *w, void *st, void *wst); /* 1: not done yet */
    void (*worker_stop)(struct canal_worker *w, void *st, void *wst);
    void (*worker_exit)(struct canal_worker *w, void *st, void *wst);
    /* every request */
    void (*begin)(canal_req_t *req, void *st);
    void (*end)(h2o_req_t *h, canal_req_t *req, void *st, void *wst);
    /* canal_app_reopen_log() (SIGUSR1): the files it writes are opened anew at its next
     * write; called from a signal handler: only lock-free, async-signal-safe work */
    void (*reopen)(canal_app_t *app, void *st);
    /* canal_app_reload() (SIGHUP), on the reloading thread while the workers run: next is
     * the configuration just read (its settings that reload, canal_app_reload()); the feature
     * takes what it can change safely (atomics, or a lock its request path takes) and returns
     * 0, or -1 when it keeps its old settings (it has logged why) */
    int (*reload)(canal_app_t *app, void *st, const canal_config_t *next);
    /* its lines of the metrics (Prometheus text, canal__metrics_label() for label values),
     * written by the metrics endpoint on any worker's thread */
    void (*metrics)(canal_app_t *app, void *st, FILE *f);
};

/* A kind of route option (canal_route_option_t, canal/app.h): a feature's setting of one
 * route, reached from the spec so that the core's structs grow no field per feature. At
 * registration canal_app_route() switches the feature on and asks attach() to check the value
 * (and keep a copy of its own if it needs one: *kept is what the route keeps); a failure is
 * the route's registration error. The feature finds it at start with canal__endpoint_option().
 * The kind's address is also the key of its scoped settings (canal__scope_set()). */
struct canal_option_kind {
    const struct canal__feature *feature;
    const char *name; /* for errors: "policy" */
    int (*attach)(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err);
    /* NULL, or called once the route is in the router, with what attach kept: a check that
     * needs the route (the typed arguments against its template's values) */
    int (*added)(canal_app_t *app, const void *kept, const canal_route_t *route, canal_error_info_t *err);
};

/* The value of ep's option of kind k, or NULL */
const void *canal__endpoint_option(const struct canal_endpoint *ep, const struct canal_option_kind *k);

/* A feature switched on in an app: the feature and its state. */
struct canal__attached {
    const struct canal__feature *f;
    void *state;
};

/* The phases of every request, built at start from the features that have one: the begin
 * phase for the app, the end phase for each worker (with its per-worker state). */
struct canal__begin {
    void (*fn)(canal_req_t *req, void *st);
    void *state;
};
struct canal__end {
    void (*fn)(h2o_req_t *h, canal_req_t *req, void *st, void *wst);
    void *state, *wstate;
};

/* A feature's per-request state: size bytes in the request's memory, zeroed, made on first use
 * and found by key (an address of the feature's own) for the rest of the request; dispose
 * (may be NULL) is called on it when the request's memory goes. canal__req_state_find(): the
 * state of key, or NULL if none was made. (req.c) */
void *canal__req_state(canal_req_t *req, const void *key, size_t size, void (*dispose)(void *state));
void *canal__req_state_find(const canal_req_t *req, const void *key);

/* Switches f on in app (once; later calls give the same state): f's state, or NULL when out
 * of memory or after canal_app_start() (then nothing changed). */
void *canal__feature_on(canal_app_t *app, const struct canal__feature *f);
/* f's state in app, or NULL if f is off */
void *canal__feature_state(const canal_app_t *app, const struct canal__feature *f);
/* f's per-worker state in w, or NULL if f is off or has none */
void *canal__worker_state(const struct canal_worker *w, const struct canal__feature *f);

/* At start: adds a guard to ep at its order (equal orders keep the order they came in);
 * CANAL_ENOMEM past CANAL__MAX_GUARDS. */
int canal__endpoint_guard(struct canal_endpoint *ep, int order, canal__guard_fn fn, const void *arg);
/* At start: adds a head to ep; CANAL_ENOMEM past CANAL__MAX_HEADS. */
int canal__endpoint_head(struct canal_endpoint *ep, canal__head_fn fn, const void *arg);
/* At start: a head on the answers that have no route (the router's own, refusals, libh2o's) */
int canal__app_head(canal_app_t *app, canal__head_fn fn, const void *arg);
/* At start: a guard before the router's own 405 and OPTIONS 204 (one per app) */
int canal__app_unrouted(canal_app_t *app, canal__guard_fn fn, const void *arg);

/* Scoped settings, resolved once at start by one rule, the nearest scope wins: the route's
 * own, its groups' from the innermost, the app's. canal__scope_set() records a feature's value
 * for the app (group NULL) or a group of the app's, key an address of the feature's own for
 * that setting (a later call replaces it): 0, CANAL_EINVAL (not a group of the app's),
 * CANAL_ESTATE (started), CANAL_ENOMEM. canal__scope_get(): the value for ep, own being the
 * route's own (NULL: none); ep NULL: the app's. (routes.c) */
int canal__scope_set(canal_app_t *app, const void *key, const canal_route_group_t *group, const void *value);
const void *canal__scope_get(const canal_app_t *app, const void *key, const struct canal_endpoint *ep,
                             const void *own);

/* A label value of the metrics' text, escaped (feature.c) */
void canal__metrics_label(FILE *f, const char *s);

/* The core's side (feature.c): starting, the workers' phases, disposing. */
int canal__features_start(canal_app_t *app);
void canal__features_dispose(canal_app_t *app);
int canal__features_reload(canal_app_t *app, const canal_config_t *next); /* -1: one failed */
int canal__features_worker_prepare(struct canal_worker *w);
int canal__features_worker_init(struct canal_worker *w);
void canal__features_worker_drain(struct canal_worker *w);
int canal__features_worker_busy(struct canal_worker *w);
void canal__features_worker_stop(struct canal_worker *w);
void canal__features_worker_exit(struct canal_worker *w);
void canal__features_worker_free(struct canal_worker *w);

#endif
