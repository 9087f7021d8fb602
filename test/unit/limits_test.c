/* SPDX-License-Identifier: MIT */
/*
 * The server's limits and connection handling, through raw sockets against an app running in
 * this process: slow heads and bodies (408 and close), idle keep-alive connections (closed),
 * the per-worker connection cap (the next connection waits, then is served), JSON body depth
 * (router and controller mode), route parameter count at registration, pipelining 16 deep and
 * HTTP/1.0 clients with and without keep-alive, all answered in order.
 *
 * Nothing here asserts on time: a limit is shown by what the server answers, and every read
 * has a generous timeout (10 s) only so that a broken server fails the test instead of
 * hanging it.
 */
#include "test.h"
#include <poll.h>
#include <time.h>
#include <canal.h>
#include "client.h"

static canal_app_t *app;
static canal_mvc_t *mvc;

static int h_n(canal_req_t *req, void *data)
{
    canal_str_t n = canal_req_param(req, "n");
    return canal_res_body(req, 200, "text/plain", n.base, n.len);
}

static int h_json(canal_req_t *req, void *data)
{
    json_error_t err;
    json_t *doc = canal_req_json(req, &err);
    if (doc == NULL)
        return canal_res_problem(req, 400, "%s%s", err.text,
                                 json_error_code(&err) == json_error_stack_overflow ? " (depth)" : "");
    return canal_res_json(req, 200, doc);
}

typedef struct {
    json_t *all;
} body_args_t;
static const canal_field_t body_fields[] = {
    {.name = "all", CANAL_FIELD(body_args_t, all), .type = CANAL_TYPE_JSON, .source = CANAL_FROM_BODY_WHOLE},
    {.name = NULL}};
static const canal_schema_t body_args = {.name = "EchoArgs", .size = sizeof(body_args_t), .fields = body_fields};

static int a_body(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_json(req, 200, ((const body_args_t *)args)->all);
}

static const canal_action_def_t body_actions[] = {
    {.name = "Echo", .methods = "POST", .routes = {"ctl/echo"}, .handler = a_body,
     .args = &body_args},
    {.name = NULL},
};

/* Starts an app on a free port with one worker and the given limits. */
static void start(unsigned header_ms, unsigned body_ms, unsigned keepalive_ms, size_t max_conns)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    cfg.header_timeout_ms = header_ms;
    cfg.body_timeout_ms = body_ms;
    cfg.keepalive_timeout_ms = keepalive_ms;
    cfg.max_connections = max_conns;
    cfg.max_json_depth = 8;
    app = canal_app_create(&cfg);
    assert_non_null(app);
    assert_int_equal(canal_app_get(app, "n/{n}", h_n, NULL), 0);
    assert_int_equal(canal_app_post(app, "json", h_json, NULL), 0);
    mvc = canal_mvc_create(app);
    canal_controller_def_t c = {.name = "Body", .actions = body_actions};
    assert_int_equal(canal_mvc_add_controller(mvc, &c, NULL, NULL), 0);
    app_run(app);
}

/* Reads one response framed by Content-Length; copies its body into body. Returns the status.
 * The head is read a byte at a time so that nothing of a pipelined next response is taken. */
static int read_response(int fd, char *body, size_t size)
{
    char buf[8192];
    size_t len = 0;
    while (len < 4 || memcmp(buf + len - 4, "\r\n\r\n", 4) != 0) {
        if (len == sizeof(buf) - 1 || read(fd, buf + len, 1) != 1)
            fail_msg("read: connection closed or timed out before a whole head");
        len++;
    }
    buf[len] = '\0';
    int status = 0;
    assert_int_equal(sscanf(buf, "HTTP/1.%*d %d", &status), 1);
    const char *cl = strcasestr(buf, "content-length:");
    assert_non_null(cl);
    size_t want = (size_t)strtoul(cl + 15, NULL, 10), have = 0;
    assert_true(want < size);
    while (have < want) {
        ssize_t n = read(fd, body + have, want - have);
        if (n <= 0)
            fail_msg("read: the body was cut short");
        have += (size_t)n;
    }
    body[want] = '\0';
    return status;
}

