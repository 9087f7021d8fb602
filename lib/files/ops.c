/* SPDX-License-Identifier: MIT */
/*
 * The app's optional parts behind canal/ops.h: static files (static.c), compression
 * (compress.c) and CORS (cors.c). Their settings live in one struct canal__ops, made on first
 * use; this file starts them when the app starts and frees them with the app. (Metrics are
 * in metrics.c, health endpoints in health.c.)
 */
#include <stdlib.h>
#include "core/core.h"

struct canal__ops *canal__ops_of(canal_app_t *app)
{
    if (app->ops == NULL)
        app->ops = calloc(1, sizeof(*app->ops));
    return app->ops;
}

int canal__ops_start(canal_app_t *app)
{
    struct canal__ops *ops = app->ops;
    if (ops == NULL)
        return 0;
    canal__cors_start(app, ops);
    if (canal__static_start(app, ops) != 0)
        return -1;
    canal__compress_register(ops, app->pathconf);
    return 0;
}

void canal__ops_dispose(canal_app_t *app)
{
    struct canal__ops *ops = app->ops;
    if (ops == NULL)
        return;
    canal__static_dispose(ops);
    canal__cors_dispose(ops);
    free(ops);
    app->ops = NULL;
}
