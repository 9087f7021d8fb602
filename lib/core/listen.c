/* SPDX-License-Identifier: MIT */
/*
 * Listeners: the addresses an app listens on, cleartext or TLS (HTTP/2 and HTTP/1.1 by ALPN),
 * and their sockets, made in canal_app_start().
 *
 * A TCP listener is bound once per worker with SO_REUSEPORT, so that the kernel spreads new
 * connections over the workers. SO_REUSEPORT would also let a second process bind the port
 * and take half the traffic, silently. So the first socket of a listener is bound without it:
 * that bind fails (EADDRINUSE) if any socket, ours or another program's, is bound there; only
 * then is SO_REUSEPORT turned on, before listen(), and the other workers' sockets join it. A
 * second canal, doing the same, fails at its first bind. --reuse-port (cfg.reuse_port) binds
 * the first socket with SO_REUSEPORT too, to share the port with a running process on
 * purpose (a same-port restart). Linux lets only the same user share a port.
 *
 * A unix socket (--listen unix:PATH, canal_app_listen_unix()) is one socket, which every
 * worker reads through its own dup() (SO_REUSEPORT does not spread unix connections). Its file
 * is made with the mode and owner asked for before listen(), so nobody connects before they
 * apply. A file left at the path by a process that died (connecting to it is refused) is
 * replaced; one that something accepts on is an error, unless reuse_port (then the new socket
 * takes the path and the old process keeps only the connections it has). The file is removed
 * at the end if it is still the one made here.
 *
 * Sockets inherited from systemd (socket activation: LISTEN_PID, LISTEN_FDS and
 * LISTEN_FDNAMES, read without libsystemd) are adopted the same way as a unix socket: one
 * socket, a dup() per worker. systemd keeps its own copy open, so connections that come while
 * the service restarts wait in the socket's queue for the next process.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdarg.h>
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
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <openssl/err.h>
#include "core/core.h"

int canal__listener_add(canal_app_t *app, const char *host, uint16_t port)
{
    struct canal_listener *grown = realloc(app->listeners, (app->nlisteners + 1) * sizeof(*grown));
    if (grown == NULL)
        return CANAL_ENOMEM;
    app->listeners = grown;
    struct canal_listener *l = &app->listeners[app->nlisteners];
    *l = (struct canal_listener){.port = port, .inherited_fd = -1, .uid = (uid_t)-1, .gid = (gid_t)-1};
    if ((l->host = strdup(host != NULL ? host : app->cfg.host)) == NULL)
        return CANAL_ENOMEM;
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

/*
 * A TLS listener's files, and the certificate and key a reload read from them. The listener's
 * SSL_CTX stays what it is (every worker accepts with it); its certificate callback gives each
 * new handshake the current certificate, chain and key, under the lock a reload takes to swap
 * them. A connection made keeps what it was made with.
 */
struct canal_tls {
    pthread_mutex_t lock;
    SSL_CTX *current; /* the last reload's, holding the certificate; NULL: the listener's own */
    char *cert, *key;
};

