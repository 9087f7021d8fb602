/* SPDX-License-Identifier: MIT */
/*
 * An app's routes: the server's endpoint table and the registration calls.
 *
 * The router numbers its routes in registration order; the app keeps one struct canal_endpoint
 * per route at that number (app->endpoints[i] for route i): the handler, its data and what the
 * server settles about the route before it starts (its features' options, guards and heads). The router's own
 * data of a route is the handler's data, so canal_route_data() gives the app's user what they
 * registered, never canal's struct. Routes only come in through canal_app_route(): the app's
 * router is handed out read-only.
 *
 * Registration errors are sticky: the first is kept in app->reg_err, and canal_app_start()
 * fails with it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

int canal__reg_error(canal_app_t *app, const canal_error_info_t *err)
{
    if (app->reg_err.code == 0)
        app->reg_err = *err;
    return err->code;
}

int canal__reg_fail(canal_app_t *app, canal_error_info_t *err, int code, const char *fmt, ...)
{
    canal_error_info_t e = {.code = code};
    if (fmt == NULL) {
        snprintf(e.message, sizeof(e.message), "%s", canal_strerror(code));
    } else {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e.message, sizeof(e.message), fmt, ap);
        va_end(ap);
    }
    if (err != NULL)
        *err = e;
    return canal__reg_error(app, &e);
}

int canal_app_error(const canal_app_t *app, canal_error_info_t *err)
{
    if (err != NULL && app->reg_err.code != 0)
        *err = app->reg_err;
    return app->reg_err.code;
}

int canal_app_route(canal_app_t *app, const canal_endpoint_spec_t *spec, const canal_route_t **route,
                    canal_error_info_t *err)
{
    canal_error_info_t e = {0};
    const canal_route_t *r;
    if (atomic_load(&app->state) != APP_CREATED)
        canal_error_set(&e, CANAL_ESTATE, 0, "routes are added before the app starts");
    else if (spec == NULL || spec->handler == NULL)
        canal_error_set(&e, CANAL_EINVAL, 0, "a route needs a handler");
    else if (spec->max_body > app->cfg.max_body_size)
        canal_error_set(&e, CANAL_EINVAL, 0, "max_body %zu is above the app's max_body_size %zu", spec->max_body,
                        app->cfg.max_body_size);
    else if (app->nendpoints == app->cap_endpoints) {
        size_t cap = app->cap_endpoints ? 2 * app->cap_endpoints : 16;
        struct canal_endpoint *grown = realloc(app->endpoints, cap * sizeof(*grown));
        if (grown == NULL)
            canal_error_set(&e, CANAL_ENOMEM, 0, NULL);
        else
            app->endpoints = grown, app->cap_endpoints = cap;
    }
    /* the features' options: each checked (and copied if its feature needs) by its kind */
    struct canal__route_option options[CANAL_MAX_ROUTE_OPTIONS] = {{0}};
    for (size_t i = 0; e.code == 0 && i < CANAL_MAX_ROUTE_OPTIONS && spec->options[i].kind != NULL; i++) {
        const struct canal_option_kind *k = spec->options[i].kind;
        for (size_t j = 0; j < i; j++)
            if (options[j].kind == k)
                canal_error_set(&e, CANAL_EINVAL, 0, "two %s options on one route", k->name);
        if (e.code == 0 && canal__feature_on(app, k->feature) == NULL)
            canal_error_set(&e, CANAL_ENOMEM, 0, "%s: out of memory", k->name);
        if (e.code == 0 && k->attach(app, spec->options[i].value, &options[i].value, &e) == 0)
            options[i].kind = k;
    }
    if (e.code == 0) {
        canal_route_spec_t rs = {.method = spec->method, .tmpl = spec->tmpl, .name = spec->name, .data = spec->data};
        if (spec->group != NULL)
            canal_group_add(spec->group, &rs, &r, &e);
        else
            canal_router_add(app->router, &rs, &r, &e);
    }
    if (e.code != 0) {
        if (err != NULL)
            *err = e;
        return canal__reg_error(app, &e);
    }
    /* routes come in only here, so the router's number for r is the next slot */
    app->endpoints[app->nendpoints++] = (struct canal_endpoint){.fn = spec->handler, .data = spec->data,
                                                                .dispose = spec->dispose, .route = r,
                                                                .group = spec->group,
                                                                .max_body = spec->max_body};
    memcpy(app->endpoints[app->nendpoints - 1].options, options, sizeof(options));
    if (route != NULL)
        *route = r;
    /* the route exists now (a router cannot take one back): a check an option makes of it
     * that fails is the app's registration error, which stops canal_app_start() */
    for (size_t i = 0; i < CANAL_MAX_ROUTE_OPTIONS && options[i].kind != NULL; i++)
        if (options[i].kind->added != NULL && options[i].kind->added(app, options[i].value, r, &e) != 0) {
            if (err != NULL)
                *err = e;
            return canal__reg_error(app, &e);
        }
    return 0;
}

