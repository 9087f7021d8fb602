/* SPDX-License-Identifier: MIT */
/*
 * Streamed answers: the answer committed early (canal__commit_stream(), res.c) and its body
 * written in parts through an h2o generator.
 *
 * A stream has two batches of writes: the one h2o is sending (which must stay untouched until
 * h2o calls proceed) and the queue that fills meanwhile. One h2o_send() is in flight at a
 * time; at proceed the sent batch is released (borrowed buffers given back), the queue becomes
 * the batch in flight, and the writer is told it may write again if it was refused. Copied
 * bytes sit in the batch's own buffer, borrowed ones are referenced; the items keep the order
 * of the writes. The queue's size is bounded (max_queued), so memory per stream is too.
 *
 * Memory: the handle is the one malloc() of a stream. The first room of each batch (its items
 * and copies) and of the iovecs handed to h2o comes from the request's memory, which is freed
 * with the request: a stream whose writes fit in it (events, short answers) allocates and
 * frees nothing more. Only a batch that outgrows its first room moves to the heap (and keeps
 * that room for the stream's life). The JSON writer, which few streams use, is allocated when
 * first asked for.
 *
 * The handle is shared by the request (until h2o is done with it: canal__stream_request_done(),
 * from the end of the request in req.c) and the owner (until canal_stream_end()). The
 * references are atomic only for the one case where two threads may drop them: a post after
 * the worker stopped, which runs the owner's callback on its own thread. Everything else
 * happens on the worker's thread.
 *
 * Timers. An h2o timer list has one period (linking and unlinking are O(1)), and every list
 * costs each turn of the loop a look. The idle limit has one period for all streams
 * (stream_timeout_ms), so a worker's streams share one list for it, and progress moves a
 * stream to the list's end. The keep-alive of event streams and the owner's
 * canal_stream_timer() take any period: those share 9 lists of 1, 4, 16 ... 65536 ms (made
 * with the first such timer). A timer waits in the longest list that does not overshoot its
 * deadline, and moves on to a shorter one each time that list's period has passed: at most 3
 * moves a list, to the millisecond. A keep-alive is not restarted by every write: a write
 * records its time, and a keep-alive that comes due waits out the rest of its interval.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "core/core.h"

/* The timer lists of a worker's streams: periods of 4^0 ... 4^8 ms. */
#define NLISTS 9

/* The largest first room taken from the request's memory (larger ones would be malloc()ed by
 * h2o anyway, and copied again if they grew). */
#define FIRST_ROOM_MAX 512

struct canal__streams {
    h2o_linklist_t open; /* struct canal_stream.link: streams whose request is alive */
    h2o_timeout_t idle;  /* every stream's idle limit (stream_timeout_ms) */
    int lists_ready;     /* lists made: the first keep-alive or owner's timer */
    h2o_timeout_t lists[NLISTS];
};

/* A stream's timer: fire(t) runs on the loop at deadline `at` (loop time, ms). */
struct timer {
    h2o_timeout_entry_t entry;
    struct canal_worker *worker;
    uint64_t at;
    void (*fire)(struct timer *t);
};

struct item {
    const char *base;  /* borrowed bytes, or NULL: len bytes at off in the batch's copies */
    size_t off, len;
    void (*release)(void *data);
    void *data;
};

/* A batch of writes. Its rooms are in the request's memory until they grow (*_heap). */
struct batch {
    struct item *items;
    size_t n, cap;
    char *bytes; /* copies */
    size_t nbytes, capbytes;
    size_t total; /* bytes of every item */
    unsigned char items_heap, bytes_heap;
};

/* The JSON writer of canal_stream_jw() and its memory. */
struct stream_jw {
    h2o_mem_pool_t pool;
    struct canal_jw w;
};

