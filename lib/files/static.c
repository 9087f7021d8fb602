/* SPDX-License-Identifier: MIT */
/*
 * Static files: libh2o's file handler on a path configuration of its own. h2o picks the
 * first registered path that prefixes the request's normalized path, and otherwise the
 * host's fallback path: canal's own handler sits on the fallback path (app.c), so the static
 * prefixes, registered when the app starts, come first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "files/files.h"
#include "canal/ops.h"

int canal_app_static(canal_app_t *app, const char *prefix, const char *dir, unsigned flags,
                     canal_error_info_t *err)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return canal__reg_fail(app, err, CANAL_ESTATE, "%s: static files are added before the app starts", prefix);
    size_t n = prefix ? strlen(prefix) : 0;
    while (n > 1 && prefix[n - 1] == '/')
        n--;
    if (n < 2 || prefix[0] != '/')
        return canal__reg_fail(app, err, CANAL_EINVAL, "bad static prefix '%s' (it starts with '/' and is not the root)",
                       prefix ? prefix : "(null)");
    struct stat st;
    if (dir == NULL || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, R_OK | X_OK) != 0)
        return canal__reg_fail(app, err, CANAL_EINVAL, "%s is not a readable directory", dir ? dir : "(null)");
    struct canal__ops *ops = canal__ops_of(app);
    if (ops == NULL)
        return canal__reg_fail(app, err, CANAL_ENOMEM, "%s: out of memory", prefix);
    for (size_t i = 0; i < ops->nstatics; i++)
        if (strlen(ops->statics[i].prefix) == n && strncmp(ops->statics[i].prefix, prefix, n) == 0)
            return canal__reg_fail(app, err, CANAL_EEXIST, "%s is served already", ops->statics[i].prefix);
    struct static_dir *grown = realloc(ops->statics, (ops->nstatics + 1) * sizeof(*grown));
    if (grown == NULL)
        return canal__reg_fail(app, err, CANAL_ENOMEM, "%s: out of memory", prefix);
    ops->statics = grown;
    struct static_dir *s = &ops->statics[ops->nstatics];
    s->prefix = strndup(prefix, n);
    s->dir = strdup(dir);
    s->flags = flags;
    if (s->prefix == NULL || s->dir == NULL) {
        free(s->prefix);
        free(s->dir);
        return canal__reg_fail(app, err, CANAL_ENOMEM, "%s: out of memory", prefix);
    }
    ops->nstatics++;
    return 0;
}

/* h2o decodes %00 into the path it gives the file handler, and open() stops at the NUL: a
 * request for "/static/%00x" would be answered for the directory. Refuse it first. */
static int static_guard(h2o_handler_t *self, h2o_req_t *req)
{
    if (memchr(req->path_normalized.base, '\0', req->path_normalized.len) == NULL)
        return -1; /* on to the file handler */
    h2o_send_error_400(req, "Bad Request", "NUL in the path", 0);
    return 0;
}

int canal__static_start(canal_app_t *app, struct canal__ops *ops)
{
    static const char *index_files[] = {"index.html", NULL}, *no_index[] = {NULL};
    for (size_t i = 0; i < ops->nstatics; i++) {
        const struct static_dir *s = &ops->statics[i];
        int flags = (s->flags & CANAL_STATIC_GZIP ? H2O_FILE_FLAG_SEND_COMPRESSED : 0) |
                    (s->flags & CANAL_STATIC_NO_ETAG ? H2O_FILE_FLAG_NO_ETAG : 0);
        h2o_pathconf_t *pc = h2o_config_register_path(app->hostconf, s->prefix, 0);
        h2o_create_handler(pc, sizeof(h2o_handler_t))->on_req = static_guard;
        h2o_file_register(pc, s->dir, s->flags & CANAL_STATIC_INDEX ? index_files : no_index, NULL, flags);
        canal__compress_register(ops, pc);
        /* the end of every answer (the access log's line) is canal's logger's */
        h2o_create_logger(pc, sizeof(h2o_logger_t))->log_access = canal__on_req_done;
    }
    return 0;
}

void canal__static_dispose(struct canal__ops *ops)
{
    for (size_t i = 0; i < ops->nstatics; i++) {
        free(ops->statics[i].prefix);
        free(ops->statics[i].dir);
    }
    free(ops->statics);
}
