/* SPDX-License-Identifier: MIT */
/*
 * The database client (canal/db.h): PostgreSQL through libpq's non-blocking API on each
 * worker's h2o loop; SQLite on threads of its own.
 *
 * Every worker keeps a pool of connections (struct conn). A connection's socket is watched by
 * the worker's loop (a dup of libpq's descriptor, created with H2O_SOCKET_FLAG_DONT_READ: h2o
 * only says "readable", libpq reads); connecting is PQconnectStart() and PQconnectPoll() driven
 * by those events, and once connected the connection is non-blocking and in pipeline mode.
 * Each query is sent with its own Sync (PQpipelineSync()), so a failing query fails alone and
 * the ones after it on the same connection run. A connection that is connected prepares every
 * declared statement first, in its pipeline: the queries sent behind the prepares find them.
 *
 * A query (struct query, one malloc with its parameters' text) goes to the ready connection
 * with the fewest queries in flight, under max_pipeline; when there is none it waits in the
 * worker's queue (at most max_waiting, for wait_ms: then it fails "unavailable"). Results come
 * back in order on each connection: a query's result, a NULL, and its Sync.
 *
 * The request side is a batch (struct batch, malloc'd): the request's deferral
 * (canal_req_defer()), the number of its queries in flight and its then callback. A query's
 * callback runs only while canal_pending_req() still gives the request; when the last query is
 * back the batch completes the deferral (commit) and goes. The request's memory keeps a pointer
 * to its batch (canal__req_state()) for the queries started later in the same request, cleared
 * when either goes first. Failures found while a query is being started are delivered on the
 * next turn of the loop (the worker's "soon" list), so a callback never runs inside the call
 * that started its query.
 *
 * A lost connection fails its queries in flight ("unavailable", 08006), is closed, and is
 * connected again after a backoff (100 ms, doubling to 2 s; reset once connected).
 *
 * A transaction (struct canal_db_tx) holds the connection its BEGIN was sent to (conn.held:
 * pick() skips it) until its COMMIT or ROLLBACK is back; one still open when its batch settles
 * is rolled back by canal (held by &rolling_back meanwhile), never returned dirty.
 *
 * SQLite: the app's threads (lite_main()) take queries from one queue under db.lock, run them
 * on their own connections (statements that write under db.write_lock, one at a time), copy
 * the rows into a struct table of text, and post the query back to its worker (canal__post());
 * the same deliver() then runs the callback there. A worker that has stopped cannot be posted
 * to: its stop hook waits for its queries (sqlite_out) and delivers them itself (orphans).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include "core/core.h"
#include "canal/db.h"

#define DEFAULT_POOL 2
#define DEFAULT_PIPELINE 64
#define DEFAULT_WAITING 1024
#define DEFAULT_WAIT_MS 1000
#define RETRY_TICK_MS 100
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000

/* latency histogram buckets, seconds */
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

/* A statement's figures, added to by every worker (relaxed atomics: counters only). */
struct stats {
    atomic_ullong count, errors, usec;
    atomic_ullong le[NBUCKETS];
};

struct stmt {
    char *name, *sql;
    struct stats stats;
};

/* The app's state: the settings, the statements, the pool's gauges. */
struct db {
    canal_app_t *app;
    char *url;
    canal_db_options_t opt;
    struct stmt *stmts;
    size_t nstmts;
    struct stats adhoc;       /* canal_db_query_sql() */
    atomic_long ready;        /* connections ready, every worker */
    atomic_long inflight;     /* queries sent and not back */
    atomic_long waiting;      /* queries waiting for a connection */
    atomic_ullong connects, losses, cancels;
    /* SQLite (sqlite:PATH): threads of its own, each with its connection, fed by one queue */
    int sqlite;
    char *sqlite_path;        /* for sqlite3_open_v2(), a URI */
    sqlite3 *anchor;          /* keeps a :memory: database alive; runs exec_script */
    struct lite *lites;       /* the threads */
    size_t nthreads;
    pthread_mutex_t lock, write_lock; /* the queue; one writer at a time */
    pthread_cond_t ready_cond;
    h2o_linklist_t queue;     /* struct query */
    size_t queued;
    int quit, locks_ready;
};

/* A SQLite result, made on the SQLite thread: every value as text (blobs as \x and hex, as
 * PostgreSQL writes bytea), so that one set of readers serves both backends. */
struct table {
    size_t rows, cols, cap;
    char **names;
    char **cells;             /* rows * cols, NULL for NULL */
    size_t *lens;
    int64_t affected;
};

enum conn_state { C_DOWN, C_CONNECTING, C_READY };

/* A cancel request on its way (cancel_sent()): PQcancel() blocks, so it runs on the offload
 * pool. Shared by the job and the connection, which is held (sends nothing more) until the
 * job is back: so the cancel can only hit the query it was meant for. */
struct cancel {
    atomic_int refs;          /* the job's and the connection's */
    struct dbw *dw;           /* the connection's worker */
    _Atomic(struct conn *) c; /* NULL once the connection has let go (lost, worker stopped) */
    PGcancel *pg;
    int ok;
    char err[256];
};

struct conn {
    struct dbw *dw;
    struct cancel *cancel;    /* a cancel request of its query on its way, or NULL */
    PGconn *pg;
    h2o_socket_t *sock;
    int fd;                   /* libpq's descriptor that sock watches a dup of */
    enum conn_state state;
    int want_write;           /* connecting: PQconnectPoll() asked for writable */
    int notified;             /* h2o_socket_notify_write() pending (one at a time) */
    int tcp, corked;          /* TCP: corked while the loop's turn sends (cork()) */
    h2o_linklist_t inflight;  /* struct query, in the order sent */
    size_t ninflight;
    struct canal_db_tx *held; /* the transaction it is held for, or &rolling_back */
    unsigned backoff_ms;
    uint64_t retry_at;
    h2o_timeout_entry_t retry;
};

/* A worker's pool */
struct dbw {
    struct db *db;
    struct canal_worker *w;
    h2o_loop_t *loop;
    struct conn *conns;
    size_t nconns;
    h2o_linklist_t waiting;   /* struct query */
    size_t nwaiting;
    h2o_linklist_t soon;      /* struct query failed on starting, delivered next turn */
    h2o_timeout_t wait_to, retry_to, soon_to;
    h2o_timeout_entry_t soon_entry, uncork_entry;
    int timers, stopping;
    atomic_long sqlite_out;   /* queries of this worker's on the SQLite threads */
    h2o_linklist_t orphans;   /* SQLite results the stopped worker could not be posted (lock) */
};

struct lite;

struct canal_db_tx {
    struct batch *b;
    struct conn *c;           /* set when BEGIN is sent; NULL once ended or lost */
    struct lite *lt;          /* SQLite: the thread whose connection holds it, set when BEGIN
                                 is back; NULL once ended */
    struct query *rollback;   /* SQLite: made at BEGIN, for a transaction left open */
    int began, ended;
};

struct batch {
    struct dbw *dw;
    atomic_int gone;          /* its request is gone (read by the SQLite threads) */
    canal_pending_t *p;
    struct canal_db_tx *tx;   /* the request's transaction, or NULL */
    size_t inflight;
    int in_callback;
    void (*then)(canal_req_t *req, void *data);
    void *then_data;
    struct batch **slot;      /* in the request's memory, NULL once it is gone */
};

enum { Q_USER, Q_PREPARE, Q_SETUP, Q_ROLLBACK, Q_NOOP };

struct query {
    struct canal__post post; /* SQLite: the result's way back to the worker */
    h2o_linklist_t link;
    h2o_timeout_entry_t wait;
    struct dbw *dw;
    int kind;
    struct batch *b;
    struct stmt *st;          /* prepared statement, or NULL */
    struct canal_db_tx *begins, *ends; /* BEGIN of, COMMIT or ROLLBACK of a transaction */
    struct conn *conn;        /* Q_ROLLBACK: the connection it gives back */
    struct lite *lite;        /* SQLite: the thread that ran BEGIN */
    struct stats *stats;
    const char *sql;          /* canal_db_query_sql()'s, or the statement's to prepare */
    canal_db_fn fn;
    void *data;
    int n;
    const char **values;
    int *lengths, *formats;
    unsigned char *kinds;     /* each parameter's canal_db_kind_t (SQLite binds by type) */
    PGresult *res;
    struct table *table;      /* SQLite's */
    char *errbuf;             /* SQLite's message, malloc'd */
    int got_null;
    struct timespec t0;
    /* a failure canal found itself */
    const char *error, *sqlstate;
    int unavailable;
};

/* Which column each of the first BIND_MEMO fields of a schema reads (canal_db_bind()), found
 * for the first row bound with that schema and kept for the result's other rows */
#define BIND_MEMO 32
struct bind_map {
    const canal_schema_t *schema;
    int col[BIND_MEMO]; /* by field: the column, or -1 */
};

struct canal_db_result {
    canal_req_t *req;
    PGresult *pg;
    const struct table *t;
    const char *error, *sqlstate;
    int unavailable;
    struct bind_map *map; /* the caller's, for the callback's time */
};

static const struct canal__feature feature;
static const char rstate_key = 0;
/* a connection's held while canal rolls back a transaction left open */
static struct canal_db_tx rolling_back;

static void conn_connect(struct conn *c);
static void conn_lost(struct conn *c, const char *why);
static void conn_read(struct conn *c);
static void dispatch_waiting(struct dbw *dw);
static void cancel_let_go(struct conn *c);
static struct db *client_on(canal_app_t *app, const char *url, const canal_db_options_t *opt, canal_error_info_t *err);
static int lite_open(canal_app_t *app, const char *path, const canal_db_options_t *opt, canal_error_info_t *err);
static void lite_submit(struct dbw *dw, struct query *q, struct canal_db_tx *tx);
static void lite_rollback(struct lite *l, struct query **made);

/* ---- delivering results ---- */

static void stats_add(struct stats *s, const struct timespec *t0, int failed)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
    atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
    if (failed)
        atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->usec, (unsigned long long)(secs * 1e6), memory_order_relaxed);
    for (size_t i = 0; i < NBUCKETS; i++)
        if (secs <= buckets[i]) {
            atomic_fetch_add_explicit(&s->le[i], 1, memory_order_relaxed);
            break;
        }
}

static int conn_send(struct conn *c, struct query *q);

/* A transaction left open: ROLLBACK, and the connection back to the pool when it is back. */
static void rollback_left_open(struct conn *c)
{
    struct query *q = calloc(1, sizeof(*q));
    c->held = &rolling_back;
    if (q != NULL) {
        *q = (struct query){.kind = Q_ROLLBACK, .dw = c->dw, .sql = "ROLLBACK", .conn = c};
        if (conn_send(c, q) == 0)
            return;
        free(q);
    }
    conn_lost(c, "cannot roll back a transaction left open"); /* never returned dirty */
}

static void table_free(struct table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->cols; i++)
        free(t->names[i]);
    for (size_t i = 0; t->cells != NULL && i < t->rows * t->cols + t->cap; i++)
        free(t->cells[i]);
    free(t->names);
    free(t->cells);
    free(t->lens);
    free(t);
}