struct canal_stream {
    canal_req_t *req; /* NULL once the request has ended or the stream was closed */
    struct canal_worker *worker;
    h2o_generator_t gen; /* h2o calls proceed and stop on it */
    atomic_int refs;
    canal_stream_cb_t cb;
    void *data;
    struct batch queue, sending;
    h2o_iovec_t *iov;
    size_t iov_cap;
    unsigned char iov_heap;
    unsigned char busy;      /* h2o holds the sending batch (until proceed, or the request's end) */
    unsigned char ending;    /* the final send goes after the queue */
    unsigned char ended;     /* the owner called canal_stream_end() */
    unsigned char closed;    /* canal took the stream over: closed was said (or is owed by
                                detach), or the answer had no body; no more writes */
    unsigned char refused;   /* a write got CANAL_EAGAIN: writable is owed */
    unsigned char owed;      /* closed (no body: HEAD), but the closed callback is owed at the
                                request's end */
    h2o_timeout_entry_t idle; /* in the worker's idle list */
    struct timer keepalive, wake;
    unsigned keepalive_ms;   /* 0: no keep-alive */
    uint64_t written_at;     /* loop time of the last write taken (the keep-alive's) */
    void (*wake_fn)(canal_stream_t *s, void *data);
    h2o_linklist_t link;     /* in the worker's open streams */
    struct stream_jw *jw;    /* canal_stream_jw(), made on first use */
    void *groups;            /* canal__stream_groups(): the realtime layer's memberships */
    void (*groups_gone)(void **slot);
};

static void on_keepalive(struct timer *t);
static void on_wake(struct timer *t);

/* The stream is closed or ended: it leaves its groups (once). */
static void leave_groups(canal_stream_t *s)
{
    void (*gone)(void **slot) = s->groups_gone;
    s->groups_gone = NULL;
    if (gone != NULL)
        gone(&s->groups);
}

void **canal__stream_groups(canal_stream_t *s, void (*gone)(void **slot))
{
    if (s->ended || s->closed || s->req == NULL)
        return NULL;
    s->groups_gone = gone;
    return &s->groups;
}

static void unref(canal_stream_t *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    /* the rooms still in the request's memory went with it */
    if (s->queue.items_heap)
        free(s->queue.items);
    if (s->queue.bytes_heap)
        free(s->queue.bytes);
    if (s->sending.items_heap)
        free(s->sending.items);
    if (s->sending.bytes_heap)
        free(s->sending.bytes);
    if (s->iov_heap)
        free(s->iov);
    if (s->jw != NULL) {
        h2o_mem_clear_pool(&s->jw->pool);
        free(s->jw);
    }
    free(s);
}

/* Room for need bytes in *room (cap bytes now, used of them in use; NULL and 0 at first): a
 * first room of at least first bytes in the request's memory (s->req is alive) if it is
 * small, else on the heap (*heap), where a room that grows goes too. 0, or CANAL_ENOMEM with
 * *room as it was. */
static int grow(canal_stream_t *s, void **room, size_t *cap, size_t used, size_t need, size_t first,
                unsigned char *heap)
{
    size_t n = *cap != 0 ? *cap : first;
    while (n < need)
        n *= 2;
    void *p;
    int pool = *cap == 0 && n <= FIRST_ROOM_MAX;
    if (pool) {
        p = h2o_mem_alloc_pool(&s->req->h2o->pool, n);
    } else if (*heap || *cap == 0) {
        p = realloc(*room, n);
    } else if ((p = malloc(n)) != NULL) {
        memcpy(p, *room, used);
    }
    if (p == NULL)
        return CANAL_ENOMEM;
    *heap = !pool;
    *room = p;
    *cap = n;
    return 0;
}

static void timer_link(struct timer *t);

static void on_timer(h2o_timeout_entry_t *e)
{
    struct timer *t = H2O_STRUCT_FROM_MEMBER(struct timer, entry, e);
    if (h2o_now(t->worker->loop) < t->at)
        timer_link(t); /* the next, shorter list */
    else
        t->fire(t);
}

/* Links t into the longest list that does not pass its deadline (the shortest when it is
 * due: the next turn of the loop that has waited a millisecond). */
static void timer_link(struct timer *t)
{
    struct canal__streams *st = t->worker->streams;
    uint64_t now = h2o_now(t->worker->loop), left = t->at > now ? t->at - now : 1;
    unsigned k = (unsigned)(63 - __builtin_clzll(left)) / 2; /* the largest k with 4^k <= left */
    if (k >= NLISTS)
        k = NLISTS - 1;
    if (!st->lists_ready) {
        for (unsigned i = 0; i < NLISTS; i++)
            h2o_timeout_init(t->worker->loop, &st->lists[i], (uint64_t)1 << (2 * i));
        st->lists_ready = 1;
    }
    t->entry.cb = on_timer;
    h2o_timeout_link(t->worker->loop, &st->lists[k], &t->entry);
}

static void timer_stop(struct timer *t)
{
    if (h2o_timeout_is_linked(&t->entry))
        h2o_timeout_unlink(&t->entry);
}

