/* SPDX-License-Identifier: MIT */
/*
 * Compression: libh2o's gzip filter, registered on canal's path and on every static path when
 * the app starts. A route or an answer opts out (or in) through h2o's compress hint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "files/files.h"
#include "canal/ops.h"

/* Debian's libh2o 2.2.5 is built without brotli: the symbol is absent there. A weak reference
 * finds out at run time, so the same canal binary uses brotli where libh2o has it. */
extern h2o_compress_context_t *h2o_compress_brotli_open(h2o_mem_pool_t *pool, int quality,
                                                        size_t estimated_content_length)
    __attribute__((weak));

int canal_compress_has_brotli(void)
{
    return h2o_compress_brotli_open != NULL;
}

int canal_app_compress(canal_app_t *app, const canal_compress_options_t *opts)
{
    canal_compress_options_t o = opts ? *opts : (canal_compress_options_t){0};
    if (atomic_load(&app->state) != APP_CREATED)
        return canal__reg_fail(app, NULL, CANAL_ESTATE, "compression is set before the app starts");
    if (o.gzip_level == 0)
        o.gzip_level = 1;
    if (o.min_size == 0)
        o.min_size = 1024;
    if (o.gzip_level < 1 || o.gzip_level > 9 || o.brotli_level < 0 || o.brotli_level > 11 ||
        (o.brotli_level > 0 && !canal_compress_has_brotli()))
        return canal__reg_fail(app, NULL, CANAL_EINVAL, "compression: gzip level %d (1-9), brotli level %d (0-11%s)",
                               o.gzip_level, o.brotli_level, canal_compress_has_brotli() ? "" : "; no brotli here");
    struct canal__ops *ops = canal__ops_of(app);
    if (ops == NULL)
        return canal__reg_fail(app, NULL, CANAL_ENOMEM, "compression: out of memory");
    ops->compress = 1;
    ops->compress_args.min_size = o.min_size;
    ops->compress_args.gzip.quality = o.gzip_level;
    ops->compress_args.brotli.quality = o.brotli_level > 0 ? o.brotli_level : -1;
    return 0;
}

static const canal_route_t *find_route(canal_app_t *app, const char *method, const char *tmpl)
{
    /* templates are compared as registered, give or take the leading '/' */
    while (*tmpl == '/')
        tmpl++;
    for (size_t i = 0, n = canal_router_route_count(app->router); i < n; i++) {
        const canal_route_t *r = canal_router_route_at(app->router, i);
        const char *t = canal_route_template(r);
        while (*t == '/')
            t++;
        if (strcmp(canal_route_method(r), method) == 0 && strcmp(t, tmpl) == 0)
            return r;
    }
    return NULL;
}

int canal_app_compress_route(canal_app_t *app, const char *method, const char *tmpl, int on)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return canal__reg_fail(app, NULL, CANAL_ESTATE, "compression is set before the app starts");
    const canal_route_t *r = find_route(app, method, tmpl);
    if (r == NULL)
        return canal__reg_fail(app, NULL, CANAL_ENOTFOUND, "compression: no route %s %s", method, tmpl);
    struct canal__ops *ops = canal__ops_of(app);
    struct canal__hint *grown = ops != NULL ? realloc(ops->hints, (ops->nhints + 1) * sizeof(*grown)) : NULL;
    if (grown == NULL)
        return canal__reg_fail(app, NULL, CANAL_ENOMEM, "compression: out of memory");
    ops->hints = grown;
    ops->hints[ops->nhints++] = (struct canal__hint){canal_route_index(r), on};
    return 0;
}

/* A route's own setting, as a guard that never answers: compressed even if not compressible
 * (arg &hint_on), or never */
static const char hint_on, hint_off;
static int hint_guard(canal_req_t *req, const void *arg)
{
    canal_res_compress(req, arg == &hint_on);
    return 0;
}

int canal__compress_start(canal_app_t *app, struct canal__ops *ops)
{
    for (size_t i = 0; i < ops->nhints; i++) { /* a later call for a route wins */
        int later = 0;
        for (size_t k = i + 1; k < ops->nhints; k++)
            later |= ops->hints[k].route == ops->hints[i].route;
        if (!later && canal__endpoint_guard(&app->endpoints[ops->hints[i].route], 0, hint_guard,
                                            ops->hints[i].on ? &hint_on : &hint_off) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "route %zu: too many guards", ops->hints[i].route);
            return -1;
        }
    }
    return 0;
}

/* h2o 2.2.5's gzip filter looks the Content-Type up in its MIME map before it looks at the
 * size (some 600 instructions for "text/plain; charset=utf-8"), and skips the size check
 * altogether when compression is forced. This filter, registered just before it, turns
 * compression off for bodies under min_size first: small answers, the common case, pay a
 * comparison, and forced compression keeps the size rule. Answers of unknown length are left
 * to h2o. */
struct size_gate {
    h2o_filter_t super;
    size_t min_size;
};

static void size_gate_setup(h2o_filter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    size_t len = req->res.content_length;
    if (len != SIZE_MAX && len < ((struct size_gate *)self)->min_size)
        req->compress_hint = H2O_COMPRESS_HINT_DISABLE;
    h2o_setup_next_ostream(req, slot);
}

void canal__compress_register(struct canal__ops *ops, h2o_pathconf_t *pc)
{
    if (!ops->compress)
        return;
    h2o_compress_args_t *args = &ops->compress_args;
    /* h2o_create_filter() puts a filter before those already there: the gate goes second */
    h2o_compress_register(pc, args);
    struct size_gate *gate = (struct size_gate *)h2o_create_filter(pc, sizeof(*gate));
    gate->super.on_setup_ostream = size_gate_setup;
    gate->min_size = args->min_size;
}

