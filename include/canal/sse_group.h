/* SPDX-License-Identifier: MIT */
/**
 * @file canal/sse_group.h
 * Groups of event streams (a chat room's listeners): the model of canal_ws_group_t
 * (canal/websocket.h) for server-sent events. docs/realtime.md, "SSE groups".
 *
 * A group holds event streams (canal_sse_begin(), canal/stream.h) on any worker threads.
 * canal_sse_group_send() formats an event once and writes it to every member, on each
 * member's own thread, each sender thread's events in the order they were sent. A member
 * leaves when its stream is closed (the client went away, the idle limit, the shutdown) or
 * ended by its owner, whichever comes first, or with canal_sse_leave(). The group lives while
 * its creator holds it (canal_sse_group_release()) or a member or an event on its way does.
 *
 * **Across instances.** canal_sse_group_share() links the group to a channel of the app's
 * Redis store (`--store`, canal/redis.h): from then on an event sent on any instance whose
 * group shares the same name reaches the members on every instance, each once. The sending
 * instance does not write the event itself: it publishes it, and writes what comes back from
 * Redis, like every other instance. While the store is unreachable, an event sent on a worker
 * is written to this instance's members only; one published just before the store paused
 * arrives when it is back (or not at all if the connection had to be dropped). Without a
 * store, nothing of this costs anything.
 */
#ifndef CANAL_SSE_GROUP_H
#define CANAL_SSE_GROUP_H

#include <stddef.h>
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A group of event streams on any worker threads. Opaque. */
typedef struct canal_sse_group canal_sse_group_t;

/**
 * Creates an empty group. Only while the app runs (its worker count is known): NULL before or
 * after, or when out of memory. The caller owns a reference (canal_sse_group_release()). Any
 * thread.
 */
CANAL_API canal_sse_group_t *canal_sse_group_create(canal_app_t *app);

/**
 * Drops the creator's reference (and ends the link to the store, if shared). The group lives
 * on while it has members or events on their way to them. NULL is a no-op. Any thread; once.
 */
CANAL_API void canal_sse_group_release(canal_sse_group_t *g);

/**
 * Adds the stream to the group. The stream's thread only. Returns 0; CANAL_EEXIST if a member;
 * CANAL_ESTATE if the stream is closed or ended (a HEAD request's, for one); CANAL_ENOMEM.
 */
CANAL_API int canal_sse_join(canal_stream_t *s, canal_sse_group_t *g);

/** Takes the stream out of the group (CANAL_ENOTFOUND if not a member). The stream's thread. */
CANAL_API int canal_sse_leave(canal_stream_t *s, canal_sse_group_t *g);

/** Members of the group on every thread. Any thread (a count that may already have moved). */
CANAL_API size_t canal_sse_group_size(const canal_sse_group_t *g);

/**
 * Sends one event (as canal_sse_event(): event may be NULL, data of len bytes split into
 * data: lines) to every member. Any thread; never waits. A member whose queue is full
 * (max_queued, canal/stream.h) misses the event. Returns 0; CANAL_EINVAL (event holds CR or
 * LF); CANAL_ENOMEM.
 */
CANAL_API int canal_sse_group_send(canal_sse_group_t *g, const char *event, const char *data, size_t len);

/**
 * Shares the group with the app's other instances through its store, on the channel
 * "canal:sse:" name (len bytes, binary safe). Call it once, right after the create (before
 * sends). Returns 0; CANAL_ENOTFOUND when the app has no store (the group stays in process);
 * CANAL_EEXIST when shared already; CANAL_ENOMEM. A shared group is released
 * (canal_sse_group_release()) before canal_app_destroy(): the store's subscriptions go with
 * the app.
 */
CANAL_API int canal_sse_group_share(canal_sse_group_t *g, const char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif
