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

static canal_request_info_t info_of(canal_req_t *req)
{
    return (canal_request_info_t){
        .start_unix_ns = req->start_unix_ns,
        .method = req->method,
        .route = req->endpoint != NULL ? canal_route_template(req->endpoint->route) : NULL,
        .trace = canal_req_trace(req),
    };
}

static void hook_begin(canal_req_t *req, void *st)
{
    const struct hooks *hk = st;
    req->start_unix_ns = clock_ns(CLOCK_REALTIME);
    req->start_mono_ns = clock_ns(CLOCK_MONOTONIC);
    if (hk->begin != NULL) {
        canal_request_info_t info = info_of(req);
        hk->begin(req, &info, hk->data);
    }
}

static void hook_end(h2o_req_t *h, canal_req_t *req, void *st, void *wst)
{
    const struct hooks *hk = st;
    if (req == NULL || hk->end == NULL)
        return;
    canal_request_info_t info = info_of(req);
    info.status = h->res.status;
    info.duration_ns = clock_ns(CLOCK_MONOTONIC) - req->start_mono_ns;
    info.bytes = h->bytes_sent;
    hk->end(req, &info, hk->data);
}

static const struct canal__feature feature = {
    .name = "request hooks",
    .size = sizeof(struct hooks),
    .begin = hook_begin,
    .end = hook_end,
};
