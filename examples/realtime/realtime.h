/* SPDX-License-Identifier: MIT */
/* The parts of canal-realtime (main.c). */
#ifndef REALTIME_H
#define REALTIME_H

#include <stddef.h>
#include <canal.h>

/* /ws/echo and /ws/chat/{room} (ws.c); messages up to max_message bytes. Registration errors
 * are kept by the app (canal_app_error()). */
void realtime_ws_add(canal_app_t *app, size_t max_message);

#endif