/* ---- slow clients ---- */

static void header_timeout(void **state)
{
    char buf[2048];
    start(200, 10000, 10000, 100);
    int fd = dial();
    send_str(fd, "GET /n/1 HTTP/1.1\r\nHost: t\r\n"); /* and never the end of the head */
    read_all(fd, buf, sizeof(buf));
    close(fd);
    assert_non_null(strstr(buf, "HTTP/1.1 408 Request Timeout\r\n"));
    assert_non_null(strstr(buf, "connection: close\r\n") ? buf : strstr(buf, "Connection: close\r\n"));
    assert_non_null(strstr(buf, "\"status\":408"));
    /* a client trickling the head byte by byte does not reset the clock */
    fd = dial();
    send_str(fd, "GET /n/1 HTTP/1.1\r\nX-Slow: ");
    int closed = 0;
    for (int i = 0; i < 400 && !closed; i++) {
        struct timespec ts = {0, 25 * 1000000};
        nanosleep(&ts, NULL);
        closed = send(fd, "a", 1, MSG_NOSIGNAL) != 1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        closed |= poll(&p, 1, 0) > 0;
    }
    assert_true(closed); /* 10 s of trickling and still open would be a failure */
    read_all(fd, buf, sizeof(buf));
    close(fd);
    assert_non_null(strstr(buf, "HTTP/1.1 408"));
    /* a prompt client on the same server is served */
    fd = dial();
    send_str(fd, "GET /n/7 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(read_response(fd, buf, sizeof(buf)), 200);
    assert_string_equal(buf, "7");
    close(fd);
    app_finish(&app, &mvc);
}

static void body_timeout(void **state)
{
    char buf[2048];
    start(10000, 200, 10000, 100);
    int fd = dial();
    send_str(fd, "POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                 "Content-Length: 10\r\n\r\n[1,");
    read_all(fd, buf, sizeof(buf));
    close(fd);
    assert_non_null(strstr(buf, "HTTP/1.1 408 Request Timeout\r\n"));
    assert_non_null(strstr(buf, "the request body came too slowly"));
    /* the whole body in time is fine */
    fd = dial();
    send_str(fd, "POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                 "Content-Length: 7\r\n\r\n[1,2,3]");
    assert_int_equal(read_response(fd, buf, sizeof(buf)), 200);
    assert_string_equal(buf, "[1,2,3]");
    close(fd);
    app_finish(&app, &mvc);
}

static void keepalive_timeout(void **state)
{
    char buf[2048];
    start(10000, 10000, 200, 100);
    int fd = dial();
    send_str(fd, "GET /n/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(read_response(fd, buf, sizeof(buf)), 200);
    send_str(fd, "GET /n/2 HTTP/1.1\r\nHost: t\r\n\r\n"); /* kept alive */
    assert_int_equal(read_response(fd, buf, sizeof(buf)), 200);
    assert_string_equal(buf, "2");
    /* then idle: the server closes it, without an answer (there is no request to answer) */
    assert_int_equal(read_all(fd, buf, sizeof(buf)), 0);
    close(fd);
    /* a connection that never sends anything is idle too */
    fd = dial();
    assert_int_equal(read_all(fd, buf, sizeof(buf)), 0);
    close(fd);
    app_finish(&app, &mvc);
}

/* ---- the connection cap ---- */

static void max_connections(void **state)
{
    char buf[2048];
    int fds[4];
    start(10000, 10000, 10000, 4);
    for (int i = 0; i < 4; i++) {
        fds[i] = dial();
        send_str(fds[i], "GET /n/1 HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_int_equal(read_response(fds[i], buf, sizeof(buf)), 200); /* accepted and kept */
    }
    /* the fifth: the kernel completes the handshake (backlog), the worker does not take it */
    int extra = dial();
    send_str(extra, "GET /n/5 HTTP/1.1\r\nHost: t\r\n\r\n");
    struct pollfd p = {.fd = extra, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 300), 0);
    /* the four still work */
    send_str(fds[3], "GET /n/4 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(read_response(fds[3], buf, sizeof(buf)), 200);
    assert_string_equal(buf, "4");
    /* one closes: the waiting connection is taken and answered */
    close(fds[0]);
    assert_int_equal(read_response(extra, buf, sizeof(buf)), 200);
    assert_string_equal(buf, "5");
    close(extra);
    for (int i = 1; i < 4; i++)
        close(fds[i]);
    app_finish(&app, &mvc);
}

/* ---- JSON depth ---- */

static char *nested(int depth, char *out)
{
    char *o = out;
    for (int i = 0; i < depth; i++) {
        if (i % 2)
            o = stpcpy(o, "{\"k\":");
        else
            *o++ = '[';
    }
    *o++ = '1';
    for (int i = depth - 1; i >= 0; i--)
        *o++ = i % 2 ? '}' : ']';
    *o = '\0';
    return out;
}

static int post_json(const char *path, const char *json, char *body, size_t size)
{
    char req[8192];
    snprintf(req, sizeof(req), "POST %s HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n%s", path, strlen(json), json);
    int fd = dial();
    send_str(fd, req);
    int status = read_response(fd, body, size);
    close(fd);
    return status;
}

static void json_depth(void **state)
{
    char json[4096], body[8192];
    start(10000, 10000, 10000, 100);
    /* max_json_depth is 8 here */
    assert_int_equal(post_json("/json", nested(8, json), body, sizeof(body)), 200);
    assert_string_equal(body, json);
    assert_int_equal(post_json("/json", nested(9, json), body, sizeof(body)), 400);
    assert_non_null(strstr(body, "JSON nested deeper than 8 levels (depth)"));
    /* brackets inside strings are data, not depth */
    assert_int_equal(post_json("/json", "[\"[[[[[[[[[[[[\\\"{{{{{{{{{{\"]", body, sizeof(body)), 200);
    /* far deeper (3000, past jansson's own 2048): a clean 400, found before any parsing */
    char *deep = malloc(2 * 3000 + 1);
    char *o = deep;
    for (int i = 0; i < 3000; i++)
        *o++ = '[';
    for (int i = 0; i < 3000; i++)
        *o++ = ']';
    *o = '\0';
    assert_int_equal(post_json("/json", deep, body, sizeof(body)), 400);
    free(deep);
    /* controller binding: a problem with the reason */
    assert_int_equal(post_json("/ctl/echo", nested(8, json), body, sizeof(body)), 200);
    assert_int_equal(post_json("/ctl/echo", nested(12, json), body, sizeof(body)), 400);
    assert_non_null(strstr(body, "too deep"));
    app_finish(&app, &mvc);
}

/* ---- route parameters past the router's fixed slots ---- */

static void route_param_limit(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    char tmpl[512];
    size_t o = 0;
    canal_config_init(&cfg);
    canal_app_t *a = canal_app_create(&cfg);
    for (int i = 0; i < CANAL_ROUTER_MAX_PARAMS; i++)
        o += (size_t)sprintf(tmpl + o, "/{p%d}", i);
    assert_int_equal(canal_app_route(a, &(canal_endpoint_spec_t){.tmpl = tmpl, .handler = h_n}, NULL, &err), 0);
    sprintf(tmpl + o, "/{p%d}", CANAL_ROUTER_MAX_PARAMS);
    assert_int_equal(canal_app_route(a, &(canal_endpoint_spec_t){.method = "PUT", .tmpl = tmpl, .handler = h_n}, NULL, &err), CANAL_ELIMIT);
    assert_int_equal(err.code, CANAL_ELIMIT);
    assert_non_null(strstr(err.message, "more than 16 parameters"));
    /* the controller layer reports the same */
    canal_mvc_t *m = canal_mvc_create(a);
    canal_action_def_t acts[] = {{.name = "Many", .routes = {tmpl}, .handler = a_body}, {.name = NULL}};
    canal_controller_def_t c = {.name = "Many", .actions = acts};
    assert_int_equal(canal_mvc_add_controller(m, &c, NULL, &err), CANAL_ELIMIT);
    assert_non_null(strstr(err.message, "16 parameters"));
    canal_mvc_destroy(m);
    canal_app_destroy(a);
}

/* ---- pipelining and HTTP/1.0 ---- */

static void pipelining(void **state)
{
    char req[16 * 64], body[64];
    size_t o = 0;
    start(10000, 10000, 10000, 100);
    for (int i = 0; i < 16; i++)
        o += (size_t)sprintf(req + o, "GET /n/%d HTTP/1.1\r\nHost: t\r\n\r\n", i);
    int fd = dial();
    send_str(fd, req); /* all 16 in one write */
    for (int i = 0; i < 16; i++) {
        char want[16];
        sprintf(want, "%d", i);
        assert_int_equal(read_response(fd, body, sizeof(body)), 200);
        assert_string_equal(body, want);
    }
    /* and the connection is still good for more */
    send_str(fd, "GET /n/x HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(read_response(fd, body, sizeof(body)), 200);
    assert_string_equal(body, "x");
    close(fd);
    app_finish(&app, &mvc);
}

static void http10(void **state)
{
    char buf[4096], body[64];
    start(10000, 10000, 10000, 100);
    /* without keep-alive: one answer, then the server closes */
    int fd = dial();
    send_str(fd, "GET /n/a HTTP/1.0\r\n\r\n");
    read_all(fd, buf, sizeof(buf));
    close(fd);
    assert_int_equal(strncmp(buf, "HTTP/1.", 7), 0);
    assert_non_null(strstr(buf, " 200 OK\r\n"));
    assert_non_null(strstr(buf, "\r\n\r\na"));
    assert_int_equal(strstr(buf, "\r\n\r\na") + 5 - buf, (ptrdiff_t)strlen(buf));
    /* two requests sent together without keep-alive: only the first is answered */
    fd = dial();
    send_str(fd, "GET /n/a HTTP/1.0\r\n\r\nGET /n/b HTTP/1.0\r\n\r\n");
    read_all(fd, buf, sizeof(buf));
    close(fd);
    assert_non_null(strstr(buf, "\r\n\r\na"));
    assert_null(strstr(buf + 5, "HTTP/1."));
    /* with keep-alive: answers in order on one connection, marked keep-alive */
    fd = dial();
    send_str(fd, "GET /n/a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                 "GET /n/b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_int_equal(read_response(fd, body, sizeof(body)), 200);
    assert_string_equal(body, "a");
    assert_int_equal(read_response(fd, body, sizeof(body)), 200);
    assert_string_equal(body, "b");
    /* the last one without keep-alive ends it */
    send_str(fd, "GET /n/c HTTP/1.0\r\n\r\n");
    read_all(fd, buf, sizeof(buf));
    close(fd);
    assert_non_null(strstr(buf, "\r\n\r\nc"));
    app_finish(&app, &mvc);
}

/* ---- configuration ---- */

static void limits_config(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    assert_int_equal(cfg.header_timeout_ms, 10000);
    assert_int_equal(cfg.body_timeout_ms, 10000);
    assert_int_equal(cfg.keepalive_timeout_ms, 60000);
    assert_int_equal(cfg.max_connections, 10000);
    assert_int_equal(cfg.max_json_depth, 64);
    char *argv[] = {"p", "--header-timeout", "1500", "--body-timeout=2500", "--keepalive-timeout",
                    "3500", "--max-connections", "7", "--max-json-depth", "9", NULL};
    took_args(&cfg, argv);
    assert_int_equal(cfg.header_timeout_ms, 1500);
    assert_int_equal(cfg.body_timeout_ms, 2500);
    assert_int_equal(cfg.keepalive_timeout_ms, 3500);
    assert_int_equal(cfg.max_connections, 7);
    assert_int_equal(cfg.max_json_depth, 9);
    static const char *const bad[][2] = {
        {"--header-timeout", "0"}, {"--body-timeout", "x"}, {"--keepalive-timeout", "-1"},
        {"--max-connections", "0"}, {"--max-json-depth", "2049"}, {"--max-json-depth", "0"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_non_null(strstr(refused_arg(&cfg, bad[i][0], bad[i][1]), bad[i][0]));
    static const char *const env[] = {"CANAL_KEEPALIVE_TIMEOUT", "4500", "CANAL_MAX_CONNECTIONS", "11",
                                      "CANAL_MAX_JSON_DEPTH", "12", "CANAL_HEADER_TIMEOUT", "13",
                                      "CANAL_BODY_TIMEOUT", "14", NULL};
    set_env(env);
    assert_int_equal(canal_config_from_env(&cfg, &err), 0);
    assert_int_equal(cfg.keepalive_timeout_ms, 4500);
    assert_int_equal(cfg.max_connections, 11);
    assert_int_equal(cfg.max_json_depth, 12);
    assert_int_equal(cfg.header_timeout_ms, 13);
    assert_int_equal(cfg.body_timeout_ms, 14);
    setenv("CANAL_MAX_CONNECTIONS", "many", 1);
    assert_int_equal(canal_config_from_env(&cfg, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "CANAL_MAX_CONNECTIONS"));
    /* the request-size limits: flags, environment, refusals */
    char *sizes[] = {"p", "--max-target", "4096", "--max-headers=32", "--max-header-bytes", "8192",
                     "--max-query-params", "10", NULL};
    took_args(&cfg, sizes);
    assert_int_equal(cfg.max_target_length, 4096);
    assert_int_equal(cfg.max_header_count, 32);
    assert_int_equal(cfg.max_header_bytes, 8192);
    assert_int_equal(cfg.max_query_params, 10);
    static const char *const bad_sizes[][2] = {
        {"--max-target", "15"}, {"--max-headers", "101"}, {"--max-headers", "0"},
        {"--max-header-bytes", "63"}, {"--max-query-params", "0"}, {"--max-target", "1k"},
    };
    for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++)
        assert_non_null(strstr(refused_arg(&cfg, bad_sizes[i][0], bad_sizes[i][1]), bad_sizes[i][0]));
    unsetenv("CANAL_MAX_CONNECTIONS"); /* "many" above */
    static const char *const size_env[] = {"CANAL_MAX_TARGET", "2048", "CANAL_MAX_HEADERS", "20",
                                           "CANAL_MAX_HEADER_BYTES", "4096", "CANAL_MAX_QUERY_PARAMS", "5",
                                           "CANAL_MAX_BODY", "1000", NULL};
    set_env(size_env);
    assert_int_equal(canal_config_from_env(&cfg, &err), 0);
    assert_int_equal(cfg.max_target_length, 2048);
    assert_int_equal(cfg.max_header_count, 20);
    assert_int_equal(cfg.max_header_bytes, 4096);
    assert_int_equal(cfg.max_query_params, 5);
    assert_int_equal(cfg.max_body_size, 1000);
    unset_env(size_env);
    unset_env(env);
    /* a configuration of zeros (not from canal_config_init) gets the defaults */
    canal_config_t zero = {.host = "127.0.0.1"};
    canal_app_t *a = canal_app_create(&zero);
    assert_int_equal(canal_app_config(a)->keepalive_timeout_ms, 60000);
    assert_int_equal(canal_app_config(a)->max_connections, 10000);
    assert_int_equal(canal_app_config(a)->max_json_depth, 64);
    canal_app_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_config),
        cmocka_unit_test(header_timeout),
        cmocka_unit_test(body_timeout),
        cmocka_unit_test(keepalive_timeout),
        cmocka_unit_test(max_connections),
        cmocka_unit_test(json_depth),
        cmocka_unit_test(route_param_limit),
        cmocka_unit_test(pipelining),
        cmocka_unit_test(http10),
    };
    return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
