/* SPDX-License-Identifier: MIT */
/*
 * canal-realtime: server-sent events and WebSockets on one app (examples/realtime). Each part
 * registers its routes with one call from main.c; registration errors are kept by the app
 * (canal_app_error()).
 */
#ifndef REALTIME_H
#define REALTIME_H

#include <stddef.h>
#include <canal.h>

/* sse.c: GET /sse/ticks. 0, or the registration error. */
int realtime_sse_add(canal_app_t *app);

/* ws.c: /ws/echo and /ws/chat/{room}; messages up to max_message bytes. */
void realtime_ws_add(canal_app_t *app, size_t max_message);

#endif
