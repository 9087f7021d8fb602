/* SPDX-License-Identifier: MIT */
/*
 * Answering later: deferred requests, completions posted from other threads, the request
 * deadline (504), and the offload pool of blocking threads.
 *
 * A canal_pending_t is shared by the request (until h2o disposes of it) and by the code that
 * will answer (until it releases the handle): two references, both dropped on the request's
 * thread, so no atomics. When the request ends first (the client went away, or the deadline
 * answered 504), the handle's req becomes NULL and the late answer has nothing to write to.
 * Completions from other threads travel through h2o's multithread queue of the request's
 * worker; a worker that has stopped refuses them under post_lock, and the completion then
 * runs on the caller's thread with req NULL.
 *
 * canal__post() is the one way to hand work to a worker's loop: deferred answers, stream
 * writes (stream.c) and WebSocket posts and group messages (websocket.c) all go through it, in
 * one queue per worker, so each sender's messages run in the order they were sent.
 */
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

struct canal_pending {
    canal_req_t *req;          /* NULL once there is nothing to answer */
    struct canal_worker *worker;
    int refs;
    h2o_timeout_entry_t deadline;
};

struct post_msg {
    struct canal__post super;
    canal_pending_t *p;
    canal_pending_fn fn;
    void *data;
};

/* A job of the pool: a request's (p: its deferral, done gets the request), or a worker's
 * without one (worker: where done_job runs) */
struct canal_job {
    struct canal_job *next;
    canal_pending_t *p;
    void (*work)(void *);
    canal_pending_fn done;
    struct canal_worker *worker;
    void (*done_job)(void *);
    void *data;
};

static void unref(canal_pending_t *p)
{
    if (--p->refs == 0)
        free(p);
}

/* The request is done with, one way or another: the answer can no longer be written. */
static void detach(canal_pending_t *p)
{
    if (h2o_timeout_is_linked(&p->deadline))
        h2o_timeout_unlink(&p->deadline);
    if (p->req != NULL) {
        p->req->pending = NULL;
        p->req = NULL;
        unref(p);
    }
}

static void on_deadline(h2o_timeout_entry_t *entry)
{
    canal_pending_t *p = H2O_STRUCT_FROM_MEMBER(canal_pending_t, deadline, entry);
    canal_req_t *req = p->req;
    if (req == NULL)
        return;
    detach(p);
    canal_res_problem(req, 504, "the answer did not come in time");
    canal__commit(req);
}

canal_pending_t *canal_req_defer(canal_req_t *req)
{
    if (req->pending != NULL)
        return NULL; /* one deferral per request */
    canal_pending_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->req = req;
    p->worker = req->worker;
    p->refs = 2; /* the request's and the caller's */
    p->deadline.cb = on_deadline;
    req->pending = p;
    struct canal_worker *w = req->worker;
    if (!w->pending_ready) {
        /* made on first use: a timer list costs every turn of the loop a look */
        h2o_timeout_init(w->loop, &w->pending_timeout, w->app->cfg.request_timeout_ms);
        w->pending_ready = 1;
    }
    h2o_timeout_link(w->loop, &w->pending_timeout, &p->deadline);
    return p;
}

canal_req_t *canal_pending_req(const canal_pending_t *p)
{
    return p->req != NULL && !p->req->res.committed ? p->req : NULL;
}

void canal_pending_complete(canal_pending_t *p)
{
    if (p == NULL)
        return;
    if (p->req != NULL)
        canal__commit(p->req);
    unref(p);
}

void canal__pending_hold(canal_req_t *req)
{
    req->held = 1;
}

void canal__pending_resume(canal_pending_t *p)
{
    if (h2o_timeout_is_linked(&p->deadline))
        h2o_timeout_unlink(&p->deadline);
    if (p->req != NULL) { /* detach(), the request's reference dropped in the same count */
        p->req->pending = NULL;
        p->req = NULL;
        p->refs--;
    }
    unref(p);
}

void canal__pending_answered(canal_req_t *req)
{
    /* the answer is on its way: no 504 any more, but the request lives until h2o is done */
    if (h2o_timeout_is_linked(&req->pending->deadline))
        h2o_timeout_unlink(&req->pending->deadline);
}

void canal__pending_gone(canal_req_t *req)
{
    detach(req->pending);
}

static void on_post(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    struct canal_worker *w = H2O_STRUCT_FROM_MEMBER(struct canal_worker, post_receiver, receiver);
    /* Senders hold post_lock while they queue; taking it here orders their writes before our
     * reads in a way ThreadSanitizer can see (h2o's own queue lock is in a library it does not
     * instrument). Uncontended: one lock per batch of completions. */
    pthread_mutex_lock(&w->post_lock);
    pthread_mutex_unlock(&w->post_lock);
    while (!h2o_linklist_is_empty(messages)) {
        struct canal__post *m = H2O_STRUCT_FROM_MEMBER(struct canal__post, super.link, messages->next);
        h2o_linklist_unlink(&m->super.link);
        m->run(m);
    }
}

