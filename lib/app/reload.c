/* SPDX-License-Identifier: MIT */
/*
 * Reloading the configuration: canal_app_reload(), which canal_app_wait() calls on SIGHUP.
 *
 * It reads the configuration again as canal_config_load() read it (from what the app had set
 * before it, then the file, the environment, the flags), into a new canal_config_t, and
 * compares it row by row with the last one read. What the workers read while they run is never
 * written in place: the settings that reload are atomics of their own (the log's format and
 * level here, the access log's format in its feature), the TLS certificates are swapped under a lock the handshake takes (listen.c), and
 * everything else is left to the features' reload phase (core/feature.h) and the app's hooks.
 * A row that changed and does not reload is named in the log, and stays as it was in the
 * record, so the next reload names it again. A bad file changes nothing.
 *
 * This is lib/app/, above every feature: the core knows only that SIGHUP calls app->reload.
 * The file's documents are kept for the app's life (the strings of a configuration point into
 * them): a reload costs the file's size in memory until the app is destroyed.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app/reload.h"
#include "core/config_internal.h"

#define MAX_HOOKS 8

struct reload_state {
    pthread_mutex_t lock; /* one reload at a time, and the hooks */
    int lock_made;
    struct {
        canal_reload_fn fn;
        void *data;
    } hooks[MAX_HOOKS];
    size_t nhooks;
    /* the last configuration read, its app options' values in values (options point there);
     * loaded 0: the app's configuration did not come from canal_config_load() */
    int loaded;
    canal_config_t last;
    canal_option_t options[CANAL__MAX_APP_OPTIONS];
    union canal__value values[CANAL__MAX_APP_OPTIONS];
    json_t **docs; /* the files read by reloads */
    size_t ndocs;
};

static void reload_dispose(canal_app_t *app, void *st)
{
    struct reload_state *r = st;
    if (r->lock_made)
        pthread_mutex_destroy(&r->lock);
    for (size_t i = 0; i < r->ndocs; i++)
        json_decref(r->docs[i]);
    free(r->docs);
}

static const struct canal__feature feature = {
    .name = "reload",
    .size = sizeof(struct reload_state),
    .dispose = reload_dispose,
};

/* The settings canal itself changes on a reload (the TLS files are read again whatever). */
static int reloads(const char *flag)
{
    return strcmp(flag, "log-format") == 0 || strcmp(flag, "log-level") == 0 ||
           strcmp(flag, "access-log-format") == 0;
}

/* an app's options, their values in values[] instead of the app's variables */
static void redirect(canal_config_t *cfg, canal_option_t *options, union canal__value *values,
                     const canal_option_t *from, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        options[i] = from[i];
        options[i].value = &values[i];
    }
    cfg->options = n > 0 ? options : NULL;
    cfg->noptions = n;
}

int canal__reload_on(canal_app_t *app)
{
    struct reload_state *r = canal__feature_on(app, &feature);
    if (r == NULL || pthread_mutex_init(&r->lock, NULL) != 0)
        return -1;
    r->lock_made = 1;
    const canal_config_t *cfg = canal_app_config(app);
    const struct canal__loaded *ld = cfg->loaded;
    if (ld != NULL) {
        r->loaded = 1;
        r->last = ld->cfg;
        memcpy(r->values, ld->values, sizeof(r->values));
        redirect(&r->last, r->options, r->values, ld->cfg.options, ld->cfg.noptions);
    } else {
        r->last = *cfg;
    }
    app->reload = canal_app_reload;
    return 0;
}

