/* SPDX-License-Identifier: MIT */
/*
 * The app: configuration, routes, listeners and worker threads.
 *
 * Start-up binds every listener once per worker (SO_REUSEPORT: the kernel spreads new
 * connections over the workers' sockets), in the calling thread so a bind error is reported
 * before anything runs. Each worker thread then makes its own h2o event loop and context (see
 * worker_init: libh2o's socket buffers belong to the thread that creates the socket) and never
 * shares a connection with another thread.
 *
 * Shutdown: canal_app_stop() writes to a pipe (safe in a signal handler); canal_app_wait()
 * wakes up, marks the app draining (readiness answers 503 from now on) and, if a shutdown
 * delay is configured, waits that long while the workers go on accepting and serving, so a
 * load balancer that probes readiness moves traffic away before anything is refused. Then it
 * sends each worker a message through h2o's multithread queue. The worker closes
 * its listening sockets, asks h2o to shut down (keep-alive is refused from now on, HTTP/2 gets
 * GOAWAY), and keeps running its loop until no request is in flight and no connection has been
 * active for a short quiet period (so a request already on its way on a kept-alive connection
 * is still answered), or until the shutdown deadline.
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
#include "server_internal.h"

/* How long a stopping worker waits with no activity before it closes idle connections. */
#define QUIET_MS 200

static uint64_t sweep_period(const canal_config_t *cfg);

