/* SPDX-License-Identifier: MIT */
/*
 * Per request: before-filters, binding and validation, the action; then, when the server
 * commits the answer (at once, or when a deferred answer completes), the after-filters.
 *
 * The context and the args struct live in request memory. The answer is the request's own
 * (canal/response.h): the action sets it, and the after-filters, which run from the request's
 * commit hook (canal_res_on_commit()), see it and may change it. Binding is the server's
 * (canal_req_bind()): its errors are answered together as a 400 validation problem, in the
 * shape of ASP.NET Core's ValidationProblemDetails, before any action code runs.
 */
#include <stdio.h>
#include <string.h>
#include "controller_internal.h"

struct canal_ctx {
    canal_req_t *req;
    const canal_action_t *action;
    size_t ran; /* filters whose before ran (or that have none): their after runs */
};

/* ---- the dispatcher ---- */

/* The commit hook of an action's request: the after-filters, in reverse order, of the filters
 * whose before ran; on a failure, notes for the development error page instead. */
static void after_filters(canal_req_t *req, void *data)
{
    canal_ctx_t *ctx = data;
    while (ctx->ran > 0 && canal_req_failure(req) == NULL) {
        const canal_filter_t *f = &ctx->action->chain[--ctx->ran];
        if (f->after != NULL && f->after(ctx, f->data) < 0 && canal_req_failure(req) == NULL)
            canal_req_fail(req, "an after-filter failed");
    }
    if (canal_req_failure(req) != NULL) {
        canal_req_note(req, "action", ctx->action->def.name);
        canal_req_note(req, "controller", ctx->action->ctrl->name);
    }
}

int canal__mvc_dispatch(canal_req_t *req, void *data)
{
    const canal_action_t *a = data;
    canal_ctx_t *ctx = canal_req_alloc(req, sizeof(*ctx));
    *ctx = (canal_ctx_t){.req = req, .action = a};
    canal_res_on_commit(req, after_filters, ctx);

    for (; ctx->ran < a->nchain; ctx->ran++) {
        const canal_filter_t *f = &a->chain[ctx->ran];
        int rc = f->before != NULL ? f->before(ctx, f->data) : 0;
        if (rc < 0)
            return rc;
        if (rc > 0) {
            ctx->ran++;
            return canal_res_status_code(req) != 0
                       ? 0
                       : canal_req_fail(req, "a before-filter stopped the request without an answer");
        }
    }
    void *args = NULL;
    if (a->def.args != NULL) {
        args = canal_req_alloc(req, a->def.args->size);
        int rc = canal_req_bind(req, a->def.args, args);
        if (rc != 0)
            return rc == CANAL_EINVAL ? 0 : rc; /* the 400 (or 415) is the answer, or a failure */
    }
    return a->def.handler(ctx, req, args);
}

/* ---- accessors ---- */

canal_req_t *canal_ctx_req(const canal_ctx_t *ctx)
{
    return ctx->req;
}

void *canal_ctx_state(const canal_ctx_t *ctx)
{
    return ctx->action->ctrl->state;
}

const canal_action_t *canal_ctx_action(const canal_ctx_t *ctx)
{
    return ctx->action;
}

const canal_controller_t *canal_ctx_controller(const canal_ctx_t *ctx)
{
    return ctx->action->ctrl;
}

int canal_ctx_created(canal_ctx_t *ctx, const char *controller, const char *action, const canal_kv_t *values,
                      size_t nvalues, const canal_schema_t *schema, const void *obj)
{
    const canal_mvc_t *mvc = ctx->action->ctrl->mvc;
    const char *c = controller ? controller : ctx->action->ctrl->name;
    char small[256], *url = small;
    int n = canal_mvc_link(mvc, c, action, values, nvalues, small, sizeof(small));
    if (n >= (int)sizeof(small)) {
        url = canal_req_alloc(ctx->req, (size_t)n + 1);
        canal_mvc_link(mvc, c, action, values, nvalues, url, (size_t)n + 1);
    }
    int rc = n < 0 ? n : canal_res_header(ctx->req, "location", url);
    if (rc == 0)
        rc = schema != NULL ? canal_res_model(ctx->req, 201, schema, obj)
                            : canal_res_body_static(ctx->req, 201, NULL, NULL, 0);
    return rc;
}
