/* SPDX-License-Identifier: MIT */
/*
 * The files feature's calls shared by its files (ops.c, static.c, compress.c).
 */
#ifndef CANAL_FILES_H
#define CANAL_FILES_H

#include "core/core.h"

struct static_dir {
    char *prefix, *dir;
    unsigned flags;
};

/* files/ops.c: the files feature's state: static paths and compression */
struct canal__ops {
    struct static_dir *statics;
    size_t nstatics;
    int compress;
    h2o_compress_args_t compress_args;
    struct canal__hint {           /* canal_app_compress_route(): a route's own setting */
        size_t route;              /* its number */
        int on;
    } *hints;
    size_t nhints;
};

struct canal__ops *canal__ops_of(canal_app_t *app); /* switched on; NULL: no memory, or started */
int canal__static_start(canal_app_t *app, struct canal__ops *ops);
void canal__static_dispose(struct canal__ops *ops);
void canal__compress_register(struct canal__ops *ops, h2o_pathconf_t *pc); /* if on */
int canal__compress_start(canal_app_t *app, struct canal__ops *ops); /* the routes' guards */

#endif
