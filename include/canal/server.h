/* SPDX-License-Identifier: MIT */
/**
 * @file canal/server.h
 * canal's server core on libh2o, one header per topic:
 *   canal/app.h       configuration, the app, routes, listeners, workers, health endpoints
 *   canal/request.h   the request
 *   canal/response.h  the answer
 *   canal/json.h      the streaming JSON writer
 *   canal/async.h     deferred and offloaded answers
 *   canal/stream.h    streamed answers and server-sent events
 *   canal/websocket.h WebSocket routes, sockets and groups
 *   canal/cookie.h, signed.h, session.h   cookies, signed values, sessions
 *   canal/ratelimit.h rate limits
 *   canal/headers.h   the security headers preset
 *   canal/schema.h    typed models: binding, validation, JSON and OpenAPI from one table
 *   canal/trace.h     W3C trace context, begin and end hooks per request
 *
 * None of them includes h2o.h: canal_req_t is opaque and apps need no h2o flags.
 */
#ifndef CANAL_SERVER_H
#define CANAL_SERVER_H

#include "app.h"
#include "request.h"
#include "response.h"
#include "json.h"
#include "async.h"
#include "stream.h"
#include "websocket.h"
#include "sse_group.h"
#include "cookie.h"
#include "signed.h"
#include "session.h"
#include "form.h"
#include "ratelimit.h"
#include "headers.h"
#include "auth.h"
#include "schema.h"
#include "trace.h"

#endif