static char *dup_str(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

canal_app_t *canal_app_create(const canal_config_t *cfg)
{
    canal_app_t *app = calloc(1, sizeof(*app));
    if (app == NULL)
        return NULL;
    if (cfg != NULL)
        app->cfg = *cfg;
    else
        canal_config_init(&app->cfg);
    app->host = dup_str(app->cfg.host != NULL ? app->cfg.host : "127.0.0.1");
    app->access_log = dup_str(app->cfg.access_log);
    app->tls_cert = dup_str(app->cfg.tls_cert);
    app->tls_key = dup_str(app->cfg.tls_key);
    app->trusted_proxies = dup_str(app->cfg.trusted_proxies);
    app->cfg.host = app->host;
    app->cfg.access_log = app->access_log;
    app->cfg.tls_cert = app->tls_cert;
    app->cfg.tls_key = app->tls_key;
    app->cfg.trusted_proxies = app->trusted_proxies;
    app->stop_pipe[0] = app->stop_pipe[1] = -1;
    if (app->host == NULL || (app->cfg.access_log != NULL && app->access_log == NULL) ||
        (app->cfg.trusted_proxies != NULL && app->trusted_proxies == NULL) ||
        (app->router = canal_router_create(&app->cfg.router)) == NULL) {
        canal_app_destroy(app);
        return NULL;
    }
    canal_error_info_t perr;
    int prc = canal__proxies_parse(app->cfg.trusted_proxies, &app->proxies, &app->nproxies, &perr);
    if (prc != 0) {
        if (prc != CANAL_ENOMEM)
            canal__log(app, CANAL_LOG_ERROR, "%s", perr.message);
        canal_app_destroy(app);
        return NULL;
    }
    canal__request_id_init(app);
    if (app->cfg.threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        app->cfg.threads = n > 0 ? (unsigned)n : 1;
    }

    /* a configuration not made by canal_config_init() (zeros): the defaults for the limits */
    canal_config_t defaults;
    canal_config_init(&defaults);
    if (app->cfg.header_timeout_ms == 0)
        app->cfg.header_timeout_ms = defaults.header_timeout_ms;
    if (app->cfg.body_timeout_ms == 0)
        app->cfg.body_timeout_ms = defaults.body_timeout_ms;
    if (app->cfg.keepalive_timeout_ms == 0)
        app->cfg.keepalive_timeout_ms = defaults.keepalive_timeout_ms;
    if (app->cfg.max_connections == 0)
        app->cfg.max_connections = defaults.max_connections;
    if (app->cfg.max_json_depth == 0)
        app->cfg.max_json_depth = defaults.max_json_depth;

    h2o_config_init(&app->globalconf);
    app->globalconf.max_request_entity_size = app->cfg.max_body_size;
    /* h2o's one HTTP/1 timer (head, body and keep-alive alike) only backs canal's own sweep
     * up: it must never fire first. HTTP/2 idles on h2o's timer. */
    uint64_t backstop = app->cfg.header_timeout_ms;
    if (app->cfg.body_timeout_ms > backstop)
        backstop = app->cfg.body_timeout_ms;
    if (app->cfg.keepalive_timeout_ms > backstop)
        backstop = app->cfg.keepalive_timeout_ms;
    app->globalconf.http1.req_timeout = backstop + 3 * sweep_period(&app->cfg);
    app->globalconf.http2.idle_timeout = app->cfg.keepalive_timeout_ms;
    app->globalconf.server_name = h2o_iovec_init(H2O_STRLIT("canal"));
    app->hostconf = h2o_config_register_host(&app->globalconf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    /* canal's handler serves the host's fallback path: h2o tries the registered paths first,
     * in order, and "/" would take every request from the static prefixes (ops.c) */
    app->pathconf = &app->hostconf->fallback_path;
    h2o_handler_t *handler = h2o_create_handler(app->pathconf, sizeof(*handler));
    handler->on_req = canal__on_req;
    /* h2o calls its path's loggers when it is done with a request: canal's ends it there */
    h2o_logger_t *done = h2o_create_logger(app->pathconf, sizeof(*done));
    done->log_access = canal__on_req_done;
    return app;
}

void canal_app_destroy(canal_app_t *app)
{
    if (app == NULL)
        return;
    if (atomic_load(&app->state) == 1 || atomic_load(&app->state) == 2) {
        canal_app_stop(app);
        if (canal_app_wait(app) == CANAL_ESTATE) {
            /* another thread is in canal_app_wait(): let it finish the shutdown */
            while (atomic_load(&app->state) != 3)
                sched_yield();
        }
    }
    canal__metrics_dispose(app);
    canal__ops_dispose(app);
    canal_router_destroy(app->router);
    canal__endpoints_dispose(app);
    if (app->hostconf != NULL)
        h2o_config_dispose(&app->globalconf);
    if (app->logfh != NULL)
        h2o_mem_release_shared(app->logfh);
    for (size_t i = 0; i < app->nlisteners; i++) {
        free(app->listeners[i].host);
        free(app->listeners[i].fds);
        if (app->listeners[i].ssl_ctx != NULL)
            SSL_CTX_free(app->listeners[i].ssl_ctx);
    }
    free(app->listeners);
    for (size_t k = 0; app->workers != NULL && k < app->nworkers; k++)
        canal__worker_async_free(&app->workers[k]);
    free(app->workers);
    if (app->start_sync) {
        pthread_cond_destroy(&app->start_cond);
        pthread_mutex_destroy(&app->start_lock);
    }
    for (int i = 0; i < 2; i++)
        if (app->stop_pipe[i] >= 0)
            close(app->stop_pipe[i]);
    free(app->host);
    free(app->access_log);
    free(app->tls_cert);
    free(app->tls_key);
    free(app->trusted_proxies);
    free(app->proxies);
    free(app);
}

const canal_config_t *canal_app_config(const canal_app_t *app)
{
    return &app->cfg;
}

static int add_listener(canal_app_t *app, const char *host, uint16_t port)
{
    struct canal_listener *grown = realloc(app->listeners, (app->nlisteners + 1) * sizeof(*grown));
    if (grown == NULL)
        return CANAL_ENOMEM;
    app->listeners = grown;
    struct canal_listener *l = &app->listeners[app->nlisteners];
    memset(l, 0, sizeof(*l));
    if ((l->host = strdup(host != NULL ? host : app->cfg.host)) == NULL)
        return CANAL_ENOMEM;
    l->port = port;
    app->nlisteners++;
    return 0;
}

int canal_app_listen(canal_app_t *app, const char *host, uint16_t port)
{
    return atomic_load(&app->state) != 0 ? CANAL_ESTATE : add_listener(app, host, port);
}

static int tls_error(canal_error_info_t *err, const char *what, const char *file)
{
    char reason[120] = "";
    unsigned long e = ERR_get_error();
    if (e != 0)
        ERR_error_string_n(e, reason, sizeof(reason));
    ERR_clear_error();
    if (err != NULL) {
        err->code = CANAL_EINVAL;
        err->position = 0;
        snprintf(err->message, sizeof(err->message), "%s %s: %s", what, file ? file : "(none)",
                 reason[0] ? reason : "not given");
    }
    return CANAL_EINVAL;
}

static int listen_tls(canal_app_t *app, const char *host, uint16_t port, const char *cert_file,
                      const char *key_file, canal_error_info_t *err)
{
    if (cert_file == NULL)
        return tls_error(err, "certificate", NULL);
    if (key_file == NULL)
        return tls_error(err, "private key", NULL);
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        return tls_error(err, "TLS context for", cert_file);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION);
    int rc = 0;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1)
        rc = tls_error(err, "certificate", cert_file);
    else if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1)
        rc = tls_error(err, "private key", key_file);
    else if (SSL_CTX_check_private_key(ctx) != 1)
        rc = tls_error(err, "private key does not match the certificate:", key_file);
    if (rc == 0) {
        h2o_ssl_register_alpn_protocols(ctx, h2o_http2_alpn_protocols);
        rc = add_listener(app, host, port);
    }
    if (rc != 0) {
        SSL_CTX_free(ctx);
        return rc;
    }
    app->listeners[app->nlisteners - 1].ssl_ctx = ctx;
    return 0;
}