/* (Re)starts t: fire in ms from now. */
static void timer_start(struct timer *t, uint64_t ms)
{
    timer_stop(t);
    t->at = h2o_now(t->worker->loop) + ms;
    timer_link(t);
}

/* Progress: the idle limit starts again. */
static void touch(canal_stream_t *s)
{
    if (h2o_timeout_is_linked(&s->idle))
        h2o_timeout_unlink(&s->idle);
    h2o_timeout_link(s->worker->loop, &s->worker->streams->idle, &s->idle);
}

/* Timers stop for good: the stream ends or is closed. */
static void timers_stop(canal_stream_t *s)
{
    if (h2o_timeout_is_linked(&s->idle))
        h2o_timeout_unlink(&s->idle);
    timer_stop(&s->keepalive);
    timer_stop(&s->wake);
}

static void batch_release(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->items[i].release != NULL)
            b->items[i].release(b->items[i].data);
    b->n = b->nbytes = b->total = 0;
}

/* The stream has no request to write to any more: everything it holds is given back, timers
 * stop, and the owner hears it (once) unless it ended the stream itself. */
static void detach(canal_stream_t *s, canal_stream_close_t why)
{
    if (s->req == NULL)
        return;
    s->req = NULL;
    h2o_linklist_unlink(&s->link);
    timers_stop(s);
    if (!s->busy) /* else h2o may still be sending it: released at proceed or the request's end */
        batch_release(&s->sending);
    batch_release(&s->queue);
    int tell = (!s->closed || s->owed) && !s->ended;
    s->owed = 0;
    s->closed = 1;
    leave_groups(s);
    if (tell && s->cb.closed != NULL)
        s->cb.closed(s, why, s->data); /* which may end the stream: s is not touched after */
}

/* Hands the queue to h2o if nothing is in flight (and the final send when ending). */
static void flush(canal_stream_t *s)
{
    if (s->busy || s->req == NULL || (s->queue.n == 0 && !s->ending))
        return;
    struct batch t = s->sending;
    s->sending = s->queue;
    s->queue = t; /* empty: released at the last proceed */
    struct batch *b = &s->sending;
    size_t room = s->iov_cap * sizeof(*s->iov);
    if (s->iov_cap < b->n && grow(s, (void **)&s->iov, &room, 0, b->n * sizeof(*s->iov), 4 * sizeof(*s->iov),
                                  &s->iov_heap) != 0) {
        /* cannot send what is queued: cut it (the owner hears at the end) */
        batch_release(b);
        s->busy = 1;
        h2o_send(s->req->h2o, NULL, 0, H2O_SEND_STATE_ERROR);
        return;
    }
    s->iov_cap = room / sizeof(*s->iov);
    for (size_t i = 0; i < b->n; i++)
        s->iov[i] = h2o_iovec_init(b->items[i].base ? b->items[i].base : b->bytes + b->items[i].off, b->items[i].len);
    int final = s->ending;
    s->busy = 1;
    if (final) {
        /* h2o forgets the generator; the last batch is released when the request ends */
        timers_stop(s);
    }
    h2o_send(s->req->h2o, s->iov, b->n, final ? H2O_SEND_STATE_FINAL : H2O_SEND_STATE_IN_PROGRESS);
}

static void on_proceed(h2o_generator_t *gen, h2o_req_t *h)
{
    canal_stream_t *s = H2O_STRUCT_FROM_MEMBER(canal_stream_t, gen, gen);
    s->busy = 0;
    batch_release(&s->sending);
    if (s->req == NULL)
        return;
    canal__worker_touch(s->worker);
    touch(s);
    atomic_fetch_add(&s->refs, 1); /* a final send may end the request at once */
    flush(s);
    if (s->refused && s->queue.n == 0 && s->req != NULL && !s->closed && !s->ended) {
        s->refused = 0;
        if (s->cb.writable != NULL)
            s->cb.writable(s, s->data);
    }
    unref(s);
}

/* The client went away (h2o disposes of the request with the body unfinished). */
static void on_stop(h2o_generator_t *gen, h2o_req_t *h)
{
    canal_stream_t *s = H2O_STRUCT_FROM_MEMBER(canal_stream_t, gen, gen);
    s->busy = 0; /* h2o is done with what it was sending */
    detach(s, CANAL_STREAM_GONE);
}

void canal__stream_request_done(canal_stream_t *s)
{
    s->busy = 0;
    batch_release(&s->sending);
    detach(s, CANAL_STREAM_GONE);
    unref(s);
}

