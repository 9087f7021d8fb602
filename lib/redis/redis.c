/* SPDX-License-Identifier: MIT */
/*
 * The Redis client (canal/redis.h): hiredis 0.14's async API on each worker's h2o loop.
 *
 * The adapter: hiredis owns the connection's descriptor; the loop watches a dup() of it
 * (h2o_evloop_socket_create() with DONT_READ, so h2o reads nothing: the read callback only
 * says "readable", and h2o_socket_notify_write() says "writable"), and closing the h2o socket
 * in hiredis's cleanup hook closes only the dup. hiredis 0.14 has no timer hook: deadlines are
 * h2o timeout lists of the worker's (one per fixed period), one entry per command and one for
 * the connect.
 *
 * A connection goes DOWN -> CONNECTING (AUTH, SELECT and a PING queued first) -> UP (the PING
 * answered). A command past its deadline fails, and the connection with it (a server that
 * does not answer one command answers none of the ones behind it): every command waiting on
 * it fails with CANAL_ECLOSED, and a reconnect is scheduled after a backoff of 100 ms ticks
 * (1, 2, 4, 8, 10). Commands are refused at once while DOWN.
 *
 * A request's commands share one malloc'd record (struct rreq) holding the deferral handle
 * (canal/async.h): its count of commands in flight commits the answer when the last callback
 * has run, and canal_pending_req() says whether the request is still there before a callback
 * is called (the record outlives the request's memory; the request state only points at it).
 *
 * Pub/sub (groups across instances, lib/redis/redis.h): worker 0 has a second connection, the
 * subscriber, which after its PING subscribes to every channel of the client's subscription
 * table, and again after each reconnect. The table (a hash of channels, under sub_lock) is
 * shared by every thread; changes reach the subscriber through worker 0's queue. A message
 * that arrives is handed to the subscriptions of its channel under sub_lock, on worker 0.
 * PUBLISH goes on the command connection of the publishing worker (worker 0's from other
 * threads), so one sender's messages reach Redis, and so every subscriber, in order. A
 * subscriber connection has no deadline of its own once subscribed: a paused server keeps it
 * open (messages resume with the server); a server that is gone closes it, and it reconnects
 * with the command connections' backoff.
 */
#include <pthread.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/core.h"
#include "core/feature.h"
#include "canal/async.h"
#include "redis/redis.h"

#define RETRY_TICK_MS 100
#define SUB_BUCKETS 256
#define RETRY_MAX_TICKS 10

enum { DOWN, CONNECTING, UP };

struct canal__redis_sub {
    struct canal__redis_sub *next; /* in its bucket */
    struct canal_redis *r;
    canal__redis_msg_fn fn;
    void *target;
    size_t chlen;
    char ch[];
};

struct canal_redis {
    canal_app_t *app;
    char host[256];
    int port, db;
    char *password;
    unsigned timeout_ms;
    size_t max_inflight;
    size_t nworkers;
    atomic_size_t up; /* workers whose connection is UP */
    /* metrics: any thread reads them */
    atomic_ullong commands, errors, timeouts, reconnects, latency_us;
    atomic_ullong published, received;
    atomic_int sub_up; /* the subscriber connection is UP */
    pthread_mutex_t sub_lock;
    int sub_lock_ready;
    struct canal__redis_sub *subs[SUB_BUCKETS];
};

struct conn {
    struct canal_redis *r;
    struct canal_worker *w;
    redisAsyncContext *ac;
    h2o_socket_t *sock;
    int state, reading, writing, stopping;
    int sub;                            /* the subscriber (worker 0's second connection) */
    unsigned backoff;                   /* ticks before the next connect */
    unsigned ticks;                     /* ticks left */
    h2o_timeout_t deadlines;            /* r->timeout_ms: commands and the connect */
    h2o_timeout_entry_t connect_deadline;
    h2o_timeout_t tick;                 /* RETRY_TICK_MS: the reconnect's backoff */
    h2o_timeout_entry_t retry;
    h2o_timeout_t now;                  /* 0 ms: dropping a connection outside hiredis's calls */
    h2o_timeout_entry_t drop;
    size_t inflight;
};

/* a worker's part: its command connection (first: canal__worker_state() is one) and, on
 * worker 0, the subscriber */
struct wstate {
    struct conn cmd, sub;
};

/* the worker this thread runs (redis_worker_init()) */
static __thread struct canal_worker *this_worker;

/* the commands of one request */
struct rreq {
    canal_pending_t *p;
    int inflight;
    int mode;          /* enum canal__redis_mode */
    int answered;      /* a feature's callback set the answer */
    struct rreq **state; /* the request's pointer to this record */
};

struct cmd {
    struct conn *c;
    struct rreq *rr;   /* NULL: the connection's own (AUTH, SELECT, PING) */
    canal_redis_fn cb;   /* an app's (canal_redis_command()) */
    canal__redis_fn fcb; /* or a feature's */
    void *data;
    int done;          /* failed before its reply: the reply only frees it */
    uint64_t sent_us;
    h2o_timeout_entry_t deadline;
};

