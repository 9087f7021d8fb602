/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the test client (canal/testing.h). The first part drives a real app through
 * the public API: bodies, headers, HEAD, 204, JSON, keep-alive and Connection: close, bad
 * arguments, raw bytes. The second part feeds the answer parser canned answers over a
 * socketpair (testing.c is included for its statics), for the framings canal itself never
 * sends: chunked bodies, 1xx interim answers, bodies up to the close, and broken answers.
 */
#include "test.h"
#include <pthread.h>
#include <sys/socket.h>
#include <canal.h>
#include <canal/testing.h>
#include "testing/testing.c"
#include "client.h"

static int h_woo(canal_req_t *req, void *data)
{
    canal_res_header(req, "X-Woo", "yes");
    return canal_res_json_new(req, 200, json_pack("{s:i, s:s}", "id", 1, "name", "Woo"));
}

/* Echoes the method, the body and the header X-In, as JSON. */
static int h_echo(canal_req_t *req, void *data)
{
    canal_str_t m = canal_req_method(req), b = canal_req_body(req), x = canal_req_header(req, "x-in");
    return canal_res_json_new(req, 200, json_pack("{s:s#, s:s#, s:s#}", "method", m.base, (int)m.len,
                                                  "body", b.base ? b.base : "", (int)b.len, "x",
                                                  x.base ? x.base : "", (int)x.len));
}

/* Adds one to the "n" member of a JSON body. */
static int h_inc(canal_req_t *req, void *data)
{
    json_error_t e;
    json_t *in = canal_req_json(req, &e);
    if (in == NULL)
        return canal_res_problem(req, 400, "%s", e.text);
    return canal_res_json_new(req, 201, json_pack("{s:I}", "n", json_integer_value(json_object_get(in, "n")) + 1));
}

static int h_empty(canal_req_t *req, void *data)
{
    return canal_res_status(req, 204);
}

static int h_big(canal_req_t *req, void *data)
{
    size_t n = 3 * 1024 * 1024 + 7;
    char *b = canal_req_alloc(req, n);
    for (size_t i = 0; i < n; i++)
        b[i] = (char)('a' + i % 26);
    b[100] = '\0'; /* a NUL inside the body */
    return canal_res_body_static(req, 200, "application/octet-stream", b, n);
}

static canal_app_t *new_app(void)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 2;
    cfg.port = 1; /* never bound: the test listener replaces the configured one */
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    add_routes(app, (const struct test_route[]){{"GET", "api/woo", h_woo}, {"GET", "echo", h_echo},
                                                {"POST", "echo", h_echo}, {"PUT", "echo", h_echo},
                                                {"POST", "inc", h_inc}, {"GET", "empty", h_empty},
                                                {"GET", "big", h_big}, {0}});
    return app;
}

