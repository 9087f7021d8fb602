/* SPDX-License-Identifier: MIT */
/*
 * The access log: one line per answer, whoever gave it (a route's handler, the router, a
 * static file, libh2o itself), written in large pieces.
 *
 * A feature (core/feature.h), switched on by canal_config_t.access_log. Where the lines come
 * from: libh2o calls the loggers of a request's path when it is done with the request.
 * canal__on_req_done() (req.c) is that logger on canal's path, which is also where libh2o's
 * own answers (a 400 for a request it cannot parse, a 413) end, and on every static path
 * (static.c); it runs the features' end phase, this file's add(), before anything of the
 * request is released. So there is one place a line is made.
 *
 * The peer's address (CLF without trusted proxies) is formatted once per connection and kept
 * in canal's record of it (struct canal_conn); the time is libh2o's string, made once a second.
 *
 * Buffering: each worker formats its lines (acclog_line.c) into its own buffer of
 * CANAL__ACCLOG_BUF bytes, with no lock. The buffer is written out with one write() when the
 * next line would not fit, a second after its first line (a timer on the worker's loop, armed
 * only while something waits: an idle worker does not wake up), and when the worker ends, after
 * its last request, so a graceful stop (SIGTERM) loses no line. A line larger than the whole
 * buffer is written on its own.
 *
 * Writing and reopening: the workers share one descriptor, opened with O_APPEND, and write it
 * under one mutex, taken once per buffer (not per line). Under it a write() is never mixed with
 * another worker's, even on a pipe (stdout to a journal), and a reopen (canal_app_reopen_log(),
 * SIGUSR1) happens between two writes: the signal handler only sets a flag; the next write, of
 * any worker, opens the path, closes the old descriptor and writes to the new file. A line is
 * either in a buffer or already written, and goes wholly to the old file or wholly to the new.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "observability/observability.h"
#include "observability/acclog_internal.h"

/* The feature's state: the file all workers write */
struct canal__acclog {
    int fd;                   /* -1: not open */
    char *path;               /* the file to reopen; NULL for stdout */
    atomic_int json;          /* JSON lines, else CLF; a reload may change it */
    pthread_mutex_t lock;     /* one write() at a time, and a reopen between two */
    int lock_ready;
    int failing;              /* under lock: the last write failed (said once) */
    atomic_int reopen;        /* canal_app_reopen_log() asked for one */
};

/* A worker's lines not yet written */
struct acclog_worker {
    struct canal_worker *w;
    char *data;                /* CANAL__ACCLOG_BUF bytes */
    size_t len;
    h2o_timeout_t timeout;     /* a second after the first line of a buffer: written */
    h2o_timeout_entry_t entry;
    int timed;                 /* the timer exists (the worker's loop runs) */
};

static const struct canal__feature feature;

int canal__acclog_on(canal_app_t *app)
{
    struct canal__acclog *a = canal__feature_on(app, &feature);
    if (a == NULL)
        return -1;
    a->fd = -1;
    return 0;
}

static int acclog_open(canal_app_t *app, void *st)
{
    struct canal__acclog *a = st;
    const char *path = app->cfg.access_log;
    atomic_init(&a->json, app->cfg.access_log_format == CANAL_ACCESS_LOG_JSON);
    if (strcmp(path, "-") == 0) {
        a->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    } else {
        a->path = app->access_log;
        a->fd = open(path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
    }
    if (a->fd < 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot open the access log %s: %s", path, strerror(errno));
        return -1;
    }
    if (pthread_mutex_init(&a->lock, NULL) != 0) {
        close(a->fd);
        a->fd = -1;
        return -1;
    }
    a->lock_ready = 1;
    return 0;
}

static void acclog_close(canal_app_t *app, void *st)
{
    struct canal__acclog *a = st;
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    if (a->lock_ready)
        pthread_mutex_destroy(&a->lock);
    a->lock_ready = 0;
}

/* canal_app_reopen_log(), SIGUSR1 */
static void acclog_reopen(canal_app_t *app, void *st)
{
    struct canal__acclog *a = st;
    atomic_store(&a->reopen, 1); /* lock-free: safe in a signal handler */
}

/* Under the lock: a reopen that was asked for. On failure the old file goes on. */
static void reopen(canal_app_t *app, struct canal__acclog *a)
{
    if (!atomic_exchange(&a->reopen, 0) || a->path == NULL)
        return;
    int fd = open(a->path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot reopen the access log %s: %s; still writing to the old file",
                   a->path, strerror(errno));
        return;
    }
    close(a->fd);
    a->fd = fd;
}