static const struct canal__feature feature;

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- the adapter: hiredis's event hooks on the h2o loop ---- */

static void on_readable(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;
    if (c->ac != NULL)
        redisAsyncHandleRead(c->ac);
}

static void on_writable(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;
    c->writing = 0;
    if (c->ac != NULL)
        redisAsyncHandleWrite(c->ac);
}

static void ev_add_read(void *priv)
{
    struct conn *c = priv;
    if (c->sock != NULL && !c->reading) {
        c->reading = 1;
        h2o_socket_read_start(c->sock, on_readable);
    }
}

static void ev_del_read(void *priv)
{
    struct conn *c = priv;
    if (c->sock != NULL && c->reading) {
        c->reading = 0;
        h2o_socket_read_stop(c->sock);
    }
}

static void ev_add_write(void *priv)
{
    struct conn *c = priv;
    if (c->sock != NULL && !c->writing) {
        c->writing = 1; /* h2o allows one notification at a time: it ends in on_writable */
        h2o_socket_notify_write(c->sock, on_writable);
    }
}

static void ev_del_write(void *priv)
{
    /* a notification already asked for cannot be taken back: on_writable then finds
     * nothing to write, which hiredis handles */
}

/* hiredis frees the context: the loop stops watching (closing the dup) */
static void ev_cleanup(void *priv)
{
    struct conn *c = priv;
    if (c->sock != NULL) {
        h2o_socket_close(c->sock);
        c->sock = NULL;
    }
    c->reading = c->writing = 0;
}

/* ---- the connection's life ---- */

static void schedule_connect(struct conn *c);

static void subscribe_all(struct conn *c);

static void set_state(struct conn *c, int state)
{
    if (c->sub) {
        atomic_store(&c->r->sub_up, state == UP);
        c->state = state;
        if (state == UP)
            subscribe_all(c);
        return;
    }
    if (c->state == UP && state != UP)
        atomic_fetch_sub(&c->r->up, 1);
    else if (c->state != UP && state == UP)
        atomic_fetch_add(&c->r->up, 1);
    c->state = state;
}

/* the context is gone (freed by hiredis or by us): reconnect later */
static void lost(struct conn *c)
{
    c->ac = NULL;
    if (h2o_timeout_is_linked(&c->connect_deadline))
        h2o_timeout_unlink(&c->connect_deadline);
    if (h2o_timeout_is_linked(&c->drop))
        h2o_timeout_unlink(&c->drop);
    if (c->state != DOWN) {
        set_state(c, DOWN);
        schedule_connect(c);
    }
}

/* Drops the connection from outside hiredis's calls: its commands fail (their callbacks run
 * with a NULL reply), then the disconnect callback, then ev_cleanup. */
static void drop_now(struct conn *c)
{
    redisAsyncContext *ac = c->ac;
    if (ac == NULL)
        return;
    atomic_fetch_add(&c->r->reconnects, 1);
    redisAsyncFree(ac);
    lost(c);
}

static void on_drop(h2o_timeout_entry_t *e)
{
    drop_now(H2O_STRUCT_FROM_MEMBER(struct conn, drop, e));
}

/* From inside a hiredis callback: drop on the next turn of the loop */
static void drop_later(struct conn *c)
{
    if (c->ac != NULL && !h2o_timeout_is_linked(&c->drop))
        h2o_timeout_link(c->w->loop, &c->now, &c->drop);
}

static void on_connect_deadline(h2o_timeout_entry_t *e)
{
    struct conn *c = H2O_STRUCT_FROM_MEMBER(struct conn, connect_deadline, e);
    atomic_fetch_add(&c->r->timeouts, 1);
    drop_now(c);
}

static void on_connected(const redisAsyncContext *ac, int status)
{
    struct conn *c = ac->data;
    if (status != REDIS_OK)
        lost(c); /* hiredis frees the context after this callback */
}

static void on_disconnected(const redisAsyncContext *ac, int status)
{
    struct conn *c = ac->data;
    if (c->ac == ac)
        lost(c);
}

/* ---- commands ---- */

/* a marker callback: the connection's own command whose success makes it UP */
static void ping_done(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
}

/* a marker callback: a PUBLISH, whose failure drops the connection */
static void publish_done(canal_req_t *req, const canal_redis_reply_t *reply, int status, void *data)
{
}