int canal_app_on_reload(canal_app_t *app, canal_reload_fn fn, void *data)
{
    struct reload_state *r = canal__feature_state(app, &feature);
    if (fn == NULL || r == NULL)
        return CANAL_EINVAL;
    pthread_mutex_lock(&r->lock);
    int rc = r->nhooks < MAX_HOOKS ? 0 : CANAL_ENOMEM;
    if (rc == 0) {
        r->hooks[r->nhooks].fn = fn;
        r->hooks[r->nhooks++].data = data;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

/* Does row o hold the same value in a as in b? */
static int same(const canal_config_t *a, const canal_config_t *b, size_t i)
{
    struct canal__option oa, ob;
    canal__config_row(a, i, &oa);
    canal__config_row(b, i, &ob);
    const char *fa = oa.ptr != NULL ? oa.ptr : (const char *)a + oa.offset;
    const char *fb = ob.ptr != NULL ? ob.ptr : (const char *)b + ob.offset;
    switch (oa.kind) {
    case CANAL__OPT_U16: return *(const uint16_t *)fa == *(const uint16_t *)fb;
    case CANAL__OPT_UINT:
    case CANAL__OPT_MODE: return *(const unsigned *)fa == *(const unsigned *)fb;
    case CANAL__OPT_SIZE: return *(const size_t *)fa == *(const size_t *)fb;
    case CANAL__OPT_CHOICE: return *(const int *)fa == *(const int *)fb;
    default: {
        const char *sa = *(const char *const *)fa, *sb = *(const char *const *)fb;
        return sa == sb || (sa != NULL && sb != NULL && strcmp(sa, sb) == 0);
    }
    }
}

/* Row i of next into last (both of the same app: the same rows). */
static void take(canal_config_t *last, const canal_config_t *next, size_t i)
{
    struct canal__option on, ol;
    canal__config_row(next, i, &on);
    canal__config_row(last, i, &ol);
    const char *fn = on.ptr != NULL ? on.ptr : (const char *)next + on.offset;
    char *fl = ol.ptr != NULL ? ol.ptr : (char *)last + ol.offset;
    memcpy(fl, fn, on.ptr != NULL ? sizeof(union canal__value) : on.size);
}

/* ", --name" to a list of flags, cut short with "..." when it is full */
static void list_add(char *list, size_t size, const char *flag)
{
    size_t used = strlen(list);
    if (used + strlen(flag) + 8 < size)
        snprintf(list + used, size - used, "%s--%s", used > 0 ? ", " : "", flag);
    else if (used + 4 < size && strcmp(list + used - 3, "...") != 0)
        snprintf(list + used, size - used, "...");
}

/* The configuration read again into next (its app options' values in values); 0, or
 * CANAL_EINVAL (logged). Its file's document goes to r->docs. */
static int read_again(canal_app_t *app, struct reload_state *r, canal_config_t *next, canal_option_t *options,
                      union canal__value *values)
{
    const struct canal__loaded *ld = canal_app_config(app)->loaded;
    canal_error_info_t err = {0};
    *next = ld->base; /* with what the app set in code before canal_config_load() */
    next->options = NULL;
    next->noptions = 0;
    int rc = 0;
    if (r->last.noptions > 0) {
        redirect(next, options, values, r->last.options, r->last.noptions);
        rc = canal_config_options(next, options, r->last.noptions, &err); /* the defaults */
    }
    json_t *doc = NULL;
    json_t **docs = realloc(r->docs, (r->ndocs + 1) * sizeof(*docs));
    if (docs == NULL)
        rc = canal_error_set(&err, CANAL_ENOMEM, 0, "out of memory");
    else
        r->docs = docs;
    if (rc == 0 && r->last.config_file != NULL)
        rc = canal__config_file(next, r->last.config_file, (void **)&doc, &err);
    if (rc == 0)
        rc = canal_config_from_env(next, &err);
    char **argv = rc == 0 ? calloc((size_t)ld->argc + 1, sizeof(char *)) : NULL;
    if (rc == 0 && argv == NULL)
        rc = canal_error_set(&err, CANAL_ENOMEM, 0, "out of memory");
    if (rc == 0) {
        int argc = ld->argc;
        memcpy(argv, ld->argv, (size_t)argc * sizeof(char *)); /* canal_config_from_args() takes some */
        rc = canal_config_from_args(next, &argc, argv, &err);
    }
    free(argv);
    if (doc != NULL && rc == 0)
        r->docs[r->ndocs++] = doc;
    else
        json_decref(doc);
    if (rc != 0) {
        canal__log(app, CANAL_LOG_ERROR, "reload: %s; nothing changed", err.message);
        return CANAL_EINVAL;
    }
    next->loaded = ld;
    return 0;
}

static int reload_locked(canal_app_t *app, struct reload_state *r)
{
    canal_config_t next;
    canal_option_t options[CANAL__MAX_APP_OPTIONS];
    union canal__value values[CANAL__MAX_APP_OPTIONS];
    char changed[512] = "", kept[512] = "";
    if (r->loaded) {
        if (read_again(app, r, &next, options, values) != 0)
            return CANAL_EINVAL;
        struct canal__option o;
        for (size_t i = 0; canal__config_row(&next, i, &o) == 0; i++) {
            if (same(&next, &r->last, i))
                continue;
            if (reloads(o.flag) || (o.ptr != NULL && r->nhooks > 0)) {
                take(&r->last, &next, i);
                list_add(changed, sizeof(changed), o.flag);
            } else {
                list_add(kept, sizeof(kept), o.flag);
            }
        }
        /* what the hooks and features see of the rows that do not reload: the old values */
        for (size_t i = 0; canal__config_row(&next, i, &o) == 0; i++)
            if (!reloads(o.flag) && o.ptr == NULL)
                take(&next, &r->last, i);
    } else {
        next = r->last;
    }
    atomic_store_explicit(&app->log_format, (int)next.log_format, memory_order_relaxed);
    atomic_store_explicit(&app->log_level, (int)next.log_level, memory_order_relaxed);
    int failed = canal__tls_reload(app) != 0;
    failed |= canal__features_reload(app, &next) != 0;
    for (size_t i = 0; i < r->nhooks; i++)
        failed |= r->hooks[i].fn(app, &next, r->hooks[i].data) != 0;
    if (!r->loaded)
        canal__log(app, CANAL_LOG_INFO, "reload: TLS files and hooks only (the configuration was not read by "
                                        "canal_config_load())");
    else
        canal__log(app, kept[0] != '\0' ? CANAL_LOG_WARN : CANAL_LOG_INFO,
                   "reload: %s read again; changed: %s; not reloaded (a restart applies them): %s%s",
                   r->last.config_file != NULL ? r->last.config_file : "the environment and flags",
                   changed[0] != '\0' ? changed : "none", kept[0] != '\0' ? kept : "none",
                   failed ? "; a part failed (logged above)" : "");
    return failed ? CANAL_ESYS : 0;
}

int canal_app_reload(canal_app_t *app)
{
    struct reload_state *r = canal__feature_state(app, &feature);
    if (r == NULL)
        return CANAL_ESTATE; /* not made by canal_app_create() */
    pthread_mutex_lock(&r->lock);
    int rc = reload_locked(app, r);
    pthread_mutex_unlock(&r->lock);
    return rc;
}
