/* SPDX-License-Identifier: MIT */
/*
 * A worker thread: its own h2o event loop and context, its listening sockets, and its part of
 * a graceful shutdown.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include "core/core.h"

/* How long a stopping worker waits with no activity before it closes idle connections. */
#define QUIET_MS 200

uint64_t canal__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void canal__worker_touch_now(struct canal_worker *w)
{
    w->last_activity = canal__now_ms();
}

static void begin_shutdown(struct canal_worker *w)
{
    canal_app_t *app = w->app;
    for (size_t i = 0; i < app->nlisteners; i++) {
        struct canal_listen_sock *ls = &w->socks[i];
        if (ls->sock != NULL) {
            /* connections the kernel completed but nobody accepted yet would be reset by the
             * close: take them in and answer them (with Connection: close) */
            h2o_socket_t *sock;
            while ((sock = h2o_evloop_socket_accept(ls->sock)) != NULL)
                canal__accept_one(ls, sock);
            h2o_socket_read_stop(ls->sock);
            h2o_socket_close(ls->sock);
            ls->sock = NULL;
        }
    }
    h2o_context_request_shutdown(&w->ctx);
    canal__streams_shutdown(w); /* each ends after what is queued */
    canal__features_worker_drain(w);
    w->stopping = 1;
    w->deadline = canal__now_ms() + app->cfg.shutdown_timeout_ms;
    w->last_activity = canal__now_ms();
}

static void on_stop_message(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    struct canal_worker *w = H2O_STRUCT_FROM_MEMBER(struct canal_worker, stop_receiver, receiver);
    while (!h2o_linklist_is_empty(messages))
        h2o_linklist_unlink(messages->next);
    if (!w->stopping)
        begin_shutdown(w);
}

/* Shuts the remaining connections down at the socket level: h2o sees end-of-stream on each
 * and closes it the normal way, releasing its memory. */
static void close_connections(struct canal_worker *w)
{
    for (h2o_linklist_t *l = w->conns.next; l != &w->conns; l = l->next) {
        struct canal_conn *c = H2O_STRUCT_FROM_MEMBER(struct canal_conn, link, l);
        if (c->sock != NULL)
            shutdown(h2o_socket_get_fd(c->sock), SHUT_RDWR);
    }
    for (int i = 0; i < 100 && atomic_load(&w->connections) > 0; i++)
        h2o_evloop_run(w->loop, 10);
}

/* h2o 2.2.5's h2o_context_dispose() destroys the context's message queue but, built for its own
 * event loop, does not free the queue's memory: free it here, then the loop. */
static void dispose_context(struct canal_worker *w)
{
    if (h2o_timeout_is_linked(&w->sweep_entry))
        h2o_timeout_unlink(&w->sweep_entry);
    if (w->sweep_list == &w->sweep_timeout)
        h2o_timeout_dispose(w->loop, &w->sweep_timeout);
    h2o_context_dispose(&w->ctx);
    canal__streams_dispose(w); /* after the context: disposing of it ends requests */
    canal__features_worker_exit(w); /* after the context too: the access log's last lines */
    free(w->ctx.queue);
    h2o_evloop_destroy(w->loop);
    w->loop = NULL;
    canal__reqmap_dispose(&w->reqs); /* after the context: disposing of it ends requests */
}

/*
 * A worker's event loop, h2o context and listening sockets are made by the worker thread itself
 * (worker_init), never by the thread that starts the app. libh2o 2.2.5 keeps its free socket
 * buffers in a list per thread (h2o_socket_buffer_prototype is __thread, and h2o_mem_alloc_recycle
 * and h2o_mem_free_recycle take no lock), and a socket draws its input buffers from, and gives
 * them back to, the list of the thread that created the socket, whichever thread reads it.
 * h2o_context_init() creates the socket of the context's message queue (the pipe that brings
 * stops and canal_pending_post() answers): made in canal_app_start(), every worker's pipe socket
 * used the starting thread's list, all workers at once, unsynchronized. Two workers woken by
 * the same stop could take the same buffer; one gave it back (the list's link written over the
 * buffer's capacity), the other then saw a foreign capacity and free()d the buffer while it was
 * still listed, and the next read into it wrote freed memory (seen as a rare ASan
 * heap-use-after-free in read() from h2o_evloop_run, with a garbled free stack).
 */
