/* SPDX-License-Identifier: MIT */
/**
 * @file canal/metrics.h
 * Prometheus metrics (the observability feature): per route, method and status, latency
 * histograms, per-worker counters summed only when scraped. docs/operations.md has the whole
 * story. Switched on before canal_app_start() (CANAL_ESTATE afterwards); off, it costs nothing.
 */
#ifndef CANAL_METRICS_H
#define CANAL_METRICS_H

#include <stddef.h>
#include "export.h"
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Switches metrics on and serves them in the Prometheus text format (version 0.0.4) at
 * GET path (a route template, e.g. "metrics"; the route is counted like any other):
 *   canal_http_requests_total{route,method,status}   counter, by route template (with a
 *                                                    leading '/'; "(unmatched)" for 404, 405
 *                                                    and early answers)
 *   canal_http_request_duration_seconds{route}       histogram, from the request's start
 *                                                    (h2o's loop clock when its first bytes
 *                                                    were read) until the answer is sent
 *   canal_http_requests_in_flight                    gauge (the scrape counts itself)
 *   canal_http_connections                           gauge, open connections
 *   canal_workers                                    gauge, worker threads
 * and the lines of the features the app has on: canal_http_rate_limited_total{limit} (rate
 * limits), canal_ws_* (WebSocket routes: docs/realtime.md).
 * Each worker counts into its own memory (no shared atomics); a scrape sums the workers.
 * Requests served by canal_app_static() are not counted (h2o answers them without canal).
 * Returns 0, a router error for a bad path (err says why), CANAL_EEXIST if called twice,
 * CANAL_ESTATE once started.
 */
CANAL_API int canal_app_metrics(canal_app_t *app, const char *path, canal_error_info_t *err);

#ifdef __cplusplus
}
#endif

#endif