int canal__post(struct canal_worker *w, struct canal__post *m)
{
    pthread_mutex_lock(&w->post_lock);
    int open = w->accepting_posts;
    if (open)
        h2o_multithread_send_message(&w->post_receiver, &m->super);
    pthread_mutex_unlock(&w->post_lock);
    return open ? 0 : -1;
}

static void run_pending(struct canal__post *msg)
{
    struct post_msg *m = (struct post_msg *)msg;
    m->fn(canal_pending_req(m->p), m->data);
    canal_pending_complete(m->p);
    free(m);
}

void canal_pending_post(canal_pending_t *p, canal_pending_fn fn, void *data)
{
    struct post_msg *m = malloc(sizeof(*m));
    if (m != NULL) {
        *m = (struct post_msg){.super.run = run_pending, .p = p, .fn = fn, .data = data};
        if (canal__post(p->worker, &m->super) == 0)
            return;
    }
    /* the worker has stopped (its requests are gone) or memory is short: give data back */
    free(m);
    fn(NULL, data);
    /* the handle belongs to a stopped worker: no other thread touches it any more */
    unref(p);
}

/* A stopping worker that will not wait any longer (deadline, second stop): every deferred
 * request still unanswered gets a 503 now, so its client has a whole answer rather than a cut
 * connection (and h2o, which does not read a connection while a request is being handled,
 * can finish and close it). The late completion finds req NULL, as after a 504. */
void canal__pending_abort_all(struct canal_worker *w)
{
    if (!w->pending_ready)
        return;
    h2o_timeout_entry_t *e;
    while ((e = canal__timeout_first(&w->pending_timeout)) != NULL) {
        canal_pending_t *p = H2O_STRUCT_FROM_MEMBER(canal_pending_t, deadline, e);
        canal_req_t *req = p->req;
        detach(p); /* unlinks e */
        if (req != NULL) {
            canal_res_header(req, "retry-after", "1");
            canal_res_problem(req, 503, "the server is shutting down");
            canal__commit(req);
        }
    }
}

int canal__worker_async_init(struct canal_worker *w)
{
    if (pthread_mutex_init(&w->post_lock, NULL) != 0)
        return -1;
    w->post_lock_ready = 1;
    w->accepting_posts = 1;
    h2o_multithread_register_receiver(w->ctx.queue, &w->post_receiver, on_post);
    return 0;
}

void canal__worker_async_dispose(struct canal_worker *w)
{
    pthread_mutex_lock(&w->post_lock);
    w->accepting_posts = 0;
    pthread_mutex_unlock(&w->post_lock);
    /* deliver what was posted before the door closed (requests are gone: req is NULL) */
    for (int i = 0; i < 10; i++)
        h2o_evloop_run(w->loop, 0);
    h2o_multithread_unregister_receiver(w->ctx.queue, &w->post_receiver);
    if (w->pending_ready)
        h2o_timeout_dispose(w->loop, &w->pending_timeout);
    w->pending_ready = 0;
    /* post_lock stays: canal_pending_post() from another thread still takes it to learn that
     * the worker has stopped. canal__worker_async_free() destroys it with the app. */
}

void canal__worker_async_free(struct canal_worker *w)
{
    if (w->post_lock_ready)
        pthread_mutex_destroy(&w->post_lock);
    w->post_lock_ready = 0;
}

/* ---- the offload pool ---- */

/* A job without a request, back on its worker's loop */
struct job_msg {
    struct canal__post super;
    void (*done)(void *);
    void *data;
};

static void run_job_done(struct canal__post *msg)
{
    struct job_msg *m = (struct job_msg *)msg;
    m->done(m->data);
    free(m);
}

/* A finished job's done: on the request's thread (canal_pending_post()), or on the worker's
 * that queued a job without a request; here when that worker no longer takes posts */
static void job_done(struct canal_job *job)
{
    if (job->p != NULL) {
        canal_pending_post(job->p, job->done, job->data);
        return;
    }
    struct job_msg *m = malloc(sizeof(*m));
    if (m != NULL) {
        *m = (struct job_msg){.super.run = run_job_done, .done = job->done_job, .data = job->data};
        if (canal__post(job->worker, &m->super) == 0)
            return;
    }
    free(m);
    job->done_job(job->data);
}

