/* SPDX-License-Identifier: MIT */
/*
 * The demo app in two modes that answer byte for byte the same: router mode (handlers on
 * routes, validation written by hand) and controller mode (controllers, actions, declared
 * parameters bound and validated by the controller layer).
 */
#ifndef DEMO_H
#define DEMO_H

#include <canal.h>

/* Both modes say "Hello, World!" with this content type. */
#define DEMO_TEXT_TYPE "text/plain; charset=utf-8"

/* The two small JSON answers, written with the streaming JSON writer (no json_t); both modes
 * send them. The writer's errors stick, so the send checks them once. */
static inline void demo_write_message(canal_jw_t *w)
{
    canal_jw_object_begin(w);
    canal_jw_key(w, "message");
    canal_jw_string(w, "Hello, World!");
    canal_jw_object_end(w);
}

static inline void demo_write_woo(canal_jw_t *w)
{
    canal_jw_object_begin(w);
    canal_jw_key(w, "id");
    canal_jw_int(w, 1);
    canal_jw_key(w, "name");
    canal_jw_string(w, "Woo");
    canal_jw_object_end(w);
}

/* GET /home/orders.ndjson in both modes (orders_stream.c): every order, streamed. */
int demo_orders_ndjson(canal_req_t *req);

int demo_router_mode(canal_app_t *app, canal_error_info_t *err);
int demo_controller_mode(canal_app_t *app, canal_mvc_t *mvc, canal_error_info_t *err);

#endif