int canal_app_listen_tls(canal_app_t *app, const char *host, uint16_t port, const char *cert_file,
                         const char *key_file, canal_error_info_t *err)
{
    if (atomic_load(&app->state) != 0)
        return CANAL_ESTATE;
    return listen_tls(app, host, port, cert_file, key_file, err);
}

int canal_app_listener_tls(const canal_app_t *app, size_t i)
{
    return i < app->nlisteners && app->listeners[i].ssl_ctx != NULL;
}

uint16_t canal_app_port(const canal_app_t *app, size_t i)
{
    return i < app->nlisteners ? app->listeners[i].bound_port : 0;
}

/* Opens one listening socket. port 0 binds any free port. Returns the fd or -1 (logged). */
static int open_listener(const canal_app_t *app, const char *host, uint16_t port, uint16_t *bound)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                    *res;
    char service[8];
    snprintf(service, sizeof(service), "%u", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot resolve listen address %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), on = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s:%u: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        *bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void canal__worker_touch_now(struct canal_worker *w)
{
    w->last_activity = now_ms();
}

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
static void on_accept(h2o_socket_t *listener, const char *err);

static void set_accepting(struct canal_worker *w, int on)
{
    for (size_t i = 0; i < w->app->nlisteners; i++) {
        h2o_socket_t *sock = w->socks[i].sock;
        if (sock == NULL)
            continue;
        if (on)
            h2o_socket_read_start(sock, on_accept);
        else
            h2o_socket_read_stop(sock);
    }
    w->accept_paused = !on;
}

void canal__on_conn_close(void *data)
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

static void accept_one(struct canal_listen_sock *ls, h2o_socket_t *sock)
{
    struct canal_worker *w = ls->worker;
    struct canal_conn *c = malloc(sizeof(*c));
    if (c == NULL) {
        h2o_socket_close(sock);
        return;
    }
    *c = (struct canal_conn){.sock = sock, .worker = w, .phase = CONN_IDLE,
                             .since = h2o_now(w->loop), .seen_bytes = sock->bytes_read};
    h2o_linklist_insert(&w->conns, &c->link);
    atomic_fetch_add(&w->connections, 1);
    canal__worker_touch(w);
    sock->on_close.cb = canal__on_conn_close;
    sock->on_close.data = c;
    h2o_accept(&ls->accept_ctx, sock);
}