static void finish(struct cmd *k, redisReply *reply, int status)
{
    struct conn *c = k->c;
    k->done = 1;
    c->inflight--;
    if (h2o_timeout_is_linked(&k->deadline))
        h2o_timeout_unlink(&k->deadline);
    if (status != 0 || reply == NULL || reply->type == REDIS_REPLY_ERROR)
        atomic_fetch_add(&c->r->errors, 1);
    if (status == 0) {
        uint64_t t = now_us();
        atomic_fetch_add(&c->r->latency_us, t > k->sent_us ? t - k->sent_us : 0);
    }
    struct rreq *rr = k->rr;
    if (rr == NULL) {
        /* the connection's own: AUTH, SELECT, then the PING that makes it UP */
        if (status != 0 || reply == NULL || reply->type == REDIS_REPLY_ERROR) {
            if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
                canal__log(c->w->app, CANAL_LOG_ERROR, "redis: %.*s", (int)reply->len, reply->str);
            drop_later(c);
        } else if (k->cb == ping_done && c->state == CONNECTING) {
            if (h2o_timeout_is_linked(&c->connect_deadline))
                h2o_timeout_unlink(&c->connect_deadline);
            c->backoff = 0;
            set_state(c, UP);
        }
        return;
    }
    canal_req_t *req = canal_pending_req(rr->p);
    int st = reply == NULL ? CANAL_ECLOSED : status;
    if (req != NULL && k->fcb != NULL)
        rr->answered |= k->fcb(req, (const canal_redis_reply_t *)reply, st, k->data);
    else if (req != NULL)
        k->cb(req, (const canal_redis_reply_t *)reply, st, k->data);
    if (--rr->inflight > 0)
        return;
    canal_pending_t *p = rr->p;
    int guard = rr->mode == CANAL__REDIS_GUARD, answered = rr->answered;
    if ((req = canal_pending_req(p)) != NULL)
        *rr->state = NULL; /* the request is still there: its state is too */
    free(rr);
    if (guard && req != NULL) {
        canal__pending_resume(p);
        canal__guard_done(req, answered);
    } else {
        canal_pending_complete(p);
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct cmd *k = priv;
    if (!k->done)
        finish(k, reply, reply == NULL ? CANAL_ECLOSED : 0);
    free(k);
}

static void on_deadline(h2o_timeout_entry_t *e)
{
    struct cmd *k = H2O_STRUCT_FROM_MEMBER(struct cmd, deadline, e);
    struct conn *c = k->c;
    atomic_fetch_add(&c->r->timeouts, 1);
    finish(k, NULL, CANAL_ECLOSED);
    drop_now(c); /* frees k through on_reply */
}

static struct cmd *send_argv(struct conn *c, struct rreq *rr, int argc, const char *const *argv, const size_t *lens,
                             canal_redis_fn cb, canal__redis_fn fcb, void *data)
{
    struct cmd *k = calloc(1, sizeof(*k));
    if (k == NULL)
        return NULL;
    *k = (struct cmd){.c = c, .rr = rr, .cb = cb, .fcb = fcb, .data = data, .sent_us = now_us()};
    k->deadline.cb = on_deadline;
    if (redisAsyncCommandArgv(c->ac, on_reply, k, argc, (const char **)argv, lens) != REDIS_OK) {
        free(k);
        return NULL;
    }
    c->inflight++;
    atomic_fetch_add(&c->r->commands, 1);
    if (rr != NULL || cb == publish_done)
        h2o_timeout_link(c->w->loop, &c->deadlines, &k->deadline);
    return k;
}

static void connect_now(struct conn *c)
{
    struct canal_redis *r = c->r;
    redisAsyncContext *ac = redisAsyncConnect(r->host, r->port);
    if (ac == NULL || ac->err) {
        if (ac != NULL)
            redisAsyncFree(ac);
        c->state = CONNECTING; /* lost() schedules the next try */
        lost(c);
        return;
    }
    int fd = dup(ac->c.fd);
    h2o_socket_t *sock = fd < 0 ? NULL : h2o_evloop_socket_create(c->w->loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    if (sock == NULL) {
        if (fd >= 0)
            close(fd);
        redisAsyncFree(ac);
        c->state = CONNECTING;
        lost(c);
        return;
    }
    sock->data = c;
    c->sock = sock;
    c->ac = ac;
    ac->data = c;
    ac->ev.data = c;
    ac->ev.addRead = ev_add_read;
    ac->ev.delRead = ev_del_read;
    ac->ev.addWrite = ev_add_write;
    ac->ev.delWrite = ev_del_write;
    ac->ev.cleanup = ev_cleanup;
    redisAsyncSetConnectCallback(ac, on_connected);
    redisAsyncSetDisconnectCallback(ac, on_disconnected);
    c->state = CONNECTING;
    h2o_timeout_link(c->w->loop, &c->deadlines, &c->connect_deadline);
    char db[16];
    snprintf(db, sizeof(db), "%d", r->db);
    const char *auth[] = {"AUTH", r->password};
    const char *select[] = {"SELECT", db};
    const char *ping[] = {"PING"};
    size_t auth_lens[] = {4, r->password ? strlen(r->password) : 0};
    size_t select_lens[] = {6, strlen(db)};
    size_t ping_lens[] = {4};
    /* the internal commands ride on the connect's deadline */
    if ((r->password != NULL && send_argv(c, NULL, 2, auth, auth_lens, NULL, NULL, NULL) == NULL) ||
        (r->db != 0 && send_argv(c, NULL, 2, select, select_lens, NULL, NULL, NULL) == NULL) ||
        send_argv(c, NULL, 1, ping, ping_lens, ping_done, NULL, NULL) == NULL)
        drop_later(c);
}

static void on_retry(h2o_timeout_entry_t *e)
{
    struct conn *c = H2O_STRUCT_FROM_MEMBER(struct conn, retry, e);
    if (c->ticks > 1) {
        c->ticks--;
        h2o_timeout_link(c->w->loop, &c->tick, &c->retry);
        return;
    }
    connect_now(c);
}

static void schedule_connect(struct conn *c)
{
    if (c->stopping || h2o_timeout_is_linked(&c->retry))
        return;
    c->backoff = c->backoff == 0 ? 1 : c->backoff * 2;
    if (c->backoff > RETRY_MAX_TICKS)
        c->backoff = RETRY_MAX_TICKS;
    c->ticks = c->backoff;
    h2o_timeout_link(c->w->loop, &c->tick, &c->retry);
}

/* ---- the public calls ---- */

struct canal_redis_reply; /* a redisReply, seen through the calls below */

static int send_req(canal_req_t *req, canal_redis_t *r, enum canal__redis_mode mode, int argc, const char *const *argv,
                    const size_t *lens, canal_redis_fn cb, canal__redis_fn fcb, void *data)
{
    if (req == NULL || r == NULL || argc < 1 || argv == NULL || lens == NULL || (cb == NULL && fcb == NULL))
        return CANAL_EINVAL;
    struct conn *c = canal__worker_state(req->worker, &feature);
    if (c == NULL)
        return CANAL_ESTATE;
    if (c->state == DOWN || c->ac == NULL)
        return CANAL_ECLOSED;
    if (c->inflight >= r->max_inflight)
        return CANAL_EAGAIN;
    struct rreq **state = canal__req_state(req, &feature, sizeof(struct rreq *), NULL);
    if (state == NULL)
        return CANAL_ENOMEM;
    struct rreq *rr = *state;
    int fresh = rr == NULL;
    if (fresh) {
        if (req->res.committed || req->pending != NULL)
            return CANAL_ESTATE;
        if ((rr = calloc(1, sizeof(*rr))) == NULL)
            return CANAL_ENOMEM;
        rr->state = state;
        rr->mode = mode;
    }
    rr->inflight++;
    struct cmd *k = send_argv(c, rr, argc, argv, lens, cb, fcb, data);
    if (k == NULL) { /* hiredis refuses commands while the connection is being freed */
        rr->inflight--;
        if (fresh)
            free(rr);
        return CANAL_ECLOSED;
    }
    if (fresh && (rr->p = canal_req_defer(req)) == NULL) {
        /* out of memory: the command goes on, unheard (its reply only frees it) */
        k->done = 1;
        k->rr = NULL;
        c->inflight--;
        h2o_timeout_unlink(&k->deadline);
        free(rr);
        return CANAL_ENOMEM;
    }
    *state = rr;
    if (fresh && mode == CANAL__REDIS_HOLD)
        canal__pending_hold(req);
    return CANAL_PENDING;
}

int canal_redis_command(canal_req_t *req, canal_redis_t *r, int argc, const char *const *argv, const size_t *lens,
                        canal_redis_fn cb, void *data)
{
    return send_req(req, r, CANAL__REDIS_ANSWER, argc, argv, lens, cb, NULL, data);
}

int canal__redis_send(canal_req_t *req, canal_redis_t *r, enum canal__redis_mode mode, int argc,
                      const char *const *argv, const size_t *lens, canal__redis_fn cb, void *data)
{
    return send_req(req, r, mode, argc, argv, lens, NULL, cb, data);
}

int canal_redis_unavailable(canal_req_t *req)
{
    canal_res_header(req, "retry-after", "1");
    return canal_res_problem(req, 503, "the store is unreachable");
}

int canal_redis_ready(const canal_redis_t *r)
{
    return r != NULL && r->nworkers > 0 && atomic_load(&((canal_redis_t *)r)->up) == r->nworkers;
}

int canal_redis_reply_type(const canal_redis_reply_t *reply)
{
    switch (((const redisReply *)reply)->type) {
    case REDIS_REPLY_STRING:
        return CANAL_REDIS_STRING;
    case REDIS_REPLY_ARRAY:
        return CANAL_REDIS_ARRAY;
    case REDIS_REPLY_INTEGER:
        return CANAL_REDIS_INTEGER;
    case REDIS_REPLY_STATUS:
        return CANAL_REDIS_STATUS;
    case REDIS_REPLY_ERROR:
        return CANAL_REDIS_ERROR;
    default:
        return CANAL_REDIS_NIL;
    }
}

long long canal_redis_reply_int(const canal_redis_reply_t *reply)
{
    const redisReply *x = (const redisReply *)reply;
    return x->type == REDIS_REPLY_INTEGER ? x->integer : 0;
}

canal_str_t canal_redis_reply_str(const canal_redis_reply_t *reply)
{
    const redisReply *x = (const redisReply *)reply;
    if (x->type == REDIS_REPLY_STRING || x->type == REDIS_REPLY_STATUS || x->type == REDIS_REPLY_ERROR)
        return (canal_str_t){x->str, x->len};
    return (canal_str_t){NULL, 0};
}

size_t canal_redis_reply_count(const canal_redis_reply_t *reply)
{
    const redisReply *x = (const redisReply *)reply;
    return x->type == REDIS_REPLY_ARRAY ? x->elements : 0;
}

const canal_redis_reply_t *canal_redis_reply_at(const canal_redis_reply_t *reply, size_t i)
{
    const redisReply *x = (const redisReply *)reply;
    if (x->type != REDIS_REPLY_ARRAY || i >= x->elements)
        return NULL;
    return (const canal_redis_reply_t *)x->element[i];
}

/* ---- pub/sub ---- */

static size_t bucket_of(const char *ch, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)ch[i]) * 1099511628211ull;
    return (size_t)(h % SUB_BUCKETS);
}

