/* SPDX-License-Identifier: MIT */
/*
 * The observability feature's calls shared by its files (acclog.c, metrics.c, ...).
 */
#ifndef CANAL_OBSERVABILITY_H
#define CANAL_OBSERVABILITY_H

#include "core/core.h"

/* acclog.c: switches the access log on (canal_app_create(), with cfg.access_log); -1 when
 * out of memory */
#define CANAL__ACCLOG_BUF (64u * 1024)
int canal__acclog_on(canal_app_t *app);

/* metrics.c */
/* Nanoseconds from the request's first bytes (libh2o's loop clock) to now (a clock read:
 * microsecond granularity and better); -1 if libh2o has no start time for it. Metrics and the
 * JSON access log's duration. */
int64_t canal__elapsed_ns(h2o_req_t *h);

#endif