/* Cuts a stream that made no progress: an HTTP/2 stream or an HTTP/1 body with nothing in
 * flight ends as broken (RST_STREAM, or a bad chunk and the connection closed); a write the
 * client does not take leaves only the connection to close. */
static void cut(canal_stream_t *s)
{
    canal_req_t *req = s->req;
    if (s->busy) {
        struct canal_conn *c = req->conn;
        if (c != NULL && c->sock != NULL)
            shutdown(h2o_socket_get_fd(c->sock), SHUT_RDWR);
        return; /* h2o then fails the write and disposes of the request: on_stop */
    }
    batch_release(&s->queue);
    s->busy = 1; /* nothing more is sent */
    h2o_send(req->h2o, NULL, 0, H2O_SEND_STATE_ERROR);
}

static void on_idle(h2o_timeout_entry_t *e)
{
    canal_stream_t *s = H2O_STRUCT_FROM_MEMBER(canal_stream_t, idle, e);
    if (s->req == NULL || s->closed)
        return;
    s->closed = 1;
    leave_groups(s);
    timers_stop(s);
    atomic_fetch_add(&s->refs, 1);
    cut(s);
    if (s->cb.closed != NULL && !s->ended)
        s->cb.closed(s, CANAL_STREAM_TIMEOUT, s->data);
    unref(s);
}

canal_stream_t *canal_res_stream_begin(canal_req_t *req, const char *content_type, const canal_stream_cb_t *cb,
                                       void *data)
{
    struct canal_worker *w = req->worker;
    if (req->res.committed)
        return NULL;
    if (w->streams == NULL) {
        if ((w->streams = calloc(1, sizeof(*w->streams))) == NULL)
            return NULL;
        h2o_linklist_init_anchor(&w->streams->open);
        h2o_timeout_init(w->loop, &w->streams->idle, w->app->cfg.stream_timeout_ms);
    }
    canal_stream_t *s = malloc(sizeof(*s));
    if (s == NULL)
        return NULL;
    *s = (canal_stream_t){
        .req = req,
        .worker = w,
        .gen = {on_proceed, on_stop},
        .cb = cb != NULL ? *cb : (canal_stream_cb_t){0},
        .data = data,
        .idle = {.cb = on_idle},
        .keepalive = {.worker = w, .fire = on_keepalive},
        .wake = {.worker = w, .fire = on_wake},
        .written_at = h2o_now(w->loop),
    };
    atomic_init(&s->refs, 2); /* the request's and the owner's */
    if (s->cb.max_queued == 0)
        s->cb.max_queued = CANAL_STREAM_MAX_QUEUED;
    req->stream = s; /* the request's end: canal__stream_request_done() */
    h2o_linklist_insert(&w->streams->open, &s->link);
    if (content_type != NULL)
        req->res.type = (canal_str_t){content_type, strlen(content_type)};
    /* close-delimited on HTTP/1.0, even if the client asked to keep the connection */
    if (req->h2o->version < 0x101)
        req->h2o->http1_is_persistent = 0;
    int rc = canal__commit_stream(req, &s->gen);
    if (rc < 0) {
        /* the failure's answer went instead: the owner never sees the handle */
        s->closed = s->ended = 1;
        detach(s, CANAL_STREAM_GONE);
        unref(s);
        return NULL;
    }
    if (rc > 0) {
        /* HEAD, or a status without a body: the answer is complete. The owner hears it at the
         * request's end (never within this call), as it would if a client left. */
        s->closed = 1;
        s->owed = s->req != NULL;
        return s;
    }
    /* the head leaves now, not with the first write: the client learns the stream is open */
    s->busy = 1;
    h2o_send(req->h2o, NULL, 0, H2O_SEND_STATE_IN_PROGRESS);
    touch(s);
    if (w->stopping) {
        /* the worker is draining (canal__streams_shutdown() has run): the body ends at once */
        s->closed = s->ending = 1;
        s->owed = 1; /* told at the request's end, as for HEAD */
        flush(s);
    }
    return s;
}

