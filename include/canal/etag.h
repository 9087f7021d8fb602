/* SPDX-License-Identifier: MIT */
/**
 * @file canal/etag.h
 * ETags for dynamic answers (opt-in): a strong validator of the body, made at the commit, and
 * If-None-Match answered with 304 Not Modified and no body (RFC 9110 8.8.3, 13.1.2, 15.4.5).
 *
 * On a route that has it (its own CANAL_ETAG(1), its group's or the app's canal_app_etag()),
 * every 2xx answer to GET or HEAD whose body is whole at the commit gets
 * `ETag: "<16 hex digits>"`, a 64-bit hash of the body's bytes. When the request's
 * If-None-Match holds that tag (weak comparison: W/"x" matches "x") or is "*", the answer
 * becomes a 304 with the ETag and the other headers but no body. Never on streamed answers,
 * non-2xx answers, other methods, or a HEAD whose body was not kept (canal_res_body() drops
 * HEAD's body; canal_res_body_static() keeps it). An answer with an ETag is not compressed: a
 * strong validator names one representation, and libh2o's gzip would send another under it.
 * Routes without it pay nothing.
 */
#ifndef CANAL_ETAG_H
#define CANAL_ETAG_H

#include <stdint.h>
#include "export.h"
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kind of CANAL_ETAG() (canal_route_option_t). */
CANAL_API extern const canal_option_kind_t canal_etag_option;

/** A route's own setting, among its (or an action's, or a controller's) options:
 * `.options = {CANAL_ETAG(1)}`; CANAL_ETAG(0) turns off what its group or the app turned on. */
#define CANAL_ETAG(on) {&canal_etag_option, (const void *)(uintptr_t)((on) ? 1 : 2)}

/**
 * ETags on every route of group (NULL: of the app) that does not say otherwise (on 1, or 0 to
 * turn them off again). Before canal_app_start(): 0, CANAL_ESTATE, CANAL_EINVAL (a group of
 * another app), CANAL_ENOMEM; a failure is also the app's registration error.
 */
CANAL_API int canal_app_etag(canal_app_t *app, const canal_route_group_t *group, int on);

#ifdef __cplusplus
}
#endif

#endif