static void query_free(struct query *q)
{
    PQclear(q->res);
    table_free(q->table);
    free(q->errbuf);
    free(q);
}

/* The batch has nothing in flight: its then callback, then the commit. */
static void batch_settle(struct batch *b)
{
    if (b->inflight > 0 || b->in_callback > 0)
        return;
    canal_req_t *req = canal_pending_req(b->p);
    if (req != NULL && b->then != NULL) {
        void (*fn)(canal_req_t *, void *) = b->then;
        b->then = NULL;
        b->in_callback++;
        fn(req, b->then_data);
        b->in_callback--;
        if (b->inflight > 0)
            return; /* it started more */
    }
    if (b->tx != NULL) {
        struct canal_db_tx *tx = b->tx;
        if (tx->c != NULL)
            rollback_left_open(tx->c);
        else if (tx->lt != NULL)
            lite_rollback(tx->lt, &tx->rollback);
        free(tx->rollback);
        free(tx);
    }
    if (b->slot != NULL)
        *b->slot = NULL;
    canal_pending_complete(b->p);
    free(b);
}

static void deliver(struct dbw *dw, struct query *q)
{
    int failed = q->error != NULL;
    if (q->res != NULL && q->error == NULL) {
        ExecStatusType s = PQresultStatus(q->res);
        failed = s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK;
    }
    if (q->kind == Q_NOOP) { /* a batch's release (batch_release_soon()) */
        struct batch *b = q->b;
        free(q);
        b->inflight--;
        batch_settle(b);
        return;
    }
    if (q->kind == Q_ROLLBACK && q->conn->held == &rolling_back) {
        q->conn->held = NULL;
        if (!dw->stopping)
            dispatch_waiting(dw);
    }
    if (q->kind != Q_USER) {
        if (failed && !dw->stopping)
            canal__log(dw->db->app, CANAL_LOG_ERROR, "database: %s %s failed: %s",
                       q->kind == Q_PREPARE ? "preparing" : "setting up with", q->st ? q->st->name : q->sql,
                       q->error ? q->error : PQresultErrorMessage(q->res));
        PQclear(q->res);
        free(q);
        return;
    }
    stats_add(q->stats, &q->t0, failed);
    struct batch *b = q->b;
    if (q->begins != NULL && dw->db->sqlite) { /* SQLite: BEGIN is back; its thread holds it */
        q->begins->lt = q->lite;
        q->begins->began = 1;
    }
    if (q->ends != NULL)
        q->ends->lt = NULL;
    if (q->ends != NULL && q->ends->c != NULL) { /* the connection goes back to the pool */
        q->ends->c->held = NULL;
        q->ends->c = NULL;
        if (!dw->stopping)
            dispatch_waiting(dw);
    }
    canal_req_t *req = canal_pending_req(b->p);
    if (req != NULL && q->fn != NULL) {
        struct bind_map map;
        map.schema = NULL; /* col[] is written before it is read */
        struct canal_db_result res = {.req = req, .pg = q->res, .t = q->table, .error = q->error,
                                      .sqlstate = q->sqlstate, .unavailable = q->unavailable, .map = &map};
        if (q->error == NULL && failed) {
            /* the primary message alone: the server's DETAIL may hold the row's values */
            res.error = PQresultErrorField(q->res, PG_DIAG_MESSAGE_PRIMARY);
            if (res.error == NULL || *res.error == '\0')
                res.error = "the query failed";
            const char *state = PQresultErrorField(q->res, PG_DIAG_SQLSTATE);
            res.sqlstate = state != NULL ? state : "XX000";
            /* the server going away (57P01...) or a connection fault (08..., but not 08P01, a
             * protocol violation such as a wrong parameter count): worth retrying */
            res.unavailable = strncmp(res.sqlstate, "57P0", 4) == 0 ||
                              (strncmp(res.sqlstate, "08", 2) == 0 && strcmp(res.sqlstate, "08P01") != 0);
        }
        if (dw->db->opt.slow_ms > 0) {
            struct timespec t1;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double ms = (double)(t1.tv_sec - q->t0.tv_sec) * 1e3 + (t1.tv_nsec - q->t0.tv_nsec) / 1e6;
            if (ms >= dw->db->opt.slow_ms)
                canal__log_req(req, CANAL_LOG_WARN, "database: slow query %s: %.1f ms",
                               q->st ? q->st->name : "(sql)", ms);
        }
        b->in_callback++;
        q->fn(req, &res, q->data);
        b->in_callback--;
    }
    query_free(q);
    b->inflight--;
    batch_settle(b);
}

static void on_soon(h2o_timeout_entry_t *e)
{
    struct dbw *dw = H2O_STRUCT_FROM_MEMBER(struct dbw, soon_entry, e);
    h2o_linklist_t list;
    h2o_linklist_init_anchor(&list);
    h2o_linklist_insert_list(&list, &dw->soon);
    while (!h2o_linklist_is_empty(&list)) {
        struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, link, list.next);
        h2o_linklist_unlink(&q->link);
        deliver(dw, q);
    }
}

/* Fails q on the next turn of the loop. */
static void fail_soon(struct dbw *dw, struct query *q, const char *error, const char *sqlstate, int unavailable)
{
    q->error = error;
    q->sqlstate = sqlstate;
    q->unavailable = unavailable;
    h2o_linklist_insert(&dw->soon, &q->link);
    if (!dw->stopping && !h2o_timeout_is_linked(&dw->soon_entry))
        h2o_timeout_link(dw->loop, &dw->soon_to, &dw->soon_entry);
}

/* ---- connections ---- */

static void on_io(h2o_socket_t *sock, const char *err);

static void on_writable(h2o_socket_t *sock, const char *err);

/* Calls on_writable() once sock is writable (libh2o takes one such request at a time) */
static void notify_write(struct conn *c)
{
    if (!c->notified) {
        c->notified = 1;
        h2o_socket_notify_write(c->sock, on_writable);
    }
}

static void on_writable(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;
    c->notified = 0;
    if (c->state == C_CONNECTING) {
        if (c->want_write)
            conn_connect(c);
        return;
    }
    if (c->state == C_READY) {
        int r = PQflush(c->pg);
        if (r < 0)
            conn_lost(c, PQerrorMessage(c->pg));
        else if (r == 1)
            notify_write(c);
    }
}

static void close_sock(struct conn *c)
{
    if (c->sock != NULL) {
        h2o_socket_read_stop(c->sock);
        h2o_socket_close(c->sock); /* closes our dup, not libpq's descriptor */
        c->sock = NULL;
    }
    c->notified = 0;
    c->corked = 0;
    c->fd = -1;
}

/* Watches libpq's current descriptor (it changes while libpq tries the hosts of a URL). */
static int watch(struct conn *c)
{
    int fd = PQsocket(c->pg);
    if (fd == c->fd && c->sock != NULL)
        return 0;
    close_sock(c);
    int d = fd >= 0 ? dup(fd) : -1;
    if (d < 0)
        return -1;
    c->sock = h2o_evloop_socket_create(c->dw->loop, d, H2O_SOCKET_FLAG_DONT_READ);
    c->sock->data = c;
    c->fd = fd;
    h2o_socket_read_start(c->sock, on_io);
    return 0;
}

static void schedule_retry(struct conn *c)
{
    struct dbw *dw = c->dw;
    c->retry_at = h2o_now(dw->loop) + c->backoff_ms;
    c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
    if (!dw->stopping && !h2o_timeout_is_linked(&c->retry))
        h2o_timeout_link(dw->loop, &dw->retry_to, &c->retry);
}

/* Closes c, fails what it had in flight, and connects again later. */
static void conn_lost(struct conn *c, const char *why)
{
    struct dbw *dw = c->dw;
    if (c->state == C_READY) {
        atomic_fetch_sub_explicit(&dw->db->ready, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&dw->db->losses, 1, memory_order_relaxed);
    }
    if (!dw->stopping)
        canal__log(dw->db->app, CANAL_LOG_WARN, "database: connection %zu of worker %zu: %s",
                   (size_t)(c - dw->conns), dw->w->index, why && *why ? why : "lost");
    close_sock(c);
    cancel_let_go(c); /* it was for the backend now gone */
    PQfinish(c->pg);
    c->pg = NULL;
    c->state = C_DOWN;
    if (c->held != NULL && c->held != &rolling_back)
        c->held->c = NULL; /* its transaction is over: its next statements fail */
    c->held = NULL;
    while (!h2o_linklist_is_empty(&c->inflight)) {
        struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, link, c->inflight.next);
        h2o_linklist_unlink(&q->link);
        if (q->kind == Q_USER)
            atomic_fetch_sub_explicit(&dw->db->inflight, 1, memory_order_relaxed);
        PQclear(q->res);
        q->res = NULL;
        fail_soon(dw, q, "the database connection was lost", "08006", 1);
    }
    c->ninflight = 0;
    schedule_retry(c);
}

/* The end of the loop's turn: what the corked connections hold leaves in full packets */
static void on_uncork(h2o_timeout_entry_t *e)
{
    struct dbw *dw = H2O_STRUCT_FROM_MEMBER(struct dbw, uncork_entry, e);
    int off = 0;
    for (size_t i = 0; i < dw->nconns; i++) {
        struct conn *c = &dw->conns[i];
        if (c->corked && c->fd >= 0)
            setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof(off));
        c->corked = 0;
    }
}

/* libpq 15 sends at every Sync, and canal syncs every query: over TCP the sends of one turn
 * of the loop are corked, so that they leave together (the server reads them at once) when
 * the turn ends. A unix socket has no cork: one send per query. */
static void cork(struct conn *c)
{
    if (!c->tcp || c->corked || c->dw->stopping)
        return;
    int on = 1;
    if (setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on)) != 0) {
        c->tcp = 0;
        return;
    }
    c->corked = 1;
    struct dbw *dw = c->dw;
    if (!h2o_timeout_is_linked(&dw->uncork_entry))
        h2o_timeout_link(dw->loop, &dw->soon_to, &dw->uncork_entry);
}

/* Sends q on c (ready): the query and its own Sync. 0, or -1 (c is lost; q not taken). */
static int conn_send(struct conn *c, struct query *q)
{
    int ok;
    cork(c);
    if (q->kind == Q_PREPARE)
        ok = PQsendPrepare(c->pg, q->st->name, q->st->sql, 0, NULL);
    else if (q->kind == Q_SETUP || q->kind == Q_ROLLBACK)
        ok = PQsendQueryParams(c->pg, q->sql, 0, NULL, NULL, NULL, NULL, 0);
    else if (q->st != NULL)
        ok = PQsendQueryPrepared(c->pg, q->st->name, q->n, q->values, q->lengths, q->formats, 0);
    else
        ok = PQsendQueryParams(c->pg, q->sql, q->n, NULL, q->values, q->lengths, q->formats, 0);
    if (!ok || !PQpipelineSync(c->pg))
        return -1;
    h2o_linklist_insert(&c->inflight, &q->link);
    c->ninflight++;
    if (q->begins != NULL) {
        c->held = q->begins;
        q->begins->c = c;
        q->begins->began = 1;
    }
    if (q->kind == Q_USER)
        atomic_fetch_add_explicit(&c->dw->db->inflight, 1, memory_order_relaxed);
    /* PQpipelineSync() flushed what it could: the rest when the socket is writable */
    if (PQflush(c->pg) == 1)
        notify_write(c);
    return 0;
}

