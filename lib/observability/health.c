/* SPDX-License-Identifier: MIT */
/*
 * Health endpoints for load balancers and orchestrators.
 *
 * Liveness says the process is worth keeping: if a worker's loop can run this handler, it
 * is. Readiness says it is worth sending traffic to: not once a stop has been asked for
 * (the app keeps serving for shutdown_delay_ms, so whoever probes readiness has time to
 * notice and move traffic away before the listeners close), and not while the app's own
 * check says no. The answers are small constant JSON bodies, never cached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "observability/observability.h"

struct canal_health {
    canal_ready_fn ready;
    void *data;
};

#define BODY(s) s, sizeof(s) - 1

static int answer(canal_req_t *req, int status, const char *body, size_t len)
{
    canal_res_header(req, "cache-control", "no-store");
    return canal_res_body_static(req, status, "application/json", body, len);
}

static int live(canal_req_t *req, void *data)
{
    (void)data;
    return answer(req, 200, BODY("{\"status\":\"live\"}"));
}

static int ready(canal_req_t *req, void *data)
{
    const struct canal_health *h = data;
    if (canal_app_draining(req->app))
        return answer(req, 503, BODY("{\"status\":\"draining\"}"));
    if (h->ready != NULL && !h->ready(req->app, h->data))
        return answer(req, 503, BODY("{\"status\":\"not ready\"}"));
    return answer(req, 200, BODY("{\"status\":\"ready\"}"));
}

int canal_app_health(canal_app_t *app, const char *prefix, canal_ready_fn ready_fn, void *data)
{
    if (prefix == NULL)
        prefix = "";
    /* "/health/" and "health" are the same prefix to the router */
    while (*prefix == '/')
        prefix++;
    size_t n = strlen(prefix);
    while (n > 0 && prefix[n - 1] == '/')
        n--;
    size_t size = n + sizeof("/ready");
    char *tmpl = malloc(size);
    struct canal_health *h = malloc(sizeof(*h));
    if (tmpl == NULL || h == NULL) {
        free(tmpl);
        free(h);
        return canal__reg_fail(app, NULL, CANAL_ENOMEM, "health endpoints: out of memory");
    }
    *h = (struct canal_health){ready_fn, data};
    snprintf(tmpl, size, "%.*s%slive", (int)n, prefix, n ? "/" : "");
    /* probes carry no credentials: the app's default policy does not cover them */
    static const canal_policy_t anonymous = {.anonymous = 1};
    int rc = canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = tmpl, .handler = live, .options = {CANAL_POLICY(&anonymous)}}, NULL, NULL);
    if (rc == 0) {
        snprintf(tmpl, size, "%.*s%sready", (int)n, prefix, n ? "/" : "");
        rc = canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = tmpl, .handler = ready, .data = h, .dispose = free, .options = {CANAL_POLICY(&anonymous)}}, NULL, NULL);
        if (rc == 0)
            h = NULL; /* the route owns it now */
    }
    free(h);
    free(tmpl);
    return rc;
}
