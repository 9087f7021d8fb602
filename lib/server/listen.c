/* SPDX-License-Identifier: MIT */
/*
 * Listeners: the addresses an app listens on, cleartext or TLS (HTTP/2 and HTTP/1.1 by ALPN),
 * and their sockets, bound once per worker with SO_REUSEPORT in canal_app_start().
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

int canal__listener_add(canal_app_t *app, const char *host, uint16_t port)
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
    return atomic_load(&app->state) != APP_CREATED ? CANAL_ESTATE : canal__listener_add(app, host, port);
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

int canal__listener_add_tls(canal_app_t *app, const char *host, uint16_t port, const char *cert_file,
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
        rc = canal__listener_add(app, host, port);
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
    if (atomic_load(&app->state) != APP_CREATED)
        return CANAL_ESTATE;
    return canal__listener_add_tls(app, host, port, cert_file, key_file, err);
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
int canal__listener_open(const canal_app_t *app, const char *host, uint16_t port, uint16_t *bound)
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

void canal__listeners_close(canal_app_t *app)
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