/* Adds one write to the queue; buf is copied when release is NULL and borrowed otherwise. */
static int put(canal_stream_t *s, const void *buf, size_t len, void (*release)(void *), void *data, int borrow)
{
    if (s->ended)
        return CANAL_ESTATE;
    if (s->closed || s->req == NULL)
        return CANAL_ECLOSED;
    struct batch *q = &s->queue;
    if (q->n > 0 && q->total + len > s->cb.max_queued) {
        s->refused = 1;
        return CANAL_EAGAIN;
    }
    if (len == 0) {
        if (borrow && release != NULL)
            release(data);
        return 0;
    }
    if (!borrow) {
        if (q->nbytes + len > q->capbytes &&
            grow(s, (void **)&q->bytes, &q->capbytes, q->nbytes, q->nbytes + len, 256, &q->bytes_heap) != 0)
            return CANAL_ENOMEM;
        struct item *last = q->n > 0 ? &q->items[q->n - 1] : NULL;
        memcpy(q->bytes + q->nbytes, buf, len);
        if (last != NULL && last->base == NULL && last->off + last->len == q->nbytes) {
            last->len += len; /* copies in a row are one item */
            q->nbytes += len;
            q->total += len;
            goto queued;
        }
    }
    if (q->n == q->cap) {
        size_t room = q->cap * sizeof(*q->items);
        if (grow(s, (void **)&q->items, &room, room, room + sizeof(*q->items), 4 * sizeof(*q->items),
                 &q->items_heap) != 0)
            return CANAL_ENOMEM;
        q->cap = room / sizeof(*q->items);
    }
    q->items[q->n++] = borrow ? (struct item){.base = buf, .len = len, .release = release, .data = data}
                              : (struct item){.off = q->nbytes, .len = len};
    if (!borrow)
        q->nbytes += len;
    q->total += len;
queued:
    if (!s->busy)
        touch(s); /* the owner writes to an idle stream: progress */
    s->written_at = h2o_now(s->worker->loop);
    flush(s);
    return 0;
}

int canal_stream_write(canal_stream_t *s, const void *buf, size_t len)
{
    return put(s, buf, len, NULL, NULL, 0);
}

int canal_stream_write_borrowed(canal_stream_t *s, const void *buf, size_t len, void (*release)(void *data),
                                void *data)
{
    return put(s, buf, len, release, data, 1);
}

canal_jw_t *canal_stream_jw(canal_stream_t *s)
{
    if (s->jw == NULL) {
        /* never NULL: out of memory is fatal here, as in the writer's pool (h2o_mem_alloc()) */
        s->jw = h2o_mem_alloc(sizeof(*s->jw));
        h2o_mem_init_pool(&s->jw->pool);
        canal__jw_init(&s->jw->w, &s->jw->pool, 512);
    }
    return &s->jw->w;
}

int canal_stream_jw_flush(canal_stream_t *s)
{
    struct canal_jw *w = canal_stream_jw(s);
    if (w->err != 0)
        return w->err;
    int whole = w->depth == 0 && (w->st[0] & JW_ITEMS);
    if (whole) {
        if (canal__jw_room(w, 1) != 0)
            return w->err;
        w->buf[w->len++] = '\n';
    }
    int rc = put(s, w->buf, w->len, NULL, NULL, 0);
    if (rc == 0 || rc == CANAL_ECLOSED) {
        w->len = 0;
        if (whole)
            w->st[0] = 0;
    } else if (whole) {
        w->len--; /* refused: the writer is as it was */
    }
    return rc;
}

int canal_stream_end(canal_stream_t *s)
{
    if (s->ended)
        return CANAL_ESTATE;
    s->ended = 1;
    leave_groups(s);
    if (s->req != NULL && !s->closed) { /* closed: canal has ended or cut the body already */
        s->ending = 1;
        flush(s);
    }
    unref(s);
    return 0;
}

canal_stream_t *canal_stream_retain(canal_stream_t *s)
{
    atomic_fetch_add(&s->refs, 1);
    return s;
}

void canal_stream_release(canal_stream_t *s)
{
    if (s != NULL)
        unref(s);
}

canal_req_t *canal_stream_req(const canal_stream_t *s)
{
    return s->closed ? NULL : s->req;
}

struct stream_post {
    struct canal__post super;
    canal_stream_t *s;
    void (*fn)(canal_stream_t *s, void *data);
    void *data;
};

static void run_post(struct canal__post *msg)
{
    struct stream_post *m = (struct stream_post *)msg;
    m->fn(m->s, m->data);
    unref(m->s);
    free(m);
}