canal_route_group_t *canal_app_group(canal_app_t *app, canal_route_group_t *parent, const char *prefix)
{
    canal_route_group_t *g = canal_router_group(app->router, parent, prefix);
    struct canal__group *grown = g ? realloc(app->groups, (app->ngroups + 1) * sizeof(*grown)) : NULL;
    if (grown == NULL) {
        canal_error_info_t e;
        canal_error_set(&e, CANAL_ENOMEM, 0, "route group %s: out of memory", prefix);
        canal__reg_error(app, &e);
        return NULL;
    }
    app->groups = grown;
    app->groups[app->ngroups++] = (struct canal__group){.group = g, .parent = parent};
    return g;
}

const void *canal__endpoint_option(const struct canal_endpoint *ep, const struct canal_option_kind *k)
{
    for (size_t i = 0; i < CANAL_MAX_ROUTE_OPTIONS && ep->options[i].kind != NULL; i++)
        if (ep->options[i].kind == k)
            return ep->options[i].value;
    return NULL;
}

/* The record of a group made by canal_app_group(), or NULL */
static const struct canal__group *group_of(const canal_app_t *app, const canal_route_group_t *g)
{
    for (size_t i = 0; g != NULL && i < app->ngroups; i++)
        if (app->groups[i].group == g)
            return &app->groups[i];
    return NULL;
}

int canal__scope_set(canal_app_t *app, const void *key, const canal_route_group_t *group, const void *value)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return CANAL_ESTATE;
    if (group != NULL && group_of(app, group) == NULL)
        return CANAL_EINVAL; /* not a group of this app */
    for (size_t i = 0; i < app->nscoped; i++)
        if (app->scoped[i].key == key && app->scoped[i].group == group) {
            app->scoped[i].value = value;
            return 0;
        }
    struct canal__scoped *grown = realloc(app->scoped, (app->nscoped + 1) * sizeof(*grown));
    if (grown == NULL)
        return CANAL_ENOMEM;
    app->scoped = grown;
    app->scoped[app->nscoped++] = (struct canal__scoped){key, group, value};
    return 0;
}

/* The value of key set for the scope group (NULL: the app), or NULL */
static const void *scoped(const canal_app_t *app, const void *key, const canal_route_group_t *group)
{
    for (size_t i = 0; i < app->nscoped; i++)
        if (app->scoped[i].key == key && app->scoped[i].group == group)
            return app->scoped[i].value;
    return NULL;
}

const void *canal__scope_get(const canal_app_t *app, const void *key, const struct canal_endpoint *ep,
                             const void *own)
{
    const void *v = own;
    for (const struct canal__group *g = ep != NULL ? group_of(app, ep->group) : NULL; v == NULL && g != NULL;
         g = group_of(app, g->parent))
        v = scoped(app, key, g->group);
    return v != NULL ? v : scoped(app, key, NULL);
}

/* A body over the route's own limit (spec.max_body, below the app's, which libh2o holds): a
 * 413 before the handler runs, the last guard. libh2o has buffered the body whole by now; the
 * connection is kept, as the body was read to its end. 1 if refused. */
static int body_guard(canal_req_t *req, const void *arg)
{
    size_t max = req->endpoint->max_body;
    if (req->h2o->entity.len <= max)
        return 0;
    canal_res_problem(req, 413, "the body is larger than this route's limit of %zu bytes", max);
    return 1;
}

int canal__endpoints_start(canal_app_t *app)
{
    for (size_t i = 0; i < app->nendpoints; i++)
        if (app->endpoints[i].max_body != 0 && canal__endpoint_guard(&app->endpoints[i], 40, body_guard, NULL) != 0)
            return -1;
    return 0;
}

#define METHOD_SHORTCUT(fn, verb)                                                                \
    int fn(canal_app_t *app, const char *tmpl, canal_handler_fn h, void *data)                 \
    {                                                                                          \
        canal_endpoint_spec_t spec = {.method = verb, .tmpl = tmpl, .handler = h, .data = data}; \
        return canal_app_route(app, &spec, NULL, NULL);                                        \
    }
METHOD_SHORTCUT(canal_app_get, "GET")
METHOD_SHORTCUT(canal_app_post, "POST")
METHOD_SHORTCUT(canal_app_put, "PUT")
METHOD_SHORTCUT(canal_app_delete, "DELETE")
METHOD_SHORTCUT(canal_app_patch, "PATCH")
#undef METHOD_SHORTCUT

const canal_router_t *canal_app_router(const canal_app_t *app)
{
    return app->router;
}

struct canal_endpoint *canal__endpoint_of(canal_app_t *app, const canal_route_t *route)
{
    size_t i = canal_route_index(route);
    return i < app->nendpoints && app->endpoints[i].route == route ? &app->endpoints[i] : NULL;
}

void canal__endpoints_dispose(canal_app_t *app)
{
    for (size_t i = 0; i < app->nendpoints; i++)
        if (app->endpoints[i].dispose != NULL)
            app->endpoints[i].dispose(app->endpoints[i].data);
    free(app->endpoints);
    app->endpoints = NULL;
    app->nendpoints = app->cap_endpoints = 0;
    free(app->groups);
    app->groups = NULL;
    app->ngroups = 0;
    free(app->scoped);
    app->scoped = NULL;
    app->nscoped = 0;
}
