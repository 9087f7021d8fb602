/* SPDX-License-Identifier: MIT */
/*
 * The files feature (core/feature.h): static files (static.c) and compression (compress.c),
 * behind canal/ops.h. Their settings live in one struct canal__ops, the feature's state,
 * switched on by the first canal_app_static() or canal_app_compress*(); this file starts them
 * when the app starts and frees them with the app.
 */
#include <stdlib.h>
#include "files/files.h"

static const struct canal__feature feature;

struct canal__ops *canal__ops_of(canal_app_t *app)
{
    return canal__feature_on(app, &feature);
}

static int files_start(canal_app_t *app, void *st)
{
    struct canal__ops *ops = st;
    if (canal__static_start(app, ops) != 0 || canal__compress_start(app, ops) != 0)
        return -1;
    canal__compress_register(ops, app->pathconf);
    return 0;
}

static void files_dispose(canal_app_t *app, void *st)
{
    struct canal__ops *ops = st;
    canal__static_dispose(ops);
    free(ops->hints);
}

static const struct canal__feature feature = {
    .name = "files",
    .size = sizeof(struct canal__ops),
    .start = files_start,
    .dispose = files_dispose,
};
