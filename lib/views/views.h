/* SPDX-License-Identifier: MIT */
/*
 * The views feature's private interface: the Mustache engine (mustache.c) as the feature
 * (views.c) uses it.
 */
#ifndef CANAL_VIEWS_INTERNAL_H
#define CANAL_VIEWS_INTERNAL_H

#include <stddef.h>
#include "canal/view.h"

/* A growing output buffer: malloc'd, kept between renders by its owner. */
struct canal__vbuf {
    char *base;
    size_t len, cap;
};

/* Renders name (inside layout, NULL: none) with data, appended to out. 0 or the errors of
 * canal_views_render(). */
int canal__views_render_to(const canal_views_t *views, const char *name, const char *layout,
                           const canal_view_data_t *data, struct canal__vbuf *out, canal_error_info_t *err);

/* A render that stops when its output is large enough and goes on later (a streamed page).
 * walk_new: NULL with err set (no such template or layout, out of memory); what data points to
 * must live until walk_free. walk: appends to out until it holds budget more bytes (0), the
 * page is written (1) or something fails (a negative error, err set). */
struct canal__walk;
struct canal__walk *canal__views_walk_new(const canal_views_t *views, const char *name, const char *layout,
                                          const canal_view_data_t *data, canal_error_info_t *err);
int canal__views_walk(struct canal__walk *w, struct canal__vbuf *out, size_t budget, canal_error_info_t *err);
void canal__views_walk_free(struct canal__walk *w);

/* 1 if views has a template name, else 0 */
int canal__views_has(const canal_views_t *views, const char *name);

/* Calls fn for each template of views read from a file: its path and the modification time
 * it had when compiled. Stops at the first non-zero return and returns it. */
int canal__views_each_file(const canal_views_t *views, int (*fn)(const char *path, long long mtime_ns, void *arg),
                           void *arg);

#endif