static void conn_ready(struct conn *c)
{
    struct dbw *dw = c->dw;
    if (PQsetnonblocking(c->pg, 1) != 0 || !PQenterPipelineMode(c->pg)) {
        conn_lost(c, PQerrorMessage(c->pg));
        return;
    }
    c->state = C_READY;
    c->backoff_ms = BACKOFF_MIN_MS;
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    c->tcp = getsockname(c->fd, (struct sockaddr *)&sa, &len) == 0 &&
             (sa.ss_family == AF_INET || sa.ss_family == AF_INET6);
    atomic_fetch_add_explicit(&dw->db->ready, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&dw->db->connects, 1, memory_order_relaxed);
    /* the text of dates as canal_db_timestamp() reads it, then every statement */
    for (size_t i = 0; i <= dw->db->nstmts; i++) {
        struct query *q = calloc(1, sizeof(*q));
        if (q == NULL) {
            conn_lost(c, "out of memory");
            return;
        }
        q->dw = dw;
        if (i == 0) {
            q->kind = Q_SETUP;
            q->sql = "SET DateStyle = ISO";
        } else {
            q->kind = Q_PREPARE;
            q->st = &dw->db->stmts[i - 1];
        }
        if (conn_send(c, q) != 0) {
            free(q);
            conn_lost(c, PQerrorMessage(c->pg));
            return;
        }
    }
    dispatch_waiting(dw);
}

/* One step of PQconnectPoll(), on the event it asked for. */
static void conn_connect(struct conn *c)
{
    PostgresPollingStatusType st = PQconnectPoll(c->pg);
    if (st != PGRES_POLLING_FAILED && watch(c) != 0)
        st = PGRES_POLLING_FAILED;
    switch (st) {
    case PGRES_POLLING_READING:
        c->want_write = 0;
        break;
    case PGRES_POLLING_WRITING:
        c->want_write = 1;
        notify_write(c);
        break;
    case PGRES_POLLING_OK:
        conn_ready(c);
        break;
    default:
        conn_lost(c, PQerrorMessage(c->pg));
        break;
    }
}

static void conn_start(struct conn *c)
{
    c->pg = PQconnectStart(c->dw->db->url);
    c->fd = -1;
    if (c->pg == NULL) {
        schedule_retry(c);
        return;
    }
    if (PQstatus(c->pg) == CONNECTION_BAD) {
        conn_lost(c, PQerrorMessage(c->pg));
        return;
    }
    c->state = C_CONNECTING;
    c->want_write = 1; /* the first PQconnectPoll() waits for a writable socket */
    if (watch(c) != 0) {
        conn_lost(c, "cannot watch the connection's socket");
        return;
    }
    notify_write(c);
}

static void on_io(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;
    if (c->state == C_CONNECTING) {
        if (!c->want_write)
            conn_connect(c);
        return;
    }
    if (c->state == C_READY)
        conn_read(c);
}

/* Reads what came and hands each query its result, in order. */
static void conn_read(struct conn *c)
{
    if (!PQconsumeInput(c->pg)) {
        conn_lost(c, PQerrorMessage(c->pg));
        return;
    }
    struct dbw *dw = c->dw;
    while (c->pg != NULL && !h2o_linklist_is_empty(&c->inflight) && !PQisBusy(c->pg)) {
        struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, link, c->inflight.next);
        PGresult *r = PQgetResult(c->pg);
        if (r == NULL) {
            if (q->got_null)
                break; /* nothing more to read yet */
            q->got_null = 1;
            continue;
        }
        if (PQresultStatus(r) != PGRES_PIPELINE_SYNC) {
            if (q->res == NULL)
                q->res = r;
            else
                PQclear(r);
            continue;
        }
        PQclear(r);
        h2o_linklist_unlink(&q->link);
        c->ninflight--;
        if (q->kind == Q_USER)
            atomic_fetch_sub_explicit(&dw->db->inflight, 1, memory_order_relaxed);
        deliver(dw, q); /* may send more, on c too, or lose c (c->pg NULL) */
    }
    if (c->pg != NULL && PQstatus(c->pg) == CONNECTION_BAD)
        conn_lost(c, PQerrorMessage(c->pg));
    else if (c->pg != NULL)
        dispatch_waiting(dw);
}

static void on_retry(h2o_timeout_entry_t *e)
{
    struct conn *c = H2O_STRUCT_FROM_MEMBER(struct conn, retry, e);
    if (c->dw->stopping)
        return;
    if (h2o_now(c->dw->loop) < c->retry_at) {
        h2o_timeout_link(c->dw->loop, &c->dw->retry_to, &c->retry);
        return;
    }
    conn_start(c);
}

/* ---- queries ---- */

/* The ready connection with the fewest queries in flight, under max_pipeline; or NULL */
static struct conn *pick(struct dbw *dw)
{
    struct conn *best = NULL;
    for (size_t i = 0; i < dw->nconns; i++) {
        struct conn *c = &dw->conns[i];
        if (c->state == C_READY && c->held == NULL && c->cancel == NULL && c->ninflight < dw->db->opt.max_pipeline &&
            (best == NULL || c->ninflight < best->ninflight))
            best = c;
    }
    return best;
}

/* Sends q now, or queues it, or fails it. */
static void submit(struct dbw *dw, struct query *q)
{
    if (dw->nwaiting == 0) {
        struct conn *c = pick(dw);
        if (c != NULL) {
            if (conn_send(c, q) == 0)
                return;
            conn_lost(c, PQerrorMessage(c->pg));
        }
    }
    if (dw->nwaiting >= dw->db->opt.max_waiting) {
        fail_soon(dw, q, "no database connection: too many queries waiting", "08001", 1);
        return;
    }
    h2o_linklist_insert(&dw->waiting, &q->link);
    dw->nwaiting++;
    atomic_fetch_add_explicit(&dw->db->waiting, 1, memory_order_relaxed);
    h2o_timeout_link(dw->loop, &dw->wait_to, &q->wait);
}

static void unwait(struct dbw *dw, struct query *q)
{
    h2o_linklist_unlink(&q->link);
    if (h2o_timeout_is_linked(&q->wait))
        h2o_timeout_unlink(&q->wait);
    dw->nwaiting--;
    atomic_fetch_sub_explicit(&dw->db->waiting, 1, memory_order_relaxed);
}

static void dispatch_waiting(struct dbw *dw)
{
    while (!h2o_linklist_is_empty(&dw->waiting)) {
        struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, link, dw->waiting.next);
        if (canal_pending_req(q->b->p) == NULL) { /* its request is gone: never sent */
            unwait(dw, q);
            q->error = "canceled: the request is gone";
            q->sqlstate = "57014";
            deliver(dw, q);
            continue;
        }
        struct conn *c = pick(dw);
        if (c == NULL)
            return;
        unwait(dw, q);
        if (conn_send(c, q) != 0) {
            conn_lost(c, PQerrorMessage(c->pg));
            fail_soon(dw, q, "the database connection was lost", "08006", 1);
        }
    }
}

static void on_wait_timeout(h2o_timeout_entry_t *e)
{
    struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, wait, e);
    struct dbw *dw = q->dw;
    unwait(dw, q);
    q->error = "no database connection in time";
    q->sqlstate = "08001";
    q->unavailable = 1;
    deliver(dw, q);
}

/* Formats the parameters into q (made large enough by query_make()). */
static struct query *query_make(const struct canal_db_param *params, size_t n, const char *sql)
{
    size_t text = 0, sqllen = sql ? strlen(sql) + 1 : 0;
    for (size_t i = 0; i < n; i++)
        text += params[i].kind == CANAL_DB_P_TEXT || params[i].kind == CANAL_DB_P_BYTEA ? params[i].len + 1 : 32;
    size_t size = sizeof(struct query) + n * (sizeof(char *) + 2 * sizeof(int) + 1) + text + sqllen;
    struct query *q = malloc(size);
    if (q == NULL)
        return NULL;
    *q = (struct query){.kind = Q_USER, .n = (int)n};
    char *p = (char *)(q + 1);
    q->values = (const char **)p;
    p += n * sizeof(char *);
    q->lengths = (int *)p;
    p += n * sizeof(int);
    q->formats = (int *)p;
    p += n * sizeof(int);
    q->kinds = (unsigned char *)p;
    p += n;
    for (size_t i = 0; i < n; i++) {
        const canal_db_param_t *a = &params[i];
        q->kinds[i] = (unsigned char)a->kind;
        q->formats[i] = 0;
        q->lengths[i] = 0;
        switch (a->kind) {
        case CANAL_DB_P_NULL:
            q->values[i] = NULL;
            continue;
        case CANAL_DB_P_TEXT:
        case CANAL_DB_P_BYTEA:
            memcpy(p, a->s, a->len);
            p[a->len] = '\0';
            q->lengths[i] = (int)a->len;
            q->formats[i] = a->kind == CANAL_DB_P_BYTEA;
            q->values[i] = p;
            p += a->len + 1;
            continue;
        case CANAL_DB_P_INT:
            p[canal__i64_text(p, a->i)] = '\0';
            break;
        case CANAL_DB_P_DOUBLE:
            snprintf(p, 32, "%.17g", a->d);
            break;
        case CANAL_DB_P_BOOL:
            snprintf(p, 32, "%s", a->i ? "t" : "f");
            break;
        }
        q->values[i] = p;
        p += 32;
    }
    if (sql != NULL) {
        memcpy(p, sql, sqllen);
        q->sql = p;
    }
    return q;
}

/* ---- cancelling the query of a request that is gone ----
 *
 * A cancel request (PQcancel()) makes the server stop whatever its backend runs when the
 * request arrives, whoever's query that is. On a pipelined connection that may be another
 * request's: so canal cancels only when the gone request's query is the only one in flight on
 * its connection (and not in a transaction, whose ROLLBACK must not be hit), and sends nothing
 * more on that connection until PQcancel() is back. By then the server has signalled the
 * backend: the query still running stops (57014: its result is dropped, as any result of a
 * gone request), and a backend already idle ignores the signal (PostgreSQL discards a cancel
 * that arrives while it waits for a command), so the next query is safe. Queries pipelined
 * behind others are not cancelled; the server finishes them. PQcancel() blocks (a connection
 * of its own to the server): it runs on the offload pool (canal_offload_job()); without one,
 * nothing is cancelled. (kore cancels too, with a blocking PQcancel() on its worker, but runs one
 * query per connection.) */

static void cancel_unref(struct cancel *k)
{
    if (atomic_fetch_sub_explicit(&k->refs, 1, memory_order_acq_rel) == 1) {
        if (k->pg != NULL)
            PQfreeCancel(k->pg);
        free(k);
    }
}