int canal_stream_post(canal_stream_t *s, void (*fn)(canal_stream_t *s, void *data), void *data)
{
    struct stream_post *m = malloc(sizeof(*m));
    if (m == NULL)
        return CANAL_ENOMEM;
    *m = (struct stream_post){.super.run = run_post, .s = s, .fn = fn, .data = data};
    atomic_fetch_add(&s->refs, 1); /* the message's: the handle outlives an end before it runs */
    if (canal__post(s->worker, &m->super) != 0) {
        /* the worker has stopped: its streams were closed (canal__streams_abort()) and no other
         * thread touches this one any more */
        run_post(&m->super);
    }
    return 0;
}

/* ---- timers: the owner's, and the keep-alive of event streams (sse.c) ---- */

static void on_wake(struct timer *t)
{
    canal_stream_t *s = H2O_STRUCT_FROM_MEMBER(canal_stream_t, wake, t);
    if (s->req != NULL && !s->closed && !s->ended)
        s->wake_fn(s, s->data);
}

int canal_stream_timer(canal_stream_t *s, unsigned ms, void (*fn)(canal_stream_t *s, void *data))
{
    if (s->ended)
        return CANAL_ESTATE;
    if (s->closed || s->req == NULL)
        return CANAL_ECLOSED;
    if (fn == NULL) {
        timer_stop(&s->wake);
        return 0;
    }
    s->wake_fn = fn;
    timer_start(&s->wake, ms);
    return 0;
}

static void on_keepalive(struct timer *t)
{
    canal_stream_t *s = H2O_STRUCT_FROM_MEMBER(canal_stream_t, keepalive, t);
    if (s->req == NULL || s->closed || s->ending)
        return;
    uint64_t quiet = h2o_now(s->worker->loop) - s->written_at;
    if (quiet < s->keepalive_ms) { /* written since the timer started: wait out the rest */
        timer_start(t, s->keepalive_ms - quiet);
        return;
    }
    put(s, ":\n", 2, NULL, NULL, 0); /* refused (a full queue): tried again an interval later */
    timer_start(t, s->keepalive_ms);
}

int canal_sse_keepalive(canal_stream_t *s, unsigned interval_ms)
{
    if (s->ended)
        return CANAL_ESTATE;
    if (s->closed || s->req == NULL)
        return CANAL_ECLOSED;
    s->keepalive_ms = interval_ms;
    if (interval_ms == 0)
        timer_stop(&s->keepalive);
    else
        timer_start(&s->keepalive, interval_ms);
    return 0;
}

/* ---- the worker's part ---- */

void canal__streams_shutdown(struct canal_worker *w)
{
    if (w->streams == NULL)
        return;
    /* each stream goes back to the open list before it is ended: the end (or the owner's
     * callback) may take it, or others, out of whichever list they are in */
    h2o_linklist_t *open = &w->streams->open, todo;
    h2o_linklist_init_anchor(&todo);
    h2o_linklist_insert_list(&todo, open);
    while (!h2o_linklist_is_empty(&todo)) {
        canal_stream_t *s = H2O_STRUCT_FROM_MEMBER(canal_stream_t, link, todo.next);
        h2o_linklist_unlink(&s->link);
        h2o_linklist_insert(open, &s->link);
        if (s->closed || s->ending)
            continue;
        s->closed = 1;
        s->ending = 1;
        leave_groups(s);
        atomic_fetch_add(&s->refs, 1);
        timers_stop(s);
        flush(s);
        if (s->cb.closed != NULL && !s->ended)
            s->cb.closed(s, CANAL_STREAM_SHUTDOWN, s->data);
        unref(s);
    }
}

void canal__streams_abort(struct canal_worker *w)
{
    if (w->streams == NULL)
        return;
    while (!h2o_linklist_is_empty(&w->streams->open))
        detach(H2O_STRUCT_FROM_MEMBER(canal_stream_t, link, w->streams->open.next), CANAL_STREAM_SHUTDOWN);
}

void canal__streams_dispose(struct canal_worker *w)
{
    struct canal__streams *st = w->streams;
    if (st == NULL)
        return;
    canal__streams_abort(w);
    h2o_timeout_entry_t *e;
    for (unsigned k = 0; st->lists_ready && k < NLISTS; k++) {
        while ((e = canal__timeout_first(&st->lists[k])) != NULL)
            h2o_timeout_unlink(e);
        h2o_timeout_dispose(w->loop, &st->lists[k]);
    }
    while ((e = canal__timeout_first(&st->idle)) != NULL)
        h2o_timeout_unlink(e);
    h2o_timeout_dispose(w->loop, &st->idle);
    free(st);
    w->streams = NULL;
}