/* A context with the certificate chain and key of those files, checked; NULL (err says why) */
static SSL_CTX *tls_context(const char *cert_file, const char *key_file, canal_error_info_t *err)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        tls_error(err, "TLS context for", cert_file);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION);
    int rc = 0;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1)
        rc = tls_error(err, "certificate", cert_file);
    else if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1)
        rc = tls_error(err, "private key", key_file);
    else if (SSL_CTX_check_private_key(ctx) != 1)
        rc = tls_error(err, "private key does not match the certificate:", key_file);
    if (rc != 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* every handshake, on a worker's thread: the certificate of the last reload, if any */
static int on_cert(SSL *ssl, void *arg)
{
    struct canal_tls *t = arg;
    int ok = 1;
    pthread_mutex_lock(&t->lock);
    if (t->current != NULL) {
        STACK_OF(X509) *chain = NULL;
        SSL_CTX_get0_chain_certs(t->current, &chain);
        ok = SSL_use_cert_and_key(ssl, SSL_CTX_get0_certificate(t->current), SSL_CTX_get0_privatekey(t->current),
                                  chain, 1);
    }
    pthread_mutex_unlock(&t->lock);
    return ok == 1;
}

void canal__tls_dispose(struct canal_tls *t)
{
    if (t == NULL)
        return;
    pthread_mutex_destroy(&t->lock);
    if (t->current != NULL)
        SSL_CTX_free(t->current);
    free(t->cert);
    free(t->key);
    free(t);
}

int canal__listener_add_tls(canal_app_t *app, const char *host, uint16_t port, const char *cert_file,
                      const char *key_file, canal_error_info_t *err)
{
    if (cert_file == NULL)
        return tls_error(err, "certificate", NULL);
    if (key_file == NULL)
        return tls_error(err, "private key", NULL);
    SSL_CTX *ctx = tls_context(cert_file, key_file, err);
    if (ctx == NULL)
        return CANAL_EINVAL;
    struct canal_tls *t = calloc(1, sizeof(*t));
    int rc = CANAL_ENOMEM;
    if (t != NULL && (t->cert = strdup(cert_file)) != NULL && (t->key = strdup(key_file)) != NULL &&
        pthread_mutex_init(&t->lock, NULL) == 0) {
        h2o_ssl_register_alpn_protocols(ctx, h2o_http2_alpn_protocols);
        SSL_CTX_set_cert_cb(ctx, on_cert, t);
        rc = canal__listener_add(app, host, port);
        if (rc != 0)
            pthread_mutex_destroy(&t->lock);
    }
    if (rc != 0) {
        if (t != NULL) {
            free(t->cert);
            free(t->key);
            free(t);
        }
        SSL_CTX_free(ctx);
        return rc;
    }
    app->listeners[app->nlisteners - 1].ssl_ctx = ctx;
    app->listeners[app->nlisteners - 1].tls = t;
    return 0;
}

int canal__tls_reload(canal_app_t *app)
{
    int rc = 0;
    for (size_t i = 0; i < app->nlisteners; i++) {
        struct canal_tls *t = app->listeners[i].tls;
        if (t == NULL)
            continue;
        canal_error_info_t err;
        SSL_CTX *ctx = tls_context(t->cert, t->key, &err);
        if (ctx == NULL) {
            canal__log(app, CANAL_LOG_ERROR, "reload: TLS on %s keeps its certificate: %s", app->listeners[i].addr,
                       err.message);
            rc = -1;
            continue;
        }
        pthread_mutex_lock(&t->lock);
        SSL_CTX *old = t->current;
        t->current = ctx;
        pthread_mutex_unlock(&t->lock);
        if (old != NULL)
            SSL_CTX_free(old); /* the handshakes that took its certificate hold references of their own */
        canal__log(app, CANAL_LOG_INFO, "reload: TLS on %s: certificate %s read again", app->listeners[i].addr,
                   t->cert);
    }
    return rc;
}

int canal_app_listen_tls(canal_app_t *app, const char *host, uint16_t port, const char *cert_file,
                         const char *key_file, canal_error_info_t *err)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return CANAL_ESTATE;
    return canal__listener_add_tls(app, host, port, cert_file, key_file, err);
}

