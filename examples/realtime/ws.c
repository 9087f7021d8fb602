/* SPDX-License-Identifier: MIT */
/*
 * The WebSocket endpoints of canal-realtime:
 *
 *   GET /ws/echo          every text or binary message comes back as it came
 *   GET /ws/chat/{room}   a text message goes to every member of the room, the sender too;
 *                         {room} is 1-64 of [A-Za-z0-9_-] (else 404)
 *   GET /sse/chat/{room}  an event stream of the room's messages (one event each), receive only
 *
 * A room is a canal_ws_group_t and a canal_sse_group_t, made when its first member joins and
 * released when its last leaves. Members may be on any worker thread: the groups' sends reach
 * them all, each sender's messages in order. With --store (canal/redis.h) both groups are
 * shared with the other instances (canal_ws_group_share()): a message reaches the room's
 * members on every instance, once each. The table of rooms is shared by the workers, under a
 * lock that also covers joining and leaving, so a room is never released while one joins it.
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

/* A room: its WebSocket members' group and its event streams' group, made when its first
 * member joins and released when its last leaves (members counts both, under the lock). */
struct room {
    struct room *next;
    canal_ws_group_t *ws;
    canal_sse_group_t *sse;
    size_t members;
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

/* The room of that name, made if new, with one more member (NULL when out of memory). With
 * --store, both groups are shared with the other instances under the room's name: a message
 * then reaches the room's members on every instance. Under the lock. */
static struct room *room_enter(struct rooms *rooms, canal_app_t *app, canal_str_t name)
{
    char key[65];
    memcpy(key, name.base, name.len);
    key[name.len] = '\0';
    size_t b = bucket_of(key);
    struct room *r = rooms->buckets[b];
    while (r != NULL && strcmp(r->name, key) != 0)
        r = r->next;
    if (r == NULL) {
        if ((r = calloc(1, sizeof(*r))) == NULL)
            return NULL;
        r->ws = canal_ws_group_create(app);
        r->sse = canal_sse_group_create(app);
        if (r->ws == NULL || r->sse == NULL) {
            canal_ws_group_release(r->ws);
            canal_sse_group_release(r->sse);
            free(r);
            return NULL;
        }
        /* CANAL_ENOTFOUND without --store: the room stays in this process */
        canal_ws_group_share(r->ws, key, name.len);
        canal_sse_group_share(r->sse, key, name.len);
        memcpy(r->name, key, name.len + 1);
        r->next = rooms->buckets[b];
        rooms->buckets[b] = r;
    }
    r->members++;
    return r;
}

/* One member less; the last one out releases the room. Under the lock. */
static void room_leave(struct rooms *rooms, struct room *r)
{
    if (--r->members > 0)
        return;
    struct room **p = &rooms->buckets[bucket_of(r->name)];
    while (*p != r)
        p = &(*p)->next;
    *p = r->next;
    canal_ws_group_release(r->ws);
    canal_sse_group_release(r->sse);
    free(r);
}

/* The socket joins its room (made if new); the room is the socket's user data. */
static int chat_open(canal_ws_t *ws, canal_req_t *req, void *data)
{
    struct rooms *rooms = data;
    canal_str_t name = canal_req_param(req, "room");
    if (!room_name_ok(name))
        return canal_res_problem(req, 404, "a room is 1 to 64 of A-Z, a-z, 0-9, '_' and '-'"), 1;
    int rc = 0;
    pthread_mutex_lock(&rooms->lock);
    struct room *r = room_enter(rooms, canal_ws_app(ws), name);
    if (r != NULL && canal_ws_join(ws, r->ws) != 0) {
        room_leave(rooms, r);
        r = NULL;
    }
    if (r == NULL)
        rc = canal_req_fail(req, "chat: out of memory");
    else
        canal_ws_set_user(ws, r);
    pthread_mutex_unlock(&rooms->lock);
    return rc;
}

/* A text message goes to the room's sockets and event streams. */
static void chat_message(canal_ws_t *ws, canal_ws_kind_t kind, const void *msg, size_t len, void *data)
{
    struct room *r = canal_ws_user(ws);
    if (kind == CANAL_WS_TEXT) {
        canal_ws_group_send(r->ws, kind, msg, len);
        canal_sse_group_send(r->sse, NULL, msg, len);
    }
}

/* The socket leaves its room. */
static void chat_close(canal_ws_t *ws, int code, canal_str_t reason, void *data)
{
    struct rooms *rooms = data;
    struct room *r = canal_ws_user(ws);
    pthread_mutex_lock(&rooms->lock);
    canal_ws_leave(ws, r->ws);
    room_leave(rooms, r);
    pthread_mutex_unlock(&rooms->lock);
}

/* ---- the rooms' event streams: GET /sse/chat/{room} ---- */

struct listener {
    struct rooms *rooms;
    struct room *room;
};

/* The stream is over (the client went away, or the idle limit, or the shutdown): it ends,
 * which takes it out of its group, and its room has one member less. */
static void listener_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    struct listener *l = data;
    pthread_mutex_lock(&l->rooms->lock);
    canal_stream_end(s);
    room_leave(l->rooms, l->room);
    pthread_mutex_unlock(&l->rooms->lock);
    free(l);
}

static const canal_stream_cb_t listener_cb = {.closed = listener_closed};

static int chat_events(canal_req_t *req, void *data)
{
    struct rooms *rooms = data;
    canal_str_t name = canal_req_param(req, "room");
    if (!room_name_ok(name))
        return canal_res_problem(req, 404, "a room is 1 to 64 of A-Z, a-z, 0-9, '_' and '-'");
    struct listener *l = malloc(sizeof(*l));
    if (l == NULL)
        return CANAL_ENOMEM;
    l->rooms = rooms;
    pthread_mutex_lock(&rooms->lock);
    l->room = room_enter(rooms, canal_req_app(req), name);
    pthread_mutex_unlock(&rooms->lock);
    if (l->room == NULL) {
        free(l);
        return CANAL_ENOMEM;
    }
    canal_stream_t *s = canal_sse_begin(req, &listener_cb, l);
    pthread_mutex_lock(&rooms->lock);
    if (s == NULL || canal_sse_join(s, l->room->sse) != 0) {
        /* not begun, or a HEAD request (the head was the answer): no member */
        room_leave(rooms, l->room);
        pthread_mutex_unlock(&rooms->lock);
        if (s != NULL)
            canal_stream_end(s); /* ended by its owner: no closed callback */
        free(l);
        return s == NULL ? CANAL_ENOMEM : 0;
    }
    pthread_mutex_unlock(&rooms->lock);
    canal_sse_comment(s, "joined"); /* the head and a first line leave at once */
    canal_sse_keepalive(s, 5000);
    return 0;
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
    canal_app_get(app, "sse/chat/{room}", chat_events, rooms);
}