static void requests(void **state)
{
    canal_app_t *app = new_app();
    canal_error_info_t err;
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    assert_true(canal_test_port(t) > 1);
    assert_int_equal(canal_app_port(app, 0), canal_test_port(t));
    assert_int_equal(canal_app_port(app, 1), 0); /* the configured port 1 was not bound */

    canal_test_response_t *r = canal_test_get(t, "/api/woo");
    assert_non_null(r);
    assert_int_equal(r->status, 200);
    assert_string_equal(r->reason, "OK");
    assert_string_equal(r->body, "{\"id\":1,\"name\":\"Woo\"}");
    assert_int_equal(r->body_len, strlen(r->body));
    assert_string_equal(canal_test_header(r, "x-woo"), "yes");
    assert_string_equal(canal_test_header(r, "CONTENT-TYPE"), "application/json");
    assert_string_equal(canal_test_header(r, "Content-Length"), "21");
    assert_null(canal_test_header(r, "x-none"));
    assert_true(r->nheaders >= 4);
    json_t *j = canal_test_response_json(r, NULL);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 1);
    json_decref(j);
    canal_test_response_free(r);
    assert_string_equal(canal_test_error(t), "");

    /* headers and a body go out; the answer's body may not be JSON */
    canal_kv_t h[] = {{"X-In", "in value"}, {"Accept", "*/*"}};
    r = canal_test_request(t, "POST", "/echo", h, 2, "a\0b", 3);
    assert_non_null(r);
    assert_string_equal(r->body, "{\"method\":\"POST\",\"body\":\"a\\u0000b\",\"x\":\"in value\"}");
    canal_test_response_free(r);
    r = canal_test_request(t, "PUT", "/echo", NULL, 0, NULL, 0); /* Content-Length: 0 is added */
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);

    /* JSON both ways */
    json_t *in = json_pack("{s:i}", "n", 41);
    r = canal_test_json(t, "POST", "/inc", NULL, 0, in);
    json_decref(in);
    assert_int_equal(r->status, 201);
    assert_string_equal(r->body, "{\"n\":42}");
    canal_test_response_free(r);
    r = canal_test_request(t, "POST", "/inc", NULL, 0, "{", 1);
    assert_int_equal(r->status, 400);
    json_error_t jerr;
    assert_null(canal_test_response_json(&(canal_test_response_t){.body = "{", .body_len = 1}, &jerr));
    assert_true(strlen(jerr.text) > 0);
    canal_test_response_free(r);

    /* HEAD keeps Content-Length without a body; 204 has neither; 404 and 405 */
    r = canal_test_request(t, "HEAD", "/api/woo", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 200);
    assert_string_equal(canal_test_header(r, "content-length"), "21");
    assert_int_equal(r->body_len, 0);
    assert_string_equal(r->body, "");
    canal_test_response_free(r);
    r = canal_test_get(t, "/empty");
    assert_int_equal(r->status, 204);
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);
    r = canal_test_get(t, "/nowhere");
    assert_int_equal(r->status, 404);
    canal_test_response_free(r);
    r = canal_test_request(t, "DELETE", "/echo", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 405);
    assert_non_null(strstr(canal_test_header(r, "allow"), "POST"));
    canal_test_response_free(r);

    /* a body of several MiB, NUL included, comes back whole */
    r = canal_test_get(t, "/big");
    assert_int_equal(r->body_len, 3 * 1024 * 1024 + 7);
    assert_int_equal(r->body[100], '\0');
    assert_int_equal(r->body[101], 'a' + 101 % 26);
    assert_int_equal(r->body[r->body_len - 1], 'a' + (r->body_len - 1) % 26);
    assert_int_equal(r->body[r->body_len], '\0');
    canal_test_response_free(r);

    /* all of that on one kept-alive connection */
    assert_int_equal(canal_test_connection_count(t), 1);
    /* Connection: close is honoured, and the next request opens a new connection */
    r = canal_test_request(t, "GET", "/api/woo", (canal_kv_t[]){{"Connection", "close"}}, 1, NULL, 0);
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    r = canal_test_get(t, "/api/woo");
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_int_equal(canal_test_connection_count(t), 2);

    /* each of the 12 requests reached the app exactly once */
    assert_int_equal(canal_app_worker_requests(app, 0) + canal_app_worker_requests(app, 1), 12);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

