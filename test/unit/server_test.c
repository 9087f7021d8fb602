/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the server core's helpers: configuration from the command line and the
 * environment, and the request/response helpers exercised by handlers of an app running in
 * this process (a raw-socket HTTP/1.1 client talks to it over 127.0.0.1).
 */
#include "test.h"
#include <canal.h>
#include "client.h"

/* ---- configuration ---- */

static void config_defaults(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    assert_string_equal(cfg.host, "127.0.0.1");
    assert_int_equal(cfg.port, 8080);
    assert_int_equal(cfg.threads, 0);
    assert_int_equal(cfg.env, CANAL_ENV_PRODUCTION);
    assert_int_equal(cfg.max_body_size, 1024 * 1024);
    assert_null(cfg.access_log);
}

static void config_args(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    char *argv[] = {"prog", "--port", "9000", "--mode", "router", "--threads=3", "--env",
                    "development", "x", "--access-log", "-", "--max-body", "10", NULL};
    int argc = 13;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1; /* --mode is the app's */
    assert_int_equal(canal_config_from_args(&cfg, &argc, argv, &err), 0);
    assert_int_equal(cfg.port, 9000);
    assert_int_equal(cfg.threads, 3);
    assert_int_equal(cfg.env, CANAL_ENV_DEVELOPMENT);
    assert_string_equal(cfg.access_log, "-");
    assert_int_equal(cfg.max_body_size, 10);
    /* the app's own arguments stay, in order */
    assert_int_equal(argc, 4);
    assert_string_equal(argv[1], "--mode");
    assert_string_equal(argv[2], "router");
    assert_string_equal(argv[3], "x");
    assert_null(argv[4]);
}

static void config_bad_args(void **state)
{
    static const char *const bad[][2] = {
        {"--port", "65536"}, {"--port", "-1"}, {"--port", "80x"}, {"--port", ""},
        {"--threads", "1e3"}, {"--env", "staging"}, {"--max-body", "+5"}, {"--host", ""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        canal_config_t cfg;
        canal_config_init(&cfg);
        assert_non_null(strstr(refused_arg(&cfg, bad[i][0], bad[i][1]), bad[i][0]));
    }
    canal_config_t cfg;
    char *argv[] = {"prog", "--port", NULL};
    int argc = 2;
    canal_config_init(&cfg);
    assert_int_equal(canal_config_from_args(&cfg, &argc, argv, NULL), CANAL_EINVAL);
}

static void config_env(void **state)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    static const char *const env[] = {"CANAL_PORT", "7000", "CANAL_THREADS", "5", "CANAL_ENV", "development", NULL};
    set_env(env);
    assert_int_equal(canal_config_from_env(&cfg, &err), 0);
    assert_int_equal(cfg.port, 7000);
    assert_int_equal(cfg.threads, 5);
    assert_int_equal(cfg.env, CANAL_ENV_DEVELOPMENT);
    setenv("CANAL_PORT", "seven", 1);
    assert_int_equal(canal_config_from_env(&cfg, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "CANAL_PORT"));
    unset_env(env);
}

/* ---- a live app and a tiny client ---- */

static canal_app_t *app;

static int h_query(canal_req_t *req, void *data)
{
    canal_str_t v = {0};
    int64_t n = 42;
    size_t count = canal_req_query(req, "a", &v);
    int rc = canal_req_query_int64(req, "n", &n);
    return canal_res_json_new(req, 200, json_pack("{s:i, s:s#, s:I, s:i, s:s#}", "count", (int)count, "first",
                                                  v.base ? v.base : "", (int)v.len, "n", (json_int_t)n,
                                                  "rc", rc, "qs", canal_req_query_string(req).base,
                                                  (int)canal_req_query_string(req).len));
}

