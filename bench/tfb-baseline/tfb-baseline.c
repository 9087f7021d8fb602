/* SPDX-License-Identifier: MIT */
/*
 * tfb-baseline: the database baseline canal-tfb is measured against (bench/db). Written for
 * this project on the design of TechEmpower's h2o entry (frameworks/C/h2o), for libh2o 2.2.5
 * and libpq 15:
 *
 *   - one h2o event loop per thread, each with its own SO_REUSEPORT listener and its own pool
 *     of PostgreSQL connections, connected and prepared when the thread starts (the statements
 *     world and fortune are prepared on every connection);
 *   - every connection in non-blocking pipeline mode (PQenterPipelineMode), its socket (a dup of
 *     PQsocket) watched by the thread's loop; a query is PQsendQueryPrepared (binary results) and
 *     its own PQpipelineSync, so a failing query fails alone;
 *   - the queries of one loop turn are written together: on TCP the socket is corked when the
 *     turn's first query is sent and uncorked by a zero timeout at the end of the turn (libpq 15
 *     flushes at every Sync; a unix socket has no cork, one send per query there);
 *   - a query goes to the live connection of the thread with the fewest queries in flight;
 *   - answers written by hand into request memory (JSON with an integer formatter, the fortunes
 *     page with an escape table like h2o_htmlescape's), one h2o_send() each, Content-Length set.
 *
 * Endpoints, by TechEmpower's rules: /json, /plaintext, /db, /queries?queries=N,
 * /updates?queries=N (N clamped to 1..500, missing or not a number: 1; one SELECT per row; the
 * new numbers persisted by one UPDATE ... FROM (VALUES ...) over the distinct ids in id order,
 * the same statement canal-tfb sends), /fortunes (the rows, one more added at request time,
 * sorted by message, escaped), /cached-queries?count=N (World read at start-up into a cache
 * kept as TechEmpower's h2o entry keeps it: libh2o's h2o_cache in shards picked by the key's
 * hash, a spin lock each, a reference fetched and released per row). Server and Date headers on every answer (h2o adds both).
 *
 *   build/bench/tfb-baseline --db CONNINFO [--port N] [--threads N] [--pool N]
 *
 * What it does not do: reconnect (a connection lost fails its queries with a 503 and stays
 * down), timeouts on queries, HEAD. A client gone before its answer is handled (the request's
 * state outlives it and is dropped when its queries are back). SIGTERM or SIGINT ends it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <h2o.h>
#include <libpq-fe.h>

#define MAX_QUERIES 500
#define WORLD_ROWS 10000
#define WORLD_SQL "SELECT id, randomnumber FROM world WHERE id = $1"
#define FORTUNE_SQL "SELECT id, message FROM fortune"
#define EXTRA_FORTUNE "Additional fortune added at request time."

static const char *conninfo;
static unsigned pool_size = 2;
static h2o_globalconf_t config;
/* the World cache of /cached-queries (id -> a malloc'd world_t), filled at start-up */
#define CACHE_SHARDS 16
#define CACHE_TTL_MS (24 * 3600 * 1000ULL) /* longer than any run: no row expires */
static struct {
    h2o_cache_t *cache;
    pthread_spinlock_t lock;
} world_cache[CACHE_SHARDS];
static int param_len4[2 * MAX_QUERIES], param_binary[2 * MAX_QUERIES];

/* ---- queries, connections, workers ---- */

struct query;
/* res is the query's result (NULL and err set when it failed); cleared after the callback */
typedef void (*query_cb)(struct query *q, const PGresult *res, const char *err);

struct query {
    struct query *next;
    const char *stmt; /* a prepared statement's name, or NULL: sql with parameters */
    const char *sql;
    int nparams;
    const char *const *values;
    query_cb cb;
    void *data;
    PGresult *res;       /* its result, kept until its Sync is back */
    uint32_t id_be;      /* the parameter of a world query, big-endian */
    const char *one[1];  /* values of a world query: &id_be */
};

struct worker;

struct conn {
    struct worker *w;
    PGconn *pg;
    h2o_socket_t *sock;
    struct query *head, **tail; /* in flight, in order */
    unsigned inflight;
    int dead, tcp, corked, want_write;
};

