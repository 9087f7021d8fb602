/* SPDX-License-Identifier: MIT */
/*
 * h2o-baseline: the raw libh2o server that canal is measured against ("the limit").
 *
 * It serves canal-demo's five endpoints with the same status codes, content types and bodies,
 * written the fastest honest way directly on libh2o 2.2.5:
 *
 *   - one h2o handler for everything, with a hand-written dispatch (length + memcmp on the raw
 *     path, no router, no allocation before the answer is known);
 *   - one event loop and h2o context per thread, each with its own SO_REUSEPORT listener;
 *   - JSON built with jansson from the same northwind.json as canal-demo (the same per-request
 *     work as the demo: json_pack for the small objects, a borrowed employee, a page array
 *     built per request; the loading and the lookups are bench/peers/data.h's, shared with the
 *     peers and inlined here) and serialized with json_dumpb(..., JSON_COMPACT) straight into
 *     request memory (h2o_mem_alloc_pool), with a per-thread size guess so most answers are
 *     dumped once;
 *   - one h2o_send() per answer, Content-Length set.
 *
 * What it does not do (and canal does): case-insensitive paths, percent-decoded path segments,
 * trailing-slash tolerance, OPTIONS, Allow on 405, access logs, graceful shutdown. None of those
 * is on the benchmark's path; bench/run checks the bodies of the benchmark URLs and of a few
 * error answers against canal-demo before measuring.
 *
 *   build/bench/h2o-baseline [--host ADDR] [--port N] [--threads N] [--data FILE]
 *
 * --port 0 picks a free port; the chosen port is printed to stderr as
 * "h2o-baseline listening on http://HOST:PORT". SIGTERM or SIGINT ends the process.
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <h2o.h>
#include <jansson.h>
#include "data.h"

#define TEXT_TYPE "text/plain; charset=utf-8"
#define JSON_TYPE "application/json"
#define PROBLEM_TYPE "application/problem+json"

/* ---- answers ---- */

static h2o_generator_t generator = {NULL, NULL}; /* one-shot answers: nothing to proceed or stop */
static __thread size_t json_hint = 512;         /* per thread: the last answer's size + 1/8 */

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    default: return "Internal Server Error";
    }
}

static int is_head(h2o_req_t *req)
{
    return h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD"));
}

/* body is static or in request memory */
static int send_body(h2o_req_t *req, int status, const char *ctype, size_t ctlen, const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = reason(status);
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, ctype, ctlen);
    h2o_start_response(req, &generator);
    if (is_head(req)) {
        h2o_send(req, NULL, 0, H2O_SEND_STATE_FINAL);
    } else {
        h2o_iovec_t buf = h2o_iovec_init(body, len);
        h2o_send(req, &buf, 1, H2O_SEND_STATE_FINAL);
    }
    return 0;
}

static int send_json(h2o_req_t *req, int status, const char *ctype, size_t ctlen, const json_t *json)
{
    size_t cap = json_hint;
    char *buf = h2o_mem_alloc_pool(&req->pool, cap);
    size_t n = json_dumpb(json, buf, cap, JSON_COMPACT);
    if (n > cap) {
        buf = h2o_mem_alloc_pool(&req->pool, n);
        json_dumpb(json, buf, n, JSON_COMPACT);
    }
    json_hint = n + n / 8 < 512 ? 512 : n + n / 8;
    return send_body(req, status, ctype, ctlen, buf, n);
}

static int send_json_new(h2o_req_t *req, int status, json_t *json)
{
    send_json(req, status, H2O_STRLIT(JSON_TYPE), json);
    json_decref(json);
    return 0;
}

/* An RFC 9457 problem, as canal_res_problem() writes it. */
static int send_problem(h2o_req_t *req, int status, const char *detail_fmt, ...)
{
    json_t *p = json_pack("{s:s, s:s, s:i}", "type", "about:blank", "title", reason(status), "status", status);
    if (detail_fmt != NULL) {
        char detail[512];
        va_list ap;
        va_start(ap, detail_fmt);
        vsnprintf(detail, sizeof(detail), detail_fmt, ap);
        va_end(ap);
        json_t *d = json_string(detail);
        json_object_set_new(p, "detail", d ? d : json_string("(not valid UTF-8)"));
    }
    send_json(req, status, H2O_STRLIT(PROBLEM_TYPE), p);
    json_decref(p);
    return 0;
}