static void *offload_main(void *arg)
{
    struct canal_offload_pool *pool = arg;
    int rc = pool->hooks.thread_init != NULL ? pool->hooks.thread_init(pool->hooks.data) : 0;
    pthread_mutex_lock(&pool->lock); /* canal__offload_start() waits for every thread's init */
    pool->inits++;
    pool->init_failed += rc != 0;
    pthread_cond_broadcast(&pool->ready);
    pthread_mutex_unlock(&pool->lock);
    if (rc != 0)
        return NULL;
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        while (pool->head == NULL && !pool->stopping)
            pthread_cond_wait(&pool->ready, &pool->lock);
        struct canal_job *job = pool->head;
        if (job == NULL) { /* stopping, nothing left */
            pthread_mutex_unlock(&pool->lock);
            if (pool->hooks.thread_exit != NULL)
                pool->hooks.thread_exit(pool->hooks.data);
            return NULL;
        }
        pool->head = job->next;
        if (pool->head == NULL)
            pool->tail = NULL;
        pool->queued--;
        pthread_mutex_unlock(&pool->lock);
        job->work(job->data);
        job_done(job);
        free(job);
    }
}

int canal__offload_start(canal_app_t *app)
{
    struct canal_offload_pool *pool = &app->offload;
    pool->max_queued = app->cfg.offload_queue;
    if (pthread_mutex_init(&pool->lock, NULL) != 0 || pthread_cond_init(&pool->ready, NULL) != 0)
        return -1;
    if (app->cfg.offload_threads == 0)
        return 0;
    if ((pool->threads = calloc(app->cfg.offload_threads, sizeof(*pool->threads))) == NULL)
        return -1;
    for (size_t i = 0; i < app->cfg.offload_threads; i++) {
        if (pthread_create(&pool->threads[i], NULL, offload_main, pool) != 0)
            return -1;
        pool->nthreads++;
    }
    /* every thread's thread_init has run before a job can be queued: a failed one fails the
     * start (canal__offload_stop() then joins them all) */
    pthread_mutex_lock(&pool->lock);
    while (pool->inits < pool->nthreads)
        pthread_cond_wait(&pool->ready, &pool->lock);
    size_t failed = pool->init_failed;
    pthread_mutex_unlock(&pool->lock);
    return failed == 0 ? 0 : -1;
}

int canal_app_offload_hooks(canal_app_t *app, const canal_offload_hooks_t *hooks)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return CANAL_ESTATE;
    app->offload.hooks = hooks != NULL ? *hooks : (canal_offload_hooks_t){0};
    return 0;
}

/* After the workers have stopped: the threads finish the queue (every done then runs with req
 * NULL on the pool thread) and end. */
void canal__offload_stop(canal_app_t *app)
{
    struct canal_offload_pool *pool = &app->offload;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = 1;
    pthread_cond_broadcast(&pool->ready);
    pthread_mutex_unlock(&pool->lock);
    for (size_t i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    free(pool->threads);
    pool->threads = NULL;
    pool->nthreads = 0;
    pthread_cond_destroy(&pool->ready);
    pthread_mutex_destroy(&pool->lock);
}

/* Queues job: 0, or CANAL_EAGAIN (the queue is full, or the pool has no thread or stops) */
static int queue_job(struct canal_offload_pool *pool, struct canal_job *job)
{
    pthread_mutex_lock(&pool->lock);
    if (pool->queued >= pool->max_queued || pool->nthreads == 0 || pool->stopping) {
        pthread_mutex_unlock(&pool->lock);
        return CANAL_EAGAIN;
    }
    if (pool->tail != NULL)
        pool->tail->next = job;
    else
        pool->head = job;
    pool->tail = job;
    pool->queued++;
    pthread_cond_signal(&pool->ready);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

int canal_offload_job(canal_app_t *app, void (*work)(void *data), void (*done)(void *data), void *data)
{
    struct canal_worker *w = canal__worker_current();
    if (w == NULL || w->app != app)
        return CANAL_ESTATE;
    struct canal_job *job = malloc(sizeof(*job));
    if (job == NULL)
        return CANAL_ENOMEM;
    *job = (struct canal_job){.work = work, .worker = w, .done_job = done, .data = data};
    int rc = queue_job(&app->offload, job);
    if (rc != 0)
        free(job);
    return rc;
}

int canal_offload(canal_req_t *req, void (*work)(void *data), canal_pending_fn done, void *data)
{
    struct canal_offload_pool *pool = &req->app->offload;
    struct canal_job *job = malloc(sizeof(*job));
    canal_pending_t *p = job ? canal_req_defer(req) : NULL;
    if (p == NULL) {
        free(job);
        return canal_req_fail(req, "cannot defer the request (out of memory, or deferred already)");
    }
    *job = (struct canal_job){.p = p, .work = work, .done = done, .data = data};
    if (queue_job(pool, job) != 0) {
        free(job);
        /* take the deferral back: neither the request nor anyone else holds the handle */
        h2o_timeout_unlink(&p->deadline);
        req->pending = NULL;
        free(p);
        canal_res_header(req, "retry-after", "1");
        canal_res_problem(req, 503, "the server is busy: try again shortly");
        return 0;
    }
    return CANAL_PENDING;
}
