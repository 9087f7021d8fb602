/* SPDX-License-Identifier: MIT */
/*
 * The controller layer's private structures, shared by its files:
 *   mvc.c       registration: controllers, actions, token replacement, conventional routes,
 *               link generation, listings
 *   dispatch.c  per request: filters, binding (canal_req_bind()), the action
 * This layer sees only canal's public headers (it is built without -Ilib).
 */
#ifndef CANAL_CONTROLLER_INTERNAL_H
#define CANAL_CONTROLLER_INTERNAL_H

#include "canal/controller.h"

struct canal_action {
    canal_action_def_t def;        /* a copy; its strings are borrowed */
    canal_controller_t *ctrl;
    const canal_route_t **routes;
    size_t nroutes;
    /* every filter that applies, app level first, gathered once the action is registered */
    canal_filter_t *chain;
    size_t nchain;
};

struct canal_controller {
    canal_mvc_t *mvc;
    char *name, *prefix;           /* prefix with [controller] replaced, or NULL */
    void *state;
    void (*dispose)(void *);
    canal_filter_t filters[CANAL_MAX_FILTERS];
    size_t nfilters;
    canal_route_option_t options[CANAL_MAX_ROUTE_OPTIONS]; /* for its actions without one of
                                                      the kind; the def's values, borrowed
                                                      until its actions' routes take them */
    canal_action_t **actions;
    size_t nactions;
};

struct canal_mvc {
    canal_app_t *app;
    canal_filter_t filters[CANAL_MAX_FILTERS];
    size_t nfilters;
    canal_controller_t **ctrls;
    size_t nctrls;
    char **conventional;           /* templates given to canal_mvc_map_route() */
    size_t nconventional;
    int lowercase_urls;            /* canal_mvc_lowercase_urls(), on by default */
};

/* dispatch.c: the handler of every action route (data: the canal_action_t) */
int canal__mvc_dispatch(canal_req_t *req, void *data);
/* cors.c: gives the action's routes from first_route on the policy of each CORS filter in
 * its chain (canal_app_cors_route()); 0 or a canal error */
int canal__mvc_apply_cors(canal_action_t *a, size_t first_route);

#endif
