/* SPDX-License-Identifier: MIT */
/*
 * Connections: every accepted socket gets a record (struct canal_conn), for the connection
 * cap, the slow-client and keep-alive timeouts, and the end of idle connections at shutdown.
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

/* ---- connections: the cap, and slow and idle clients ----
 *
 * h2o 2.2.5 has one timer for HTTP/1 (http1.req_timeout), used alike for reading a request
 * head, reading its body and waiting on an idle keep-alive connection, and it closes without an
 * answer. canal sets it as a backstop only (above the three limits) and keeps its own: a sweep,
 * a few times per shortest limit, looks at each connection with no request being handled:
 *   - nothing waiting in its input and nothing read since the last look: idle; closed after
 *     keepalive_timeout_ms;
 *   - bytes of a request head waiting: the whole head must be there within header_timeout_ms
 *     of the sweep that first saw them (a client trickling a byte at a time gains nothing);
 *   - a complete head with the body still coming (h2o buffers bodies before the handler):
 *     the body must progress at least once every body_timeout_ms.
 * A slow request gets "408 Request Timeout" (problem details, Connection: close) and the
 * connection is shut down; h2o then sees the end of the stream and closes it the normal way.
 * HTTP/2 connections are left to h2o's own idle timeout, which is set to keepalive_timeout_ms.
 */

static void set_accepting(struct canal_worker *w, int on)
{
    for (size_t i = 0; i < w->app->nlisteners; i++) {
        h2o_socket_t *sock = w->socks[i].sock;
        if (sock == NULL)
            continue;
        if (on)
            h2o_socket_read_start(sock, canal__on_accept);
        else
            h2o_socket_read_stop(sock);
    }
    w->accept_paused = !on;
}

static void on_conn_close(void *data)
{
    struct canal_conn *c = data;
    struct canal_worker *w = c->worker;
    c->sock = NULL;
    /* a request of this connection may still be disposed after its socket: it frees c then */
    if (c->inflight == 0)
        canal__conn_free(c);
    atomic_fetch_sub(&w->connections, 1);
    canal__worker_touch(w);
    if (w->accept_paused && !w->stopping && atomic_load(&w->connections) < w->app->cfg.max_connections)
        set_accepting(w, 1);
}

void canal__conn_free(struct canal_conn *c)
{
    h2o_linklist_unlink(&c->link);
    free(c);
}

void canal__accept_one(struct canal_listen_sock *ls, h2o_socket_t *sock)
{
    struct canal_worker *w = ls->worker;
    struct canal_conn *c = malloc(sizeof(*c));
    if (c == NULL) {
        h2o_socket_close(sock);
        return;
    }
    *c = (struct canal_conn){.sock = sock, .worker = w, .phase = CONN_IDLE,
                             .since = h2o_now(w->loop), .seen_bytes = sock->bytes_read,
                             .tls = ls->accept_ctx.ssl_ctx != NULL};
    h2o_linklist_insert(&w->conns, &c->link);
    atomic_fetch_add(&w->connections, 1);
    canal__worker_touch(w);
    sock->on_close.cb = on_conn_close;
    sock->on_close.data = c;
    h2o_accept(&ls->accept_ctx, sock);
}

void canal__on_accept(h2o_socket_t *listener, const char *err)
{
    struct canal_listen_sock *ls = listener->data;
    struct canal_worker *w = ls->worker;
    h2o_socket_t *sock;
    if (err != NULL)
        return;
    /* accept a bounded batch per wake-up so one busy listener cannot starve the loop */
    for (int i = 0; i < 64; i++) {
        /* at the cap, stop reading the listeners: new connections wait in the kernel's
         * backlog until one of ours closes (on_conn_close starts reading again) */
        if (atomic_load(&w->connections) >= w->app->cfg.max_connections) {
            set_accepting(w, 0);
            return;
        }
        if ((sock = h2o_evloop_socket_accept(listener)) == NULL)
            return;
        canal__accept_one(ls, sock);
    }
}

/* Answers 408 on a plain HTTP/1 connection that is between answers (so nothing else is being
 * written on it), then shuts it down. */
