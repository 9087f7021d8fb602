/* SPDX-License-Identifier: MIT */
/*
 * Groups of event streams (canal/sse_group.h), on the model of the WebSocket groups
 * (websocket.c): one member list per worker, each touched by its worker only; an event is
 * formatted once into a payload shared by reference count, handed to every worker through
 * canal__post() (one queue per worker: in order per sender), and written to each member as a
 * borrowed buffer that the stream gives back when it is sent. A stream's memberships hang on
 * the stream (canal__stream_groups(), stream.c), which empties them when it is closed or
 * ended.
 *
 * A shared group (canal_sse_group_share()) publishes the formatted event to its Redis channel
 * instead and writes only what the subscriber connection brings back (lib/redis/redis.c), so
 * each instance's members get each event once, the sender's instance included. The
 * subscription is ended under the client's subscription lock before the creator's reference
 * goes, so its callback never sees a freed group.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include "canal/sse_group.h"
#include "redis/redis.h"

struct canal_sse_group {
    canal_app_t *app;
    atomic_size_t refs, size;
    size_t nworkers;
    struct canal__redis_sub *_Atomic sub; /* shared: the store's channel */
    h2o_linklist_t members[]; /* one list per worker */
};

struct member {
    h2o_linklist_t link;  /* in the group's list of the stream's worker */
    struct member *next;  /* the stream's next group */
    canal_sse_group_t *group;
    canal_stream_t *s;
};

/* An event's bytes, once for every worker and member. */
struct payload {
    atomic_size_t refs;
    size_t len;
    char bytes[];
};

struct group_msg {
    struct canal__post super;
    canal_sse_group_t *group;
    size_t k;
    struct payload *payload;
};

static void group_unref(canal_sse_group_t *g)
{
    if (atomic_fetch_sub(&g->refs, 1) == 1)
        free(g);
}

static void payload_release(void *data)
{
    struct payload *p = data;
    if (atomic_fetch_sub(&p->refs, 1) == 1)
        free(p);
}

canal_sse_group_t *canal_sse_group_create(canal_app_t *app)
{
    int state = atomic_load(&app->state);
    if (state != APP_STARTED && state != APP_STOPPING)
        return NULL;
    canal_sse_group_t *g = malloc(sizeof(*g) + app->nworkers * sizeof(h2o_linklist_t));
    if (g == NULL)
        return NULL;
    g->app = app;
    g->nworkers = app->nworkers;
    atomic_init(&g->refs, 1);
    atomic_init(&g->size, 0);
    atomic_init(&g->sub, NULL);
    for (size_t i = 0; i < g->nworkers; i++)
        h2o_linklist_init_anchor(&g->members[i]);
    return g;
}

void canal_sse_group_release(canal_sse_group_t *g)
{
    if (g == NULL)
        return;
    canal__redis_unsubscribe(atomic_exchange(&g->sub, NULL));
    group_unref(g);
}

size_t canal_sse_group_size(const canal_sse_group_t *g)
{
    return atomic_load(&((canal_sse_group_t *)g)->size);
}

static void member_free(struct member *m)
{
    canal_sse_group_t *g = m->group;
    h2o_linklist_unlink(&m->link);
    atomic_fetch_sub(&g->size, 1);
    free(m);
    group_unref(g);
}

/* the stream is closed or ended: it leaves every group */
static void leave_all(void **slot)
{
    struct member *m = *slot;
    *slot = NULL;
    while (m != NULL) {
        struct member *next = m->next;
        member_free(m);
        m = next;
    }
}

int canal_sse_join(canal_stream_t *s, canal_sse_group_t *g)
{
    canal_req_t *req = canal_stream_req(s);
    void **slot = req != NULL ? canal__stream_groups(s, leave_all) : NULL;
    if (slot == NULL)
        return CANAL_ESTATE;
    for (struct member *m = *slot; m != NULL; m = m->next)
        if (m->group == g)
            return CANAL_EEXIST;
    struct member *m = malloc(sizeof(*m));
    if (m == NULL)
        return CANAL_ENOMEM;
    *m = (struct member){.next = *slot, .group = g, .s = s};
    h2o_linklist_insert(&g->members[req->worker->index], &m->link);
    *slot = m;
    atomic_fetch_add(&g->refs, 1); /* a member keeps its group */
    atomic_fetch_add(&g->size, 1);
    return 0;
}

