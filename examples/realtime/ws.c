/* SPDX-License-Identifier: MIT */
/*
 * The WebSocket endpoints of canal-realtime:
 *
 *   GET /ws/echo          every text or binary message comes back as it came
 *   GET /ws/chat/{room}   a text message goes to every member of the room, the sender too;
 *                         {room} is 1-64 of [A-Za-z0-9_-] (else 404)
 *
 * A room is a canal_ws_group_t, made when its first member joins and released when its last
 * leaves. Members may be on any worker thread: canal_ws_group_send() reaches them all, each
 * sender's messages in order. The table of rooms is shared by the workers, under a lock that
 * also covers joining and leaving, so a room is never released while a socket joins it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "realtime.h"

/* ---- echo ---- */

static void echo_message(canal_ws_t *ws, canal_ws_kind_t kind, const void *msg, size_t len, void *data)
{
    canal_ws_send(ws, kind, msg, len); /* a client that does not read is dropped by canal */
}

/* ---- chat rooms ---- */

#define NBUCKETS 256

struct room {
    struct room *next;
    canal_ws_group_t *group;
    char name[65];
};

struct rooms {
    pthread_mutex_t lock;
    struct room *buckets[NBUCKETS];
};

static size_t bucket_of(const char *name)
{
    size_t h = 5381;
    for (; *name; name++)
        h = h * 33 + (unsigned char)*name;
    return h % NBUCKETS;
}

static int room_name_ok(canal_str_t s)
{
    if (s.len < 1 || s.len > 64)
        return 0;
    for (size_t i = 0; i < s.len; i++) {
        char c = s.base[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* The socket joins its room (made if new); the room is the socket's user data. */
static int chat_open(canal_ws_t *ws, canal_req_t *req, void *data)
{
    struct rooms *rooms = data;
    canal_str_t name = canal_req_param(req, "room");
    if (!room_name_ok(name))
        return canal_res_problem(req, 404, "a room is 1 to 64 of A-Z, a-z, 0-9, '_' and '-'"), 1;
    char key[65];
    memcpy(key, name.base, name.len);
    key[name.len] = '\0';
    size_t b = bucket_of(key);
    int rc = 0;
    pthread_mutex_lock(&rooms->lock);
    struct room *r = rooms->buckets[b];
    while (r != NULL && strcmp(r->name, key) != 0)
        r = r->next;
    if (r == NULL && (r = calloc(1, sizeof(*r))) != NULL) {
        if ((r->group = canal_ws_group_create(canal_ws_app(ws))) == NULL) {
            free(r);
            r = NULL;
        } else {
            memcpy(r->name, key, name.len + 1);
            r->next = rooms->buckets[b];
            rooms->buckets[b] = r;
        }
    }
    if (r == NULL || canal_ws_join(ws, r->group) != 0)
        rc = canal_req_fail(req, "chat: out of memory");
    else
        canal_ws_set_user(ws, r);
    pthread_mutex_unlock(&rooms->lock);
    return rc;
}

static void chat_message(canal_ws_t *ws, canal_ws_kind_t kind, const void *msg, size_t len, void *data)
{
    struct room *r = canal_ws_user(ws);
    if (kind == CANAL_WS_TEXT)
        canal_ws_group_send(r->group, kind, msg, len);
}

/* The socket leaves its room; the last one out releases it. */
static void chat_close(canal_ws_t *ws, int code, canal_str_t reason, void *data)
{
    struct rooms *rooms = data;
    struct room *r = canal_ws_user(ws);
    pthread_mutex_lock(&rooms->lock);
    canal_ws_leave(ws, r->group);
    if (canal_ws_group_size(r->group) == 0) {
        struct room **p = &rooms->buckets[bucket_of(r->name)];
        while (*p != r)
            p = &(*p)->next;
        *p = r->next;
        canal_ws_group_release(r->group);
        free(r);
    }
    pthread_mutex_unlock(&rooms->lock);
}

static void rooms_free(void *data)
{
    struct rooms *rooms = data;
    /* the app has stopped: every socket has closed, and left its room */
    pthread_mutex_destroy(&rooms->lock);
    free(rooms);
}

void realtime_ws_add(canal_app_t *app, size_t max_message)
{
    struct rooms *rooms = calloc(1, sizeof(*rooms));
    canal_ws_spec_t echo = {.tmpl = "ws/echo", .on_message = echo_message, .max_message = max_message};
    canal_app_ws(app, &echo, NULL, NULL);
    if (rooms == NULL || pthread_mutex_init(&rooms->lock, NULL) != 0) {
        fprintf(stderr, "canal-realtime: out of memory\n");
        exit(1);
    }
    canal_ws_spec_t chat = {.tmpl = "ws/chat/{room}", .on_open = chat_open, .on_message = chat_message,
                            .on_close = chat_close, .data = rooms, .dispose = rooms_free,
                            .max_message = max_message};
    canal_app_ws(app, &chat, NULL, NULL);
}