static int worker_init(struct canal_worker *w)
{
    canal_app_t *app = w->app;
    size_t k = w->index;
    if (canal__reqmap_init(&w->reqs) != 0)
        return -1;
    if ((w->loop = h2o_evloop_create()) == NULL) {
        canal__reqmap_dispose(&w->reqs);
        return -1;
    }
    h2o_context_init(&w->ctx, w->loop, &app->globalconf);
    h2o_multithread_register_receiver(w->ctx.queue, &w->stop_receiver, on_stop_message);
    canal__sweep_start(w);
    if (canal__worker_async_init(w) != 0) {
        h2o_multithread_unregister_receiver(w->ctx.queue, &w->stop_receiver);
        dispose_context(w);
        return -1;
    }
    if (canal__features_worker_init(w) != 0) {
        canal__worker_async_dispose(w);
        h2o_multithread_unregister_receiver(w->ctx.queue, &w->stop_receiver);
        dispose_context(w);
        return -1;
    }
    for (size_t i = 0; i < app->nlisteners; i++) {
        struct canal_listen_sock *ls = &w->socks[i];
        ls->worker = w;
        ls->accept_ctx.ctx = &w->ctx;
        ls->accept_ctx.hosts = app->globalconf.hosts;
        ls->accept_ctx.ssl_ctx = app->listeners[i].ssl_ctx;
        ls->sock = h2o_evloop_socket_create(w->loop, app->listeners[i].fds[k], H2O_SOCKET_FLAG_DONT_READ);
        app->listeners[i].fds[k] = -1; /* the socket owns the fd now */
        ls->sock->data = ls;
        h2o_socket_read_start(ls->sock, canal__on_accept);
    }
    canal__timers_start(w);
    return 0;
}

/* The worker tells canal_app_start() how its start went: 1 running, -1 failed. */
static void worker_started(struct canal_worker *w, int state)
{
    canal_app_t *app = w->app;
    pthread_mutex_lock(&app->start_lock);
    w->started = state;
    app->nstarted++;
    pthread_cond_signal(&app->start_cond);
    pthread_mutex_unlock(&app->start_lock);
}

/* The worker whose thread this is (canal_offload_job() posts its done back there) */
static _Thread_local struct canal_worker *current;

struct canal_worker *canal__worker_current(void)
{
    return current;
}

void *canal__worker_main(void *arg)
{
    struct canal_worker *w = arg;
    current = w;
    if (worker_init(w) != 0) {
        worker_started(w, -1);
        atomic_store(&w->done, 1);
        return NULL;
    }
    worker_started(w, 1);
    while (!w->stopping) /* on_stop_message sets it */
        h2o_evloop_run(w->loop, INT32_MAX);
    for (;;) { /* draining */
        uint64_t now = canal__now_ms();
        size_t inflight = atomic_load(&w->inflight), conns = atomic_load(&w->connections);
        /* WebSockets were sent a Close (1001): the drain waits for their closing handshakes */
        if (conns == 0 || (inflight == 0 && !canal__features_worker_busy(w) && now - w->last_activity >= QUIET_MS)) {
            w->exit = 1;
        } else if (atomic_load(&w->app->force)) {
            canal__log(w->app, CANAL_LOG_WARN, "worker %zu: stopped again: leaving with %zu request(s) in flight",
                       w->index, inflight);
            w->exit = 1;
        } else if (now >= w->deadline) {
            canal__log(w->app, CANAL_LOG_WARN, "worker %zu: shutdown deadline passed with %zu request(s) in flight",
                       w->index, inflight);
            w->exit = 1;
        }
        if (w->exit)
            break;
        h2o_evloop_run(w->loop, 50);
    }
    if (atomic_load(&w->inflight) > 0)
        canal__pending_abort_all(w);
    close_connections(w);
    canal__streams_abort(w); /* any left: closed before posts are refused (canal_stream_post()) */
    canal__worker_async_dispose(w);
    canal__features_worker_stop(w);
    h2o_multithread_unregister_receiver(w->ctx.queue, &w->stop_receiver);
    canal__h2_graceful_timer_unlink(&w->ctx);
    canal__timers_dispose(w);
    dispose_context(w);
    atomic_store(&w->done, 1);
    return NULL;
}

/* What worker k needs before its thread runs (its loop is the thread's own: worker_init). */
int canal__worker_prepare(canal_app_t *app, size_t k)
{
    struct canal_worker *w = &app->workers[k];
    w->app = app;
    w->index = k;
    w->json_hint = 512;
    h2o_linklist_init_anchor(&w->conns);
    if (canal__features_worker_prepare(w) != 0)
        return -1;
    return (w->socks = calloc(app->nlisteners, sizeof(*w->socks))) == NULL ? -1 : 0;
}
