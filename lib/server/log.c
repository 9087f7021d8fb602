/* SPDX-License-Identifier: MIT */
/*
 * canal's messages: a handler that failed, a socket that could not be bound, a shutdown
 * deadline. An embeddable library does not write behind its host's back, so each one goes to
 * the app's log callback (canal_config_t.log); without one, or where there is no app yet,
 * to stderr as one line, "2026-11-29T20:53:15Z canal: the message".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "server_internal.h"

void canal__log(const canal_app_t *app, canal_log_level_t level, const char *fmt, ...)
{
    char small[512], *msg = small;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    /* a long request target (up to 1 MiB with --max-target) is not cut short */
    if (n >= (int)sizeof(small) && (msg = malloc((size_t)n + 1)) != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    va_end(ap);
    if (msg == NULL)
        msg = small; /* out of memory: the message cut at 511 bytes */
    if (app != NULL && app->cfg.log != NULL) {
        app->cfg.log(level, msg, app->cfg.log_data);
    } else {
        char when[32];
        time_t t = time(NULL);
        struct tm tm;
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        fprintf(stderr, "%s canal: %s\n", when, msg); /* one call: one line, not interleaved */
    }
    if (msg != small)
        free(msg);
}
