/* SPDX-License-Identifier: MIT */
/*
 * The Redis client's side for the features that keep their state in it (sessions, rate
 * limits): commands of a guard that waits for the reply, and of a store's write that the
 * handler's answer waits for.
 */
#ifndef CANAL_REDIS_PRIVATE_H
#define CANAL_REDIS_PRIVATE_H

#include "core/core.h"
#include "canal/redis.h"

/* What the end of a request's commands does: commit the answer (canal_redis_command()); go
 * on with the route (a guard that returned CANAL__GUARD_WAIT: canal__guard_done() with
 * whether a callback answered); commit the answer the handler set and returned (a write it
 * depends on: canal__pending_hold()). */
enum canal__redis_mode { CANAL__REDIS_ANSWER, CANAL__REDIS_GUARD, CANAL__REDIS_HOLD };

/* A feature's callback: 1 if it set the answer (which then stands), else 0 */
typedef int (*canal__redis_fn)(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data);

/* canal_redis_command() in a mode: CANAL_PENDING, or an error as it gives (nothing sent) */
int canal__redis_send(canal_req_t *req, canal_redis_t *r, enum canal__redis_mode mode, int argc,
                      const char *const *argv, const size_t *lens, canal__redis_fn cb, void *data);

#endif