/* a subscription of the channel exists (under sub_lock) */
static int channel_wanted(struct canal_redis *r, const char *ch, size_t len)
{
    for (struct canal__redis_sub *x = r->subs[bucket_of(ch, len)]; x != NULL; x = x->next)
        if (x->chlen == len && memcmp(x->ch, ch, len) == 0)
            return 1;
    return 0;
}

/* What the subscriber connection receives: ["message", channel, payload] (and the confirmations
 * of SUBSCRIBE and UNSUBSCRIBE, and NULL when the connection goes, which are not messages). */
static void on_sub_message(redisAsyncContext *ac, void *reply, void *priv)
{
    struct conn *c = priv;
    const redisReply *x = reply;
    if (x == NULL || x->type != REDIS_REPLY_ARRAY || x->elements != 3 || x->element[0]->type != REDIS_REPLY_STRING ||
        x->element[0]->len != 7 || memcmp(x->element[0]->str, "message", 7) != 0 ||
        x->element[1]->type != REDIS_REPLY_STRING || x->element[2]->type != REDIS_REPLY_STRING)
        return;
    struct canal_redis *r = c->r;
    const char *ch = x->element[1]->str;
    size_t chlen = x->element[1]->len;
    atomic_fetch_add(&r->received, 1);
    pthread_mutex_lock(&r->sub_lock);
    for (struct canal__redis_sub *k = r->subs[bucket_of(ch, chlen)]; k != NULL; k = k->next)
        if (k->chlen == chlen && memcmp(k->ch, ch, chlen) == 0)
            k->fn(k->target, x->element[2]->str, x->element[2]->len);
    pthread_mutex_unlock(&r->sub_lock);
}

