/* SPDX-License-Identifier: MIT */
/*
 * h2o-ws-baseline: the raw libh2o + wslay WebSocket echo server that canal-realtime's /ws/echo
 * is measured against. Any GET that is a WebSocket handshake is upgraded with
 * h2o_upgrade_to_websocket(); every text or binary message is queued back as it came (wslay
 * copies it); anything else gets a 404. No routing, no limits, no groups: the least work
 * libh2o 2.2.5 allows for an echo.
 *
 *   build/bench/h2o-ws-baseline [--host ADDR] [--port N] [--threads N]
 *
 * One event loop, h2o context and SO_REUSEPORT listener per thread. SIGTERM ends the process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <h2o.h>
#include <h2o/websocket.h>

static h2o_globalconf_t config;

static void on_ws_message(h2o_websocket_conn_t *conn, const struct wslay_event_on_msg_recv_arg *arg)
{
    if (arg == NULL) { /* the peer closed or broke the protocol */
        h2o_websocket_close(conn);
        return;
    }
    if (!wslay_is_ctrl_frame(arg->opcode)) {
        struct wslay_event_msg msg = {arg->opcode, arg->msg, arg->msg_length};
        wslay_event_queue_msg(conn->ws_ctx, &msg); /* h2o_websocket_proceed() follows the read */
    }
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    const char *key;
    if (h2o_is_websocket_handshake(req, &key) != 0 || key == NULL)
        return -1; /* libh2o's own 404 */
    h2o_upgrade_to_websocket(req, key, NULL, on_ws_message);
    return 0;
}

struct worker {
    pthread_t tid;
    int fd;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
};

static void on_accept(h2o_socket_t *listener, const char *err)
{
    struct worker *w = listener->data;
    h2o_socket_t *sock;
    if (err != NULL)
        return;
    while ((sock = h2o_evloop_socket_accept(listener)) != NULL)
        h2o_accept(&w->accept_ctx, sock);
}

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    h2o_evloop_t *loop = h2o_evloop_create();
    h2o_context_init(&w->ctx, loop, &config);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = config.hosts;
    h2o_socket_t *listener = h2o_evloop_socket_create(loop, w->fd, H2O_SOCKET_FLAG_DONT_READ);
    listener->data = w;
    h2o_socket_read_start(listener, on_accept);
    for (;;)
        h2o_evloop_run(loop, INT32_MAX);
    return NULL;
}

/* A listening socket with SO_REUSEPORT; *port is 0 on the first call, the chosen port after. */
static int open_listener(const char *host, unsigned *port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV},
                    *res;
    char service[8];
    int on = 1, fd;
    snprintf(service, sizeof(service), "%u", *port);
    if (getaddrinfo(host, service, &hints, &res) != 0) {
        fprintf(stderr, "h2o-ws-baseline: cannot resolve %s\n", host);
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        fprintf(stderr, "h2o-ws-baseline: %s:%u: %s\n", host, *port, strerror(errno));
        freeaddrinfo(res);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        *port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                               : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1";
    unsigned port = 8080;
    long threads = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
            host = argv[++i];
        } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            port = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: h2o-ws-baseline [--host ADDR] [--port N] [--threads N]\n");
            return 2;
        }
    }
    if (threads < 1 || threads > 256 || port > 65535)
        return 2;

    signal(SIGPIPE, SIG_IGN);
    h2o_config_init(&config);
    h2o_hostconf_t *hostconf = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *pathconf = h2o_config_register_path(hostconf, "/", 0);
    h2o_handler_t *handler = h2o_create_handler(pathconf, sizeof(*handler));
    handler->on_req = on_req;

    struct worker *workers = calloc((size_t)threads, sizeof(*workers));
    if (workers == NULL)
        return 1;
    for (long i = 0; i < threads; i++)
        if ((workers[i].fd = open_listener(host, &port)) < 0)
            return 1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    for (long i = 0; i < threads; i++)
        pthread_create(&workers[i].tid, NULL, run_worker, &workers[i]);
    fprintf(stderr, "h2o-ws-baseline listening on http://%s:%u (%ld threads)\n", host, port, threads);
    int sig;
    sigwait(&set, &sig);
    exit(0);
}