int canal_sse_leave(canal_stream_t *s, canal_sse_group_t *g)
{
    void **slot = canal_stream_req(s) != NULL ? canal__stream_groups(s, leave_all) : NULL;
    if (slot == NULL)
        return CANAL_ENOTFOUND;
    for (struct member **p = (struct member **)slot; *p != NULL; p = &(*p)->next) {
        if ((*p)->group == g) {
            struct member *m = *p;
            *p = m->next;
            member_free(m);
            return 0;
        }
    }
    return CANAL_ENOTFOUND;
}

/* On worker k: the event to each of its members (the next is taken before a write, which may
 * close a stream and so take its member out). */
static void run_group(struct canal__post *msg)
{
    struct group_msg *m = (struct group_msg *)msg;
    struct payload *p = m->payload;
    h2o_linklist_t *list = &m->group->members[m->k];
    for (h2o_linklist_t *l = list->next, *next; l != list; l = next) {
        next = l->next;
        struct member *x = H2O_STRUCT_FROM_MEMBER(struct member, link, l);
        atomic_fetch_add(&p->refs, 1);
        if (canal_stream_write_borrowed(x->s, p->bytes, p->len, payload_release, p) != 0)
            payload_release(p); /* a full queue: this member misses it */
    }
    payload_release(p);
    group_unref(m->group);
    free(m);
}

/* The event to this instance's members, on every worker. */
static int local_send(canal_sse_group_t *g, struct payload *p)
{
    int rc = 0;
    for (size_t k = 0; k < g->nworkers; k++) {
        struct group_msg *m = malloc(sizeof(*m));
        if (m == NULL) {
            rc = CANAL_ENOMEM;
            continue;
        }
        *m = (struct group_msg){.super.run = run_group, .group = g, .k = k, .payload = p};
        atomic_fetch_add(&p->refs, 1);
        atomic_fetch_add(&g->refs, 1);
        if (canal__post(&g->app->workers[k], &m->super) != 0) {
            payload_release(p);
            group_unref(g);
            free(m);
        }
    }
    return rc;
}

static struct payload *payload_new(const char *bytes, size_t len)
{
    struct payload *p = malloc(sizeof(*p) + len);
    if (p == NULL)
        return NULL;
    atomic_init(&p->refs, 1);
    p->len = len;
    memcpy(p->bytes, bytes, len);
    return p;
}

int canal_sse_group_send(canal_sse_group_t *g, const char *event, const char *data, size_t len)
{
    size_t size = canal_sse_event_size(NULL, event, len);
    struct payload *p = malloc(sizeof(*p) + size);
    if (p == NULL)
        return CANAL_ENOMEM;
    long n = canal_sse_format(p->bytes, size, NULL, event, data, len);
    if (n < 0) {
        free(p);
        return CANAL_EINVAL;
    }
    /* the bound is for the worst case (about 8 bytes a byte of data): keep what was written */
    struct payload *fit = realloc(p, sizeof(*p) + (size_t)n);
    if (fit != NULL)
        p = fit;
    atomic_init(&p->refs, 1);
    p->len = (size_t)n;
    struct canal__redis_sub *sub = atomic_load(&g->sub);
    /* shared: what comes back from the store is written (on_store_event()); if it cannot be
     * published now, this instance's members get it at least */
    int rc = sub != NULL && canal__redis_sub_publish(sub, p->bytes, p->len) == 0 ? 0 : local_send(g, p);
    payload_release(p);
    return rc;
}

/* An event from the store's channel (worker 0, under the subscription lock). */
static void on_store_event(void *target, const char *msg, size_t len)
{
    struct payload *p = payload_new(msg, len);
    if (p != NULL) {
        local_send(target, p);
        payload_release(p);
    }
}

int canal_sse_group_share(canal_sse_group_t *g, const char *name, size_t len)
{
    return canal__redis_share(g->app, &g->sub, "canal:sse:", name, len, on_store_event, g);
}
