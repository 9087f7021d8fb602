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

int demo_router_mode(canal_app_t *app, canal_error_info_t *err);
int demo_controller_mode(canal_app_t *app, canal_mvc_t *mvc, canal_error_info_t *err);

#endif