static void sub_command(struct conn *c, const char *verb, const char *ch, size_t chlen)
{
    const char *argv[] = {verb, ch};
    size_t lens[] = {strlen(verb), chlen};
    if (c->state == UP && c->ac != NULL &&
        redisAsyncCommandArgv(c->ac, on_sub_message, c, 2, argv, lens) != REDIS_OK)
        drop_later(c);
}

/* The subscriber is UP: it subscribes to every channel of the table (duplicates are harmless). */
static void subscribe_all(struct conn *c)
{
    struct canal_redis *r = c->r;
    pthread_mutex_lock(&r->sub_lock);
    for (size_t b = 0; b < SUB_BUCKETS; b++)
        for (struct canal__redis_sub *k = r->subs[b]; k != NULL; k = k->next)
            sub_command(c, "SUBSCRIBE", k->ch, k->chlen);
    pthread_mutex_unlock(&r->sub_lock);
}

/* A change of the table, for the subscriber on worker 0 */
struct sub_post {
    struct canal__post super;
    struct canal_redis *r;
    int subscribe;
    size_t chlen;
    char ch[];
};

static void run_sub_post(struct canal__post *msg)
{
    struct sub_post *m = (struct sub_post *)msg;
    struct canal_redis *r = m->r;
    struct wstate *ws = canal__worker_state(&r->app->workers[0], &feature);
    if (ws != NULL && ws->sub.r != NULL) {
        pthread_mutex_lock(&r->sub_lock);
        int wanted = channel_wanted(r, m->ch, m->chlen);
        pthread_mutex_unlock(&r->sub_lock);
        if (m->subscribe && wanted)
            sub_command(&ws->sub, "SUBSCRIBE", m->ch, m->chlen);
        else if (!m->subscribe && !wanted)
            sub_command(&ws->sub, "UNSUBSCRIBE", m->ch, m->chlen);
    }
    free(m);
}

