/* SPDX-License-Identifier: MIT */
/*
 * Timers: periodic work on a worker's loop (canal_app_every()).
 *
 * Every timer runs on worker 0's loop, each on an h2o timer list of its own (one list per
 * interval: h2o's lists hold entries of one timeout each). Worker 0 makes them when its loop
 * starts, and the callback re-arms its entry after each call, so the next call comes about
 * interval_ms after the turn of the loop that made this one, never two at once.
 *
 * Stopping: canal_app_stop() sets app->timers_stopped (an atomic store, so it may come from a
 * signal handler); a timer that fires after that returns without calling the app and is not
 * re-armed. Worker 0 unlinks and disposes of the lists before its loop is destroyed.
 */
#include <stdlib.h>
#include "core/core.h"

int canal_app_every(canal_app_t *app, unsigned interval_ms, canal_timer_fn fn, void *data)
{
    canal_error_info_t e = {.code = 0};
    if (atomic_load(&app->state) != APP_CREATED) {
        e.code = CANAL_ESTATE;
        snprintf(e.message, sizeof(e.message), "canal_app_every: the app was started already");
    } else if (fn == NULL || interval_ms == 0) {
        e.code = CANAL_EINVAL;
        snprintf(e.message, sizeof(e.message), "canal_app_every: %s", fn == NULL ? "no function" : "an interval of 0 ms");
    } else {
        struct canal_timer *grown = realloc(app->timers, (app->ntimers + 1) * sizeof(*grown));
        if (grown == NULL) {
            e.code = CANAL_ENOMEM;
            snprintf(e.message, sizeof(e.message), "canal_app_every: out of memory");
        } else {
            app->timers = grown;
            app->timers[app->ntimers++] = (struct canal_timer){.app = app, .fn = fn, .data = data,
                                                               .interval_ms = interval_ms};
            return 0;
        }
    }
    return canal__reg_error(app, &e);
}

static void on_timer(h2o_timeout_entry_t *entry)
{
    struct canal_timer *t = H2O_STRUCT_FROM_MEMBER(struct canal_timer, entry, entry);
    if (atomic_load(&t->app->timers_stopped))
        return;
    t->fn(t->app, t->data);
    if (!atomic_load(&t->app->timers_stopped))
        h2o_timeout_link(t->loop, &t->timeout, &t->entry);
}

void canal__timers_start(struct canal_worker *w)
{
    canal_app_t *app = w->app;
    if (w->index != 0)
        return;
    for (size_t i = 0; i < app->ntimers; i++) {
        struct canal_timer *t = &app->timers[i];
        t->loop = w->loop;
        h2o_timeout_init(w->loop, &t->timeout, t->interval_ms);
        t->entry = (h2o_timeout_entry_t){.cb = on_timer};
        h2o_timeout_link(w->loop, &t->timeout, &t->entry);
    }
}

void canal__timers_dispose(struct canal_worker *w)
{
    canal_app_t *app = w->app;
    if (w->index != 0)
        return;
    for (size_t i = 0; i < app->ntimers; i++) {
        struct canal_timer *t = &app->timers[i];
        if (h2o_timeout_is_linked(&t->entry))
            h2o_timeout_unlink(&t->entry);
        h2o_timeout_dispose(w->loop, &t->timeout);
        t->loop = NULL;
    }
}