/* ---- parsing ---- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 32;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A query may hold anything but bad percent-escapes and %00. */
static int query_ok(const char *q, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (q[i] != '%')
            continue;
        if (i + 2 >= len || hexval(q[i + 1]) < 0 || hexval(q[i + 2]) < 0 || (q[i + 1] == '0' && q[i + 2] == '0'))
            return 0;
        i += 2;
    }
    return 1;
}

/* Decodes %XX and '+' in place (query_ok() checked the escapes); returns the new length. */
static size_t decode(char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            s[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            s[o++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    return o;
}

struct qparam {
    const char *value;
    size_t len;
    unsigned count;
};

/* Splits the query and keeps the first value and the count of customerid, index and size. */
static void parse_orders_query(h2o_req_t *req, const char *q, size_t len, struct qparam *cust, struct qparam *index,
                               struct qparam *size)
{
    if (len == 0)
        return;
    char *buf = h2o_mem_alloc_pool(&req->pool, len);
    memcpy(buf, q, len);
    size_t at = 0;
    while (at <= len) {
        char *amp = memchr(buf + at, '&', len - at);
        size_t end = amp ? (size_t)(amp - buf) : len;
        if (end > at) {
            char *piece = buf + at, *eq = memchr(piece, '=', end - at);
            size_t klen = decode(piece, eq ? (size_t)(eq - piece) : end - at);
            size_t vlen = eq ? decode(eq + 1, end - at - (size_t)(eq - piece) - 1) : 0;
            struct qparam *p = NULL;
            if (klen == 10 && memcmp(piece, "customerid", 10) == 0)
                p = cust;
            else if (klen == 5 && memcmp(piece, "index", 5) == 0)
                p = index;
            else if (klen == 4 && memcmp(piece, "size", 4) == 0)
                p = size;
            if (p != NULL && p->count++ == 0) {
                p->value = eq ? eq + 1 : "";
                p->len = vlen;
            }
        }
        at = end + 1;
    }
}

/* ---- the handler ---- */

static int orders(h2o_req_t *req, int32_t id, const char *q, size_t qlen)
{
    struct qparam cust = {NULL, 0, 0}, index = {NULL, 0, 0}, size = {NULL, 0, 0};
    json_t *errors = NULL;
    parse_orders_query(req, q, qlen, &cust, &index, &size);
    if (cust.count > 1)
        bench_add_error(&errors, "customerid", "The customerid field must be given once.");
    int32_t ix = bench_query_int(index.value, index.len, index.count, "index", 0, 0, INT32_MAX, &errors);
    int32_t sz = bench_query_int(size.value, size.len, size.count, "size", 10, 1, 100, &errors);
    if (errors != NULL) {
        json_t *p = json_pack("{s:s, s:s, s:i, s:o}", "type", "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                              "title", "One or more validation errors occurred.", "status", 400, "errors", errors);
        send_json(req, 400, H2O_STRLIT(PROBLEM_TYPE), p);
        json_decref(p);
        return 0;
    }
    return send_json_new(req, 200, bench_orders_page(id, cust.count ? cust.value : NULL, cust.len, ix, sz));
}

#define HAS_PREFIX(p, n, lit) ((n) >= sizeof(lit) - 1 && memcmp((p), (lit), sizeof(lit) - 1) == 0)

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    const char *path = req->path.base;
    size_t len = req->query_at != SIZE_MAX ? req->query_at : req->path.len;
    const char *q = req->query_at != SIZE_MAX ? path + req->query_at + 1 : "";
    size_t qlen = req->query_at != SIZE_MAX ? req->path.len - req->query_at - 1 : 0;

    if (!query_ok(q, qlen))
        return send_problem(req, 400, "malformed percent-encoding in the query");

    /* which route, and its id segment if it has one */
    enum { NONE, PLAINTEXT, JSON, WOO, EMPLOYEE, ORDERS } route = NONE;
    const char *seg = NULL;
    size_t seglen = 0;
    switch (len) {
    case 15:
        if (memcmp(path, "/home/plaintext", 15) == 0)
            route = PLAINTEXT;
        break;
    case 10:
        if (memcmp(path, "/home/json", 10) == 0)
            route = JSON;
        break;
    case 8:
        if (memcmp(path, "/api/woo", 8) == 0)
            route = WOO;
        break;
    }
    if (route == NONE) {
        if (HAS_PREFIX(path, len, "/home/employee/"))
            route = EMPLOYEE, seg = path + 15, seglen = len - 15;
        else if (HAS_PREFIX(path, len, "/home/orders/"))
            route = ORDERS, seg = path + 13, seglen = len - 13;
    }
    int32_t id = 0;
    if (route == NONE || (seg != NULL && bench_parse_int32(seg, seglen, &id) != 0)) /* {id:int} did not match */
        return send_problem(req, 404, NULL);

    if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET")) && !is_head(req)) {
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, H2O_STRLIT("GET, HEAD, OPTIONS"));
        return send_problem(req, 405, "%.*s is not allowed here; allowed: GET, HEAD, OPTIONS", (int)req->method.len,
                            req->method.base);
    }

    switch (route) {
    case PLAINTEXT:
        return send_body(req, 200, H2O_STRLIT(TEXT_TYPE), H2O_STRLIT("Hello, World!"));
    case JSON:
        return send_json_new(req, 200, json_pack("{s:s}", "message", "Hello, World!"));
    case WOO:
        return send_json_new(req, 200, json_pack("{s:i, s:s}", "id", 1, "name", "Woo"));
    case EMPLOYEE: {
        json_t *e = bench_employee(id);
        if (e == NULL)
            return send_problem(req, 404, "no employee with id %d", (int)id);
        return send_json(req, 200, H2O_STRLIT(JSON_TYPE), e);
    }
    case ORDERS:
        return orders(req, id, q, qlen);
    default:
        return send_problem(req, 404, NULL);
    }
}