static void post_sub(struct canal_redis *r, int subscribe, const char *ch, size_t chlen)
{
    struct sub_post *m = malloc(sizeof(*m) + chlen);
    if (m == NULL)
        return; /* the subscriber subscribes to the whole table at its next connect */
    *m = (struct sub_post){.super.run = run_sub_post, .r = r, .subscribe = subscribe, .chlen = chlen};
    memcpy(m->ch, ch, chlen);
    if (r->nworkers == 0 || canal__post(&r->app->workers[0], &m->super) != 0)
        free(m);
}

struct canal__redis_sub *canal__redis_subscribe(canal_redis_t *r, const char *channel, size_t chlen,
                                                canal__redis_msg_fn fn, void *target)
{
    struct canal__redis_sub *k = malloc(sizeof(*k) + chlen);
    if (k == NULL)
        return NULL;
    *k = (struct canal__redis_sub){.r = r, .fn = fn, .target = target, .chlen = chlen};
    memcpy(k->ch, channel, chlen);
    size_t b = bucket_of(channel, chlen);
    pthread_mutex_lock(&r->sub_lock);
    k->next = r->subs[b];
    r->subs[b] = k;
    pthread_mutex_unlock(&r->sub_lock);
    post_sub(r, 1, channel, chlen);
    return k;
}

void canal__redis_unsubscribe(struct canal__redis_sub *k)
{
    if (k == NULL)
        return;
    struct canal_redis *r = k->r;
    pthread_mutex_lock(&r->sub_lock);
    for (struct canal__redis_sub **p = &r->subs[bucket_of(k->ch, k->chlen)]; *p != NULL; p = &(*p)->next) {
        if (*p == k) {
            *p = k->next;
            break;
        }
    }
    pthread_mutex_unlock(&r->sub_lock);
    post_sub(r, 0, k->ch, k->chlen);
    free(k);
}

static int publish_on(struct conn *c, const char *ch, size_t chlen, const void *msg, size_t len)
{
    if (c->state != UP || c->ac == NULL)
        return CANAL_ECLOSED;
    if (c->inflight >= c->r->max_inflight)
        return CANAL_EAGAIN;
    const char *argv[] = {"PUBLISH", ch, msg};
    size_t lens[] = {7, chlen, len};
    if (send_argv(c, NULL, 3, argv, lens, publish_done, NULL, NULL) == NULL)
        return CANAL_ECLOSED;
    atomic_fetch_add(&c->r->published, 1);
    return 0;
}

/* A PUBLISH from a thread that is no worker of the app, for worker 0 */
struct pub_post {
    struct canal__post super;
    struct canal_redis *r;
    size_t chlen, len;
    char bytes[]; /* the channel, then the message */
};

static void run_pub_post(struct canal__post *msg)
{
    struct pub_post *m = (struct pub_post *)msg;
    struct wstate *ws = canal__worker_state(&m->r->app->workers[0], &feature);
    if (ws != NULL && ws->cmd.r != NULL)
        publish_on(&ws->cmd, m->bytes, m->chlen, m->bytes + m->chlen, m->len); /* else lost */
    free(m);
}

int canal__redis_publish(canal_redis_t *r, const char *channel, size_t chlen, const void *msg, size_t len)
{
    struct canal_worker *w = this_worker;
    if (w != NULL && w->app == r->app) {
        struct conn *c = canal__worker_state(w, &feature);
        return c == NULL || c->r == NULL ? CANAL_ECLOSED : publish_on(c, channel, chlen, msg, len);
    }
    struct pub_post *m = malloc(sizeof(*m) + chlen + len);
    if (m == NULL)
        return CANAL_ENOMEM;
    *m = (struct pub_post){.super.run = run_pub_post, .r = r, .chlen = chlen, .len = len};
    memcpy(m->bytes, channel, chlen);
    if (len > 0)
        memcpy(m->bytes + chlen, msg, len);
    if (r->nworkers == 0 || canal__post(&r->app->workers[0], &m->super) != 0) {
        free(m);
        return CANAL_ECLOSED;
    }
    return 0;
}

int canal__redis_sub_publish(const struct canal__redis_sub *k, const void *msg, size_t len)
{
    return canal__redis_publish(k->r, k->ch, k->chlen, msg, len);
}

int canal__redis_share(canal_app_t *app, struct canal__redis_sub *_Atomic *slot, const char *prefix,
                       const char *name, size_t len, canal__redis_msg_fn fn, void *target)
{
    canal_redis_t *r = canal_app_redis_get(app);
    if (r == NULL)
        return CANAL_ENOTFOUND;
    if (atomic_load(slot) != NULL)
        return CANAL_EEXIST;
    size_t plen = strlen(prefix);
    char *ch = malloc(plen + len + 1);
    if (ch == NULL)
        return CANAL_ENOMEM;
    memcpy(ch, prefix, plen);
    memcpy(ch + plen, name, len);
    struct canal__redis_sub *k = canal__redis_subscribe(r, ch, plen + len, fn, target);
    free(ch);
    if (k == NULL)
        return CANAL_ENOMEM;
    struct canal__redis_sub *none = NULL;
    if (!atomic_compare_exchange_strong(slot, &none, k)) {
        canal__redis_unsubscribe(k);
        return CANAL_EEXIST;
    }
    return 0;
}