/* The connection lets go of its cancel (lost, or the worker stopping): no longer held. */
static void cancel_let_go(struct conn *c)
{
    struct cancel *k = c->cancel;
    if (k == NULL)
        return;
    c->cancel = NULL;
    if (atomic_exchange_explicit(&k->c, NULL, memory_order_acq_rel) != NULL)
        cancel_unref(k);
}

static void cancel_work(void *data) /* on an offload thread */
{
    struct cancel *k = data;
    k->ok = PQcancel(k->pg, k->err, sizeof(k->err));
}

static void cancel_done(void *data) /* back on the worker (or on the pool once it has stopped) */
{
    struct cancel *k = data;
    /* only the worker touches its connections: on the pool (the worker stopping) the job lets
     * go of its reference alone, and the connection of its own in cancel_let_go() */
    struct conn *c = canal__worker_current() == k->dw->w ? atomic_exchange_explicit(&k->c, NULL, memory_order_acq_rel)
                                                          : NULL;
    if (c != NULL) {
        struct dbw *dw = c->dw;
        c->cancel = NULL;
        cancel_unref(k); /* the connection's */
        if (!k->ok)
            canal__log(dw->db->app, CANAL_LOG_WARN, "database: cannot cancel a query: %s", k->err);
        if (!dw->stopping)
            dispatch_waiting(dw); /* the connection takes queries again */
    }
    cancel_unref(k);
}

static void lite_interrupt(struct db *db, struct batch *b);

/* b's request is gone: cancels its query where that is safe (above) */
static void cancel_sent(struct batch *b)
{
    struct dbw *dw = b->dw;
    if (dw == NULL || dw->stopping || dw->w->stopping)
        return; /* a draining worker ends its requests: the server finishes their queries */
    if (dw->db->sqlite) {
        atomic_store_explicit(&b->gone, 1, memory_order_relaxed);
        lite_interrupt(dw->db, b);
        return;
    }
    for (size_t i = 0; i < dw->nconns; i++) {
        struct conn *c = &dw->conns[i];
        if (c->state != C_READY || c->held != NULL || c->cancel != NULL || c->ninflight != 1)
            continue;
        struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, link, c->inflight.next);
        if (q->b != b || q->kind != Q_USER)
            continue;
        struct cancel *k = calloc(1, sizeof(*k));
        if (k == NULL || (k->pg = PQgetCancel(c->pg)) == NULL) {
            free(k);
            continue;
        }
        atomic_init(&k->refs, 2);
        atomic_init(&k->c, c);
        k->dw = dw;
        c->cancel = k;
        if (canal_offload_job(dw->db->app, cancel_work, cancel_done, k) != 0) {
            c->cancel = NULL; /* no pool, or its queue is full: the server finishes the query */
            PQfreeCancel(k->pg);
            free(k);
            continue;
        }
        atomic_fetch_add_explicit(&dw->db->cancels, 1, memory_order_relaxed);
    }
}

static void rstate_gone(void *state)
{
    struct batch **slot = state;
    if (*slot != NULL) {
        (*slot)->slot = NULL;
        cancel_sent(*slot);
    }
}

/* The request's batch, made (and the request deferred) on its first query; NULL with a 500
 * set when it cannot be. */
static struct batch *batch_of(canal_req_t *req)
{
    struct batch **slot = canal__req_state(req, &rstate_key, sizeof(*slot), rstate_gone);
    if (slot == NULL) {
        canal_req_fail(req, "database: out of memory");
        return NULL;
    }
    if (*slot != NULL)
        return *slot;
    struct batch *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        canal_req_fail(req, "database: out of memory");
        return NULL;
    }
    if ((b->p = canal_req_defer(req)) == NULL) {
        free(b);
        canal_req_fail(req, "database: cannot defer the request (deferred already by other code?)");
        return NULL;
    }
    b->slot = slot;
    *slot = b;
    return b;
}

static struct stmt *find_stmt(struct db *db, const char *name)
{
    for (size_t i = 0; i < db->nstmts; i++)
        if (strcmp(db->stmts[i].name, name) == 0)
            return &db->stmts[i];
    return NULL;
}

/* How a query is sent: to the pool, as a transaction's BEGIN, in it, or ending it */
enum { TO_POOL, TX_BEGIN, TX_IN, TX_END };

static int start_query(canal_req_t *req, struct stmt *st, const char *sql, const canal_db_param_t *params, size_t n,
                       canal_db_fn fn, void *data, struct canal_db_tx *tx, int how)
{
    struct dbw *dw = canal__worker_state(req->worker, &feature);
    if (dw == NULL)
        return canal_req_fail(req, "database: no client (canal_app_db())");
    if (n > 65535 || (n > 0 && params == NULL))
        return canal_req_fail(req, "database: bad parameters");
    if (dw->stopping) {
        canal_res_header(req, "retry-after", "1");
        canal_res_problem(req, 503, "the server is shutting down");
        return 0;
    }
    struct query *q = query_make(params, n, sql);
    if (q == NULL)
        return canal_req_fail(req, "database: out of memory");
    struct batch *b = batch_of(req);
    if (b == NULL) {
        free(q);
        return 0;
    }
    q->dw = dw;
    q->wait.cb = on_wait_timeout;
    q->b = b;
    b->dw = dw;
    q->st = st;
    q->stats = st != NULL ? &st->stats : &dw->db->adhoc;
    q->fn = fn;
    q->data = data;
    clock_gettime(CLOCK_MONOTONIC, &q->t0);
    b->inflight++;
    if (how == TO_POOL && b->tx != NULL && !b->tx->ended && b->tx->c != NULL) {
        tx = b->tx; /* PostgreSQL: the request's transaction holds a connection; its other
                     * queries run there, in it (SQLite: its thread takes them, lite_main()) */
        how = TX_IN;
    }
    if (how == TX_BEGIN)
        q->begins = tx;
    if (how == TX_END) {
        q->ends = tx;
        tx->ended = 1;
    }
    if (dw->db->sqlite) {
        lite_submit(dw, q, how == TX_IN || how == TX_END ? tx : NULL);
    } else if (how == TO_POOL || how == TX_BEGIN) {
        submit(dw, q);
    } else if (tx->c == NULL) {
        fail_soon(dw, q, "the transaction's connection was lost", "08006", 1);
    } else if (conn_send(tx->c, q) != 0) {
        conn_lost(tx->c, PQerrorMessage(tx->c->pg));
        fail_soon(dw, q, "the transaction's connection was lost", "08006", 1);
    }
    return CANAL_PENDING;
}

int canal_db_query(canal_req_t *req, const char *name, const canal_db_param_t *params, size_t n, canal_db_fn fn,
                   void *data)
{
    struct db *db = canal__feature_state(req->app, &feature);
    struct stmt *st = db != NULL && name != NULL ? find_stmt(db, name) : NULL;
    if (st == NULL)
        return canal_req_fail(req, "database: no statement %s (canal_db_prepare())", name ? name : "(null)");
    return start_query(req, st, NULL, params, n, fn, data, NULL, TO_POOL);
}

int canal_db_query_sql(canal_req_t *req, const char *sql, const canal_db_param_t *params, size_t n, canal_db_fn fn,
                       void *data)
{
    if (sql == NULL || *sql == '\0')
        return canal_req_fail(req, "database: empty SQL");
    return start_query(req, NULL, sql, params, n, fn, data, NULL, TO_POOL);
}

/* ---- transactions ---- */

/* A batch made for a request whose first statement could not start: released on the next
 * turn of the loop, after the handler's answer (not committed from inside the handler) */
static void batch_release_soon(canal_req_t *req, struct batch *b)
{
    struct query *q = b->inflight == 0 ? calloc(1, sizeof(*q)) : NULL;
    if (q == NULL)
        return; /* queries in flight release it (or, out of memory, it stays) */
    q->kind = Q_NOOP;
    q->b = b;
    b->inflight++;
    fail_soon(canal__worker_state(req->worker, &feature), q, NULL, NULL, 0);
}

canal_db_tx_t *canal_db_begin(canal_req_t *req, canal_db_fn fn, void *data)
{
    struct batch *b = batch_of(req);
    if (b == NULL)
        return NULL;
    if (b->tx != NULL) {
        canal_req_fail(req, "database: one transaction at a time per request");
        return NULL;
    }
    struct db *db = canal__feature_state(req->app, &feature);
    struct canal_db_tx *tx = calloc(1, sizeof(*tx));
    if (tx != NULL && db != NULL && db->sqlite && (tx->rollback = calloc(1, sizeof(*tx->rollback))) == NULL) {
        free(tx);
        tx = NULL;
    }
    if (tx != NULL) {
        tx->b = b;
        b->tx = tx;
        if (start_query(req, NULL, "BEGIN", NULL, 0, fn, data, tx, TX_BEGIN) == CANAL_PENDING)
            return tx;
        b->tx = NULL;
        free(tx->rollback);
        free(tx);
    } else {
        canal_req_fail(req, "database: out of memory");
    }
    batch_release_soon(req, b);
    return NULL;
}

/* The transaction's request, or NULL (with the reason set as a 500) when tx cannot take a
 * statement now */
static canal_req_t *tx_req(struct canal_db_tx *tx)
{
    canal_req_t *req = tx != NULL ? canal_pending_req(tx->b->p) : NULL;
    if (req == NULL)
        return NULL;
    if (tx->ended) {
        canal_req_fail(req, "database: the transaction has ended");
        return NULL;
    }
    if (tx->c == NULL && !tx->began) {
        canal_req_fail(req, "database: start a transaction's statements once BEGIN is back");
        return NULL;
    }
    return req;
}

int canal_db_tx_query(canal_db_tx_t *tx, const char *name, const canal_db_param_t *params, size_t n,
                      canal_db_fn fn, void *data)
{
    canal_req_t *req = tx_req(tx);
    if (req == NULL)
        return 0;
    struct db *db = canal__feature_state(req->app, &feature);
    struct stmt *st = name != NULL ? find_stmt(db, name) : NULL;
    if (st == NULL)
        return canal_req_fail(req, "database: no statement %s (canal_db_prepare())", name ? name : "(null)");
    return start_query(req, st, NULL, params, n, fn, data, tx, TX_IN);
}

int canal_db_tx_query_sql(canal_db_tx_t *tx, const char *sql, const canal_db_param_t *params, size_t n,
                          canal_db_fn fn, void *data)
{
    canal_req_t *req = tx_req(tx);
    if (req == NULL)
        return 0;
    if (sql == NULL || *sql == '\0')
        return canal_req_fail(req, "database: empty SQL");
    return start_query(req, NULL, sql, params, n, fn, data, tx, TX_IN);
}

int canal_db_commit(canal_db_tx_t *tx, canal_db_fn fn, void *data)
{
    canal_req_t *req = tx_req(tx);
    return req != NULL ? start_query(req, NULL, "COMMIT", NULL, 0, fn, data, tx, TX_END) : 0;
}