static void bad_arguments(void **state)
{
    canal_error_info_t err;
    assert_null(canal_test_start(NULL, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    assert_int_equal(canal_test_stop(NULL), 0);

    canal_app_t *app = new_app();
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    assert_null(canal_test_start(app, &err)); /* started already */
    assert_int_equal(err.code, CANAL_ESTATE);

    assert_null(canal_test_request(t, "G ET", "/", NULL, 0, NULL, 0));
    assert_non_null(strstr(canal_test_error(t), "token"));
    assert_null(canal_test_request(t, "", "/", NULL, 0, NULL, 0));
    assert_null(canal_test_request(t, "GET", "/a b", NULL, 0, NULL, 0));
    assert_non_null(strstr(canal_test_error(t), "target"));
    assert_null(canal_test_request(t, "GET", "/a\r\nX: 1", NULL, 0, NULL, 0));
    assert_null(canal_test_request(t, "GET", "", NULL, 0, NULL, 0));
    assert_null(canal_test_request(t, "GET", "/", (canal_kv_t[]){{"X", "1\r\nY: 2"}}, 1, NULL, 0));
    assert_non_null(strstr(canal_test_error(t), "CR or LF"));
    assert_null(canal_test_request(t, "GET", "/", (canal_kv_t[]){{"X Y", "1"}}, 1, NULL, 0));
    assert_null(canal_test_request(t, "GET", "/", (canal_kv_t[]){{NULL, "1"}}, 1, NULL, 0));
    assert_null(canal_test_request(t, "GET", "/", NULL, 1, NULL, 0));
    assert_null(canal_test_get(NULL, "/"));
    /* none of it broke the client */
    canal_test_response_t *r = canal_test_get(t, "/api/woo");
    assert_int_equal(r->status, 200);
    assert_string_equal(canal_test_error(t), "");
    canal_test_response_free(r);
    canal_test_response_free(NULL);
    assert_null(canal_test_header(NULL, "x"));

    /* raw bytes: a malformed request line gets h2o's 400; HEAD is read without a body */
    static const char bad[] = "GET /api/woo HTTP/1.1\r\nHost t\r\n\r\n";
    r = canal_test_raw(t, bad, sizeof(bad) - 1);
    assert_non_null(r);
    assert_int_equal(r->status, 400);
    canal_test_response_free(r);
    static const char head[] = "HEAD /api/woo HTTP/1.1\r\nHost: t\r\n\r\n";
    r = canal_test_raw(t, head, sizeof(head) - 1);
    assert_int_equal(r->status, 200);
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);
    /* a request cut short: the server waits, then gives up; the client times out first */
    canal_test_set_timeout(t, 300);
    static const char cut[] = "GET /api/woo HTTP/1.1\r\nHo";
    assert_null(canal_test_raw(t, cut, sizeof(cut) - 1));
    assert_non_null(strstr(canal_test_error(t), "timed out"));
    canal_test_set_timeout(t, 0); /* back to the default */
    assert_int_equal(t->timeout_ms, 30000);
    assert_null(canal_test_raw(t, "", 0));
    assert_non_null(strstr(canal_test_error(t), "no bytes"));
    /* the kept-alive connection was left alone by the raw ones */
    r = canal_test_get(t, "/api/woo");
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_int_equal(canal_test_connection_count(t), 4);

    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

/* ---- a controller-mode app: the same client ---- */

typedef struct {
    int32_t id;
} c_args_t;
static const canal_field_t c_fields[] = {
    {.name = "id", CANAL_FIELD(c_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED, CANAL_MIN(1)},
    {.name = NULL}};
static const canal_schema_t c_args = {.name = "GetArgs", .size = sizeof(c_args_t), .fields = c_fields};

static int c_get(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_json_new(req, 200, json_pack("{s:i}", "id", ((const c_args_t *)args)->id));
}

static const canal_action_def_t c_actions[] = {
    {.name = "Get", .routes = {"{id}"}, .handler = c_get,
     .args = &c_args},
    {.name = NULL},
};

static void controller_app(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_mvc_t *mvc = canal_mvc_create(app);
    canal_controller_def_t c = {.name = "Items", .prefix = "api/[controller]", .actions = c_actions};
    assert_int_equal(canal_mvc_add_controller(mvc, &c, NULL, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);

    canal_test_response_t *r = canal_test_get(t, "/api/items/7");
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "{\"id\":7}");
    canal_test_response_free(r);
    /* a value that fails validation: 400 problem details before the action runs */
    r = canal_test_get(t, "/api/items/0");
    assert_int_equal(r->status, 400);
    assert_string_equal(canal_test_header(r, "content-type"), "application/problem+json");
    json_t *problem = canal_test_response_json(r, NULL);
    assert_non_null(json_object_get(json_object_get(problem, "errors"), "id"));
    json_decref(problem);
    canal_test_response_free(r);

    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app); /* the app first, then its controller layer */
    canal_mvc_destroy(mvc);
}

/* ---- a server that closes a kept-alive connection: the request is sent again ---- */

struct closer {
    int listener;
    int requests; /* requests read, over both connections */
};

/* Reads one request head (the client sends no body here). */
static int read_request(int fd)
{
    char buf[4096];
    size_t len = 0;
    while (len < sizeof(buf) - 1) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL)
            return 0;
    }
    return -1;
}