static void conn_timeout(struct canal_conn *c, const char *what)
{
    int fd = h2o_socket_get_fd(c->sock);
    if (c->sock->ssl == NULL && !c->http2) {
        char msg[320], body[160];
        int blen = snprintf(body, sizeof(body),
                            "{\"type\":\"about:blank\",\"title\":\"Request Timeout\",\"status\":408,"
                            "\"detail\":\"the request %s came too slowly\"}", what);
        int n = snprintf(msg, sizeof(msg),
                         "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/problem+json\r\n"
                         "Content-Length: %d\r\nConnection: close\r\n\r\n%s", blen, body);
        ssize_t rc = send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)rc; /* best effort: the close below is what matters */
    }
    shutdown(fd, SHUT_RDWR);
}

static void sweep_conn(struct canal_conn *c, const canal_config_t *cfg, uint64_t now)
{
    h2o_socket_t *sock = c->sock;
    if (sock == NULL || c->inflight > 0 || c->upgraded)
        return; /* a handler has it (the request timeout is the handler's business), or it is a
                 * WebSocket (whose idle timeout is websocket.c's) */
    int progressed = sock->bytes_read != c->seen_bytes;
    c->seen_bytes = sock->bytes_read;
    if (canal__sock_unread(sock) == 0) {
        if (progressed || c->phase != CONN_IDLE) {
            c->phase = CONN_IDLE;
            c->since = now;
        } else if (now - c->since >= cfg->keepalive_timeout_ms) {
            shutdown(h2o_socket_get_fd(sock), SHUT_RDWR); /* idle: a close is the answer */
        }
        return;
    }
    if (c->http2) {
        c->since = now;
        return;
    }
    if (c->phase == CONN_IDLE) {
        c->phase = CONN_HEAD;
        c->since = now;
    }
    if (c->phase == CONN_HEAD) {
        if (canal__sock_has_head(sock)) {
            c->phase = CONN_BODY;
            c->since = now;
        } else if (now - c->since >= cfg->header_timeout_ms) {
            conn_timeout(c, "head");
        }
        return;
    }
    if (progressed)
        c->since = now;
    else if (now - c->since >= cfg->body_timeout_ms)
        conn_timeout(c, "body");
}

static void on_sweep(h2o_timeout_entry_t *entry)
{
    struct canal_worker *w = H2O_STRUCT_FROM_MEMBER(struct canal_worker, sweep_entry, entry);
    uint64_t now = h2o_now(w->loop);
    if (now >= w->next_sweep) {
        w->next_sweep = now + canal__sweep_period(&w->app->cfg);
        for (h2o_linklist_t *l = w->conns.next; l != &w->conns; l = l->next)
            sweep_conn(H2O_STRUCT_FROM_MEMBER(struct canal_conn, link, l), &w->app->cfg, now);
    }
    h2o_timeout_link(w->loop, w->sweep_list, &w->sweep_entry);
}

/* A few sweeps per shortest limit, between 10 ms and 1 s apart. */
uint64_t canal__sweep_period(const canal_config_t *cfg)
{
    uint64_t p = cfg->header_timeout_ms;
    if (cfg->body_timeout_ms < p)
        p = cfg->body_timeout_ms;
    if (cfg->keepalive_timeout_ms < p)
        p = cfg->keepalive_timeout_ms;
    p /= 4;
    return p < 10 ? 10 : p > 1000 ? 1000 : p;
}

/* The sweep's timer rides on one of the h2o context's own lists (1 s or 100 ms) when its period
 * allows: every timer list of a loop costs each turn of the loop a look (h2o_timeout_run and
 * h2o_timeout_get_wake_at walk them all), which is a request's cost when requests come one
 * per turn. Only periods under 100 ms (tests of short limits) get a list of their own. */
void canal__sweep_start(struct canal_worker *w)
{
    uint64_t p = canal__sweep_period(&w->app->cfg);
    if (p >= 1000) {
        w->sweep_list = &w->ctx.one_sec_timeout;
    } else if (p >= 100) {
        w->sweep_list = &w->ctx.hundred_ms_timeout;
    } else {
        h2o_timeout_init(w->loop, &w->sweep_timeout, p);
        w->sweep_list = &w->sweep_timeout;
    }
    w->sweep_entry.cb = on_sweep;
    h2o_timeout_link(w->loop, w->sweep_list, &w->sweep_entry);
}
