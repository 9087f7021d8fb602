/* SPDX-License-Identifier: MIT */
/*
 * canal-realtime: server-sent events and WebSockets on one app (examples/realtime). Each part
 * registers its routes with one call from main.c.
 */
#ifndef REALTIME_H
#define REALTIME_H

#include <stddef.h>
#include <canal.h>

/* The example's own settings, beside canal's (main.c). */
struct realtime_opts {
    size_t max_message; /* --max-message: largest WebSocket message (default 1 MiB) */
};

/* sse.c: GET /sse/ticks. 0, or the registration error. */
int realtime_sse_add(canal_app_t *app);

#endif