/* Connection 1: answers "a" with keep-alive, then closes without reading further, as a server
 * does when a kept-alive connection has been idle too long. Connection 2: answers "b". */
static void *closer_main(void *arg)
{
    struct closer *c = arg;
    int fd = accept(c->listener, NULL, NULL);
    if (fd >= 0 && read_request(fd) == 0) {
        c->requests++;
        static const char a[] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na";
        if (write(fd, a, sizeof(a) - 1) < 0)
            return NULL;
    }
    close(fd);
    fd = accept(c->listener, NULL, NULL);
    if (fd >= 0 && read_request(fd) == 0) {
        c->requests++;
        static const char b[] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\nb";
        if (write(fd, b, sizeof(b) - 1) < 0)
            return NULL;
    }
    close(fd);
    /* connection 3 closes at once, before any answer */
    fd = accept(c->listener, NULL, NULL);
    if (fd >= 0 && read_request(fd) == 0)
        c->requests++;
    close(fd);
    return NULL;
}

static void stale_connection(void **state)
{
    struct closer c = {.listener = socket(AF_INET, SOCK_STREAM, 0)};
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t salen = sizeof(sa);
    assert_int_equal(bind(c.listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(c.listener, 4), 0);
    assert_int_equal(getsockname(c.listener, (struct sockaddr *)&sa, &salen), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, closer_main, &c), 0);

    canal_test_t t = {.port = ntohs(sa.sin_port), .fd = -1, .timeout_ms = 30000};
    canal_test_response_t *r = canal_test_get(&t, "/1");
    assert_non_null(r);
    assert_string_equal(r->body, "a");
    canal_test_response_free(r);
    /* the server has closed connection 1 (or is about to): the request goes out again */
    r = canal_test_get(&t, "/2");
    if (r == NULL)
        fail_msg("%s", canal_test_error(&t));
    assert_string_equal(r->body, "b");
    canal_test_response_free(r);
    assert_int_equal(t.connections, 2);
    /* a new connection closed without an answer is not retried: the request failed */
    assert_null(canal_test_get(&t, "/3"));
    assert_non_null(strstr(canal_test_error(&t), "without answering"));
    assert_int_equal(t.connections, 3);

    pthread_join(th, NULL);
    assert_int_equal(c.requests, 3); /* request 2 reached the server once it could answer */
    close(c.listener);
    free(t.buf);
}

/* ---- the parser, on canned answers ---- */

struct canned {
    const char *name;
    const char *bytes;
    int head;         /* parse as the answer to HEAD */
    int rc;           /* read_answer(): 0, -1 or 1 */
    int status;
    const char *body;
    int close;
    const char *error; /* part of the message when rc is -1 */
};

