/* SPDX-License-Identifier: MIT */
/* lib/app/'s own calls (reload.c): canal_app_create() readies every app for a reload. */
#ifndef CANAL_APP_RELOAD_H
#define CANAL_APP_RELOAD_H

#include "core/core.h"

/* Switches the reload on in app (its state, its SIGHUP); 0, or -1 when out of memory */
int canal__reload_on(canal_app_t *app);

#endif