int canal_db_rollback(canal_db_tx_t *tx, canal_db_fn fn, void *data)
{
    canal_req_t *req = tx_req(tx);
    return req != NULL ? start_query(req, NULL, "ROLLBACK", NULL, 0, fn, data, tx, TX_END) : 0;
}

int canal_db_then(canal_req_t *req, void (*fn)(canal_req_t *req, void *data), void *data)
{
    struct batch **slot = (struct batch **)canal__req_state_find(req, &rstate_key);
    if (slot == NULL || *slot == NULL)
        return CANAL_ESTATE;
    (*slot)->then = fn;
    (*slot)->then_data = data;
    return 0;
}

int canal_db_ready(canal_app_t *app, void *data)
{
    struct db *db = canal__feature_state(app, &feature);
    return db == NULL || db->url == NULL || atomic_load_explicit(&db->ready, memory_order_relaxed) > 0;
}

/* ---- results ---- */

const char *canal_db_error(const canal_db_result_t *res)
{
    return res->error;
}

const char *canal_db_sqlstate(const canal_db_result_t *res)
{
    return res->error != NULL && res->sqlstate != NULL ? res->sqlstate : "";
}

int canal_db_unavailable(const canal_db_result_t *res)
{
    return res->error != NULL && res->unavailable;
}

int canal_db_failed(canal_req_t *req, const canal_db_result_t *res)
{
    if (res->error == NULL)
        return 0;
    if (res->unavailable) {
        canal_res_header(req, "retry-after", "1");
        canal_res_problem(req, 503, "the database is unavailable: try again shortly");
    } else {
        canal__log_req(req, CANAL_LOG_ERROR, "database: %s (SQLSTATE %s)", res->error, canal_db_sqlstate(res));
        canal_res_problem(req, 500, "a database query failed");
    }
    return 1;
}

size_t canal_db_rows(const canal_db_result_t *res)
{
    if (res->error != NULL)
        return 0;
    return res->t != NULL ? res->t->rows : res->pg != NULL ? (size_t)PQntuples(res->pg) : 0;
}

size_t canal_db_cols(const canal_db_result_t *res)
{
    if (res->error != NULL)
        return 0;
    return res->t != NULL ? res->t->cols : res->pg != NULL ? (size_t)PQnfields(res->pg) : 0;
}

const char *canal_db_col_name(const canal_db_result_t *res, size_t col)
{
    if (col >= canal_db_cols(res))
        return NULL;
    return res->t != NULL ? res->t->names[col] : PQfname(res->pg, (int)col);
}

int64_t canal_db_affected(const canal_db_result_t *res)
{
    if (res->error != NULL)
        return 0;
    if (res->t != NULL)
        return res->t->affected;
    const char *s = res->pg != NULL ? PQcmdTuples(res->pg) : "";
    return *s ? strtoll(s, NULL, 10) : 0;
}

int canal_db_is_null(const canal_db_result_t *res, size_t row, size_t col)
{
    if (res->error != NULL)
        return 1;
    if (res->t != NULL)
        return row >= res->t->rows || col >= res->t->cols || res->t->cells[row * res->t->cols + col] == NULL;
    /* checked here: out of range, PQgetisnull() would print a notice on stderr */
    return res->pg == NULL || row >= (size_t)PQntuples(res->pg) || col >= (size_t)PQnfields(res->pg) ||
           PQgetisnull(res->pg, (int)row, (int)col);
}

/* The text of a value, or NULL (NULL, out of range) */
static const char *value(const canal_db_result_t *res, size_t row, size_t col, size_t *len)
{
    if (canal_db_is_null(res, row, col))
        return NULL;
    if (res->t != NULL) {
        *len = res->t->lens[row * res->t->cols + col];
        return res->t->cells[row * res->t->cols + col];
    }
    *len = (size_t)PQgetlength(res->pg, (int)row, (int)col);
    return PQgetvalue(res->pg, (int)row, (int)col);
}

int canal_db_int64(const canal_db_result_t *res, size_t row, size_t col, int64_t *out)
{
    size_t len;
    const char *s = value(res, row, col, &len);
    if (s == NULL)
        return CANAL_ENOTFOUND;
    return canal_parse_int64((canal_str_t){s, len}, out); /* CANAL_ETYPE, CANAL_ERANGE */
}

int canal_db_int32(const canal_db_result_t *res, size_t row, size_t col, int32_t *out)
{
    int64_t v;
    int rc = canal_db_int64(res, row, col, &v);
    if (rc != 0)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return CANAL_ERANGE;
    *out = (int32_t)v;
    return 0;
}

int canal_db_double(const canal_db_result_t *res, size_t row, size_t col, double *out)
{
    size_t len;
    const char *s = value(res, row, col, &len);
    if (s == NULL)
        return CANAL_ENOTFOUND;
    char *end;
    double v = strtod(s, &end); /* also "NaN", "Infinity", "-Infinity": PostgreSQL's spellings */
    if (end == s || *end != '\0' || isspace((unsigned char)*s))
        return CANAL_ETYPE;
    *out = v;
    return 0;
}

int canal_db_bool(const canal_db_result_t *res, size_t row, size_t col, int *out)
{
    size_t len;
    const char *s = value(res, row, col, &len);
    if (s == NULL)
        return CANAL_ENOTFOUND;
    /* PostgreSQL's t and f; SQLite has no booleans but integers 1 and 0 */
    if (len != 1 || (*s != 't' && *s != 'f' && *s != '1' && *s != '0'))
        return CANAL_ETYPE;
    *out = *s == 't' || *s == '1';
    return 0;
}

int canal_db_text(const canal_db_result_t *res, size_t row, size_t col, canal_str_t *out)
{
    size_t len;
    const char *s = value(res, row, col, &len);
    if (s == NULL)
        return CANAL_ENOTFOUND;
    *out = (canal_str_t){s, len};
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int canal_db_bytea(const canal_db_result_t *res, size_t row, size_t col, canal_str_t *out)
{
    size_t len;
    const char *s = value(res, row, col, &len);
    if (s == NULL)
        return CANAL_ENOTFOUND;
    /* bytea_output = hex, the default since PostgreSQL 9.0: \x and two digits a byte */
    if (len < 2 || s[0] != '\\' || s[1] != 'x' || len % 2 != 0)
        return CANAL_ETYPE;
    size_t n = (len - 2) / 2;
    char *buf = canal_req_alloc(res->req, n + 1);
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(s[2 + 2 * i]), lo = hexval(s[3 + 2 * i]);
        if (hi < 0 || lo < 0)
            return CANAL_ETYPE;
        buf[i] = (char)(hi << 4 | lo);
    }
    buf[n] = '\0';
    *out = (canal_str_t){buf, n};
    return 0;
}

/* days since 1970-01-01 of a civil date (Howard Hinnant's algorithm) */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* n digits at *p into *v */
static int digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        *v = *v * 10 + (**p - '0');
    }
    return 0;
}

int canal_db_timestamp(const canal_db_result_t *res, size_t row, size_t col, int64_t *out)
{
    size_t len;
    const char *s = value(res, row, col, &len);
    if (s == NULL)
        return CANAL_ENOTFOUND;
    /* DateStyle ISO (the connection sets it): "2026-12-03 15:27:11.123456+05:30", the zone
     * only for timestamptz; years past 9999 have more digits, BC dates a " BC" suffix
     * (refused: ETYPE) */
    const char *p = s;
    int y = 0, mo, d, h, mi, sec;
    while (isdigit((unsigned char)*p) && p - s < 7)
        y = y * 10 + (*p++ - '0');
    if (p - s < 4 || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d) || *p++ != ' ' ||
        digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' || digits(&p, 2, &sec))
        return CANAL_ETYPE;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return CANAL_ETYPE;
    int64_t usec = 0;
    if (*p == '.') {
        p++;
        int nd = 0;
        while (isdigit((unsigned char)*p) && nd < 6) {
            usec = usec * 10 + (*p++ - '0');
            nd++;
        }
        if (nd == 0)
            return CANAL_ETYPE;
        for (; nd < 6; nd++)
            usec *= 10;
    }
    int64_t offset = 0;
    if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om = 0, os = 0;
        if (digits(&p, 2, &oh))
            return CANAL_ETYPE;
        if (*p == ':' && (p++, digits(&p, 2, &om)))
            return CANAL_ETYPE;
        if (*p == ':' && (p++, digits(&p, 2, &os)))
            return CANAL_ETYPE;
        offset = sign * ((int64_t)oh * 3600 + om * 60 + os);
    }
    if (*p != '\0')
        return CANAL_ETYPE;
    int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    *out = secs * 1000000 + usec;
    return 0;
}

/* The column named name, or -1 */
static int column_of(const canal_db_result_t *res, const char *name)
{
    for (size_t c = 0, n = canal_db_cols(res); c < n; c++)
        if (strcmp(canal_db_col_name(res, c), name) == 0)
            return (int)c;
    return -1;
}

int canal_db_bind(const canal_db_result_t *res, size_t row, const canal_schema_t *schema, void *out)
{
    if (row >= canal_db_rows(res))
        return CANAL_ENOTFOUND;
    struct bind_map *map = res->map;
    if (map->schema != schema) { /* a result's rows have the same columns: found once */
        for (size_t i = 0; i < BIND_MEMO && schema->fields[i].name != NULL; i++)
            map->col[i] = column_of(res, schema->fields[i].name);
        map->schema = schema;
    }
    memset(out, 0, schema->size);
    for (const canal_field_t *f = schema->fields; f->name != NULL; f++) {
        size_t i = (size_t)(f - schema->fields);
        int c = i < BIND_MEMO ? map->col[i] : column_of(res, f->name);
        if (c < 0 || canal_db_is_null(res, row, (size_t)c))
            continue;
        size_t col = (size_t)c;
        char *m = (char *)out + f->offset;
        int rc = 0;
        switch (f->type) {
        case CANAL_TYPE_INT32:
            rc = canal_db_int32(res, row, col, (int32_t *)(void *)m);
            break;
        case CANAL_TYPE_INT64:
            rc = canal_db_int64(res, row, col, (int64_t *)(void *)m);
            break;
        case CANAL_TYPE_DOUBLE:
            rc = canal_db_double(res, row, col, (double *)(void *)m);
            break;
        case CANAL_TYPE_BOOL: {
            int b;
            if ((rc = canal_db_bool(res, row, col, &b)) == 0) {
                if (f->size == sizeof(_Bool))
                    *(_Bool *)(void *)m = b;
                else
                    *(int *)(void *)m = b;
            }
            break;
        }
        case CANAL_TYPE_STRING:
        case CANAL_TYPE_CSTRING: {
            canal_str_t t;
            canal_db_text(res, row, col, &t);
            char *copy = canal_req_alloc(res->req, t.len + 1);
            memcpy(copy, t.base, t.len);
            copy[t.len] = '\0';
            if (f->type == CANAL_TYPE_STRING)
                *(canal_str_t *)(void *)m = (canal_str_t){copy, t.len};
            else
                *(const char **)(void *)m = copy;
            break;
        }
        default:
            return CANAL_EINVAL;
        }
        if (rc != 0)
            return rc;
        if (f->present)
            *((char *)out + f->present - 1) = 1;
    }
    return 0;
}