static const struct canned canned[] = {
    {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
                "A;ext=1\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n", 0, 0, 200, "abc0123456789", 0, NULL},
    {"interim 100 then 201", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
     0, 0, 201, "ok", 0, NULL},
    {"body to the close", "HTTP/1.1 200 OK\r\nX: y\r\n\r\nuntil the end", 0, 0, 200, "until the end", 1, NULL},
    {"HTTP/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nz", 0, 0, 200, "z", 1, NULL},
    {"keep-alive 1.0", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", 0, 0, 200, "", 0,
     NULL},
    {"Connection: close", "HTTP/1.1 500 Oops\r\nconnection: Close\r\ncontent-length: 0\r\n\r\n", 0, 0, 500, "", 1,
     NULL},
    {"HEAD ignores the length", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", 1, 0, 200, "", 0, NULL},
    {"no reason phrase", "HTTP/1.1 204\r\n\r\n", 0, 0, 204, "", 0, NULL},
    {"nothing at all", "", 0, 1, 0, NULL, 0, NULL},
    {"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", 0, -1, 0, NULL, 0, "status line"},
    {"bad status", "HTTP/1.1 2000 OK\r\n\r\n", 0, -1, 0, NULL, 0, "status line"},
    {"cut in the head", "HTTP/1.1 200 OK\r\nContent-Le", 0, -1, 0, NULL, 0, "closed"},
    {"header without colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", 0, -1, 0, NULL, 0, "malformed header"},
    {"bad length", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", 0, -1, 0, NULL, 0, "Content-Length"},
    {"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, -1, 0, NULL, 0, "Content-Length"},
    {"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, -1, 0, NULL, 0, "3 of 10"},
    {"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, -1, 0, NULL, 0, "chunk size"},
    {"huge chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", 0, -1, 0, NULL, 0,
     "chunk size"},
    {"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", 0, -1, 0, NULL, 0,
     "CRLF"},
    {"cut chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 0, -1, 0, NULL, 0, "chunk"},
};

static void parser(void **state)
{
    for (size_t i = 0; i < sizeof(canned) / sizeof(canned[0]); i++) {
        const struct canned *c = &canned[i];
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        assert_int_equal(write(sv[1], c->bytes, strlen(c->bytes)), (ssize_t)strlen(c->bytes));
        close(sv[1]); /* the end of the stream follows the canned bytes */
        canal_test_t t = {.fd = sv[0], .timeout_ms = 10000};
        struct parsed p;
        int rc = read_answer(&t, sv[0], c->head, &p);
        print_message("%s: rc %d, error \"%s\"\n", c->name, rc, t.error);
        assert_int_equal(rc, c->rc);
        if (rc == 0) {
            canal_test_response_t *r = pack(&t, &p);
            assert_int_equal(r->status, c->status);
            assert_int_equal(r->body_len, strlen(c->body));
            assert_memory_equal(r->body, c->body, r->body_len + 1);
            assert_int_equal(p.close, c->close);
            canal_test_response_free(r);
        } else if (rc < 0) {
            assert_non_null(strstr(t.error, c->error));
        }
        parsed_free(&p);
        free(t.buf);
        close(sv[0]);
    }
}

/* canal_test_json() sends the headers given, and Content-Type unless one is among them. */
static void json_headers(void **state)
{
    canal_app_t *app = new_app();
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    json_t *in = json_pack("{s:i}", "n", 1);
    canal_kv_t h[] = {{"X-In", "with json"}};
    canal_test_response_t *r = canal_test_json(t, "POST", "/echo", h, 1, in);
    assert_non_null(r);
    assert_string_equal(r->body, "{\"method\":\"POST\",\"body\":\"{\\\"n\\\":1}\",\"x\":\"with json\"}");
    canal_test_response_free(r);
    r = canal_test_json(t, "POST", "/inc", h, 1, in);
    assert_int_equal(r->status, 201);
    canal_test_response_free(r);
    canal_kv_t text[] = {{"content-type", "text/plain"}}; /* theirs, not application/json */
    r = canal_test_json(t, "POST", "/inc", text, 1, in);
    assert_non_null(r);
    assert_int_equal(r->status, 400);
    assert_non_null(strstr(r->body, "not application/json"));
    canal_test_response_free(r);
    assert_null(canal_test_json(t, "POST", "/inc", NULL, 1, in));
    json_decref(in);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

/*
 * A body twice the limit: the server answers 413 and closes before it has read the body, and
 * the client must return that answer rather than the failed write. 20 runs, 413 each time.
 */
static void body_over_limit(void **state)
{
    canal_app_t *app = new_app();
    assert_int_equal(canal_app_config(app)->max_body_size, 1024 * 1024);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    size_t n = 2 * 1024 * 1024;
    char *body = malloc(n);
    assert_non_null(body);
    memset(body, 'x', n);
    for (int i = 0; i < 20; i++) {
        canal_test_response_t *r = canal_test_request(t, "POST", "/echo", NULL, 0, body, n);
        if (r == NULL)
            fail_msg("run %d: %s", i, canal_test_error(t));
        assert_int_equal(r->status, 413);
        canal_test_response_free(r);
    }
    canal_test_response_t *r = canal_test_get(t, "/api/woo"); /* and the client goes on */
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    free(body);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

/* ---- the cookie jar ---- */

static int h_set(canal_req_t *req, void *data)
{
    canal_res_cookie(req, "a", (canal_str_t){"1", 1}, NULL, NULL);
    canal_res_cookie(req, "b", (canal_str_t){"2", 1}, &(canal_cookie_options_t){.path = "/x", .max_age = 60}, NULL);
    canal_res_cookie(req, "gone", (canal_str_t){"3", 1}, &(canal_cookie_options_t){.expires = 1000000000}, NULL);
    return canal_res_status(req, 204);
}

static int h_del(canal_req_t *req, void *data)
{
    canal_res_cookie_delete(req, "a", NULL, NULL);
    return canal_res_status(req, 204);
}

static int h_cookies(canal_req_t *req, void *data)
{
    canal_str_t c = canal_req_header(req, "cookie");
    return canal_res_text(req, 200, c.base ? canal_req_printf(req, "%.*s", (int)c.len, c.base) : "-");
}

static void cookie_jar(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    assert_int_equal(canal_app_get(app, "set", h_set, NULL), 0);
    assert_int_equal(canal_app_get(app, "del", h_del, NULL), 0);
    assert_int_equal(canal_app_get(app, "cookies", h_cookies, NULL), 0);
    assert_int_equal(canal_app_get(app, "x/cookies", h_cookies, NULL), 0);
    assert_int_equal(canal_app_get(app, "xy/cookies", h_cookies, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    canal_test_response_t *r = canal_test_get(t, "/cookies");
    assert_string_equal(r->body, "-");
    canal_test_response_free(r);
    canal_test_response_free(canal_test_get(t, "/set"));
    assert_string_equal(canal_test_cookie(t, "a"), "1");
    assert_string_equal(canal_test_cookie(t, "b"), "2");
    assert_null(canal_test_cookie(t, "gone")); /* expired in 2001 */
    r = canal_test_get(t, "/cookies"); /* b's path is /x */
    assert_string_equal(r->body, "a=1");
    canal_test_response_free(r);
    r = canal_test_get(t, "/x/cookies?q=1"); /* the longest path first */
    assert_string_equal(r->body, "b=2; a=1");
    canal_test_response_free(r);
    r = canal_test_get(t, "/xy/cookies"); /* /x does not path-match /xy */
    assert_string_equal(r->body, "a=1");
    canal_test_response_free(r);
    canal_kv_t own[] = {{"Cookie", "mine=9"}};
    r = canal_test_request(t, "GET", "/cookies", own, 1, NULL, 0); /* the caller's field alone */
    assert_string_equal(r->body, "mine=9");
    canal_test_response_free(r);
    canal_test_response_free(canal_test_get(t, "/del")); /* Max-Age=0: removed */
    assert_null(canal_test_cookie(t, "a"));
    r = canal_test_get(t, "/cookies");
    assert_string_equal(r->body, "-");
    canal_test_response_free(r);
    canal_test_set_cookies(t, 0); /* off: emptied, and nothing kept */
    assert_null(canal_test_cookie(t, "b"));
    canal_test_response_free(canal_test_get(t, "/set"));
    assert_null(canal_test_cookie(t, "a"));
    r = canal_test_get(t, "/x/cookies");
    assert_string_equal(r->body, "-");
    canal_test_response_free(r);
    canal_test_set_cookies(t, 1);
    canal_test_response_free(canal_test_get(t, "/set"));
    canal_test_clear_cookies(t);
    assert_null(canal_test_cookie(t, "a"));
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

/* ---- answers read as they come ---- */

/* GET /ticks: three events 30 ms apart (a comment and a retry between), then the end */
static void tick(canal_stream_t *s, void *data)
{
    int *n = data;
    char text[32];
    snprintf(text, sizeof(text), "tick %d\nline two", *n);
    canal_sse_event(s, *n == 2 ? "two" : NULL, *n == 1 ? "odd" : NULL, text, strlen(text));
    canal_sse_comment(s, "between");
    if (++*n < 3) {
        canal_stream_timer(s, 30, tick);
        return;
    }
    canal_stream_end(s); /* the owner ends a stream once: here, or when it closed first */
    free(n);
}

static void ticks_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    canal_stream_end(s);
    free(data);
}

static int h_ticks(canal_req_t *req, void *data)
{
    static const canal_stream_cb_t cb = {.closed = ticks_closed};
    int *n = calloc(1, sizeof(*n));
    canal_stream_t *s = canal_sse_begin(req, &cb, n);
    if (s == NULL) {
        free(n);
        return -1;
    }
    canal_res_cookie(req, "seen", (canal_str_t){"1", 1}, NULL, NULL); /* too late: the head is sent */
    canal_sse_retry(s, 1000);
    return canal_stream_timer(s, 30, tick) == 0 ? 0 : -1;
}

/* GET /slow: a head at once, then nothing until the client goes, when the owner ends it */
static void slow_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    canal_stream_end(s);
}

static int h_slow(canal_req_t *req, void *data)
{
    static const canal_stream_cb_t cb = {.closed = slow_closed};
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", &cb, NULL);
    return s != NULL && canal_stream_write(s, "first", 5) >= 0 ? 0 : -1;
}

static void streams(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    assert_int_equal(canal_app_get(app, "ticks", h_ticks, NULL), 0);
    assert_int_equal(canal_app_get(app, "slow", h_slow, NULL), 0);
    assert_int_equal(canal_app_get(app, "api/woo", h_woo, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    canal_test_stream_t *s = canal_test_stream_open(t, "GET", "/ticks", NULL, 0);
    assert_non_null(s);
    assert_int_equal(canal_test_stream_head(s)->status, 200);
    assert_string_equal(canal_test_header(canal_test_stream_head(s), "content-type"), "text/event-stream");
    canal_test_event_t ev;
    static const char *const names[] = {"message", "odd", "message"};
    for (int i = 0; i < 3; i++) {
        int rc;
        while ((rc = canal_test_stream_event(s, &ev, 5000)) == CANAL_EAGAIN)
            ;
        assert_int_equal(rc, 1);
        char want[32];
        snprintf(want, sizeof(want), "tick %d\nline two", i);
        assert_string_equal(ev.data, want);
        assert_string_equal(ev.event, names[i]);
        if (i == 2)
            assert_string_equal(ev.id, "two");
        else
            assert_null(ev.id);
    }
    assert_int_equal(canal_test_stream_event(s, &ev, 5000), 0); /* the end */
    assert_int_equal(canal_test_stream_event(s, &ev, 5000), 0);
    canal_test_stream_close(s);

    /* a stream that says nothing more: a timeout that lets the test go on, then the close */
    s = canal_test_stream_open(t, "GET", "/slow", NULL, 0);
    assert_non_null(s);
    char buf[64];
    long n;
    do
        n = canal_test_stream_read(s, buf, sizeof(buf), 5000);
    while (n == CANAL_EAGAIN);
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "first", 5);
    assert_int_equal(canal_test_stream_read(s, buf, sizeof(buf), 50), CANAL_EAGAIN);
    canal_test_stream_close(s);
    /* a plain answer read as a stream, and the client's own connection still works */
    s = canal_test_stream_open(t, "GET", "/api/woo", NULL, 0);
    assert_non_null(s);
    n = canal_test_stream_read(s, buf, sizeof(buf), 5000);
    assert_true(n > 0);
    assert_int_equal(canal_test_stream_read(s, buf + n, sizeof(buf) - (size_t)n, 5000), 0);
    canal_test_stream_close(s);
    assert_null(canal_test_stream_open(t, "G T", "/x", NULL, 0));
    canal_test_response_t *r = canal_test_get(t, "/api/woo");
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(controller_app),
        cmocka_unit_test(stale_connection),
        cmocka_unit_test(parser),
        cmocka_unit_test(json_headers),
        cmocka_unit_test(body_over_limit),
        cmocka_unit_test(cookie_jar),
        cmocka_unit_test(streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
