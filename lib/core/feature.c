/* SPDX-License-Identifier: MIT */
/*
 * The feature interface's core side (feature.h): the features an app has switched on, their
 * state, the guards and heads of its endpoints, and the phases of a worker's life run over
 * them in the order the features were switched on (the worker's end of life in reverse).
 */
#include <stdlib.h>
#include "core/core.h"

/* Writes a label value with the escapes of the text format (backslash, quote, newline). */
void canal__metrics_label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f), fputc(*s, f);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

void *canal__feature_on(canal_app_t *app, const struct canal__feature *f)
{
    void *st = canal__feature_state(app, f);
    if (st != NULL)
        return st;
    if (atomic_load(&app->state) != APP_CREATED || app->nfeatures == CANAL__MAX_FEATURES)
        return NULL;
    if ((st = calloc(1, f->size ? f->size : 1)) == NULL)
        return NULL;
    app->features[app->nfeatures++] = (struct canal__attached){f, st};
    return st;
}

void *canal__feature_state(const canal_app_t *app, const struct canal__feature *f)
{
    for (size_t i = 0; i < app->nfeatures; i++)
        if (app->features[i].f == f)
            return app->features[i].state;
    return NULL;
}

void *canal__worker_state(const struct canal_worker *w, const struct canal__feature *f)
{
    const canal_app_t *app = w->app;
    for (size_t i = 0; i < app->nfeatures; i++)
        if (app->features[i].f == f)
            return w->fstate[i];
    return NULL;
}

int canal__endpoint_guard(struct canal_endpoint *ep, int order, canal__guard_fn fn, const void *arg)
{
    if (ep->nguards == CANAL__MAX_GUARDS)
        return CANAL_ENOMEM;
    size_t i = ep->nguards++;
    for (; i > 0 && ep->guards[i - 1].order > order; i--)
        ep->guards[i] = ep->guards[i - 1];
    ep->guards[i] = (struct canal__guard){fn, arg, order};
    return 0;
}

int canal__endpoint_head(struct canal_endpoint *ep, canal__head_fn fn, const void *arg)
{
    if (ep->nheads == CANAL__MAX_HEADS)
        return CANAL_ENOMEM;
    ep->heads[ep->nheads++] = (struct canal__head){fn, arg};
    return 0;
}

int canal__app_head(canal_app_t *app, canal__head_fn fn, const void *arg)
{
    if (app->nheads == CANAL__MAX_HEADS)
        return CANAL_ENOMEM;
    app->heads[app->nheads++] = (struct canal__head){fn, arg};
    return 0;
}

int canal__app_unrouted(canal_app_t *app, canal__guard_fn fn, const void *arg)
{
    if (app->unrouted.fn != NULL)
        return CANAL_EEXIST;
    app->unrouted = (struct canal__guard){fn, arg, 0};
    return 0;
}

int canal__features_start(canal_app_t *app)
{
    for (size_t i = 0; i < app->nfeatures; i++) {
        const struct canal__attached *a = &app->features[i];
        if (a->f->start != NULL && a->f->start(app, a->state) != 0)
            return -1;
        if (a->f->begin != NULL)
            app->begins[app->nbegins++] = (struct canal__begin){a->f->begin, a->state};
    }
    return 0;
}

void canal__features_dispose(canal_app_t *app)
{
    for (size_t i = app->nfeatures; i-- > 0;) {
        if (app->features[i].f->dispose != NULL)
            app->features[i].f->dispose(app, app->features[i].state);
        free(app->features[i].state);
    }
    app->nfeatures = app->nbegins = 0;
}

int canal__features_worker_prepare(struct canal_worker *w)
{
    const canal_app_t *app = w->app;
    for (size_t i = 0; i < app->nfeatures; i++) {
        const struct canal__attached *a = &app->features[i];
        if (a->f->worker_size > 0 && (w->fstate[i] = calloc(1, a->f->worker_size)) == NULL)
            return -1;
        if (a->f->end != NULL)
            w->ends[w->nends++] = (struct canal__end){a->f->end, a->state, w->fstate[i]};
    }
    return 0;
}

/* Each worker hook of the features (in the order they were switched on, or the reverse). */
#define EACH_WORKER_HOOK(w, hook, reverse)                                                     \
    for (size_t k_ = 0, n_ = (w)->app->nfeatures; k_ < n_; k_++) {                             \
        size_t i_ = (reverse) ? n_ - 1 - k_ : k_;                                              \
        const struct canal__attached *a_ = &(w)->app->features[i_];                           \
        if (a_->f->hook != NULL)                                                               \
            a_->f->hook((w), a_->state, (w)->fstate[i_]);                                      \
    }

int canal__features_worker_init(struct canal_worker *w)
{
    const canal_app_t *app = w->app;
    for (size_t i = 0; i < app->nfeatures; i++) {
        const struct canal__attached *a = &app->features[i];
        if (a->f->worker_init != NULL && a->f->worker_init(w, a->state, w->fstate[i]) != 0) {
            while (i-- > 0) { /* the ones made so far go again */
                a = &app->features[i];
                if (a->f->worker_stop != NULL)
                    a->f->worker_stop(w, a->state, w->fstate[i]);
            }
            return -1;
        }
    }
    return 0;
}

void canal__features_worker_drain(struct canal_worker *w)
{
    EACH_WORKER_HOOK(w, worker_drain, 0)
}

int canal__features_worker_busy(struct canal_worker *w)
{
    const canal_app_t *app = w->app;
    for (size_t i = 0; i < app->nfeatures; i++) {
        const struct canal__attached *a = &app->features[i];
        if (a->f->worker_busy != NULL && a->f->worker_busy(w, a->state, w->fstate[i]))
            return 1;
    }
    return 0;
}

void canal__features_worker_stop(struct canal_worker *w)
{
    EACH_WORKER_HOOK(w, worker_stop, 1)
}

void canal__features_worker_exit(struct canal_worker *w)
{
    EACH_WORKER_HOOK(w, worker_exit, 1)
}

void canal__features_worker_free(struct canal_worker *w)
{
    for (size_t i = 0; i < CANAL__MAX_FEATURES; i++) {
        free(w->fstate[i]);
        w->fstate[i] = NULL;
    }
    w->nends = 0;
}

int canal__features_reload(canal_app_t *app, const canal_config_t *next)
{
    int rc = 0;
    for (size_t i = 0; i < app->nfeatures; i++)
        if (app->features[i].f->reload != NULL && app->features[i].f->reload(app, app->features[i].state, next) != 0)
            rc = -1;
    return rc;
}
