/* SPDX-License-Identifier: MIT */
/*
 * The begin and end hooks of every request (canal_app_on_request(), canal/trace.h), a feature
 * (core/feature.h): its begin phase takes the two clocks (realtime for the start, monotonic
 * for the duration) and calls the app's begin hook once the route is known or the request
 * was refused; its end phase calls the end hook from canal__on_req_done(), the logger libh2o
 * calls when it is done with the request.
 */
#include <stdio.h>
#include <time.h>
#include "observability/observability.h"

/* The feature's state: the app's hooks */
struct hooks {
    canal_request_hook_fn begin, end;
    void *data;
};
static const struct canal__feature feature;

int canal_app_on_request(canal_app_t *app, canal_request_hook_fn begin, canal_request_hook_fn end, void *data)
{
    canal_error_info_t err = {0};
    struct hooks *hk = canal__feature_state(app, &feature);
    if (atomic_load(&app->state) != APP_CREATED)
        err.code = CANAL_ESTATE;
    else if (begin == NULL && end == NULL)
        err.code = CANAL_EINVAL;
    else if (hk != NULL)
        err.code = CANAL_EEXIST;
    else if ((hk = canal__feature_on(app, &feature)) == NULL)
        err.code = CANAL_ENOMEM;
    if (err.code != 0) {
        snprintf(err.message, sizeof(err.message), "canal_app_on_request: %s", canal_strerror(err.code));
        return canal__reg_error(app, &err);
    }
    *hk = (struct hooks){begin, end, data};
    return 0;
}

static int64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A request's own: its start on the two clocks */
struct start {
    int64_t unix_ns, mono_ns;
};

static canal_request_info_t info_of(canal_req_t *req, const struct start *t)
{
    return (canal_request_info_t){
        .start_unix_ns = t->unix_ns,
        .method = req->method,
        .route = req->endpoint != NULL ? canal_route_template(req->endpoint->route) : NULL,
        .trace = canal_req_trace(req),
    };
}

static void hook_begin(canal_req_t *req, void *st)
{
    const struct hooks *hk = st;
    struct start *t = canal__req_state(req, &feature, sizeof(*t), NULL);
    t->unix_ns = clock_ns(CLOCK_REALTIME);
    t->mono_ns = clock_ns(CLOCK_MONOTONIC);
    if (hk->begin != NULL) {
        canal_request_info_t info = info_of(req, t);
        hk->begin(req, &info, hk->data);
    }
}

static void hook_end(h2o_req_t *h, canal_req_t *req, void *st, void *wst)
{
    const struct hooks *hk = st;
    const struct start *t = req != NULL ? canal__req_state_find(req, &feature) : NULL;
    if (t == NULL || hk->end == NULL)
        return;
    canal_request_info_t info = info_of(req, t);
    info.status = h->res.status;
    info.duration_ns = clock_ns(CLOCK_MONOTONIC) - t->mono_ns;
    info.bytes = h->bytes_sent;
    hk->end(req, &info, hk->data);
}

static const struct canal__feature feature = {
    .name = "request hooks",
    .size = sizeof(struct hooks),
    .begin = hook_begin,
    .end = hook_end,
};