struct worker {
    pthread_t tid;
    int fd;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    struct conn *conns;
    unsigned nconns;
    h2o_timeout_t zero;           /* the end of the loop's turn */
    h2o_timeout_entry_t uncork;
    uint64_t rng;
};

static int32_t random_id(struct worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return (int32_t)(w->rng % WORLD_ROWS) + 1;
}

static void conn_fail(struct conn *c, const char *why)
{
    if (c->dead)
        return;
    fprintf(stderr, "tfb-baseline: database connection lost: %s\n", why);
    c->dead = 1;
    h2o_socket_read_stop(c->sock);
    h2o_socket_close(c->sock);
    c->sock = NULL;
    struct query *q = c->head;
    c->head = NULL;
    c->tail = &c->head;
    c->inflight = 0;
    while (q != NULL) {
        struct query *next = q->next;
        if (q->res != NULL)
            PQclear(q->res);
        q->res = NULL;
        q->cb(q, NULL, "the database connection was lost");
        q = next;
    }
}

static void on_db_write(h2o_socket_t *sock, const char *err);

/* libpq holds bytes the socket did not take: send them when it is writable */
static void flush_later(struct conn *c)
{
    if (!c->want_write) {
        c->want_write = 1;
        h2o_socket_notify_write(c->sock, on_db_write);
    }
}

static void on_db_write(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;
    c->want_write = 0;
    if (err != NULL) {
        conn_fail(c, err);
        return;
    }
    int r = PQflush(c->pg);
    if (r < 0)
        conn_fail(c, PQerrorMessage(c->pg));
    else if (r > 0)
        flush_later(c);
}

static void on_db_read(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;
    if (err != NULL || !PQconsumeInput(c->pg)) {
        conn_fail(c, err != NULL ? err : PQerrorMessage(c->pg));
        return;
    }
    while (c->head != NULL && !PQisBusy(c->pg)) {
        PGresult *res = PQgetResult(c->pg);
        if (res == NULL) /* the end of one query's results */
            continue;
        struct query *q = c->head;
        if (PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
            if (q->res == NULL)
                q->res = res;
            else
                PQclear(res);
            continue;
        }
        PQclear(res);
        c->head = q->next;
        if (c->head == NULL)
            c->tail = &c->head;
        c->inflight--;
        res = q->res;
        q->res = NULL;
        ExecStatusType st = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;
        if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
            q->cb(q, res, NULL);
        else
            q->cb(q, NULL, res != NULL ? PQresultErrorMessage(res) : "no result");
        if (res != NULL)
            PQclear(res);
        if (c->dead)
            return;
    }
    if (!c->want_write && PQflush(c->pg) > 0)
        flush_later(c);
}

static void on_uncork(h2o_timeout_entry_t *e)
{
    struct worker *w = H2O_STRUCT_FROM_MEMBER(struct worker, uncork, e);
    int off = 0;
    for (unsigned i = 0; i < w->nconns; i++) {
        struct conn *c = &w->conns[i];
        if (c->corked && !c->dead)
            setsockopt(PQsocket(c->pg), IPPROTO_TCP, TCP_CORK, &off, sizeof(off));
        c->corked = 0;
    }
}