static void on_accept(h2o_socket_t *listener, const char *err)
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
        accept_one(ls, sock);
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
    if (sock == NULL || c->inflight > 0)
        return; /* a handler has it: the request timeout is the handler's business */
    int progressed = sock->bytes_read != c->seen_bytes;
    c->seen_bytes = sock->bytes_read;
    if (sock->input->size == 0) {
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
        if (memmem(sock->input->bytes, sock->input->size, "\r\n\r\n", 4) != NULL) {
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
        w->next_sweep = now + sweep_period(&w->app->cfg);
        for (h2o_linklist_t *l = w->conns.next; l != &w->conns; l = l->next)
            sweep_conn(H2O_STRUCT_FROM_MEMBER(struct canal_conn, link, l), &w->app->cfg, now);
    }
    h2o_timeout_link(w->loop, w->sweep_list, &w->sweep_entry);
}

/* A few sweeps per shortest limit, between 10 ms and 1 s apart. */
static uint64_t sweep_period(const canal_config_t *cfg)
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
static void sweep_start(struct canal_worker *w)
{
    uint64_t p = sweep_period(&w->app->cfg);
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
                accept_one(ls, sock);
            h2o_socket_read_stop(ls->sock);
            h2o_socket_close(ls->sock);
            ls->sock = NULL;
        }
    }
    h2o_context_request_shutdown(&w->ctx);
    w->stopping = 1;
    w->deadline = now_ms() + app->cfg.shutdown_timeout_ms;
    w->last_activity = now_ms();
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
    sweep_start(w);
    if (canal__worker_async_init(w) != 0) {
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
        h2o_socket_read_start(ls->sock, on_accept);
    }
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