/* ---- the feature ---- */

/* redis://[:PASSWORD@]HOST[:PORT][/DB]; HOST may be [IPv6] */
static int parse_url(struct canal_redis *r, const char *url, canal_error_info_t *err)
{
    const char *s = url;
    if (strncmp(s, "redis://", 8) != 0)
        return canal_error_set(err, CANAL_ESYNTAX, 0, "a Redis URL begins with redis://");
    s += 8;
    const char *at = strchr(s, '@');
    const char *slash = strchr(s, '/');
    if (at != NULL && (slash == NULL || at < slash)) {
        const char *pw = *s == ':' ? s + 1 : s; /* redis://:pw@ or redis://user:pw@ */
        const char *colon = memchr(s, ':', (size_t)(at - s));
        if (colon != NULL)
            pw = colon + 1;
        if ((r->password = strndup(pw, (size_t)(at - pw))) == NULL)
            return canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        s = at + 1;
    }
    const char *host = s, *hend;
    if (*s == '[') {
        host = s + 1;
        if ((hend = strchr(host, ']')) == NULL)
            return canal_error_set(err, CANAL_ESYNTAX, (size_t)(s - url), "no ] after an IPv6 address");
        s = hend + 1;
    } else {
        hend = s + strcspn(s, ":/");
        s = hend;
    }
    if (hend == host || (size_t)(hend - host) >= sizeof(r->host))
        return canal_error_set(err, CANAL_ESYNTAX, (size_t)(host - url), "a Redis URL needs a host");
    memcpy(r->host, host, (size_t)(hend - host));
    r->host[hend - host] = 0;
    r->port = 6379;
    if (*s == ':') {
        char *end;
        long p = strtol(s + 1, &end, 10);
        if (end == s + 1 || p < 1 || p > 65535)
            return canal_error_set(err, CANAL_ESYNTAX, (size_t)(s - url), "a bad port");
        r->port = (int)p;
        s = end;
    }
    if (*s == '/' && s[1] != 0) {
        char *end;
        long db = strtol(s + 1, &end, 10);
        if (end == s + 1 || *end != 0 || db < 0 || db > 1000000)
            return canal_error_set(err, CANAL_ESYNTAX, (size_t)(s - url), "a bad database number");
        r->db = (int)db;
    } else if (*s != 0 && strcmp(s, "/") != 0) {
        return canal_error_set(err, CANAL_ESYNTAX, (size_t)(s - url), "unexpected text after the host");
    }
    return 0;
}

canal_redis_t *canal_app_redis(canal_app_t *app, const char *url, const canal_redis_options_t *opts,
                               canal_error_info_t *err)
{
    if (canal__feature_state(app, &feature) != NULL) {
        canal__reg_fail(app, err, CANAL_EEXIST, "the app has a Redis client already");
        return NULL;
    }
    struct canal_redis probe = {0};
    canal_error_info_t e;
    if (url == NULL || parse_url(&probe, url, &e) != 0) {
        free(probe.password);
        canal__reg_fail(app, err, url == NULL ? CANAL_ESYNTAX : e.code, "redis: %s",
                        url == NULL ? "no URL" : e.message);
        return NULL;
    }
    struct canal_redis *r = canal__feature_on(app, &feature);
    if (r == NULL) {
        free(probe.password);
        canal__reg_fail(app, err, atomic_load(&app->state) != APP_CREATED ? CANAL_ESTATE : CANAL_ENOMEM, NULL);
        return NULL;
    }
    memcpy(r->host, probe.host, sizeof(r->host));
    r->port = probe.port;
    r->db = probe.db;
    r->password = probe.password;
    r->timeout_ms = opts != NULL && opts->timeout_ms ? opts->timeout_ms : 1000;
    r->max_inflight = opts != NULL && opts->max_inflight ? opts->max_inflight : 4096;
    r->app = app;
    if (pthread_mutex_init(&r->sub_lock, NULL) == 0)
        r->sub_lock_ready = 1;
    return r;
}

canal_redis_t *canal_app_redis_get(const canal_app_t *app)
{
    return canal__feature_state(app, &feature);
}

static int redis_start(canal_app_t *app, void *st)
{
    struct canal_redis *r = st;
    if (!r->sub_lock_ready)
        return CANAL_ENOMEM;
    r->nworkers = app->nworkers;
    return 0;
}