static int listen_error(canal_error_info_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int listen_error(canal_error_info_t *err, int code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        *err = (canal_error_info_t){.code = code};
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return code;
}

/* "USER", "USER:GROUP" or ":GROUP" (names or numbers) into *uid and *gid ((uid_t)-1 and
 * (gid_t)-1 for what is not given). 0, or CANAL_EINVAL. */
static int resolve_owner(const char *owner, uid_t *uid, gid_t *gid, canal_error_info_t *err)
{
    *uid = (uid_t)-1;
    *gid = (gid_t)-1;
    if (owner == NULL)
        return 0;
    char user[256], group[256];
    const char *colon = strchr(owner, ':');
    size_t ulen = colon ? (size_t)(colon - owner) : strlen(owner);
    if (ulen >= sizeof(user) || (colon && strlen(colon + 1) >= sizeof(group)) || (ulen == 0 && !colon) ||
        (colon && colon[1] == '\0'))
        return listen_error(err, CANAL_EINVAL, "unix socket owner '%.100s': not USER, USER:GROUP or :GROUP", owner);
    memcpy(user, owner, ulen);
    user[ulen] = '\0';
    snprintf(group, sizeof(group), "%s", colon ? colon + 1 : "");
    char buf[4096], *end;
    if (user[0] != '\0') {
        struct passwd pw, *pp = NULL;
        unsigned long n = strtoul(user, &end, 10);
        if (*end == '\0' && user[0] >= '0' && user[0] <= '9')
            *uid = (uid_t)n;
        else if (getpwnam_r(user, &pw, buf, sizeof(buf), &pp) == 0 && pp != NULL)
            *uid = pp->pw_uid;
        else
            return listen_error(err, CANAL_EINVAL, "unix socket owner: no user '%.100s'", user);
    }
    if (group[0] != '\0') {
        struct group gr, *gp = NULL;
        unsigned long n = strtoul(group, &end, 10);
        if (*end == '\0' && group[0] >= '0' && group[0] <= '9')
            *gid = (gid_t)n;
        else if (getgrnam_r(group, &gr, buf, sizeof(buf), &gp) == 0 && gp != NULL)
            *gid = gp->gr_gid;
        else
            return listen_error(err, CANAL_EINVAL, "unix socket owner: no group '%.100s'", group);
    }
    return 0;
}

int canal__listener_add_unix(canal_app_t *app, const char *path, unsigned mode, const char *owner,
                             canal_error_info_t *err)
{
    struct sockaddr_un sa;
    if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(sa.sun_path))
        return listen_error(err, CANAL_EINVAL, "unix socket path '%.100s': empty or longer than %zu bytes",
                            path ? path : "", sizeof(sa.sun_path) - 1);
    if (mode > 0777)
        return listen_error(err, CANAL_EINVAL, "unix socket mode %o: more than 0777", mode);
    uid_t uid;
    gid_t gid;
    int rc = resolve_owner(owner, &uid, &gid, err);
    if (rc != 0)
        return rc;
    struct canal_listener *grown = realloc(app->listeners, (app->nlisteners + 1) * sizeof(*grown));
    if (grown == NULL)
        return listen_error(err, CANAL_ENOMEM, "out of memory");
    app->listeners = grown;
    struct canal_listener *l = &app->listeners[app->nlisteners];
    *l = (struct canal_listener){.mode = mode, .uid = uid, .gid = gid, .inherited_fd = -1};
    if ((l->path = strdup(path)) == NULL)
        return listen_error(err, CANAL_ENOMEM, "out of memory");
    app->nlisteners++;
    return 0;
}

int canal_app_listen_unix(canal_app_t *app, const char *path, unsigned mode, const char *owner,
                          canal_error_info_t *err)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return listen_error(err, CANAL_ESTATE, "the app was started already");
    return canal__listener_add_unix(app, path, mode, owner, err);
}

int canal_app_listener_tls(const canal_app_t *app, size_t i)
{
    return i < app->nlisteners && app->listeners[i].ssl_ctx != NULL;
}

uint16_t canal_app_port(const canal_app_t *app, size_t i)
{
    return i < app->nlisteners ? app->listeners[i].bound_port : 0;
}

const char *canal_app_listener_addr(const canal_app_t *app, size_t i)
{
    return i < app->nlisteners && app->listeners[i].addr[0] != '\0' ? app->listeners[i].addr : NULL;
}

/* "host:port" ("[::1]:8080" for IPv6) into l->addr. */
static void name_tcp(struct canal_listener *l, const char *host, uint16_t port)
{
    snprintf(l->addr, sizeof(l->addr), strchr(host, ':') ? "[%.100s]:%u" : "%.100s:%u", host, port);
}

/* Makes fd a listening socket on ai, sharing the port (SO_REUSEPORT) from the bind on if
 * share, else only once bound. NULL, or the step that failed (errno says why). */
static const char *bind_tcp(int fd, const struct addrinfo *ai, int share)
{
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0 ||
        (share && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0))
        return "setsockopt";
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0)
        return "bind";
    /* bound alone: our own workers' sockets may join it from now on */
    if (!share && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0)
        return "setsockopt";
    if (listen(fd, SOMAXCONN) != 0)
        return "listen";
    return NULL;
}

/* One TCP socket of l. The first (first) is bound without SO_REUSEPORT unless reuse_port, so
 * that a port another process listens on is an error (the file's top says why). Returns the
 * fd or -1 (logged). */
