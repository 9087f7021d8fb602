/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of what a canal app needs behind a load balancer: the trusted proxy list and the
 * client address walk over X-Forwarded-For and Forwarded (table-driven, on the internal
 * functions), request IDs, the health endpoints and the drain delay, the last three through
 * apps running in this process and a raw-socket HTTP/1.1 client.
 */
#include "test.h"
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <canal.h>
#include "core/core.h"
#include "client.h"

/* ---- the trusted proxy list ---- */

static void proxies_parse(void **state)
{
    struct canal_cidr *c;
    size_t n;
    canal_error_info_t err;
    assert_int_equal(canal__proxies_parse("127.0.0.1, 10.0.0.0/8 ::1\t2001:db8::/32,,::ffff:192.168.0.0/112", &c, &n, &err), 0);
    assert_int_equal(n, 5);
    assert_int_equal(c[0].addr.family, 4);
    assert_int_equal(c[0].bits, 32);
    assert_int_equal(c[1].bits, 8);
    assert_int_equal(c[2].addr.family, 6);
    assert_int_equal(c[2].bits, 128);
    assert_int_equal(c[3].bits, 32);
    /* an IPv4-mapped prefix is an IPv4 prefix: /112 of ::ffff:0:0/96 is /16 */
    assert_int_equal(c[4].addr.family, 4);
    assert_int_equal(c[4].bits, 16);
    free(c);

    /* "unix": the peers of unix sockets, an entry of family 0 that no address has */
    assert_int_equal(canal__proxies_parse("unix, 10.0.0.0/8", &c, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(c[0].addr.family, 0);
    assert_int_equal(c[0].bits, 0);
    assert_int_equal(c[1].addr.family, 4);
    free(c);

    assert_int_equal(canal__proxies_parse("", &c, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_null(c);
    assert_int_equal(canal__proxies_parse(NULL, NULL, &n, &err), 0);

    static const char *const bad[] = {"localhost", "10.0.0.0/33", "::1/129", "10.0.0.1/", "10.0.0.0/8x",
                                      "1.2.3", "10.0.0.0/-1", "127.0.0.1,nope", "[::1]", "1.2.3.4:80",
                                      "unixx", "unix/8"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(canal__proxies_parse(bad[i], &c, &n, &err), CANAL_EINVAL);
        assert_int_equal(err.code, CANAL_EINVAL);
        assert_non_null(strstr(err.message, "trusted proxies"));
    }
    assert_int_equal(canal__proxies_parse("127.0.0.1,nope", NULL, &n, &err), CANAL_EINVAL);
    assert_int_equal(err.position, 10);
}

/* ---- the client address walk ---- */

static struct canal_addr addr(const char *s)
{
    struct canal_addr a = {0};
    if (inet_pton(AF_INET, s, a.bytes) == 1) {
        a.family = 4;
    } else {
        assert_int_equal(inet_pton(AF_INET6, s, a.bytes), 1);
        a.family = 6;
    }
    return a;
}

static const char *text(const struct canal_addr *a, char *buf)
{
    return inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->bytes, buf, INET6_ADDRSTRLEN);
}

static void client_walk(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.trusted_proxies = "127.0.0.1, 10.0.0.0/8, fd00::/8";
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    static const struct {
        const char *peer, *fwd, *xff, *client;
    } cases[] = {
        /* an untrusted peer's headers are words only */
        {"192.0.2.1", NULL, "203.0.113.9", "192.0.2.1"},
        {"192.0.2.1", "for=203.0.113.9", NULL, "192.0.2.1"},
        {"10.1.2.3", NULL, NULL, "10.1.2.3"},
        {"127.0.0.1", NULL, "203.0.113.9", "203.0.113.9"},
        /* the nearest untrusted hop is the client, whatever a client wrote further left */
        {"127.0.0.1", NULL, "198.51.100.7, 203.0.113.9, 10.0.0.5", "203.0.113.9"},
        {"127.0.0.1", NULL, "10.0.0.9,10.0.0.5", "10.0.0.9"},
        {"127.0.0.1", NULL, " 203.0.113.9:4711 ", "203.0.113.9"},
        {"127.0.0.1", NULL, "[2001:db8::1]:80", "2001:db8::1"},
        {"127.0.0.1", NULL, "2001:db8::1", "2001:db8::1"},
        {"127.0.0.1", NULL, "::ffff:203.0.113.9", "203.0.113.9"},
        /* garbage ends the walk: the last proxy we trust is all anyone vouched for */
        {"127.0.0.1", NULL, "203.0.113.9, unknown", "127.0.0.1"},
        {"127.0.0.1", NULL, "203.0.113.9, junk!, 10.0.0.5", "10.0.0.5"},
        {"127.0.0.1", NULL, "203.0.113.9, 10.0.0.5, junk!", "127.0.0.1"},
        {"127.0.0.1", NULL, "", "127.0.0.1"},
        {"127.0.0.1", NULL, "203.0.113.9,,10.0.0.5", "10.0.0.5"},
        /* Forwarded (RFC 7239), preferred over X-Forwarded-For */
        {"127.0.0.1", "for=192.0.2.60;proto=http;by=203.0.113.43", "198.51.100.1", "192.0.2.60"},
        {"127.0.0.1", "For=\"[2001:db8:cafe::17]:4711\"", NULL, "2001:db8:cafe::17"},
        {"127.0.0.1", "for=192.0.2.43, for=10.0.0.2", NULL, "192.0.2.43"},
        {"127.0.0.1", "for=198.51.100.17;by=\"x,y\", proto=https;for=10.0.0.3", NULL, "198.51.100.17"},
        {"127.0.0.1", "for=unknown", NULL, "127.0.0.1"},
        {"127.0.0.1", "for=\"_hidden\", for=10.0.0.3", NULL, "10.0.0.3"},
        {"127.0.0.1", "proto=https", NULL, "127.0.0.1"},
        {"127.0.0.1", "for=\"[2001:db8::1\"", NULL, "127.0.0.1"},
        {"fd00::1", NULL, "203.0.113.9", "203.0.113.9"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct canal_addr peer = addr(cases[i].peer), client;
        canal_str_t fwd = {cases[i].fwd, cases[i].fwd ? strlen(cases[i].fwd) : 0};
        canal_str_t xff = {cases[i].xff, cases[i].xff ? strlen(cases[i].xff) : 0};
        canal__client_from_headers(app, &peer, &fwd, cases[i].fwd != NULL, &xff, cases[i].xff != NULL, &client);
        char buf[INET6_ADDRSTRLEN];
        if (strcmp(text(&client, buf), cases[i].client) != 0)
            fail_msg("case %zu: peer %s, Forwarded [%s], X-Forwarded-For [%s]: client %s, expected %s", i,
                     cases[i].peer, cases[i].fwd ? cases[i].fwd : "", cases[i].xff ? cases[i].xff : "", buf,
                     cases[i].client);
    }
    /* a NUL inside a hop does not cut it short into an address */
    canal_str_t nul = {"203.0.113.9\0junk", 16};
    struct canal_addr lo = addr("127.0.0.1"), out;
    char tmp[INET6_ADDRSTRLEN];
    canal__client_from_headers(app, &lo, NULL, 0, &nul, 1, &out);
    assert_string_equal(text(&out, tmp), "127.0.0.1");

    /* repeated fields are one list: the last field holds the nearest hops */
    canal_str_t two[] = {{"203.0.113.9", 11}, {"10.0.0.1", 8}};
    struct canal_addr peer = addr("127.0.0.1"), client;
    char buf[INET6_ADDRSTRLEN];
    canal__client_from_headers(app, &peer, NULL, 0, two, 2, &client);
    assert_string_equal(text(&client, buf), "203.0.113.9");

    /* a chain longer than anyone builds: only the nearest 64 hops are looked at */
    char chain[2048] = "203.0.113.9";
    for (int i = 0; i < 100; i++)
        strcat(chain, i % 2 ? ", 10.0.0.1" : ",\"10.0.0.3\"");
    canal_str_t longv = {chain, strlen(chain)};
    canal__client_from_headers(app, &peer, NULL, 0, &longv, 1, &client);
    assert_string_equal(text(&client, buf), "10.0.0.3");
    canal__client_from_headers(app, &peer, &longv, 1, NULL, 0, &client); /* as Forwarded: no for= */
    assert_string_equal(text(&client, buf), "127.0.0.1");
    canal_app_destroy(app);

    cfg.trusted_proxies = "10.0.0.0/8,127.0.0.1/x";
    assert_null(canal_app_create(&cfg));
}

/* ---- configuration ---- */

static void config(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    assert_int_equal(cfg.shutdown_delay_ms, 0);
    assert_int_equal(cfg.request_id, 0);
    assert_null(cfg.trusted_proxies);
    char *argv[] = {"prog", "--shutdown-delay", "3000", "--request-id=on", "--trusted-proxies", "127.0.0.1,::1", NULL};
    took_args(&cfg, argv);
    assert_int_equal(cfg.shutdown_delay_ms, 3000);
    assert_int_equal(cfg.request_id, 1);
    assert_string_equal(cfg.trusted_proxies, "127.0.0.1,::1");

    static const char *const bad[][2] = {{"--shutdown-delay", "-1"}, {"--shutdown-delay", "3600001"},
                                         {"--request-id", "yes"},    {"--trusted-proxies", "10.0.0.0/99"},
                                         {"--trusted-proxies", ""}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *says = refused_arg(&cfg, bad[i][0], bad[i][1]);
        assert_true(strstr(says, bad[i][0] + 2) != NULL || strstr(says, "trusted proxies") != NULL);
    }
    char *off[] = {"prog", "--trusted-proxies", "off", "--request-id", "off", NULL};
    took_args(&cfg, off);
    assert_null(cfg.trusted_proxies);
    assert_int_equal(cfg.request_id, 0);

    static const char *const env[] = {"CANAL_SHUTDOWN_DELAY", "250", "CANAL_REQUEST_ID", "on",
                                      "CANAL_TRUSTED_PROXIES", "10.0.0.0/8", NULL};
    set_env(env);
    assert_int_equal(canal_config_from_env(&cfg, &err), 0);
    assert_int_equal(cfg.shutdown_delay_ms, 250);
    assert_int_equal(cfg.request_id, 1);
    assert_string_equal(cfg.trusted_proxies, "10.0.0.0/8");
    setenv("CANAL_TRUSTED_PROXIES", "ten", 1);
    assert_int_equal(canal_config_from_env(&cfg, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "CANAL_TRUSTED_PROXIES"));
    unset_env(env);
}

/* ---- apps in this process ---- */

static int h_who(canal_req_t *req, void *data)
{
    canal_str_t id = canal_req_id(req), c = canal_req_client_addr(req);
    /* asking twice gives the same answer (no cmocka asserts here: this is a worker thread) */
    if (canal_req_id(req).base != id.base || canal_req_client_addr(req).base != c.base)
        return canal_res_text(req, 500, "a second call answered differently");
    char *s = canal_req_printf(req, "%.*s|%.*s", (int)c.len, c.base, (int)id.len, id.base ? id.base : "");
    return canal_res_text(req, 200, s);
}

static int h_missing(canal_req_t *req, void *data)
{
    return canal_res_problem(req, 404, "no such thing");
}

static atomic_int app_ready = 1;
static int ready_check(canal_app_t *a, void *data)
{
    return data == &app_ready && atomic_load(&app_ready);
}

static canal_app_t *start_app(unsigned delay_ms, int request_id, const char *proxies)
{
    canal_config_t cfg;
    app_config(&cfg, 2);
    cfg.shutdown_delay_ms = delay_ms;
    cfg.request_id = request_id;
    cfg.trusted_proxies = proxies;
    canal_app_t *a = canal_app_create(&cfg);
    assert_non_null(a);
    assert_int_equal(canal_app_get(a, "who", h_who, NULL), 0);
    assert_int_equal(canal_app_get(a, "missing", h_missing, NULL), 0);
    assert_int_equal(canal_app_health(a, "/health/", ready_check, &app_ready), 0);
    app_run(a);
    assert_int_equal(canal_app_health(a, "other", NULL, NULL), CANAL_ESTATE);
    return a;
}

static void request_ids(void **state)
{
    struct reply r;
    char id1[512], id2[512], buf[600];
    canal_app_t *a = start_app(0, 1, "127.0.0.1");

    get("/who", &r);
    assert_int_equal(r.status, 200);
    snprintf(id1, sizeof(id1), "%s", header(&r, "x-request-id"));
    get("/who", &r);
    snprintf(id2, sizeof(id2), "%s", header(&r, "x-request-id"));
    /* "8 hex digits-worker-counter", different each time, the same the handler saw */
    assert_int_equal(strspn(id1, "0123456789abcdef"), 8);
    assert_int_equal(id1[8], '-');
    assert_string_not_equal(id1, id2);
    assert_memory_equal(id1, id2, 9); /* one process, one prefix */
    snprintf(buf, sizeof(buf), "127.0.0.1|%s", id2);
    assert_string_equal(r.body, buf);

    /* from a trusted proxy: its ID is kept; a malformed one is replaced */
    get_with("/who", "X-Request-Id: req-42.abc\r\n", &r);
    assert_string_equal(header(&r, "x-request-id"), "req-42.abc");
    assert_string_equal(r.body, "127.0.0.1|req-42.abc");
    get_with("/who", "X-Request-Id: two words\r\n", &r);
    assert_int_equal(header(&r, "x-request-id")[8], '-');

    /* problem details carry it, canal's own and the router's */
    get_with("/missing", "X-Request-Id: abc\r\n", &r);
    assert_int_equal(r.status, 404);
    assert_string_equal(r.body, "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,"
                                "\"detail\":\"no such thing\",\"requestId\":\"abc\"}");
    get_with("/nowhere", "X-Request-Id: def\r\n", &r);
    assert_non_null(strstr(r.body, ",\"requestId\":\"def\"}"));

    /* the client address behind the proxy */
    get_with("/who", "X-Forwarded-For: 198.51.100.1, 203.0.113.9\r\n", &r);
    assert_non_null(strstr(r.body, "203.0.113.9|"));
    get_with("/who", "Forwarded: for=\"[2001:db8::7]\"\r\nX-Forwarded-For: 203.0.113.9\r\n", &r);
    assert_non_null(strstr(r.body, "2001:db8::7|"));
    canal_app_destroy(a);

    /* an untrusted peer: its X-Forwarded-For and X-Request-Id are ignored */
    a = start_app(0, 1, "10.0.0.0/8");
    get_with("/who", "X-Forwarded-For: 203.0.113.9\r\nForwarded: for=203.0.113.9\r\nX-Request-Id: mine\r\n", &r);
    assert_non_null(strstr(r.body, "127.0.0.1|"));
    assert_null(strstr(r.body, "mine"));
    assert_int_equal(header(&r, "x-request-id")[8], '-');
    canal_app_destroy(a);

    /* off: no header, no member, an empty ID; no proxies: the peer, whatever the headers */
    a = start_app(0, 0, NULL);
    get_with("/who", "X-Forwarded-For: 203.0.113.9\r\nX-Request-Id: mine\r\n", &r);
    assert_string_equal(r.body, "127.0.0.1|");
    assert_null(strstr(r.head, "x-request-id"));
    get("/missing", &r);
    assert_null(strstr(r.body, "requestId"));
    canal_app_destroy(a);
}

static void health(void **state)
{
    struct reply r;
    canal_app_t *a = start_app(0, 0, NULL);
    get("/health/live", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"status\":\"live\"}");
    assert_non_null(strstr(r.head, "\r\ncache-control: no-store"));
    assert_non_null(strstr(r.head, "\r\ncontent-type: application/json"));
    get("/health/ready", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"status\":\"ready\"}");
    atomic_store(&app_ready, 0);
    get("/health/ready", &r);
    assert_int_equal(r.status, 503);
    assert_string_equal(r.body, "{\"status\":\"not ready\"}");
    get("/health/live", &r); /* alive all the same */
    assert_int_equal(r.status, 200);
    atomic_store(&app_ready, 1);
    request("HEAD /health/ready HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_len, 0);
    assert_int_equal(canal_app_draining(a), 0);
    canal_app_destroy(a);

    /* mounted at the root */
    canal_app_t *b = canal_app_create(NULL);
    assert_int_equal(canal_app_health(b, "", NULL, NULL), 0);
    assert_int_equal(canal_app_get(b, "ready", h_who, NULL), CANAL_EEXIST);
    assert_int_equal(canal_app_health(b, "/", NULL, NULL), CANAL_EEXIST);
    assert_int_equal(canal_app_error(b, NULL), CANAL_EEXIST);
    canal_app_destroy(b);
}

static void *waiter(void *arg)
{
    return (void *)(intptr_t)canal_app_wait(arg);
}

/* A stopping app with a drain delay: readiness 503 at once, everything else still served,
 * new connections still accepted, until the delay ends (here: a second stop ends it). */
static void drain_delay(void **state)
{
    struct reply r;
    canal_app_t *a = start_app(600000, 0, NULL);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, waiter, a), 0);
    get("/health/ready", &r);
    assert_int_equal(r.status, 200);
    canal_app_stop(a);
    while (!canal_app_draining(a))
        sched_yield();
    for (int i = 0; i < 3; i++) { /* new connections each time */
        get("/health/ready", &r);
        assert_int_equal(r.status, 503);
        assert_string_equal(r.body, "{\"status\":\"draining\"}");
        get("/who", &r);
        assert_int_equal(r.status, 200);
        get("/health/live", &r);
        assert_int_equal(r.status, 200);
    }
    canal_app_stop(a); /* a second stop ends the delay (600 s) now */
    void *rc;
    assert_int_equal(pthread_join(t, &rc), 0);
    assert_int_equal((intptr_t)rc, 0);
    assert_int_equal(canal_app_draining(a), 1);
    canal_app_destroy(a);
}

/* The thread that starts an app lends nothing of its own to the workers. libh2o 2.2.5 keeps free
 * socket buffers in a list per thread, without a lock, and a socket's buffers come from and go
 * back to the list of the thread that created it: the workers' sockets (their message pipes
 * included) must be made on the workers' threads, or two workers share the starting thread's
 * list and, rarely, free a buffer that is still listed (lib/core/app.c, worker_init). Started
 * in a thread of its own, the app must leave that thread's list as it found it: empty. */
struct lender {
    size_t count;
    void *link;
    int start_rc, wait_rc;
};

static void *start_and_stop(void *arg)
{
    struct lender *l = arg;
    canal_config_t cfg;
    app_config(&cfg, 2);
    canal_app_t *a = canal_app_create(&cfg);
    if (a == NULL)
        return NULL;
    canal_app_get(a, "who", h_who, NULL);
    if ((l->start_rc = canal_app_start(a)) == 0) {
        canal_app_stop(a); /* a message read by each worker from its queue's pipe */
        l->wait_rc = canal_app_wait(a);
    }
    canal_app_destroy(a);
    l->count = h2o_socket_buffer_prototype.allocator.cnt;
    l->link = h2o_socket_buffer_prototype.allocator._link;
    return NULL;
}

static void worker_buffers(void **state)
{
    for (int round = 0; round < 3; round++) {
        struct lender l = {.count = 99, .start_rc = -1, .wait_rc = -1};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, start_and_stop, &l), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_int_equal(l.start_rc, 0);
        assert_int_equal(l.wait_rc, 0);
        assert_int_equal(l.count, 0);
        assert_null(l.link);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(proxies_parse), cmocka_unit_test(client_walk), cmocka_unit_test(config),
        cmocka_unit_test(request_ids),   cmocka_unit_test(health),      cmocka_unit_test(drain_delay),
        cmocka_unit_test(worker_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
