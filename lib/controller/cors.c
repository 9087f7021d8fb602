/* SPDX-License-Identifier: MIT */
/*
 * The CORS filter of the controller layer. The server answers preflights before routing
 * reaches any action, so the filter's work is done through the public server API: wherever
 * the filter applies (app, controller or action level), the routes of the actions it covers
 * get its policy with canal_app_cors_route(). Per request the filter does nothing.
 */
#include "canal/cors.h"
#include "controller_internal.h"

canal_filter_t canal_cors_filter(const canal_cors_t *policy)
{
    return (canal_filter_t){.cors = policy};
}

int canal__mvc_apply_cors(canal_action_t *a, size_t first_route)
{
    canal_app_t *app = a->ctrl->mvc->app;
    for (size_t i = 0; i < a->nchain; i++) {
        if (a->chain[i].cors == NULL)
            continue;
        for (size_t k = first_route; k < a->nroutes; k++) {
            int rc = canal_app_cors_route(app, a->routes[k], a->chain[i].cors);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