static int open_tcp(const canal_app_t *app, struct canal_listener *l, int first)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                    *res;
    char service[8];
    uint16_t port = first ? l->port : l->bound_port;
    snprintf(service, sizeof(service), "%u", port);
    int rc = getaddrinfo(l->host, service, &hints, &res);
    if (rc != 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot resolve listen address %s: %s", l->host, gai_strerror(rc));
        return -1;
    }
    int share = !first || app->cfg.reuse_port;
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const char *step = fd < 0 ? "socket" : bind_tcp(fd, res, share);
    int e = errno;
    freeaddrinfo(res);
    if (step != NULL) {
        if (e == EADDRINUSE && strcmp(step, "bind") == 0 && !share)
            canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s:%u: another process listens there "
                       "(--reuse-port shares the port with it on purpose)", l->host, port);
        else
            canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s:%u: %s: %s", l->host, port, step, strerror(e));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (first) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
            l->bound_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                           : ((struct sockaddr_in *)&ss)->sin_port);
        name_tcp(l, l->host, l->bound_port);
    }
    return fd;
}

/* 1 if something accepts on the unix socket at sa, 0 if connecting is refused (a file left by
 * a process that died), -1 if that cannot be told (errno). */
static int unix_live(const struct sockaddr_un *sa)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)), e = errno;
    close(fd);
    if (rc == 0 || e == EAGAIN) /* EAGAIN: its queue is full, so it is alive */
        return 1;
    if (e == ECONNREFUSED || e == ENOENT)
        return 0;
    errno = e;
    return -1;
}

/* l's unix socket: a stale file replaced, the mode and owner set before listen(). The fd or -1
 * (logged). */
static int open_unix(const canal_app_t *app, struct canal_listener *l)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, l->path, strlen(l->path) + 1); /* its length was checked when added */
    snprintf(l->addr, sizeof(l->addr), "unix:%s", l->path);
    struct stat st;
    if (lstat(l->path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s: the file exists and is not a socket", l->addr);
            return -1;
        }
        int live = unix_live(&sa);
        if (live < 0) {
            canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s: cannot tell whether another process listens there: %s",
                       l->addr, strerror(errno));
            return -1;
        }
        if (live && !app->cfg.reuse_port) {
            canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s: another process listens there "
                       "(--reuse-port replaces its socket on purpose)", l->addr);
            return -1;
        }
        if (unlink(l->path) != 0 && errno != ENOENT) {
            canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s: cannot remove the old socket: %s", l->addr,
                       strerror(errno));
            return -1;
        }
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s: %s", l->addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    const char *step = NULL;
    /* nobody can connect before listen(): the mode and owner apply from the first client on */
    if (chmod(l->path, l->mode) != 0)
        step = "chmod";
    else if ((l->uid != (uid_t)-1 || l->gid != (gid_t)-1) && chown(l->path, l->uid, l->gid) != 0)
        step = "chown";
    else if (listen(fd, SOMAXCONN) != 0)
        step = "listen";
    else if (stat(l->path, &st) != 0)
        step = "stat";
    if (step != NULL) {
        canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s: %s: %s", l->addr, step, strerror(errno));
        close(fd);
        unlink(l->path);
        return -1;
    }
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    return fd;
}

int canal__listener_bind(canal_app_t *app, struct canal_listener *l)
{
    if ((l->fds = malloc(app->nworkers * sizeof(int))) == NULL)
        return -1;
    for (size_t k = 0; k < app->nworkers; k++)
        l->fds[k] = -1;
    if (l->host != NULL) {
        for (size_t k = 0; k < app->nworkers; k++)
            if ((l->fds[k] = open_tcp(app, l, k == 0)) < 0)
                return -1;
        return 0;
    }
    /* one socket, read by every worker through a descriptor of its own */
    if (l->inherited_fd >= 0) {
        l->fds[0] = l->inherited_fd;
        l->inherited_fd = -1;
    } else if ((l->fds[0] = open_unix(app, l)) < 0) {
        return -1;
    }
    for (size_t k = 1; k < app->nworkers; k++)
        if ((l->fds[k] = fcntl(l->fds[0], F_DUPFD_CLOEXEC, 3)) < 0) {
            canal__log(app, CANAL_LOG_ERROR, "cannot listen on %s: dup: %s", l->addr, strerror(errno));
            return -1;
        }
    return 0;
}

/* ---- systemd socket activation ---- */

/* Only the first app started in a process adopts the inherited sockets (there is one set). */
static atomic_int adopted;