/* Writes n bytes of whole lines, from any worker. */
static void write_lines(canal_app_t *app, struct canal__acclog *a, const char *p, size_t n)
{
    int err = 0;
    pthread_mutex_lock(&a->lock);
    reopen(app, a);
    while (n > 0) {
        ssize_t w = write(a->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    if (err != 0 && !a->failing)
        canal__log(app, CANAL_LOG_ERROR, "cannot write the access log: %s; lines are lost until it works again",
                   strerror(err));
    a->failing = err != 0;
    pthread_mutex_unlock(&a->lock);
}

static void flush(struct acclog_worker *aw, struct canal__acclog *a)
{
    if (aw->timed && h2o_timeout_is_linked(&aw->entry))
        h2o_timeout_unlink(&aw->entry);
    if (aw->len == 0)
        return;
    write_lines(aw->w->app, a, aw->data, aw->len);
    aw->len = 0;
}

static void on_flush_timer(h2o_timeout_entry_t *entry)
{
    struct acclog_worker *aw = H2O_STRUCT_FROM_MEMBER(struct acclog_worker, entry, entry);
    flush(aw, canal__feature_state(aw->w->app, &feature));
}

/* The worker's buffer and its timer, on its thread */
static int worker_init(struct canal_worker *w, void *st, void *wst)
{
    struct acclog_worker *aw = wst;
    aw->w = w;
    if ((aw->data = malloc(CANAL__ACCLOG_BUF)) == NULL)
        return -1;
    h2o_timeout_init(w->loop, &aw->timeout, 1000);
    aw->entry = (h2o_timeout_entry_t){.cb = on_flush_timer};
    aw->timed = 1;
    return 0;
}

/* Before the worker's loop goes: the timer */
static void worker_stop(struct canal_worker *w, void *st, void *wst)
{
    struct acclog_worker *aw = wst;
    if (!aw->timed)
        return;
    if (h2o_timeout_is_linked(&aw->entry))
        h2o_timeout_unlink(&aw->entry);
    h2o_timeout_dispose(w->loop, &aw->timeout);
    aw->timed = 0;
}

/* After the worker's last request: what is left is written */
static void worker_exit(struct canal_worker *w, void *st, void *wst)
{
    struct acclog_worker *aw = wst;
    if (aw->data != NULL)
        flush(aw, st);
    free(aw->data);
    aw->data = NULL;
}

/* The peer's address as libh2o prints it (%h), into buf (NI_MAXHOST bytes); made once per
 * connection when the request has canal's record of it (c), and kept there. */
static canal_str_t peer_text(h2o_conn_t *conn, struct canal_conn *c, char *buf)
{
    if (c != NULL && c->peer_len != 0)
        return (canal_str_t){c->peer, c->peer_len};
    struct sockaddr_storage ss;
    socklen_t len = conn->callbacks->get_peername != NULL ? conn->callbacks->get_peername(conn, (void *)&ss) : 0;
    canal_str_t s = {"-", 1};
    if (len != 0 && ss.ss_family == AF_INET) {
        s = (canal_str_t){buf, canal__ipv4_text(buf, (const uint8_t *)&((struct sockaddr_in *)&ss)->sin_addr)};
    } else if (len != 0) {
        size_t n = h2o_socket_getnumerichost((void *)&ss, len, buf);
        if (n != SIZE_MAX)
            s = (canal_str_t){buf, n};
    }
    if (c != NULL && s.len < sizeof(c->peer)) {
        memcpy(c->peer, s.base, s.len);
        c->peer_len = (unsigned char)s.len;
    }
    return s;
}

/* The first Referer and User-Agent fields of hs, in one pass (absent: base NULL) */
static void referer_and_agent(const h2o_headers_t *hs, canal_str_t *referer, canal_str_t *agent)
{
    *referer = *agent = (canal_str_t){NULL, 0};
    for (size_t i = 0; i < hs->size; i++) {
        const h2o_header_t *f = &hs->entries[i];
        canal_str_t *to = f->name == &H2O_TOKEN_REFERER->buf      ? referer
                          : f->name == &H2O_TOKEN_USER_AGENT->buf ? agent
                                                                  : NULL;
        if (to != NULL && to->base == NULL)
            *to = (canal_str_t){f->value.base, f->value.len};
    }
}

/* The end of every answer: its line */
static void add(h2o_req_t *h, canal_req_t *req, void *st, void *wst)
{
    struct acclog_worker *aw = wst;
    canal_app_t *app = aw->w->app;
    struct canal__acclog *a = st;
    int json = atomic_load_explicit(&a->json, memory_order_relaxed); /* one format per line */
    char addr[NI_MAXHOST];
    struct canal__acclog_entry e = {
        .method = {h->input.method.base, h->input.method.len},
        .target = {h->input.path.base, h->input.path.len},
        .version = h->version,
        .status = h->res.status,
        .bytes = h->bytes_sent,
        .id_column = app->cfg.request_id != 0,
        .unix_us = -1,
        .duration_us = -1,
    };
    referer_and_agent(&h->headers, &e.referer, &e.user_agent);
    /* behind trusted proxies, and always in JSON, the client's address; else the peer's */
    if (app->nproxies > 0 || json)
        e.client = req != NULL ? canal_req_client_addr(req) : canal__client_addr(app, h);
    else
        e.client = peer_text(h->conn, req != NULL ? req->conn : NULL, addr);
    if (req != NULL && req->id.base != NULL) {
        e.request_id = req->id; /* the answer's X-Request-Id */
    } else if (app->cfg.request_id) {
        ssize_t i = h2o_find_header_by_str(&h->res.headers, H2O_STRLIT("x-request-id"), -1);
        if (i != -1)
            e.request_id = (canal_str_t){h->res.headers.entries[i].value.base, h->res.headers.entries[i].value.len};
    }
    if (!h2o_timeval_is_null(&h->processed_at.at)) {
        e.clf_time = (canal_str_t){h->processed_at.str->log, H2O_TIMESTR_LOG_LEN};
        e.unix_us = (int64_t)h->processed_at.at.tv_sec * 1000000 + h->processed_at.at.tv_usec;
    }
    if (json) {
        int64_t d = canal__elapsed_ns(h);
        e.duration_us = d < 0 ? -1 : d / 1000;
        if (req != NULL && req->endpoint != NULL) {
            const char *t = canal_route_template(req->endpoint->route);
            e.route = (canal_str_t){t, strlen(t)};
        }
        const canal_trace_t *tr = req != NULL ? canal_req_trace(req) : NULL;
        if (tr != NULL) {
            e.trace_id = (canal_str_t){tr->trace_id, 32};
            e.span_id = (canal_str_t){tr->span_id, 16};
        }
    }

    size_t need = canal__acclog_bound(&e);
    if (aw->len + need > CANAL__ACCLOG_BUF)
        flush(aw, a);
    if (need > CANAL__ACCLOG_BUF) {
        /* a line of huge headers: on its own (limited by max_header_bytes and max_target) */
        char *line = malloc(need);
        if (line == NULL) {
            canal__log(app, CANAL_LOG_ERROR, "out of memory for an access log line of %zu bytes: not logged", need);
            return;
        }
        write_lines(app, a, line, json ? canal__acclog_json(line, &e) : canal__acclog_clf(line, &e));
        free(line);
        return;
    }
    if (aw->len == 0 && aw->timed)
        h2o_timeout_link(aw->w->loop, &aw->timeout, &aw->entry);
    char *out = aw->data + aw->len;
    aw->len += json ? canal__acclog_json(out, &e) : canal__acclog_clf(out, &e);
}

/* a reload: the new line format, from the next line on */
static int acclog_reload(canal_app_t *app, void *st, const canal_config_t *next)
{
    struct canal__acclog *a = st;
    atomic_store_explicit(&a->json, next->access_log_format == CANAL_ACCESS_LOG_JSON, memory_order_relaxed);
    return 0;
}

static const struct canal__feature feature = {
    .name = "access log",
    .size = sizeof(struct canal__acclog),
    .worker_size = sizeof(struct acclog_worker),
    .start = acclog_open,
    .dispose = acclog_close,
    .worker_init = worker_init,
    .worker_stop = worker_stop,
    .worker_exit = worker_exit,
    .end = add,
    .reopen = acclog_reopen,
    .reload = acclog_reload,
};
