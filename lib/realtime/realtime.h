/* SPDX-License-Identifier: MIT */
/*
 * The realtime feature's calls for the features above it (openapi). (ws_internal.h has
 * canal's own part of RFC 6455, plain C.)
 */
#ifndef CANAL_REALTIME_INTERNAL_H
#define CANAL_REALTIME_INTERNAL_H

#include "core/core.h"

/* websocket.c: 1 if route is one of a WebSocket route's (canal_app_ws()) */
int canal__ws_route(const canal_app_t *app, const canal_route_t *route);

#endif