static int h_params(canal_req_t *req, void *data)
{
    int32_t i32 = 0;
    int64_t i64 = 0;
    int r1 = canal_req_param_int32(req, "x", &i32);
    int r2 = canal_req_param_int64(req, "x", &i64);
    int r3 = canal_req_param_int32(req, "missing", &i32);
    canal_str_t path = canal_req_path(req), method = canal_req_method(req);
    return canal_res_json_new(req, 200, json_pack("{s:i, s:i, s:i, s:I, s:s#, s:s#}", "r1", r1, "r2", r2, "r3", r3,
                                                  "x", (json_int_t)i64, "path", path.base, (int)path.len,
                                                  "method", method.base, (int)method.len));
}

static int h_headers(canal_req_t *req, void *data)
{
    canal_str_t name, value, two = canal_req_header(req, "x-TWO");
    json_t *names = json_array();
    for (size_t i = 0; canal_req_header_at(req, i, &name, &value) == 0; i++)
        json_array_append_new(names, json_stringn(name.base, name.len));
    assert_int_equal(json_array_size(names), canal_req_header_count(req));
    canal_res_header(req, "X-Out", "yes");
    return canal_res_json_new(req, 201, json_pack("{s:o, s:s#}", "names", names, "two", two.base, (int)two.len));
}

static int h_problem(canal_req_t *req, void *data)
{
    json_t *m = json_pack("{s:s, s:{s:[s]}}", "title", "Custom", "errors", "x", "bad");
    return canal_res_problem_new(req, 422, m);
}

static int h_markup(canal_req_t *req, void *data)
{
    return canal_res_problem(req, 400, "<b>%s</b> & more", "x");
}

static int h_alloc(canal_req_t *req, void *data)
{
    char *a = canal_req_alloc(req, 100000); /* larger than a pool chunk */
    memset(a, 'z', 100000);
    char *s = canal_req_printf(req, "%s-%d-%.3s", "p", 7, a);
    return canal_res_text(req, 200, s);
}

static int h_empty(canal_req_t *req, void *data)
{
    return canal_res_status(req, 204);
}

static const struct test_route routes[] = {
    {"GET", "q", h_query},         {"GET", "p/{x}", h_params}, {"GET", "h", h_headers},
    {"GET", "problem", h_problem}, {"GET", "alloc", h_alloc},  {"GET", "empty", h_empty},
    {"GET", "markup", h_markup},   {0},
};

static void app_setup(void)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    app = canal_app_create(&cfg);
    assert_non_null(app);
    add_routes(app, routes);
    app_run(app);
    assert_true(client_port > 0);
    assert_int_equal(canal_app_get(app, "late", h_empty, NULL), CANAL_ESTATE);
    assert_int_equal(canal_app_start(app), CANAL_ESTATE);
}

static void live_app(void **state)
{
    /* query and route parameters: a GET, then its body is body, or holds part */
    static const struct {
        const char *path, *body, *part;
    } reads[] = {
        {"/q?a=1&a=2&n=-5", "{\"count\":2,\"first\":\"1\",\"n\":-5,\"rc\":0,\"qs\":\"a=1&a=2&n=-5\"}", NULL},
        {"/q?n=1&n=2", NULL, "\"rc\":-1,"}, /* CANAL_EINVAL: repeated */
        {"/q?n=x", NULL, "\"rc\":-8,"},     /* CANAL_ETYPE */
        {"/q?n=99999999999999999999", NULL, "\"rc\":-7,"}, /* CANAL_ERANGE */
        {"/q", "{\"count\":0,\"first\":\"\",\"n\":42,\"rc\":-5,\"qs\":\"\"}", NULL},
        {"/q?a=%41%2b+b", NULL, "\"first\":\"A+ b\""},
        {"/p/2147483648", "{\"r1\":-7,\"r2\":0,\"r3\":-5,\"x\":2147483648,\"path\":\"/p/2147483648\",\"method\":\"GET\"}", NULL},
        {"/p/12?z", "{\"r1\":0,\"r2\":0,\"r3\":-5,\"x\":12,\"path\":\"/p/12\",\"method\":\"GET\"}", NULL},
    };
    struct reply r;
    app_setup();

    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        get(reads[i].path, &r);
        if (r.status != 200 || (reads[i].body != NULL && strcmp(r.body, reads[i].body) != 0) ||
            (reads[i].part != NULL && strstr(r.body, reads[i].part) == NULL))
            fail_msg("GET %s: %d %s", reads[i].path, r.status, r.body);
    }

    get("/h", &r);
    assert_int_equal(r.status, 201);
    assert_non_null(strstr(r.head, "\r\nx-out: yes"));
    assert_non_null(strstr(r.body, "\"x-one\""));
    assert_non_null(strstr(r.body, "\"two\":\"two\""));

    get("/problem", &r);
    assert_int_equal(r.status, 422);
    assert_non_null(strstr(r.head, "content-type: application/problem+json"));
    assert_string_equal(r.body, "{\"type\":\"about:blank\",\"title\":\"Custom\",\"status\":422,\"errors\":{\"x\":[\"bad\"]}}");

    get("/alloc", &r);
    assert_string_equal(r.body, "p-7-zzz");

    get("/empty", &r);
    assert_int_equal(r.status, 204);
    assert_null(strstr(r.head, "ontent-length"));
    assert_int_equal(r.body_len, 0);

    request("HEAD /alloc HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.head, "Content-Length: 7"));
    assert_int_equal(r.body_len, 0);

    assert_true(canal_app_worker_requests(app, 0) >= 12);
    app_stop(app);
    assert_int_equal(canal_app_wait(app), CANAL_ESTATE);
    canal_app_destroy(app);
}