static int parse_count(const char *s, int64_t *n)
{
    return s != NULL ? canal_parse_int64((canal_str_t){s, strlen(s)}, n) : -1;
}

/* Takes inherited socket fd as a listener named name (LISTEN_FDNAMES; may be ""). 0 or -1
 * (logged). */
static int adopt_one(canal_app_t *app, int fd, const char *name, size_t nlen)
{
    int type = 0, acc = 0, on = 1;
    socklen_t len = sizeof(type);
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof(ss);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
        (len = sizeof(acc), getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len)) != 0 || !acc ||
        getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0 ||
        (ss.ss_family != AF_INET && ss.ss_family != AF_INET6 && ss.ss_family != AF_UNIX)) {
        canal__log(app, CANAL_LOG_ERROR, "socket activation: descriptor %d (%.*s) is not a listening TCP or unix "
                   "stream socket (systemd's ListenStream=)", fd, (int)(nlen ? nlen : 7), nlen ? name : "no name");
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 ||
        (ss.ss_family != AF_UNIX && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0)) {
        canal__log(app, CANAL_LOG_ERROR, "socket activation: descriptor %d: %s", fd, strerror(errno));
        return -1;
    }
    struct canal_listener *grown = realloc(app->listeners, (app->nlisteners + 1) * sizeof(*grown));
    if (grown == NULL)
        return -1;
    app->listeners = grown;
    struct canal_listener *l = &app->listeners[app->nlisteners++];
    *l = (struct canal_listener){.inherited_fd = fd, .uid = (uid_t)-1, .gid = (gid_t)-1};
    if (ss.ss_family == AF_UNIX) {
        const struct sockaddr_un *su = (const struct sockaddr_un *)&ss;
        snprintf(l->addr, sizeof(l->addr), "unix:%.*s", (int)strnlen(su->sun_path, sizeof(su->sun_path)), su->sun_path);
    } else {
        char host[INET6_ADDRSTRLEN] = "?";
        const void *a = ss.ss_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                                                 : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
        inet_ntop(ss.ss_family, a, host, sizeof(host));
        l->bound_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                       : ((struct sockaddr_in *)&ss)->sin_port);
        name_tcp(l, host, l->bound_port);
    }
    canal__log(app, CANAL_LOG_INFO, "socket activation: listening on %s (descriptor %d, %.*s)", l->addr, fd,
               (int)(nlen ? nlen : 7), nlen ? name : "no name");
    return 0;
}

int canal__listeners_adopt(canal_app_t *app)
{
    int64_t pid, n;
    if (parse_count(getenv("LISTEN_PID"), &pid) != 0 || pid != (int64_t)getpid())
        return 0; /* none, or meant for another process */
    if (atomic_exchange(&adopted, 1))
        return 0;
    const char *fds = getenv("LISTEN_FDS"), *names = getenv("LISTEN_FDNAMES");
    if (parse_count(fds, &n) != 0 || n < 0 || n > 4096) {
        canal__log(app, CANAL_LOG_ERROR, "socket activation: LISTEN_FDS=%.40s is not a count from 0 to 4096",
                   fds ? fds : "(unset)");
        return -1;
    }
    for (int64_t i = 0; i < n; i++) {
        /* the i-th of the names, separated by ':' */
        const char *name = names != NULL ? names : "";
        for (int64_t j = 0; j < i && *name != '\0'; j++)
            name += strcspn(name, ":") + (name[strcspn(name, ":")] == ':');
        if (adopt_one(app, 3 + (int)i, name, strcspn(name, ":")) != 0)
            return -1;
    }
    return (int)n;
}

void canal__listeners_close(canal_app_t *app)
{
    for (size_t i = 0; i < app->nlisteners; i++) {
        struct canal_listener *l = &app->listeners[i];
        for (size_t k = 0; l->fds != NULL && k < app->nworkers; k++)
            if (l->fds[k] >= 0)
                close(l->fds[k]);
        free(l->fds);
        l->fds = NULL;
        if (l->inherited_fd >= 0)
            close(l->inherited_fd);
        l->inherited_fd = -1;
        /* the socket file, unless another process has put its own at the path since */
        struct stat st;
        if (l->ino != 0 && stat(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino)
            unlink(l->path);
        l->ino = 0;
    }
}
