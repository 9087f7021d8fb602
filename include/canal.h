/* SPDX-License-Identifier: MIT */
/**
 * @file canal.h
 * The umbrella header: everything public in canal but the test client (canal/testing.h), which
 * test code includes itself.
 *   canal/router.h  route templates, matching, link generation (pure C, no h2o)
 *   canal/server.h  the app, requests and responses on libh2o (app.h, request.h, response.h,
 *                   json.h, async.h, websocket.h)
 *   canal/controller.h  controllers and actions, binding, validation, results, filters
 *   canal/openapi.h  an OpenAPI 3.1 document of the routes, served with a Swagger UI page
 *   canal/metrics.h, canal/files.h, canal/cors.h   metrics; static files and compression;
 *                   CORS policies
 *   canal/view.h    views: Mustache templates rendered into HTML answers
 *   canal/etag.h    ETags and If-None-Match for dynamic answers
 */
#ifndef CANAL_H
#define CANAL_H

#include "canal/export.h"
#include "canal/version.h"
#include "canal/error.h"
#include "canal/router.h"
#include "canal/server.h"
#include "canal/controller.h"
#include "canal/openapi.h"
#include "canal/metrics.h"
#include "canal/files.h"
#include "canal/cors.h"
#include "canal/password.h"
#include "canal/cache.h"
#include "canal/view.h"
#include "canal/etag.h"
#include "canal/db.h"
#include "canal/redis.h"

#endif