static void redis_dispose(canal_app_t *app, void *st)
{
    struct canal_redis *r = st;
    free(r->password);
    for (size_t b = 0; b < SUB_BUCKETS; b++) { /* subscriptions a group never ended */
        while (r->subs[b] != NULL) {
            struct canal__redis_sub *k = r->subs[b];
            r->subs[b] = k->next;
            free(k);
        }
    }
    if (r->sub_lock_ready)
        pthread_mutex_destroy(&r->sub_lock);
}

static void conn_init(struct conn *c, struct canal_redis *r, struct canal_worker *w)
{
    c->r = r;
    c->w = w;
    h2o_timeout_init(w->loop, &c->deadlines, c->r->timeout_ms);
    h2o_timeout_init(w->loop, &c->tick, RETRY_TICK_MS);
    h2o_timeout_init(w->loop, &c->now, 0);
    c->connect_deadline.cb = on_connect_deadline;
    c->retry.cb = on_retry;
    c->drop.cb = on_drop;
    connect_now(c);
}

static int redis_worker_init(struct canal_worker *w, void *st, void *wst)
{
    struct wstate *ws = wst;
    this_worker = w;
    conn_init(&ws->cmd, st, w);
    if (w->index == 0) {
        ws->sub.sub = 1;
        conn_init(&ws->sub, st, w);
    }
    return 0;
}

/* the drain waits for the commands in flight on a live connection (each has a deadline) */
static int redis_worker_busy(struct canal_worker *w, void *st, void *wst)
{
    struct conn *c = wst;
    return c->state == UP && c->inflight > 0;
}

static void conn_stop(struct canal_worker *w, struct conn *c)
{
    if (c->r == NULL)
        return; /* never started */
    c->stopping = 1;
    drop_now(c);
    if (h2o_timeout_is_linked(&c->retry))
        h2o_timeout_unlink(&c->retry);
    h2o_timeout_dispose(w->loop, &c->deadlines);
    h2o_timeout_dispose(w->loop, &c->tick);
    h2o_timeout_dispose(w->loop, &c->now);
}

static void redis_worker_stop(struct canal_worker *w, void *st, void *wst)
{
    struct wstate *ws = wst;
    conn_stop(w, &ws->sub);
    conn_stop(w, &ws->cmd);
    this_worker = NULL;
}

static void redis_metrics(canal_app_t *app, void *st, FILE *f)
{
    struct canal_redis *r = st;
    unsigned long long n = atomic_load(&r->commands), lat = atomic_load(&r->latency_us);
    fprintf(f, "# HELP canal_redis_up Worker connections to Redis that answer.\n# TYPE canal_redis_up gauge\n"
               "canal_redis_up %zu\n", (size_t)atomic_load(&r->up));
    fprintf(f, "# HELP canal_redis_commands_total Redis commands sent.\n# TYPE canal_redis_commands_total counter\n"
               "canal_redis_commands_total %llu\n", n);
    fprintf(f, "# HELP canal_redis_errors_total Redis commands that failed or got an error reply.\n"
               "# TYPE canal_redis_errors_total counter\ncanal_redis_errors_total %llu\n",
            (unsigned long long)atomic_load(&r->errors));
    fprintf(f, "# HELP canal_redis_timeouts_total Redis commands and connects past their deadline.\n"
               "# TYPE canal_redis_timeouts_total counter\ncanal_redis_timeouts_total %llu\n",
            (unsigned long long)atomic_load(&r->timeouts));
    fprintf(f, "# HELP canal_redis_reconnects_total Redis connections dropped to be made again.\n"
               "# TYPE canal_redis_reconnects_total counter\ncanal_redis_reconnects_total %llu\n",
            (unsigned long long)atomic_load(&r->reconnects));
    fprintf(f, "# HELP canal_redis_latency_seconds_total Time from sending a command to its reply.\n"
               "# TYPE canal_redis_latency_seconds_total counter\ncanal_redis_latency_seconds_total %.6f\n",
            (double)lat / 1e6);
    fprintf(f, "# HELP canal_redis_subscriber_up 1 when the pub/sub connection (groups across instances) answers.\n"
               "# TYPE canal_redis_subscriber_up gauge\ncanal_redis_subscriber_up %d\n"
               "# HELP canal_redis_published_total Group messages published to other instances.\n"
               "# TYPE canal_redis_published_total counter\ncanal_redis_published_total %llu\n"
               "# HELP canal_redis_received_total Group messages received from the subscriber connection.\n"
               "# TYPE canal_redis_received_total counter\ncanal_redis_received_total %llu\n",
            atomic_load(&r->sub_up), (unsigned long long)atomic_load(&r->published),
            (unsigned long long)atomic_load(&r->received));
}

static const struct canal__feature feature = {
    .name = "redis",
    .size = sizeof(struct canal_redis),
    .worker_size = sizeof(struct wstate),
    .start = redis_start,
    .dispose = redis_dispose,
    .worker_init = redis_worker_init,
    .worker_busy = redis_worker_busy,
    .worker_stop = redis_worker_stop,
    .metrics = redis_metrics,
};