/* ---- SQLite: threads of its own ---- */

/* A SQLite thread's connection and its prepared statements (made on first use) */
/* A SQLite thread. Out of a transaction it takes queries from the db's queue; from BEGIN to
 * COMMIT or ROLLBACK it holds the write lock and takes only its own queue's, the statements
 * of the transaction it holds (lite_submit() with a tx). */
struct lite {
    struct db *db;
    sqlite3 *conn;
    sqlite3_stmt **stmts;
    h2o_linklist_t queue;     /* struct query, under db->lock */
    struct query *running;    /* under db->lock: the query it runs, for lite_interrupt() */
    int in_tx, tx_failed;     /* this thread's alone */
    struct batch *tx_batch;   /* in_tx: the batch whose transaction it holds (this thread's) */
    pthread_t thread;
};

static void lite_fail(struct query *q, const char *msg, const char *sqlstate, int unavailable)
{
    q->errbuf = strdup(msg ? msg : "SQLite failed");
    q->error = q->errbuf != NULL ? q->errbuf : "SQLite failed";
    q->sqlstate = sqlstate;
    q->unavailable = unavailable;
}

/* PostgreSQL's SQLSTATE for what SQLite said, so that handlers test one code on both */
static const char *lite_state(sqlite3 *conn, int rc)
{
    const char *msg = sqlite3_errmsg(conn);
    switch (sqlite3_extended_errcode(conn)) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
        return "23505";
    case SQLITE_CONSTRAINT_NOTNULL:
        return "23502";
    case SQLITE_CONSTRAINT_FOREIGNKEY:
        return "23503";
    case SQLITE_CONSTRAINT_CHECK:
        return "23514";
    }
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
        return "55P03";
    if ((rc & 0xff) == SQLITE_INTERRUPT)
        return "57014"; /* query_canceled: its request is gone (lite_interrupt()) */
    if (strncmp(msg, "near \"", 6) == 0 || strstr(msg, "syntax error") != NULL)
        return "42601";
    if (strncmp(msg, "no such table", 13) == 0)
        return "42P01";
    if (strncmp(msg, "no such column", 14) == 0)
        return "42703";
    return "HY000";
}

static int table_add(struct table *t, const char *v, size_t len)
{
    size_t i = t->rows * t->cols + t->cap; /* cap counts the cells of the row being read */
    if (i % 64 == 0) {
        size_t n = i + 64;
        char **c = realloc(t->cells, n * sizeof(*c));
        if (c != NULL)
            t->cells = c;
        size_t *l = realloc(t->lens, n * sizeof(*l));
        if (l != NULL)
            t->lens = l;
        if (c == NULL || l == NULL)
            return -1;
    }
    t->cells[i] = NULL;
    t->lens[i] = len;
    t->cap++;
    if (v == NULL)
        return 0;
    if ((t->cells[i] = malloc(len + 1)) == NULL)
        return -1;
    memcpy(t->cells[i], v, len);
    t->cells[i][len] = '\0';
    return 0;
}

/* Runs q on this thread's connection into q->table, or sets q's error */
static void lite_run(struct lite *l, struct query *q)
{
    struct db *db = l->db;
    sqlite3_stmt *stmt;
    int own = q->st == NULL;
    if (l->in_tx && l->tx_failed && q->ends == NULL && q->kind != Q_ROLLBACK) {
        /* PostgreSQL's rule, so that one handler works on both */
        lite_fail(q, "current transaction is aborted, commands ignored until end of transaction block", "25P02", 0);
        return;
    }
    if (own) {
        /* BEGIN takes the write lock (held to COMMIT or ROLLBACK); a COMMIT after a failed
         * statement rolls back, as PostgreSQL's does */
        const char *sql = q->begins != NULL ? "BEGIN IMMEDIATE"
                          : q->ends != NULL && l->tx_failed ? "ROLLBACK"
                                                            : q->sql;
        if (q->begins != NULL)
            pthread_mutex_lock(&db->write_lock);
        if (sqlite3_prepare_v2(l->conn, sql, -1, &stmt, NULL) != SQLITE_OK) {
            lite_fail(q, sqlite3_errmsg(l->conn), lite_state(l->conn, sqlite3_errcode(l->conn)), 0);
            return;
        }
    } else {
        size_t i = (size_t)(q->st - db->stmts);
        if (l->stmts[i] == NULL &&
            sqlite3_prepare_v3(l->conn, q->st->sql, -1, SQLITE_PREPARE_PERSISTENT, &l->stmts[i], NULL) != SQLITE_OK) {
            lite_fail(q, sqlite3_errmsg(l->conn), lite_state(l->conn, sqlite3_errcode(l->conn)), 0);
            return;
        }
        stmt = l->stmts[i];
    }
    if (sqlite3_bind_parameter_count(stmt) != q->n) {
        char msg[160];
        snprintf(msg, sizeof(msg), "the statement takes %d parameters, %d given", sqlite3_bind_parameter_count(stmt),
                 q->n);
        lite_fail(q, msg, "08P01", 0);
        goto done;
    }
    for (int i = 0; i < q->n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "$%d", i + 1);
        int at = sqlite3_bind_parameter_index(stmt, name);
        if (at == 0)
            at = i + 1; /* ?, ?NNN: by position */
        const char *v = q->values[i];
        switch (q->kinds[i]) {
        case CANAL_DB_P_NULL:
            sqlite3_bind_null(stmt, at);
            break;
        case CANAL_DB_P_INT:
        case CANAL_DB_P_BOOL:
            sqlite3_bind_int64(stmt, at, q->kinds[i] == CANAL_DB_P_BOOL ? *v == 't' : strtoll(v, NULL, 10));
            break;
        case CANAL_DB_P_DOUBLE:
            sqlite3_bind_double(stmt, at, strtod(v, NULL));
            break;
        case CANAL_DB_P_TEXT:
            sqlite3_bind_text(stmt, at, v, q->lengths[i], SQLITE_STATIC);
            break;
        case CANAL_DB_P_BYTEA:
            sqlite3_bind_blob(stmt, at, v, q->lengths[i], SQLITE_STATIC);
            break;
        }
    }
    /* one writer at a time: canal's lock rather than SQLite's busy waits and retries (a
     * transaction's statements run under the lock its BEGIN took) */
    int writes = !sqlite3_stmt_readonly(stmt), lock = writes && !l->in_tx && q->begins == NULL;
    if (lock)
        pthread_mutex_lock(&db->write_lock);
    struct table *t = calloc(1, sizeof(*t));
    int rc;
    if (t == NULL) {
        lite_fail(q, "out of memory", "53200", 0);
        goto unlock;
    }
    t->cols = (size_t)sqlite3_column_count(stmt);
    t->names = calloc(t->cols ? t->cols : 1, sizeof(*t->names));
    for (size_t c = 0; t->names != NULL && c < t->cols; c++)
        t->names[c] = strdup(sqlite3_column_name(stmt, (int)c));
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        t->cap = 0;
        for (int c = 0; c < (int)t->cols; c++) {
            int type = sqlite3_column_type(stmt, c), bad;
            if (type == SQLITE_NULL) {
                bad = table_add(t, NULL, 0);
            } else if (type == SQLITE_BLOB) {
                const unsigned char *b = sqlite3_column_blob(stmt, c);
                size_t n = (size_t)sqlite3_column_bytes(stmt, c);
                char *hex = malloc(2 * n + 3);
                if (hex != NULL) {
                    hex[0] = '\\';
                    hex[1] = 'x';
                    for (size_t k = 0; k < n; k++)
                        snprintf(hex + 2 + 2 * k, 3, "%02x", b[k]);
                    hex[2 + 2 * n] = '\0';
                }
                bad = hex == NULL || table_add(t, hex, 2 * n + 2);
                free(hex);
            } else {
                const char *v = (const char *)sqlite3_column_text(stmt, c);
                bad = table_add(t, v ? v : "", (size_t)sqlite3_column_bytes(stmt, c));
            }
            if (bad) {
                lite_fail(q, "out of memory", "53200", 0);
                table_free(t); /* with the row's cells so far (cap) */
                goto unlock;
            }
        }
        t->rows++;
    }
    t->cap = 0;
    if (rc != SQLITE_DONE) {
        lite_fail(q, sqlite3_errmsg(l->conn), lite_state(l->conn, rc), (rc & 0xff) == SQLITE_BUSY);
        table_free(t);
        goto unlock;
    }
    t->affected = writes ? sqlite3_changes64(l->conn) : 0;
    if (t->names == NULL) {
        lite_fail(q, "out of memory", "53200", 0);
        table_free(t);
        goto unlock;
    }
    q->table = t;
unlock:
    if (lock)
        pthread_mutex_unlock(&db->write_lock);
done:
    if (own)
        sqlite3_finalize(stmt);
    else {
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
    }
}

/* Runs q, and keeps the transaction's state: BEGIN holds the write lock on success (the
 * thread then serves its transaction alone), COMMIT and ROLLBACK (canal's of a transaction
 * left open too) release it, the connection out of any transaction whatever they said. */
static void lite_exec(struct lite *l, struct query *q)
{
    lite_run(l, q);
    if (q->begins != NULL) {
        if (q->error == NULL) {
            l->in_tx = 1;
            l->tx_failed = 0;
            l->tx_batch = q->b;
            q->lite = l;
        } else {
            pthread_mutex_unlock(&l->db->write_lock);
        }
    } else if (l->in_tx && (q->ends != NULL || q->kind == Q_ROLLBACK)) {
        if (!sqlite3_get_autocommit(l->conn))
            sqlite3_exec(l->conn, "ROLLBACK", NULL, NULL, NULL);
        l->in_tx = 0;
        l->tx_batch = NULL;
        pthread_mutex_unlock(&l->db->write_lock);
    } else if (l->in_tx && q->error != NULL) {
        l->tx_failed = 1;
    }
}

static void lite_back(struct canal__post *m)
{
    struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, post, m);
    struct dbw *dw = q->dw;
    atomic_fetch_sub_explicit(&dw->db->inflight, 1, memory_order_relaxed);
    deliver(dw, q);
    atomic_fetch_sub_explicit(&dw->sqlite_out, 1, memory_order_release);
}