/* ---- threads, listeners, main ---- */

static h2o_globalconf_t config;

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
        fprintf(stderr, "h2o-baseline: cannot resolve %s\n", host);
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        fprintf(stderr, "h2o-baseline: %s:%u: %s\n", host, *port, strerror(errno));
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

static void usage(void)
{
    fprintf(stderr, "usage: h2o-baseline [--host ADDR] [--port N] [--threads N] [--data FILE]\n"
                    "  defaults: --host 127.0.0.1 --port 8080 --threads <cores> --data " BASELINE_DATA "\n");
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1", *data = BASELINE_DATA;
    unsigned port = 8080;
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
            host = argv[++i];
        } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            port = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            data = argv[++i];
        } else {
            usage();
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (threads < 1 || threads > 256 || port > 65535) {
        usage();
        return 2;
    }
    json_object_seed(0);
    if (bench_data_load("h2o-baseline", data) != 0)
        return 1;

    signal(SIGPIPE, SIG_IGN);
    h2o_config_init(&config);
    config.server_name = h2o_iovec_init(H2O_STRLIT("h2o"));
    h2o_hostconf_t *hostconf = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *pathconf = h2o_config_register_path(hostconf, "/", 0);
    h2o_handler_t *handler = h2o_create_handler(pathconf, sizeof(*handler));
    handler->on_req = on_req;

    /* Every listener is bound here, so a bind error is reported before any thread runs. */
    struct worker *workers = calloc((size_t)threads, sizeof(*workers));
    for (long i = 0; i < threads; i++)
        if ((workers[i].fd = open_listener(host, &port)) < 0)
            return 1;

    /* Workers never see SIGTERM/SIGINT: the main thread waits for them and exits. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    for (long i = 0; i < threads; i++)
        pthread_create(&workers[i].tid, NULL, run_worker, &workers[i]);
    fprintf(stderr, "h2o-baseline listening on http://%s:%u (%ld threads)\n", host, port, threads);
    int sig;
    sigwait(&set, &sig);
    /* exit() rather than a drain: the benchmark stops a server only between loads. Leaving
     * through exit() lets valgrind write its counts. */
    exit(0);
}