static void *worker_main(void *arg)
{
    struct canal_worker *w = arg;
    if (worker_init(w) != 0) {
        worker_started(w, -1);
        atomic_store(&w->done, 1);
        return NULL;
    }
    worker_started(w, 1);
    while (!w->stopping) /* on_stop_message sets it */
        h2o_evloop_run(w->loop, INT32_MAX);
    for (;;) { /* draining */
        uint64_t now = now_ms();
        size_t inflight = atomic_load(&w->inflight), conns = atomic_load(&w->connections);
        if (conns == 0 || (inflight == 0 && now - w->last_activity >= QUIET_MS)) {
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
    canal__worker_async_dispose(w);
    h2o_multithread_unregister_receiver(w->ctx.queue, &w->stop_receiver);
    canal__h2_graceful_timer_unlink(&w->ctx);
    dispose_context(w);
    atomic_store(&w->done, 1);
    return NULL;
}

/* What worker k needs before its thread runs (its loop is the thread's own: worker_init). */
static int prepare_worker(canal_app_t *app, size_t k)
{
    struct canal_worker *w = &app->workers[k];
    w->app = app;
    w->index = k;
    w->json_hint = 512;
    h2o_linklist_init_anchor(&w->conns);
    return (w->socks = calloc(app->nlisteners, sizeof(*w->socks))) == NULL ? -1 : 0;
}

static void close_listeners(canal_app_t *app)
{
    for (size_t i = 0; i < app->nlisteners; i++) {
        if (app->listeners[i].fds == NULL)
            continue;
        for (size_t k = 0; k < app->nworkers; k++)
            if (app->listeners[i].fds[k] >= 0)
                close(app->listeners[i].fds[k]);
        free(app->listeners[i].fds);
        app->listeners[i].fds = NULL;
    }
}

int canal_app_start(canal_app_t *app)
{
    int expected = 0;
    if (app->reg_err.code != 0) {
        canal__log(app, CANAL_LOG_ERROR, "not started: a registration failed: %s", app->reg_err.message);
        return app->reg_err.code;
    }
    if (!atomic_compare_exchange_strong(&app->state, &expected, 1))
        return CANAL_ESTATE;
    if (app->nlisteners == 0 && add_listener(app, app->cfg.host, app->cfg.port) != 0)
        goto fail;
    if (app->cfg.tls_port == 0 && (app->cfg.tls_cert != NULL || app->cfg.tls_key != NULL)) {
        canal__log(app, CANAL_LOG_ERROR, "a certificate or key was given without a TLS port (--tls-port)");
        goto fail;
    }
    if (app->cfg.tls_port != 0) {
        canal_error_info_t err;
        if (listen_tls(app, app->cfg.host, app->cfg.tls_port, app->cfg.tls_cert, app->cfg.tls_key, &err) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "%s", err.message);
            goto fail;
        }
    }
    app->nworkers = app->cfg.threads;
    if (pipe2(app->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
        (app->workers = calloc(app->nworkers, sizeof(*app->workers))) == NULL)
        goto fail;

    /* bind every listener once per worker; port 0: the first bind picks, the others follow */
    for (size_t i = 0; i < app->nlisteners; i++) {
        struct canal_listener *l = &app->listeners[i];
        if ((l->fds = malloc(app->nworkers * sizeof(int))) == NULL)
            goto fail;
        for (size_t k = 0; k < app->nworkers; k++)
            l->fds[k] = -1;
        for (size_t k = 0; k < app->nworkers; k++) {
            uint16_t port = k == 0 ? l->port : l->bound_port;
            if ((l->fds[k] = open_listener(app, l->host, port, &l->bound_port)) < 0)
                goto fail;
        }
    }
    if (app->cfg.access_log != NULL) {
        const char *path = strcmp(app->cfg.access_log, "-") == 0 ? "/dev/stdout" : app->cfg.access_log;
        /* Combined Log Format. Behind trusted proxies the address is the client's, which
         * canal__on_req() puts in the request's environment; with request IDs, the ID
         * follows, quoted (the answer's X-Request-Id). */
        char fmt[160];
        app->log_client = app->nproxies > 0;
        snprintf(fmt, sizeof(fmt), "%s %%l %%u %%t \"%%r\" %%s %%b \"%%{Referer}i\" \"%%{User-agent}i\"%s",
                 app->log_client ? "%{" CANAL__ENV_CLIENT "}e" : "%h",
                 app->cfg.request_id ? " \"%{x-request-id}o\"" : "");
        app->logfh = h2o_access_log_open_handle(path, fmt, H2O_LOGCONF_ESCAPE_APACHE);
        if (app->logfh == NULL) {
            canal__log(app, CANAL_LOG_ERROR, "cannot open the access log %s", path);
            goto fail;
        }
        h2o_access_log_register(app->pathconf, app->logfh);
    }
    signal(SIGPIPE, SIG_IGN);
    json_object_seed(0);

    if (canal__ops_start(app) != 0 || canal__metrics_start(app) != 0) {
        canal__log(app, CANAL_LOG_ERROR, "out of memory for metrics and CORS");
        goto fail;
    }
    if (canal__offload_start(app) != 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot start the offload threads");
        goto fail;
    }
    for (size_t k = 0; k < app->nworkers; k++)
        if (prepare_worker(app, k) != 0)
            goto fail;
    if (pthread_mutex_init(&app->start_lock, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&app->start_cond, NULL) != 0) {
        pthread_mutex_destroy(&app->start_lock);
        goto fail;
    }
    app->start_sync = 1;
    size_t created = 0;
    for (; created < app->nworkers; created++)
        if (pthread_create(&app->workers[created].thread, NULL, worker_main, &app->workers[created]) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "cannot start worker thread %zu: %s", created, strerror(errno));
            break;
        }
    /* each worker makes its loop and context, then says so: a stop can reach it from now on */
    pthread_mutex_lock(&app->start_lock);
    while (app->nstarted < created)
        pthread_cond_wait(&app->start_cond, &app->start_lock);
    pthread_mutex_unlock(&app->start_lock);
    int failed = created < app->nworkers;
    for (size_t k = 0; k < created; k++)
        if (app->workers[k].started < 0) {
            canal__log(app, CANAL_LOG_ERROR, "cannot create the event loop of worker %zu", k);
            failed = 1;
        }
    if (!failed)
        return 0;
    /* the workers that run leave at once (no connection is theirs yet to drain) */
    atomic_store(&app->force, 1);
    for (size_t k = 0; k < created; k++)
        if (app->workers[k].started > 0)
            h2o_multithread_send_message(&app->workers[k].stop_receiver, &app->workers[k].stop_message);
    for (size_t k = 0; k < created; k++)
        pthread_join(app->workers[k].thread, NULL);

fail:
    for (size_t k = 0; app->workers != NULL && k < app->nworkers; k++) {
        struct canal_worker *w = &app->workers[k];
        canal__worker_async_free(w);
        free(w->socks);
        free(w->mslots);
        w->mslots = NULL;
    }
    close_listeners(app);
    free(app->workers);
    app->workers = NULL;
    if (app->offload.max_queued > 0)
        canal__offload_stop(app);
    atomic_store(&app->state, 3);
    return CANAL_ESYS;
}

/* The app that the signal handlers stop: the one waiting with signals on. */
static canal_app_t *volatile signal_app;

static void on_signal(int sig)
{
    (void)sig;
    if (signal_app != NULL)
        canal_app_stop(signal_app);
}

void canal_app_stop(canal_app_t *app)
{
    if (app->stop_pipe[1] >= 0) {
        ssize_t rc = write(app->stop_pipe[1], "x", 1);
        (void)rc; /* a full pipe means a stop is pending already */
    }
}

int canal_app_wait(canal_app_t *app)
{
    int expected = 1;
    if (!atomic_compare_exchange_strong(&app->state, &expected, 2))
        return CANAL_ESTATE;
    struct sigaction old_int, old_term, sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    if (!app->cfg.no_signals) {
        signal_app = app;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
    }
    struct pollfd pfd = {.fd = app->stop_pipe[0], .events = POLLIN};
    while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
        ;
    /* Empty the pipe before saying so: a stop that comes after draining shows must end the
     * delay below, not be swallowed here. */
    char drain[16];
    while (read(app->stop_pipe[0], drain, sizeof(drain)) > 0)
        ;
    atomic_store(&app->draining, 1);
    if (app->cfg.shutdown_delay_ms > 0) {
        /* Keep serving while readiness says 503. The signal handlers stay installed, so a
         * second SIGTERM (or canal_app_stop()) ends the wait instead of killing the process. */
        canal__log(app, CANAL_LOG_INFO, "stopping: readiness answers 503; still serving for %u ms",
                   app->cfg.shutdown_delay_ms);
        uint64_t until = now_ms() + app->cfg.shutdown_delay_ms, now;
        while ((now = now_ms()) < until) {
            int rc = poll(&pfd, 1, (int)(until - now));
            if (rc > 0 || (rc < 0 && errno != EINTR))
                break;
        }
        while (read(app->stop_pipe[0], drain, sizeof(drain)) > 0)
            ; /* the stop that cut the delay short does not also cut the drain short */
    }

    for (size_t k = 0; k < app->nworkers; k++)
        h2o_multithread_send_message(&app->workers[k].stop_receiver, &app->workers[k].stop_message);
    /* The signal handlers stay while the workers drain: a second stop (a second SIGTERM, or
     * canal_app_stop() again) makes them leave at once, as the deadline would. */
    for (;;) {
        size_t done = 0;
        for (size_t k = 0; k < app->nworkers; k++)
            done += atomic_load(&app->workers[k].done) != 0;
        if (done == app->nworkers)
            break;
        if (poll(&pfd, 1, 20) > 0 && read(app->stop_pipe[0], drain, sizeof(drain)) > 0 &&
            !atomic_exchange(&app->force, 1))
            canal__log(app, CANAL_LOG_WARN, "stopped again: leaving without waiting for the requests in flight");
    }
    if (!app->cfg.no_signals) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        signal_app = NULL;
    }
    for (size_t k = 0; k < app->nworkers; k++) {
        struct canal_worker *w = &app->workers[k];
        pthread_join(w->thread, NULL);
        free(w->socks);
    }
    canal__offload_stop(app);
    close_listeners(app);
    atomic_store(&app->state, 3);
    return 0;
}

size_t canal_app_worker_count(const canal_app_t *app)
{
    return app->workers != NULL ? app->nworkers : app->cfg.threads;
}

uint64_t canal_app_worker_requests(const canal_app_t *app, size_t i)
{
    return app->workers != NULL && i < app->nworkers ? atomic_load(&app->workers[i].requests) : 0;
}

int canal_app_draining(const canal_app_t *app)
{
    return atomic_load(&app->draining);
}

int canal_app_run(canal_app_t *app)
{
    int rc = canal_app_start(app);
    return rc != 0 ? rc : canal_app_wait(app);
}