static void *lite_main(void *arg)
{
    struct lite *l = arg;
    struct db *db = l->db;
    int open_rc = sqlite3_open_v2(db->sqlite_path, &l->conn,
                                  SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                  NULL);
    if (open_rc == SQLITE_OK)
        sqlite3_busy_timeout(l->conn, 5000);
    l->stmts = calloc(db->nstmts + 1, sizeof(*l->stmts));
    for (;;) {
        struct query *q = NULL;
        pthread_mutex_lock(&db->lock);
        for (;;) {
            /* in a transaction, its statements alone, and the other queries of its request
             * (which would wait for its end otherwise, and it for them: they run in it) */
            h2o_linklist_t *from = l->in_tx ? &l->queue : &db->queue;
            if (!h2o_linklist_is_empty(from)) {
                q = H2O_STRUCT_FROM_MEMBER(struct query, link, from->next);
                h2o_linklist_unlink(&q->link);
                if (from == &db->queue)
                    db->queued--;
                break;
            }
            for (h2o_linklist_t *n = db->queue.next; l->in_tx && n != &db->queue; n = n->next)
                if (H2O_STRUCT_FROM_MEMBER(struct query, link, n)->b == l->tx_batch) {
                    q = H2O_STRUCT_FROM_MEMBER(struct query, link, n);
                    break;
                }
            if (q != NULL) {
                h2o_linklist_unlink(&q->link);
                db->queued--;
                break;
            }
            if (db->quit)
                break;
            pthread_cond_wait(&db->ready_cond, &db->lock);
        }
        if (q == NULL) {
            pthread_mutex_unlock(&db->lock);
            break;
        }
        atomic_fetch_sub_explicit(&db->waiting, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&db->inflight, 1, memory_order_relaxed);
        l->running = q;
        pthread_mutex_unlock(&db->lock);
        if (open_rc != SQLITE_OK || l->stmts == NULL)
            lite_fail(q, l->conn ? sqlite3_errmsg(l->conn) : "cannot open the database", "08001", 1);
        else if (q->kind == Q_USER && q->begins == NULL && q->ends == NULL && !l->in_tx &&
                 atomic_load_explicit(&q->b->gone, memory_order_relaxed))
            lite_fail(q, "canceled: the request is gone", "57014", 0); /* never run */
        else
            lite_exec(l, q);
        pthread_mutex_lock(&db->lock);
        l->running = NULL;
        pthread_mutex_unlock(&db->lock);
        if (q->kind == Q_ROLLBACK) { /* canal's own, of a transaction left open: nobody waits */
            atomic_fetch_sub_explicit(&db->inflight, 1, memory_order_relaxed);
            query_free(q);
            continue;
        }
        q->post.run = lite_back;
        if (canal__post(q->dw->w, &q->post) != 0) {
            /* the worker has stopped: its stop hook delivers it */
            atomic_fetch_sub_explicit(&db->inflight, 1, memory_order_relaxed);
            pthread_mutex_lock(&db->lock);
            h2o_linklist_insert(&q->dw->orphans, &q->link);
            pthread_mutex_unlock(&db->lock);
            atomic_fetch_sub_explicit(&q->dw->sqlite_out, 1, memory_order_release);
        }
    }
    if (l->in_tx) /* the app stops with a transaction open: closing rolls it back */
        pthread_mutex_unlock(&db->write_lock);
    for (size_t i = 0; l->stmts != NULL && i < db->nstmts; i++)
        sqlite3_finalize(l->stmts[i]);
    free(l->stmts);
    sqlite3_close(l->conn);
    return NULL;
}

/* Hands q to the SQLite threads (a transaction's statement: to the thread that holds it), or
 * fails it when the queue is full */
static void lite_submit(struct dbw *dw, struct query *q, struct canal_db_tx *tx)
{
    struct db *db = dw->db;
    if (tx != NULL && tx->lt == NULL) {
        fail_soon(dw, q, "the transaction did not begin", "25P01", 0);
        return;
    }
    pthread_mutex_lock(&db->lock);
    if (tx == NULL && (db->queued >= db->opt.max_waiting || db->quit)) {
        pthread_mutex_unlock(&db->lock);
        fail_soon(dw, q, "no database connection: too many queries waiting", "08001", 1);
        return;
    }
    h2o_linklist_insert(tx != NULL ? &tx->lt->queue : &db->queue, &q->link);
    if (tx == NULL)
        db->queued++;
    atomic_fetch_add_explicit(&db->waiting, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&dw->sqlite_out, 1, memory_order_relaxed);
    pthread_cond_broadcast(&db->ready_cond); /* the thread it is for may not be the one signal wakes */
    pthread_mutex_unlock(&db->lock);
}

/* ROLLBACK of a transaction left open, on the thread that holds it (which frees it): *made,
 * the query canal_db_begin() made for it, so that this cannot fail */
static void lite_rollback(struct lite *l, struct query **made)
{
    struct db *db = l->db;
    struct query *q = *made;
    *made = NULL;
    *q = (struct query){.kind = Q_ROLLBACK, .sql = "ROLLBACK"};
    pthread_mutex_lock(&db->lock);
    h2o_linklist_insert(&l->queue, &q->link);
    atomic_fetch_add_explicit(&db->waiting, 1, memory_order_relaxed);
    pthread_cond_broadcast(&db->ready_cond);
    pthread_mutex_unlock(&db->lock);
}

/* SQLite: b's request is gone. Its queries still queued are not run (the threads see b->gone);
 * one running is interrupted (sqlite3_interrupt(), which any thread may call, stops the
 * statements its connection runs; the thread is held in that query by db->lock meanwhile, and
 * a new statement starts with the interrupt cleared). */
static void lite_interrupt(struct db *db, struct batch *b)
{
    if (b->tx != NULL)
        return; /* never inside a transaction (a COMMIT interrupted undoes a committed one) */
    pthread_mutex_lock(&db->lock);
    for (size_t i = 0; i < db->nthreads; i++) {
        struct lite *l = &db->lites[i];
        if (l->running != NULL && l->running->b == b && l->running->kind == Q_USER && l->conn != NULL) {
            sqlite3_interrupt(l->conn);
            atomic_fetch_add_explicit(&db->cancels, 1, memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&db->lock);
}

static int lite_start(canal_app_t *app, struct db *db)
{
    h2o_linklist_init_anchor(&db->queue);
    if (pthread_mutex_init(&db->lock, NULL) != 0 || pthread_mutex_init(&db->write_lock, NULL) != 0 ||
        pthread_cond_init(&db->ready_cond, NULL) != 0)
        return -1;
    db->locks_ready = 1;
    if ((db->lites = calloc(db->opt.pool_size, sizeof(*db->lites))) == NULL)
        return -1;
    for (size_t i = 0; i < db->opt.pool_size; i++) {
        struct lite *l = &db->lites[i];
        l->db = db;
        h2o_linklist_init_anchor(&l->queue);
        if (pthread_create(&l->thread, NULL, lite_main, l) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "database: cannot start a SQLite thread");
            return -1;
        }
        db->nthreads++;
    }
    atomic_store(&db->ready, (long)db->nthreads);
    return 0;
}

/* After the workers: the threads finish the queue and end */
static void lite_stop(struct db *db)
{
    if (!db->locks_ready)
        return;
    pthread_mutex_lock(&db->lock);
    db->quit = 1;
    pthread_cond_broadcast(&db->ready_cond);
    pthread_mutex_unlock(&db->lock);
    for (size_t i = 0; i < db->nthreads; i++)
        pthread_join(db->lites[i].thread, NULL);
    for (size_t i = 0; i < db->nthreads; i++) /* canal's ROLLBACKs the threads did not take */
        while (!h2o_linklist_is_empty(&db->lites[i].queue)) {
            struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, link, db->lites[i].queue.next);
            h2o_linklist_unlink(&q->link);
            query_free(q);
        }
    free(db->lites);
    db->lites = NULL;
    db->nthreads = 0;
    pthread_cond_destroy(&db->ready_cond);
    pthread_mutex_destroy(&db->write_lock);
    pthread_mutex_destroy(&db->lock);
    db->locks_ready = 0;
}

/* ---- the feature ---- */

static int db_worker_init(struct canal_worker *w, void *st, void *wst)
{
    struct db *db = st;
    struct dbw *dw = wst;
    *dw = (struct dbw){.db = db, .w = w, .loop = w->loop, .nconns = db->opt.pool_size};
    h2o_linklist_init_anchor(&dw->waiting);
    h2o_linklist_init_anchor(&dw->soon);
    h2o_linklist_init_anchor(&dw->orphans);
    if (db->sqlite)
        dw->nconns = 0; /* the SQLite threads are the app's */
    if ((dw->conns = calloc(dw->nconns + 1, sizeof(*dw->conns))) == NULL)
        return -1;
    h2o_timeout_init(dw->loop, &dw->wait_to, db->opt.wait_ms);
    h2o_timeout_init(dw->loop, &dw->retry_to, RETRY_TICK_MS);
    h2o_timeout_init(dw->loop, &dw->soon_to, 0);
    dw->soon_entry.cb = on_soon;
    dw->uncork_entry.cb = on_uncork;
    dw->timers = 1;
    for (size_t i = 0; i < dw->nconns; i++) {
        struct conn *c = &dw->conns[i];
        *c = (struct conn){.dw = dw, .fd = -1, .backoff_ms = BACKOFF_MIN_MS};
        c->retry.cb = on_retry;
        h2o_linklist_init_anchor(&c->inflight);
        conn_start(c);
    }
    return 0;
}

/* Before the loop's context goes: every connection closed, every query failed (their
 * requests are gone by now: the callbacks do not run) and freed. */
static void db_worker_stop(struct canal_worker *w, void *st, void *wst)
{
    struct dbw *dw = wst;
    if (dw->conns == NULL)
        return;
    dw->stopping = 1;
    for (size_t i = 0; i < dw->nconns; i++) {
        struct conn *c = &dw->conns[i];
        if (h2o_timeout_is_linked(&c->retry))
            h2o_timeout_unlink(&c->retry);
        cancel_let_go(c);
        if (c->pg != NULL)
            conn_lost(c, NULL);
        if (h2o_timeout_is_linked(&c->retry))
            h2o_timeout_unlink(&c->retry);
    }
    while (!h2o_linklist_is_empty(&dw->waiting)) {
        struct query *q = H2O_STRUCT_FROM_MEMBER(struct query, link, dw->waiting.next);
        unwait(dw, q);
        fail_soon(dw, q, "the server is shutting down", "57P01", 1);
    }
    /* SQLite queries still on the threads come back as orphans (the worker takes no posts) */
    while (atomic_load_explicit(&dw->sqlite_out, memory_order_acquire) > 0) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (dw->db->sqlite) {
        pthread_mutex_lock(&dw->db->lock);
        h2o_linklist_insert_list(&dw->soon, &dw->orphans);
        pthread_mutex_unlock(&dw->db->lock);
    }
    if (h2o_timeout_is_linked(&dw->soon_entry))
        h2o_timeout_unlink(&dw->soon_entry);
    if (h2o_timeout_is_linked(&dw->uncork_entry))
        h2o_timeout_unlink(&dw->uncork_entry);
    on_soon(&dw->soon_entry);
    if (dw->timers) {
        h2o_timeout_dispose(dw->loop, &dw->wait_to);
        h2o_timeout_dispose(dw->loop, &dw->retry_to);
        h2o_timeout_dispose(dw->loop, &dw->soon_to);
        dw->timers = 0;
    }
    free(dw->conns);
    dw->conns = NULL;
}