static void submit(struct worker *w, struct query *q)
{
    struct conn *c = NULL;
    for (unsigned i = 0; i < w->nconns; i++) {
        struct conn *k = &w->conns[i];
        if (!k->dead && (c == NULL || k->inflight < c->inflight)) {
            c = k;
            if (c->inflight == 0)
                break;
        }
    }
    if (c == NULL) {
        q->cb(q, NULL, "no database connection");
        return;
    }
    if (c->tcp && !c->corked) {
        int on = 1;
        setsockopt(PQsocket(c->pg), IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
        c->corked = 1;
        if (!h2o_timeout_is_linked(&w->uncork))
            h2o_timeout_link(w->ctx.loop, &w->zero, &w->uncork);
    }
    int ok = q->stmt != NULL
                 ? PQsendQueryPrepared(c->pg, q->stmt, q->nparams, q->values, param_len4, param_binary, 1)
                 : PQsendQueryParams(c->pg, q->sql, q->nparams, NULL, q->values, param_len4, param_binary, 1);
    if (!ok || !PQpipelineSync(c->pg)) {
        conn_fail(c, PQerrorMessage(c->pg));
        q->cb(q, NULL, "the database connection was lost");
        return;
    }
    q->next = NULL;
    q->res = NULL;
    *c->tail = q;
    c->tail = &q->next;
    c->inflight++;
    if (!c->want_write && PQflush(c->pg) > 0) /* PQpipelineSync() flushed what it could */
        flush_later(c);
}

/* Connects, prepares and enters pipeline mode (blocking: before the loop runs). */
static int conn_open(struct worker *w, struct conn *c)
{
    c->w = w;
    c->tail = &c->head;
    c->pg = PQconnectdb(conninfo);
    if (PQstatus(c->pg) != CONNECTION_OK) {
        fprintf(stderr, "tfb-baseline: %s", PQerrorMessage(c->pg));
        return -1;
    }
    const char *names[] = {"world", "fortune"}, *sql[] = {WORLD_SQL, FORTUNE_SQL};
    for (int i = 0; i < 2; i++) {
        PGresult *r = PQprepare(c->pg, names[i], sql[i], 0, NULL);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            fprintf(stderr, "tfb-baseline: prepare %s: %s", names[i], PQresultErrorMessage(r));
        PQclear(r);
        if (!ok)
            return -1;
    }
    if (PQsetnonblocking(c->pg, 1) != 0 || !PQenterPipelineMode(c->pg)) {
        fprintf(stderr, "tfb-baseline: %s", PQerrorMessage(c->pg));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    c->tcp = getsockname(PQsocket(c->pg), (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family != AF_UNIX;
    int fd = fcntl(PQsocket(c->pg), F_DUPFD_CLOEXEC, 0); /* closing h2o's socket leaves libpq's */
    if (fd < 0)
        return -1;
    c->sock = h2o_evloop_socket_create(w->ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    c->sock->data = c;
    h2o_socket_read_start(c->sock, on_db_read);
    return 0;
}

/* ---- request state that outlives a client gone ---- */

/* A request's database work. The request may be disposed of before its queries are back
 * (the client closed): the guard, in request memory, clears req when that happens. */
struct guard {
    struct rctx *r;
};

enum kind { DB, QUERIES, UPDATES, FORTUNES };

typedef struct {
    int32_t id, randomNumber;
} world_t;

struct rctx {
    struct worker *w;
    h2o_req_t *req;
    struct guard *g;
    enum kind kind;
    unsigned n, back;
    int failed;
    world_t *rows;
    struct query *qs;
    struct query update;
};

static void guard_gone(void *p)
{
    struct guard *g = p;
    if (g->r != NULL) {
        g->r->req = NULL;
        g->r->g = NULL;
    }
}

static struct rctx *rctx_new(h2o_req_t *req, enum kind kind, unsigned n, size_t extra)
{
    struct rctx *r = malloc(sizeof(*r) + n * (sizeof(world_t) + sizeof(struct query)) + extra);
    if (r == NULL)
        return NULL;
    r->w = H2O_STRUCT_FROM_MEMBER(struct worker, ctx, req->conn->ctx);
    r->req = req;
    r->g = h2o_mem_alloc_shared(&req->pool, sizeof(*r->g), guard_gone);
    r->g->r = r;
    r->kind = kind;
    r->n = n;
    r->back = 0;
    r->failed = 0;
    r->qs = (struct query *)(r + 1);
    r->rows = (world_t *)(r->qs + n);
    return r;
}

static void rctx_free(struct rctx *r)
{
    if (r->g != NULL)
        r->g->r = NULL;
    free(r);
}

/* ---- answers ---- */

static h2o_generator_t generator = {NULL, NULL};

static void send_body(h2o_req_t *req, int status, const char *ctype, size_t ctlen, const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = status == 200 ? "OK" : status == 404 ? "Not Found" : status == 503 ? "Service Unavailable"
                                                                                        : "Internal Server Error";
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, ctype, ctlen);
    h2o_start_response(req, &generator);
    h2o_iovec_t buf = h2o_iovec_init(body, len);
    h2o_send(req, &buf, 1, H2O_SEND_STATE_FINAL);
}

#define JSON_TYPE "application/json"

static void send_error(h2o_req_t *req, const char *err)
{
    send_body(req, 503, H2O_STRLIT("text/plain; charset=utf-8"), H2O_STRLIT("database error\n"));
}

static char *put_int(char *p, int32_t v)
{
    char tmp[12];
    int n = 0;
    uint32_t u = v < 0 ? (uint32_t)-(int64_t)v : (uint32_t)v;
    if (v < 0)
        *p++ = '-';
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

#define WORLD_JSON_MAX 48 /* {"id":-2147483648,"randomNumber":-2147483648}, */

static char *put_world(char *p, const world_t *w)
{
    memcpy(p, "{\"id\":", 6);
    p = put_int(p + 6, w->id);
    memcpy(p, ",\"randomNumber\":", 16);
    p = put_int(p + 16, w->randomNumber);
    *p++ = '}';
    return p;
}

static void send_worlds(h2o_req_t *req, const world_t *rows, unsigned n, int array)
{
    char *buf = h2o_mem_alloc_pool(&req->pool, 2 + (size_t)n * WORLD_JSON_MAX), *p = buf;
    if (array)
        *p++ = '[';
    for (unsigned i = 0; i < n; i++) {
        if (i > 0)
            *p++ = ',';
        p = put_world(p, &rows[i]);
    }
    if (array)
        *p++ = ']';
    send_body(req, 200, H2O_STRLIT(JSON_TYPE), buf, (size_t)(p - buf));
}

/* ---- /db, /queries, /updates ---- */

static unsigned count_of(h2o_req_t *req, const char *key, size_t klen)
{
    if (req->query_at == SIZE_MAX)
        return 1;
    const char *q = req->path.base + req->query_at + 1, *end = req->path.base + req->path.len;
    while (q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q)), *stop = amp ? amp : end;
        if ((size_t)(stop - q) > klen && memcmp(q, key, klen) == 0 && q[klen] == '=') {
            long n = 0;
            for (const char *v = q + klen + 1; v < stop; v++) {
                if (*v < '0' || *v > '9')
                    return 1;
                if (n <= MAX_QUERIES)
                    n = n * 10 + (*v - '0');
            }
            return n < 1 ? 1 : n > MAX_QUERIES ? MAX_QUERIES : (unsigned)n;
        }
        q = stop + 1;
    }
    return 1;
}

static void answer_rows(struct rctx *r, const char *err)
{
    if (r->req != NULL) {
        if (r->failed || err != NULL)
            send_error(r->req, err);
        else
            send_worlds(r->req, r->rows, r->n, r->kind != DB);
    }
    rctx_free(r);
}

static void updated(struct query *q, const PGresult *res, const char *err)
{
    answer_rows(q->data, err);
}

static int by_id(const void *a, const void *b)
{
    const world_t *x = *(const world_t *const *)a, *y = *(const world_t *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* every row read: new numbers for the distinct ids, in id order, in one UPDATE */
static void start_update(struct rctx *r)
{
    unsigned n = r->n;
    world_t **order = (world_t **)(r->rows + n);
    uint32_t *vals = (uint32_t *)(order + n);
    const char **values = (const char **)(vals + 2 * n);
    char *sql = (char *)(values + 2 * n);
    for (unsigned i = 0; i < n; i++)
        order[i] = &r->rows[i];
    qsort(order, n, sizeof(*order), by_id);
    size_t len = (size_t)sprintf(sql, "UPDATE world SET randomnumber = v.r FROM (VALUES ");
    int np = 0;
    for (unsigned i = 0; i < n; i++) {
        if (i > 0 && order[i]->id == order[i - 1]->id) {
            order[i]->randomNumber = order[i - 1]->randomNumber;
            continue;
        }
        order[i]->randomNumber = random_id(r->w);
        vals[np] = htonl((uint32_t)order[i]->id);
        vals[np + 1] = htonl((uint32_t)order[i]->randomNumber);
        values[np] = (const char *)&vals[np];
        values[np + 1] = (const char *)&vals[np + 1];
        len += (size_t)sprintf(sql + len, "%s($%d::int, $%d::int)", np ? ", " : "", np + 1, np + 2);
        np += 2;
    }
    sprintf(sql + len, ") AS v(id, r) WHERE world.id = v.id");
    r->update = (struct query){.sql = sql, .nparams = np, .values = values, .cb = updated, .data = r};
    submit(r->w, &r->update);
}

#define UPDATE_EXTRA(n) ((n) * (sizeof(world_t *) + 2 * sizeof(uint32_t) + 2 * sizeof(char *) + 40) + 128)

static void world_done(struct query *q, const PGresult *res, const char *err)
{
    struct rctx *r = q->data;
    world_t *w = &r->rows[q - r->qs];
    if (res == NULL || PQntuples(res) != 1 || PQnfields(res) != 2 || PQgetlength(res, 0, 0) != 4 ||
        PQgetlength(res, 0, 1) != 4) {
        r->failed = 1;
    } else {
        uint32_t v;
        memcpy(&v, PQgetvalue(res, 0, 0), 4);
        w->id = (int32_t)ntohl(v);
        memcpy(&v, PQgetvalue(res, 0, 1), 4);
        w->randomNumber = (int32_t)ntohl(v);
    }
    if (++r->back < r->n)
        return;
    if (r->kind == UPDATES && !r->failed && r->req != NULL)
        start_update(r);
    else
        answer_rows(r, NULL);
}

static int start_worlds(h2o_req_t *req, enum kind kind, unsigned n)
{
    struct rctx *r = rctx_new(req, kind, n, kind == UPDATES ? UPDATE_EXTRA(n) : 0);
    if (r == NULL) {
        send_error(req, "out of memory");
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        struct query *q = &r->qs[i];
        q->stmt = "world";
        q->nparams = 1;
        q->id_be = htonl((uint32_t)random_id(r->w));
        q->one[0] = (const char *)&q->id_be;
        q->values = q->one;
        q->cb = world_done;
        q->data = r;
        submit(r->w, q);
    }
    return 0;
}

/* ---- /fortunes ---- */

struct fortune {
    int32_t id;
    const char *msg;
    size_t len;
};

static int by_message(const void *a, const void *b)
{
    const struct fortune *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->msg, y->msg, n);
    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* what h2o_htmlescape() escapes */
static const char *const html_escape[256] = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;"};

#define FORTUNES_HEAD                                                                                                \
    "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"
#define FORTUNES_TAIL "</table></body></html>"

static void fortunes_done(struct query *q, const PGresult *res, const char *err)
{
    struct rctx *r = q->data;
    h2o_req_t *req = r->req;
    rctx_free(r);
    if (req == NULL)
        return;
    if (res == NULL || PQnfields(res) != 2) {
        send_error(req, err);
        return;
    }
    int n = PQntuples(res);
    struct fortune *f = h2o_mem_alloc_pool(&req->pool, (size_t)(n + 1) * sizeof(*f));
    size_t size = sizeof(FORTUNES_HEAD) + sizeof(FORTUNES_TAIL);
    for (int i = 0; i < n; i++) {
        uint32_t v;
        if (PQgetlength(res, i, 0) != 4) {
            send_error(req, "bad id");
            return;
        }
        memcpy(&v, PQgetvalue(res, i, 0), 4);
        f[i] = (struct fortune){(int32_t)ntohl(v), PQgetvalue(res, i, 1), (size_t)PQgetlength(res, i, 1)};
        size += 40 + 6 * f[i].len;
    }
    f[n] = (struct fortune){0, EXTRA_FORTUNE, sizeof(EXTRA_FORTUNE) - 1};
    size += 40 + 6 * f[n].len;
    n++;
    qsort(f, (size_t)n, sizeof(*f), by_message);
    char *buf = h2o_mem_alloc_pool(&req->pool, size), *p = buf;
    memcpy(p, FORTUNES_HEAD, sizeof(FORTUNES_HEAD) - 1);
    p += sizeof(FORTUNES_HEAD) - 1;
    for (int i = 0; i < n; i++) {
        memcpy(p, "<tr><td>", 8);
        p = put_int(p + 8, f[i].id);
        memcpy(p, "</td><td>", 9);
        p += 9;
        const unsigned char *m = (const unsigned char *)f[i].msg;
        for (size_t k = 0; k < f[i].len; k++) {
            const char *e = html_escape[m[k]];
            if (e == NULL) {
                *p++ = (char)m[k];
            } else {
                size_t el = strlen(e);
                memcpy(p, e, el);
                p += el;
            }
        }
        memcpy(p, "</td></tr>", 10);
        p += 10;
    }
    memcpy(p, FORTUNES_TAIL, sizeof(FORTUNES_TAIL) - 1);
    p += sizeof(FORTUNES_TAIL) - 1;
    send_body(req, 200, H2O_STRLIT("text/html; charset=utf-8"), buf, (size_t)(p - buf));
}

static int start_fortunes(h2o_req_t *req)
{
    struct rctx *r = rctx_new(req, FORTUNES, 1, 0);
    if (r == NULL) {
        send_error(req, "out of memory");
        return 0;
    }
    r->qs[0] = (struct query){.stmt = "fortune", .cb = fortunes_done, .data = r};
    submit(r->w, &r->qs[0]);
    return 0;
}

/* ---- /cached-queries ---- */

/* the row of id from the cache: 0, or -1 when it is not there */
static int cache_get(int32_t id, uint64_t now, world_t *out)
{
    h2o_iovec_t key = {(char *)&id, sizeof(id)};
    h2o_cache_hashcode_t hash = h2o_cache_calchash(key.base, key.len);
    unsigned i = hash % CACHE_SHARDS;
    pthread_spin_lock(&world_cache[i].lock);
    h2o_cache_ref_t *ref = h2o_cache_fetch(world_cache[i].cache, now, key, hash);
    pthread_spin_unlock(&world_cache[i].lock);
    if (ref == NULL)
        return -1;
    memcpy(out, ref->value.base, sizeof(*out));
    h2o_cache_release(world_cache[i].cache, ref);
    return 0;
}

static int cached_queries(h2o_req_t *req)
{
    struct worker *w = H2O_STRUCT_FROM_MEMBER(struct worker, ctx, req->conn->ctx);
    unsigned n = count_of(req, H2O_STRLIT("count"));
    world_t *rows = h2o_mem_alloc_pool(&req->pool, n * sizeof(*rows));
    uint64_t now = h2o_now(req->conn->ctx->loop);
    for (unsigned i = 0; i < n; i++)
        if (cache_get(random_id(w), now, &rows[i]) != 0) {
            send_error(req, "a World row missing from the cache");
            return 0;
        }
    send_worlds(req, rows, n, 1);
    return 0;
}

/* ---- the handler ---- */

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    const char *path = req->path.base;
    size_t len = req->query_at != SIZE_MAX ? req->query_at : req->path.len;
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(path, lit, len) == 0)
    if (IS("/plaintext")) {
        send_body(req, 200, H2O_STRLIT("text/plain"), H2O_STRLIT("Hello, World!"));
        return 0;
    }
    if (IS("/json")) {
        char *buf = h2o_mem_alloc_pool(&req->pool, 32);
        memcpy(buf, "{\"message\":\"Hello, World!\"}", 27);
        send_body(req, 200, H2O_STRLIT(JSON_TYPE), buf, 27);
        return 0;
    }
    if (IS("/db"))
        return start_worlds(req, DB, 1);
    if (IS("/queries"))
        return start_worlds(req, QUERIES, count_of(req, H2O_STRLIT("queries")));
    if (IS("/updates"))
        return start_worlds(req, UPDATES, count_of(req, H2O_STRLIT("queries")));
    if (IS("/fortunes"))
        return start_fortunes(req);
    if (IS("/cached-queries"))
        return cached_queries(req);
#undef IS
    send_body(req, 404, H2O_STRLIT("text/plain; charset=utf-8"), H2O_STRLIT("not found\n"));
    return 0;
}

/* ---- threads, listeners, main ---- */

static void on_accept(h2o_socket_t *listener, const char *err)
{
    struct worker *w = listener->data;
    h2o_socket_t *sock;
    if (err != NULL)
        return;
    while ((sock = h2o_evloop_socket_accept(listener)) != NULL)
        h2o_accept(&w->accept_ctx, sock);
}

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static unsigned ready, failed;

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    h2o_evloop_t *loop = h2o_evloop_create();
    h2o_context_init(&w->ctx, loop, &config);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = config.hosts;
    w->rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)w;
    h2o_timeout_init(loop, &w->zero, 0);
    w->uncork.cb = on_uncork;
    w->nconns = pool_size;
    w->conns = calloc(pool_size, sizeof(*w->conns));
    int bad = 0;
    for (unsigned i = 0; i < pool_size && !bad; i++)
        bad = conn_open(w, &w->conns[i]) != 0;
    pthread_mutex_lock(&ready_lock);
    ready++;
    failed += (unsigned)bad;
    pthread_cond_signal(&ready_cond);
    pthread_mutex_unlock(&ready_lock);
    if (bad)
        return NULL;
    h2o_socket_t *listener = h2o_evloop_socket_create(loop, w->fd, H2O_SOCKET_FLAG_DONT_READ);
    listener->data = w;
    h2o_socket_read_start(listener, on_accept);
    for (;;)
        h2o_evloop_run(loop, INT32_MAX);
    return NULL;
}

static int open_listener(const char *host, unsigned *port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV},
                    *res;
    char service[8];
    int on = 1, fd;
    snprintf(service, sizeof(service), "%u", *port);
    if (getaddrinfo(host, service, &hints, &res) != 0) {
        fprintf(stderr, "tfb-baseline: cannot resolve %s\n", host);
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        fprintf(stderr, "tfb-baseline: %s:%u: %s\n", host, *port, strerror(errno));
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

static void free_world(h2o_iovec_t value)
{
    free(value.base);
}

/* the World cache of /cached-queries, filled once at start-up */
static int load_world(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL); /* the clock of h2o_now() */
    uint64_t now = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
    for (unsigned i = 0; i < CACHE_SHARDS; i++) {
        world_cache[i].cache = h2o_cache_create(0, 1 << 20, CACHE_TTL_MS, free_world);
        pthread_spin_init(&world_cache[i].lock, PTHREAD_PROCESS_PRIVATE);
    }
    PGconn *pg = PQconnectdb(conninfo);
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "tfb-baseline: %s", PQerrorMessage(pg));
        PQfinish(pg);
        return -1;
    }
    PGresult *r = PQexec(pg, "SELECT id, randomnumber FROM world");
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    for (int i = 0; ok && i < PQntuples(r); i++) {
        world_t *row = malloc(sizeof(*row));
        if (row == NULL) {
            ok = 0;
            break;
        }
        row->id = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
        row->randomNumber = (int32_t)strtol(PQgetvalue(r, i, 1), NULL, 10);
        h2o_iovec_t key = {(char *)&row->id, sizeof(row->id)};
        h2o_cache_hashcode_t hash = h2o_cache_calchash(key.base, key.len);
        h2o_cache_set(world_cache[hash % CACHE_SHARDS].cache, now, key, hash, h2o_iovec_init(row, sizeof(*row)));
    }
    if (!ok)
        fprintf(stderr, "tfb-baseline: %s", PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(pg);
    return ok ? 0 : -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: tfb-baseline --db CONNINFO [--host ADDR] [--port N] [--threads N] [--pool N]\n"
                    "  defaults: --host 127.0.0.1 --port 8080 --threads <cores> --pool 2\n");
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1";
    unsigned port = 8080;
    long threads = sysconf(_SC_NPROCESSORS_ONLN), pool = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
            host = argv[++i];
        } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            port = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--pool") == 0 && i + 1 < argc) {
            pool = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            conninfo = argv[++i];
        } else {
            usage();
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (conninfo == NULL || threads < 1 || threads > 256 || port > 65535 || pool < 1 || pool > 1024) {
        usage();
        return 2;
    }
    pool_size = (unsigned)pool;
    for (int i = 0; i < 2 * MAX_QUERIES; i++)
        param_len4[i] = 4, param_binary[i] = 1;
    if (load_world() != 0)
        return 1;

    signal(SIGPIPE, SIG_IGN);
    h2o_config_init(&config);
    config.server_name = h2o_iovec_init(H2O_STRLIT("h2o"));
    h2o_hostconf_t *hostconf = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *pathconf = h2o_config_register_path(hostconf, "/", 0);
    h2o_handler_t *handler = h2o_create_handler(pathconf, sizeof(*handler));
    handler->on_req = on_req;

    struct worker *workers = calloc((size_t)threads, sizeof(*workers));
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
    pthread_mutex_lock(&ready_lock);
    while (ready < (unsigned)threads)
        pthread_cond_wait(&ready_cond, &ready_lock);
    pthread_mutex_unlock(&ready_lock);
    if (failed)
        return 1;
    fprintf(stderr, "tfb-baseline listening on http://%s:%u (%ld threads, %u connections each)\n", host, port,
            threads, pool_size);
    int sig;
    sigwait(&set, &sig);
    exit(0); /* valgrind writes its counts at exit */
}
