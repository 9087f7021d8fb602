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

/* Pub/sub, for groups across instances (realtime). A subscription's fn(target, msg, len) runs
 * on worker 0's loop for each message published on its channel (by any instance), under the
 * client's subscription lock: after canal__redis_unsubscribe() returns, it never runs again.
 * The subscriber connection (one per app, on worker 0) subscribes again to every channel
 * whenever it has reconnected. */
struct canal__redis_sub;
typedef void (*canal__redis_msg_fn)(void *target, const char *msg, size_t len);
/* any thread while the app runs; NULL when out of memory */
struct canal__redis_sub *canal__redis_subscribe(canal_redis_t *r, const char *channel, size_t chlen,
                                                canal__redis_msg_fn fn, void *target);
/* any thread; NULL is a no-op */
void canal__redis_unsubscribe(struct canal__redis_sub *sub);
/* PUBLISH channel msg on this worker's command connection (worker 0's from another thread,
 * through its queue: then 0 means handed over). 0, or CANAL_ECLOSED when the connection is
 * down now (nothing sent: the caller delivers locally), CANAL_EAGAIN (too many in flight),
 * CANAL_ENOMEM. */
int canal__redis_publish(canal_redis_t *r, const char *channel, size_t chlen, const void *msg, size_t len);
/* canal__redis_publish() on the subscription's channel */
int canal__redis_sub_publish(const struct canal__redis_sub *sub, const void *msg, size_t len);
/* A group's canal_*_group_share(): subscribes fn(target) to the channel prefix+name of the
 * app's client into *slot (any thread). 0; CANAL_ENOTFOUND (no client), CANAL_EEXIST (*slot
 * set already), CANAL_ENOMEM. */
int canal__redis_share(canal_app_t *app, struct canal__redis_sub *_Atomic *slot, const char *prefix,
                       const char *name, size_t len, canal__redis_msg_fn fn, void *target);

#endif