/* What libh2o 2.2.5 lets through and canal refuses before routing (docs/security.md); the
 * raw-socket probe (test/e2e/probe.sh) has the whole table. Each request is sent on a
 * connection of its own and answered with the status, with says in the body (and neither '<'
 * nor the method DELETE) and with Connection: close. */
static void request_policies(void **state)
{
    static const struct {
        int status;
        const char *says;
        const char *sent[5]; /* raw requests; one starting with '/' is the target of get_with() */
    } cases[] = {
        {400, "without a Host", {"GET /q HTTP/1.1\r\nConnection: close\r\n\r\n"}},
        {400, "more than one Host",
         {"GET /q HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
          /* Host after other fields: the slower look at the head */
          "GET /q HTTP/1.1\r\nX-A: 1\r\nhOsT: a\r\nX-B: 2\r\nHost: b\r\nConnection: close\r\n\r\n",
          "GET /q HTTP/1.1\nHost: a\nHost: b\n\n"}},
        {200, "\"count\":0",
         {"GET /q HTTP/1.0\r\n\r\n", "GET /q HTTP/1.1\r\nX-A: 1\r\nHost:a\r\nConnection: close\r\n\r\n"}},
        {400, "both Content-Length and Transfer-Encoding",
         {"POST /q HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"}},
        {400, "more than one Content-Length",
         {"POST /q HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n"}},
        {400, "Transfer-Encoding in an HTTP/1.0", {"POST /q HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"}},
        {400, "more than one Transfer-Encoding",
         {"POST /q HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"}},
        {400, "obs-fold", {"GET /q HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n 2\r\n\r\n"}},
        {400, "not a token", {"G(T /q HTTP/1.1\r\nHost: t\r\n\r\n"}},
        {400, "'..' path segment", {"/p/..", "/p/%2e%2E", "/p/x/../q", "/p/..%2Fx", "/./q"}},
        {200, "\"path\":\"/p/...\"", {"/p/..."}},
        {200, "\"path\":\"/p/.x\"", {"/p/.x"}},
        {200, "\"path\":\"/p/a..\"", {"/p/a.."}},
        {200, "\"qs\":\"x=../..\"", {"/q?x=../.."}},
        {405, "allowed: GET, HEAD, OPTIONS", {"DELETE /q HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"}},
        {400, "\"detail\":\"\\u003cb\\u003ex\\u003c/b\\u003e \\u0026 more\"", {"/markup"}},
    };
    struct reply r;
    app_setup();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (size_t j = 0; j < 5 && cases[i].sent[j] != NULL; j++) {
            if (cases[i].sent[j][0] == '/')
                get_with(cases[i].sent[j], "", &r);
            else
                request(cases[i].sent[j], &r);
            int good = r.status == cases[i].status && strstr(r.body, cases[i].says) != NULL &&
                       strstr(r.head, "Connection: close") != NULL && strchr(r.body, '<') == NULL &&
                       strstr(r.body, "DELETE") == NULL;
            if (!good)
                fail_msg("case %zu.%zu: %d %s\n%s", i, j, r.status, r.head, r.body);
        }
    }
    app_stop(app);
    canal_app_destroy(app);
}