static void stats_metrics(FILE *f, const char *name, const struct stats *s)
{
    unsigned long long cum = 0;
    for (size_t i = 0; i < NBUCKETS; i++) {
        cum += atomic_load_explicit(&s->le[i], memory_order_relaxed);
        fputs("canal_db_query_duration_seconds_bucket{statement=\"", f);
        canal__metrics_label(f, name);
        fprintf(f, "\",le=\"%g\"} %llu\n", buckets[i], cum);
    }
    unsigned long long count = atomic_load_explicit(&s->count, memory_order_relaxed);
    fputs("canal_db_query_duration_seconds_bucket{statement=\"", f);
    canal__metrics_label(f, name);
    fprintf(f, "\",le=\"+Inf\"} %llu\n", count);
    fputs("canal_db_query_duration_seconds_sum{statement=\"", f);
    canal__metrics_label(f, name);
    fprintf(f, "\"} %.6f\n", atomic_load_explicit(&s->usec, memory_order_relaxed) / 1e6);
    fputs("canal_db_query_duration_seconds_count{statement=\"", f);
    canal__metrics_label(f, name);
    fprintf(f, "\"} %llu\n", count);
    fputs("canal_db_query_errors_total{statement=\"", f);
    canal__metrics_label(f, name);
    fprintf(f, "\"} %llu\n", atomic_load_explicit(&s->errors, memory_order_relaxed));
}

static void db_metrics(canal_app_t *app, void *st, FILE *f)
{
    struct db *db = st;
    fputs("# HELP canal_db_query_duration_seconds Database queries by statement, from start to result.\n"
          "# TYPE canal_db_query_duration_seconds histogram\n",
          f);
    for (size_t i = 0; i < db->nstmts; i++)
        stats_metrics(f, db->stmts[i].name, &db->stmts[i].stats);
    stats_metrics(f, "(sql)", &db->adhoc);
    fprintf(f,
            "# HELP canal_db_connections_ready Database connections connected, every worker (SQLite: its threads).\n"
            "# TYPE canal_db_connections_ready gauge\ncanal_db_connections_ready %ld\n"
            "# HELP canal_db_connections_total Database connections configured, every worker.\n"
            "# TYPE canal_db_connections_total gauge\ncanal_db_connections_total %zu\n"
            "# HELP canal_db_queries_in_flight Database queries sent and not back.\n"
            "# TYPE canal_db_queries_in_flight gauge\ncanal_db_queries_in_flight %ld\n"
            "# HELP canal_db_queries_waiting Database queries waiting for a connection.\n"
            "# TYPE canal_db_queries_waiting gauge\ncanal_db_queries_waiting %ld\n"
            "# HELP canal_db_connects_total Database connections made.\n"
            "# TYPE canal_db_connects_total counter\ncanal_db_connects_total %llu\n"
            "# HELP canal_db_connection_losses_total Database connections lost.\n"
            "# TYPE canal_db_connection_losses_total counter\ncanal_db_connection_losses_total %llu\n"
            "# HELP canal_db_cancels_total Cancel requests sent for the queries of requests gone.\n"
            "# TYPE canal_db_cancels_total counter\ncanal_db_cancels_total %llu\n",
            atomic_load_explicit(&db->ready, memory_order_relaxed),
            db->sqlite ? db->nthreads : (size_t)db->opt.pool_size * app->cfg.threads,
            atomic_load_explicit(&db->inflight, memory_order_relaxed),
            atomic_load_explicit(&db->waiting, memory_order_relaxed),
            atomic_load_explicit(&db->connects, memory_order_relaxed),
            atomic_load_explicit(&db->losses, memory_order_relaxed),
            atomic_load_explicit(&db->cancels, memory_order_relaxed));
}

static int db_start(canal_app_t *app, void *st)
{
    struct db *db = st;
    return db->sqlite ? lite_start(app, db) : 0;
}

/* the drain waits for the SQLite queries of the worker's requests */
static int db_worker_busy(struct canal_worker *w, void *st, void *wst)
{
    struct dbw *dw = wst;
    return atomic_load_explicit(&dw->sqlite_out, memory_order_relaxed) > 0;
}

static void db_dispose(canal_app_t *app, void *st)
{
    struct db *db = st;
    lite_stop(db);
    sqlite3_close(db->anchor);
    free(db->sqlite_path);
    for (size_t i = 0; i < db->nstmts; i++) {
        free(db->stmts[i].name);
        free(db->stmts[i].sql);
    }
    free(db->stmts);
    free(db->url);
}

static const struct canal__feature feature = {
    .name = "db",
    .size = sizeof(struct db),
    .worker_size = sizeof(struct dbw),
    .start = db_start,
    .worker_init = db_worker_init,
    .worker_busy = db_worker_busy,
    .worker_stop = db_worker_stop,
    .metrics = db_metrics,
    .dispose = db_dispose,
};

/* ---- registration ---- */

int canal_app_db(canal_app_t *app, const char *url, const canal_db_options_t *opt, canal_error_info_t *err)
{
    if (url == NULL || *url == '\0')
        return canal__reg_fail(app, err, CANAL_EINVAL, "database: no URL");
    if (strncmp(url, "sqlite:", 7) == 0)
        return lite_open(app, url + 7, opt, err);
    char *msg = NULL;
    PQconninfoOption *o = PQconninfoParse(url, &msg);
    if (o == NULL) {
        int rc = canal__reg_fail(app, err, CANAL_EINVAL, "database: bad URL: %s", msg ? msg : "out of memory");
        PQfreemem(msg);
        return rc;
    }
    PQconninfoFree(o);
    struct db *db = client_on(app, url, opt, err);
    return db != NULL ? 0 : err != NULL ? err->code : CANAL_EINVAL;
}

/* The client's state with its settings, or NULL (a registration error) */
static struct db *client_on(canal_app_t *app, const char *url, const canal_db_options_t *opt, canal_error_info_t *err)
{
    struct db *was = canal__feature_state(app, &feature);
    struct db *db = canal__feature_on(app, &feature);
    if (db == NULL) {
        canal__reg_fail(app, err, CANAL_ESTATE, "database: the app has started");
        return NULL;
    }
    if (was != NULL && db->url != NULL) {
        canal__reg_fail(app, err, CANAL_EEXIST, "database: one client per app");
        return NULL;
    }
    db->app = app;
    canal_db_options_t d = opt ? *opt : (canal_db_options_t){0};
    db->opt = (canal_db_options_t){
        .pool_size = d.pool_size ? d.pool_size : DEFAULT_POOL,
        .max_pipeline = d.max_pipeline ? d.max_pipeline : DEFAULT_PIPELINE,
        .max_waiting = d.max_waiting ? d.max_waiting : DEFAULT_WAITING,
        .wait_ms = d.wait_ms ? d.wait_ms : DEFAULT_WAIT_MS,
        .slow_ms = d.slow_ms,
    };
    if ((db->url = strdup(url)) == NULL) {
        canal__reg_fail(app, err, CANAL_ENOMEM, NULL);
        return NULL;
    }
    return db;
}

/* sqlite:PATH or sqlite::memory: (one database shared by the app's threads). The anchor
 * connection opens it now (a bad path fails here), sets WAL, and keeps a memory database
 * alive while the app lives. */
static int lite_open(canal_app_t *app, const char *path, const canal_db_options_t *opt, canal_error_info_t *err)
{
    if (*path == '\0')
        return canal__reg_fail(app, err, CANAL_EINVAL, "database: sqlite: needs a path, or :memory:");
    struct db *db = client_on(app, "sqlite", opt, err);
    if (db == NULL)
        return err != NULL ? err->code : CANAL_EINVAL;
    db->sqlite = 1;
    int memory = strcmp(path, ":memory:") == 0;
    char *uri = NULL;
    if ((memory ? asprintf(&uri, "file:canal-%p?mode=memory&cache=shared", (void *)db)
                : asprintf(&uri, "file:%s", path)) < 0)
        return canal__reg_fail(app, err, CANAL_ENOMEM, NULL);
    db->sqlite_path = uri;
    if (sqlite3_open_v2(uri, &db->anchor, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL) !=
        SQLITE_OK)
        return canal__reg_fail(app, err, CANAL_EINVAL, "database: sqlite:%s: %s", path, sqlite3_errmsg(db->anchor));
    sqlite3_busy_timeout(db->anchor, 5000);
    if (!memory && sqlite3_exec(db->anchor, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) != SQLITE_OK)
        return canal__reg_fail(app, err, CANAL_EINVAL, "database: sqlite:%s: %s", path, sqlite3_errmsg(db->anchor));
    return 0;
}

int canal_db_prepare(canal_app_t *app, const char *name, const char *sql, canal_error_info_t *err)
{
    struct db *db = canal__feature_state(app, &feature);
    if (db == NULL || db->url == NULL || canal__feature_on(app, &feature) == NULL)
        return canal__reg_fail(app, err, CANAL_ESTATE, "database: prepare needs canal_app_db(), before start");
    if (name == NULL || *name == '\0' || sql == NULL || *sql == '\0')
        return canal__reg_fail(app, err, CANAL_EINVAL, "database: a statement needs a name and SQL");
    if (find_stmt(db, name) != NULL)
        return canal__reg_fail(app, err, CANAL_EEXIST, "database: statement %s declared twice", name);
    struct stmt *s = realloc(db->stmts, (db->nstmts + 1) * sizeof(*s));
    if (s == NULL)
        return canal__reg_fail(app, err, CANAL_ENOMEM, NULL);
    db->stmts = s;
    s = &db->stmts[db->nstmts];
    memset(s, 0, sizeof(*s));
    s->name = strdup(name);
    s->sql = strdup(sql);
    if (s->name == NULL || s->sql == NULL) {
        free(s->name);
        free(s->sql);
        return canal__reg_fail(app, err, CANAL_ENOMEM, NULL);
    }
    db->nstmts++;
    return 0;
}

int canal_db_exec_script(canal_app_t *app, const char *sql, canal_error_info_t *err)
{
    struct db *db = canal__feature_state(app, &feature);
    if (db == NULL || db->url == NULL || canal__feature_on(app, &feature) == NULL)
        return canal__reg_fail(app, err, CANAL_ESTATE, "database: exec_script needs canal_app_db(), before start");
    if (db->sqlite) {
        char *msg = NULL;
        int rc = 0;
        if (sqlite3_exec(db->anchor, sql, NULL, NULL, &msg) != SQLITE_OK)
            rc = canal__reg_fail(app, err, CANAL_ESYS, "database: %s", msg ? msg : sqlite3_errmsg(db->anchor));
        sqlite3_free(msg);
        return rc;
    }
    PGconn *pg = PQconnectdb(db->url);
    int rc = 0;
    if (PQstatus(pg) != CONNECTION_OK) {
        rc = canal__reg_fail(app, err, CANAL_ESYS, "database: %s", PQerrorMessage(pg));
    } else {
        PGresult *r = PQexec(pg, sql);
        ExecStatusType s = PQresultStatus(r);
        if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
            rc = canal__reg_fail(app, err, CANAL_ESYS, "database: %s", PQresultErrorMessage(r));
        PQclear(r);
    }
    PQfinish(pg);
    return rc;
}