/* The route's data is the data the app registered (issue 15: the server kept its own struct
 * there, and a handler reading it got canal's endpoint). Routes under groups, and the route
 * canal_app_route() hands back. */
static int h_route_data(canal_req_t *req, void *data)
{
    const char *mine = canal_route_data(canal_req_route(req));
    if (mine != data)
        return canal_req_fail(req, "the route's data is not the handler's");
    return canal_res_text(req, 200, mine);
}

static void route_data_is_the_apps(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    canal_app_t *a = canal_app_create(&cfg);
    static char raw[] = "the user's data", grouped[] = "grouped";
    const canal_route_t *route = NULL;
    assert_int_equal(canal_app_route(a, &(canal_endpoint_spec_t){.tmpl = "raw", .handler = h_route_data, .data = raw},
                                     &route, NULL),
                     0);
    assert_non_null(route);
    assert_ptr_equal(canal_route_data(route), raw);
    assert_string_equal(canal_route_template(route), "raw");
    canal_route_group_t *api = canal_app_group(a, NULL, "api/{version:int}");
    canal_route_group_t *items = canal_app_group(a, api, "items");
    assert_non_null(items);
    assert_int_equal(canal_app_route(a,
                                     &(canal_endpoint_spec_t){.method = "PUT", .tmpl = "{id:int}", .name = "item",
                                                              .handler = h_route_data, .data = grouped, .group = items},
                                     &route, NULL),
                     0);
    assert_string_equal(canal_route_template(route), "/api/{version:int}/items/{id:int}");
    assert_int_equal(canal_route_index(route), 1);
    assert_int_equal(canal_app_error(a, NULL), 0);
    app_run(a);
    struct reply r;
    get("/raw", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, raw);
    request("PUT /api/2/items/7 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, grouped);
    app_stop(a);
    canal_app_destroy(a);
}

/* The answer is set, then committed once: a commit hook sees and changes it; problem details
 * are marked; a deferred answer completed on the loop commits what was set. */
static void on_commit_hook(canal_req_t *req, void *data)
{
    char st[8];
    snprintf(st, sizeof(st), "%d", canal_res_status_code(req));
    canal_res_header(req, "x-seen-status", st);
    canal_res_header(req, "x-was-problem", canal_res_is_problem(req) ? "yes" : "no");
    canal_res_status(req, 299); /* the hook may still change the answer */
}

static int h_model(canal_req_t *req, void *data)
{
    if (canal_res_status_code(req) != 0 || canal_res_committed(req))
        return canal_req_fail(req, "an answer before any was set");
    canal_res_text(req, 200, "first");
    canal_res_problem(req, 409, "second, and last");
    if (canal_res_on_commit(req, on_commit_hook, NULL) != 0 ||
        canal_res_on_commit(req, on_commit_hook, NULL) != CANAL_EEXIST)
        return canal_req_fail(req, "canal_res_on_commit()");
    return 0;
}

static int h_defer_now(canal_req_t *req, void *data)
{
    canal_pending_t *p = canal_req_defer(req);
    if (p == NULL || canal_pending_req(p) != req)
        return canal_req_fail(req, "canal_req_defer()");
    canal_res_text(req, 202, "completed");
    canal_pending_complete(p); /* commits now */
    return CANAL_PENDING;
}

static int h_fail_wins(canal_req_t *req, void *data)
{
    canal_res_text(req, 200, "not this");
    canal_req_fail(req, "first reason");
    canal_req_fail(req, "second reason");
    return strcmp(canal_req_failure(req), "first reason") == 0 ? 0 : canal_req_fail(req, "not kept");
}

static void response_model(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    canal_app_t *a = canal_app_create(&cfg);
    add_routes(a, (const struct test_route[]){{"GET", "model", h_model}, {"GET", "defer", h_defer_now},
                                              {"GET", "failwins", h_fail_wins}, {0}});
    app_run(a);
    struct reply r;
    get("/model", &r);
    assert_int_equal(r.status, 299);
    assert_string_equal(header(&r, "x-seen-status"), "409");
    assert_string_equal(header(&r, "x-was-problem"), "yes");
    assert_non_null(strstr(r.body, "second, and last"));
    get("/defer", &r);
    assert_int_equal(r.status, 202);
    assert_string_equal(r.body, "completed");
    get("/failwins", &r);
    assert_int_equal(r.status, 500);
    assert_null(strstr(r.body, "not this"));
    app_stop(a);
    canal_app_destroy(a);
}

static int disposed;
static void count_dispose(void *p)
{
    disposed += *(int *)p;
}

static void misc(void **state)
{
    assert_string_equal(canal_status_reason(404), "Not Found");
    assert_string_equal(canal_status_reason(599), "Unknown");
    assert_string_equal(canal_strerror(CANAL_ENOMEM), "out of memory");
    assert_string_equal(canal_err_name(CANAL_ESYNTAX), "CANAL_ESYNTAX");
    assert_string_equal(canal_err_name(12345), "CANAL_EUNKNOWN");
    assert_string_equal(canal_version(), CANAL_VERSION);
    canal_app_destroy(NULL);
    /* an app that never started is destroyed cleanly, with its routes' data disposed */
    canal_app_t *a = canal_app_create(NULL);
    static int one = 1;
    assert_int_equal(canal_app_route(a, &(canal_endpoint_spec_t){.tmpl = "x", .name = "x", .handler = h_empty, .data = &one, .dispose = count_dispose}, NULL, NULL), 0);
    assert_int_equal(canal_app_route(a, &(canal_endpoint_spec_t){.tmpl = "x", .name = "y", .handler = h_empty, .data = &one, .dispose = count_dispose}, NULL, NULL), CANAL_EEXIST);
    /* registration errors are sticky: the first is kept, and the app does not start */
    canal_error_info_t err, first;
    assert_int_equal(canal_app_route(a, &(canal_endpoint_spec_t){.tmpl = "bad/{", .handler = h_empty}, NULL, &err), CANAL_ESYNTAX);
    assert_int_equal(err.code, CANAL_ESYNTAX);
    assert_int_equal(canal_app_route(a, &(canal_endpoint_spec_t){.tmpl = "nohandler"}, NULL, &err), CANAL_EINVAL);
    assert_string_equal(err.message, "a route needs a handler");
    assert_int_equal(canal_app_error(a, &first), CANAL_EEXIST);
    assert_int_equal(first.code, CANAL_EEXIST);
    assert_int_equal(canal_app_start(a), CANAL_EEXIST);
    assert_int_equal(canal_app_wait(a), CANAL_ESTATE);
    canal_app_destroy(a);
    assert_int_equal(disposed, 1); /* the kept route's data only */
}

static void bind_error(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    canal_app_t *a = canal_app_create(&cfg);
    assert_int_equal(canal_app_listen(a, "203.0.113.255", 0), 0); /* not an address of ours */
    assert_int_equal(canal_app_start(a), CANAL_ESYS);
    canal_app_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_defaults), cmocka_unit_test(config_args),
        cmocka_unit_test(config_bad_args), cmocka_unit_test(config_env),
        cmocka_unit_test(live_app),        cmocka_unit_test(request_policies),
        cmocka_unit_test(misc),            cmocka_unit_test(route_data_is_the_apps),
        cmocka_unit_test(response_model),
        cmocka_unit_test(bind_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
