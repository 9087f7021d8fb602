/* SPDX-License-Identifier: MIT */
/*
 * The operations API in-process, with raw requests on real sockets: configuration errors,
 * static files that never leave their root whatever the encoding of "..", metrics counted
 * exactly over two workers, per-route and per-answer compression, CORS for router routes
 * (credentials, refusals) and through the controller filter.
 */
#include "test.h"
#include <sys/stat.h>
#include <canal.h>
#include "client.h"

static char big[5000];

static int h_text(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "text/plain; charset=utf-8", big, sizeof(big));
}

static int h_octets(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "application/octet-stream", big, sizeof(big));
}

static int h_no_compress(canal_req_t *req, void *data)
{
    canal_res_compress(req, 0);
    return h_text(req, data);
}

static int h_small(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "small");
}

static int h_item(canal_req_t *req, void *data)
{
    int32_t id;
    canal_req_param_int32(req, "id", &id);
    return id == 0 ? canal_res_problem(req, 404, NULL) : canal_res_text(req, 201, "made");
}

static int h_fail(canal_req_t *req, void *data)
{
    return canal_req_fail(req, "on purpose");
}

static canal_app_t *new_app(unsigned threads)
{
    canal_config_t cfg;
    app_config(&cfg, threads);
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    return app;
}

static void api_errors(void **state)
{
    canal_app_t *app = new_app(1);
    canal_error_info_t err;
    assert_int_equal(canal_app_get(app, "a", h_small, NULL), 0);
    assert_int_equal(canal_app_static(app, "static", "/tmp", 0, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_static(app, "/", "/tmp", 0, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_static(app, NULL, "/tmp", 0, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_static(app, "/s", "/nonexistent/dir", 0, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "/nonexistent/dir"));
    assert_int_equal(canal_app_static(app, "/s", "/etc/hostname", 0, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_static(app, "/s/", "/tmp", 0, &err), 0);
    assert_int_equal(canal_app_static(app, "/s", "/tmp", 0, &err), CANAL_EEXIST);

    assert_int_equal(canal_app_compress(app, &(canal_compress_options_t){.gzip_level = 10}), CANAL_EINVAL);
    assert_int_equal(canal_app_compress(app, &(canal_compress_options_t){.brotli_level = 12}), CANAL_EINVAL);
    /* Debian's libh2o 2.2.5 has no brotli: asking for it is an error there, fine elsewhere */
    assert_int_equal(canal_app_compress(app, &(canal_compress_options_t){.brotli_level = 4}),
                     canal_compress_has_brotli() ? 0 : CANAL_EINVAL);
    assert_int_equal(canal_app_compress(app, NULL), 0);
    assert_int_equal(canal_app_compress_route(app, "GET", "nope", 0), CANAL_ENOTFOUND);
    assert_int_equal(canal_app_compress_route(app, "POST", "a", 0), CANAL_ENOTFOUND);
    assert_int_equal(canal_app_compress_route(app, "GET", "/a", 0), 0);

    assert_int_equal(canal_app_cors(app, "", &(canal_cors_t){.origins = NULL}), CANAL_EINVAL);
    assert_int_equal(canal_app_cors(app, "", &(canal_cors_t){.origins = " , "}), CANAL_EINVAL);
    assert_int_equal(canal_app_cors(app, "", NULL), CANAL_EINVAL);
    assert_int_equal(canal_app_cors_route(app, NULL, &(canal_cors_t){.origins = "*"}), CANAL_EINVAL);
    assert_int_equal(canal_app_cors(app, "a", &(canal_cors_t){.origins = "*"}), 0);

    assert_int_equal(canal_app_metrics(app, "m/{", &err), CANAL_ESYNTAX);
    assert_int_equal(canal_app_metrics(app, "a", &err), CANAL_EEXIST); /* the route exists */
    assert_int_equal(canal_app_metrics(app, "metrics", &err), 0);
    assert_int_equal(canal_app_metrics(app, "metrics2", &err), CANAL_EEXIST);
    /* the first failed registration is kept (the static prefix), and the app does not start
     * with it */
    assert_int_equal(canal_app_error(app, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "static prefix"));
    assert_int_equal(canal_app_start(app), CANAL_EINVAL);
    canal_app_destroy(app);

    app = new_app(1);
    assert_int_equal(canal_app_get(app, "a", h_small, NULL), 0);
    app_run(app);
    assert_int_equal(canal_app_static(app, "/t", "/tmp", 0, &err), CANAL_ESTATE);
    assert_int_equal(canal_app_compress(app, NULL), CANAL_ESTATE);
    assert_int_equal(canal_app_compress_route(app, "GET", "a", 1), CANAL_ESTATE);
    assert_int_equal(canal_app_cors(app, "", &(canal_cors_t){.origins = "*"}), CANAL_ESTATE);
    assert_int_equal(canal_app_metrics(app, "m", &err), CANAL_ESTATE);
    canal_app_destroy(app);
}

/* ---- static files: nothing outside the root, however ".." is spelled ---- */

static char root[256];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void static_root(void **state)
{
    char path[512];
    snprintf(root, sizeof(root), "/tmp/canal-ops-test.%d", (int)getpid());
    mkdir(root, 0700);
    snprintf(path, sizeof(path), "%s/pub", root);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/pub/a.txt", root);
    write_file(path, "public text\n");
    snprintf(path, sizeof(path), "%s/secret.txt", root);
    write_file(path, "SECRET\n");

    canal_app_t *app = new_app(1);
    assert_int_equal(canal_app_get(app, "{*rest}", h_small, NULL), 0); /* canal answers the rest */
    snprintf(path, sizeof(path), "%s/pub", root);
    assert_int_equal(canal_app_static(app, "/pub", path, 0, NULL), 0);
    app_run(app);

    struct reply r;
    get("/pub/a.txt", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "public text\n");
    assert_string_equal(header(&r, "content-type"), "text/plain");
    static const char *const evil[] = {
        "/pub/../secret.txt",          "/pub/%2e%2e/secret.txt",        "/pub/%2E%2E/secret.txt",
        "/pub/..%2fsecret.txt",        "/pub/%2e%2e%2fsecret.txt",      "/pub/a.txt/../../secret.txt",
        "/pub/./../secret.txt",        "/pub/%252e%252e/secret.txt",    "/pub/..%5csecret.txt",
        "/pub/..\\secret.txt",         "/pub/....//secret.txt",         "/pub//../secret.txt",
        "/pub/%2e./secret.txt",        "/pub/.%2e/secret.txt",          "/pub/%c0%ae%c0%ae/secret.txt",
        "/pub/../../../../etc/passwd", "/pub/%2e%2e/%2e%2e/etc/passwd", "/pub/..;/secret.txt",
        "/pub/%00../secret.txt",       "http://t/pub/../secret.txt",
    };
    for (size_t i = 0; i < sizeof(evil) / sizeof(evil[0]); i++) {
        get(evil[i], &r);
        if (strstr(r.body, "SECRET") != NULL || strstr(r.body, "root:") != NULL)
            fail_msg("%s leaked a file outside the root", evil[i]);
        /* an answer from the file handler is a 4xx; anything that left the prefix is canal's */
        if (r.status == 200 ? strcmp(r.body, "small") != 0 : r.status < 400 || r.status >= 500)
            fail_msg("%s: %d %s", evil[i], r.status, r.body);
    }
    canal_app_destroy(app);
    snprintf(path, sizeof(path), "rm -rf '%s'", root);
    assert_int_equal(system(path), 0);
}

/* ---- metrics: exact counts over two workers ---- */

/* The value of the sample whose name and labels are exactly `series`, or -1. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, series, n) == 0 && line[n] == ' ')
            return strtod(line + n + 1, NULL);
    return -1;
}

/* GET path, the whole answer (head and body) into out: a scrape is larger than a reply. */
static void get_big(const char *path, char *out, size_t size)
{
    char raw[256];
    int fd = dial();
    snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", path);
    send_str(fd, raw);
    size_t len = read_all(fd, out, size);
    close(fd);
    assert_true(len < size - 1);
    assert_non_null(strstr(out, "\r\n\r\n"));
}

static void metrics_counts(void **state)
{
    canal_app_t *app = new_app(2);
    add_routes(app, (const struct test_route[]){{"GET", "a", h_small}, {"POST", "items/{id:int}", h_item},
                                                {"GET", "re/{x:regex(^a\\.b$)}", h_small}, {"GET", "fail", h_fail},
                                                {0}});
    assert_int_equal(canal_app_metrics(app, "/metrics", NULL), 0);
    app_run(app);

    struct reply r;
    for (int i = 0; i < 7; i++)
        get("/a", &r);
    request("HEAD /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", &r);
    for (int i = 0; i < 3; i++)
        request("POST /items/5 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", &r);
    request("POST /items/0 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", &r);
    get("/re/a.b", &r);
    assert_int_equal(r.status, 200);
    get("/fail", &r);
    assert_int_equal(r.status, 500);
    get("/nowhere", &r);
    get("/items/5", &r); /* 405 */
    static char t[65536];
    get_big("/metrics", t, sizeof(t));
    assert_non_null(strstr(t, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(t, "\r\ncontent-type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    assert_true(sample(t, "canal_http_requests_total{route=\"/a\",method=\"GET\",status=\"200\"}") == 7);
    assert_true(sample(t, "canal_http_requests_total{route=\"/a\",method=\"HEAD\",status=\"200\"}") == 1);
    assert_true(sample(t, "canal_http_requests_total{route=\"/items/{id:int}\",method=\"POST\",status=\"201\"}") == 3);
    assert_true(sample(t, "canal_http_requests_total{route=\"/items/{id:int}\",method=\"POST\",status=\"404\"}") == 1);
    assert_true(sample(t, "canal_http_requests_total{route=\"/re/{x:regex(^a\\\\.b$)}\",method=\"GET\",status=\"200\"}") ==
                1);
    assert_true(sample(t, "canal_http_requests_total{route=\"/fail\",method=\"GET\",status=\"500\"}") == 1);
    assert_true(sample(t, "canal_http_requests_total{route=\"(unmatched)\",method=\"GET\",status=\"404\"}") == 1);
    assert_true(sample(t, "canal_http_requests_total{route=\"(unmatched)\",method=\"GET\",status=\"405\"}") == 1);
    assert_true(sample(t, "canal_http_request_duration_seconds_count{route=\"/a\"}") == 8);
    assert_true(sample(t, "canal_http_request_duration_seconds_bucket{route=\"/a\",le=\"+Inf\"}") == 8);
    assert_true(sample(t, "canal_http_request_duration_seconds_bucket{route=\"/a\",le=\"10\"}") == 8);
    assert_true(sample(t, "canal_http_request_duration_seconds_sum{route=\"/a\"}") > 0);
    assert_true(sample(t, "canal_http_request_duration_seconds_count{route=\"/items/{id:int}\"}") == 4);
    assert_true(sample(t, "canal_http_request_duration_seconds_count{route=\"/metrics\"}") == 0);
    assert_true(sample(t, "canal_http_requests_in_flight") >= 1);
    assert_true(sample(t, "canal_http_connections") >= 1);
    assert_true(sample(t, "canal_workers") == 2);
    /* the scrape itself shows in the next one */
    get_big("/metrics", t, sizeof(t));
    assert_true(sample(t, "canal_http_requests_total{route=\"/metrics\",method=\"GET\",status=\"200\"}") == 1);
    canal_app_destroy(app);
}

/* ---- compression: globally on, off per route and per answer ---- */

static void compression(void **state)
{
    canal_app_t *app = new_app(1);
    add_routes(app, (const struct test_route[]){{"GET", "text", h_text}, {"GET", "off", h_text},
                                                {"GET", "octets", h_octets}, {"GET", "forced", h_octets},
                                                {"GET", "answer-off", h_no_compress}, {"GET", "small", h_small},
                                                {"GET", "forced-small", h_small}, {0}});
    assert_int_equal(canal_app_compress(app, &(canal_compress_options_t){.min_size = 100, .gzip_level = 6}), 0);
    assert_int_equal(canal_app_compress_route(app, "GET", "forced-small", 1), 0);
    assert_int_equal(canal_app_compress_route(app, "GET", "off", 0), 0);
    assert_int_equal(canal_app_compress_route(app, "GET", "forced", 1), 0);
    app_run(app);

    static const struct {
        const char *path;
        int gzip;
    } cases[] = {{"/text", 1}, {"/off", 0}, {"/octets", 0}, {"/forced", 1}, {"/answer-off", 0}, {"/small", 0},
                 {"/forced-small", 0} /* forcing keeps the size rule */};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char raw[256];
        struct reply r;
        snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip, deflate\r\nConnection: close\r\n\r\n",
                 cases[i].path);
        request(raw, &r);
        assert_int_equal(r.status, 200);
        if (strcmp(header(&r, "content-encoding"), cases[i].gzip ? "gzip" : "") != 0)
            fail_msg("%s: content-encoding [%s]", cases[i].path, header(&r, "content-encoding"));
        if (cases[i].gzip) {
            assert_string_equal(header(&r, "vary"), "accept-encoding");
            assert_true(r.body_len < sizeof(big) / 2);
            assert_true(r.body_len > 0);
        }
        /* without Accept-Encoding nothing is ever compressed */
        snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", cases[i].path);
        request(raw, &r);
        assert_string_equal(header(&r, "content-encoding"), "");
    }
    canal_app_destroy(app);
}

/* ---- CORS ---- */

static const canal_cors_t strict = {.origins = "https://a.example, https://b.example",
                                    .methods = "GET, POST",
                                    .headers = "Content-Type, X-Token",
                                    .expose = "X-Total",
                                    .credentials = 1,
                                    .max_age = 300};

static void preflight(const char *path, const char *origin, const char *method, const char *headers,
                      struct reply *r)
{
    char raw[768];
    snprintf(raw, sizeof(raw),
             "OPTIONS %s HTTP/1.1\r\nHost: t\r\nOrigin: %s\r\nAccess-Control-Request-Method: %s\r\n%s%s%s"
             "Connection: close\r\n\r\n",
             path, origin, method, headers ? "Access-Control-Request-Headers: " : "", headers ? headers : "",
             headers ? "\r\n" : "");
    request(raw, r);
}

static void with_origin(const char *method, const char *path, const char *origin, struct reply *r)
{
    char raw[512];
    snprintf(raw, sizeof(raw), "%s %s HTTP/1.1\r\nHost: t\r\nOrigin: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
             method, path, origin);
    request(raw, r);
}

static void cors_router(void **state)
{
    canal_app_t *app = new_app(1);
    add_routes(app, (const struct test_route[]){{"GET", "api/a", h_small}, {"POST", "api/items/{id:int}", h_item},
                                                {"GET", "apix", h_small}, {"GET", "open", h_small},
                                                {"OPTIONS", "api/opt", h_small}, {"GET", "api/opt", h_small},
                                                {0}});
    assert_int_equal(canal_app_cors(app, "/api/", &strict), 0);
    assert_int_equal(canal_app_get(app, "api/late", h_small, NULL), 0); /* covered too */
    const canal_router_t *rt = canal_app_router(app);
    assert_int_equal(canal_app_cors_route(app, canal_router_route_at(rt, 3), &(canal_cors_t){.origins = "*"}), 0);
    app_run(app);

    struct reply r;
    preflight("/api/items/5", "https://b.example", "POST", "content-type, x-token", &r);
    assert_int_equal(r.status, 204);
    assert_string_equal(header(&r, "access-control-allow-origin"), "https://b.example");
    assert_string_equal(header(&r, "access-control-allow-credentials"), "true");
    assert_string_equal(header(&r, "access-control-allow-methods"), "GET,POST");
    assert_string_equal(header(&r, "access-control-allow-headers"), "content-type, x-token");
    assert_string_equal(header(&r, "access-control-max-age"), "300");
    assert_string_equal(header(&r, "vary"), "Origin");

    preflight("/api/items/5", "https://evil.example", "POST", NULL, &r);
    assert_int_equal(r.status, 403);
    assert_string_equal(header(&r, "access-control-allow-origin"), "");
    assert_non_null(strstr(r.body, "origin is not allowed"));
    preflight("/api/items/5", "https://a.example", "POST", "X-Other", &r);
    assert_int_equal(r.status, 403);
    assert_non_null(strstr(r.body, "header is not allowed"));
    preflight("/api/a", "https://a.example", "DELETE", NULL, &r); /* no DELETE route: not CORS */
    assert_int_equal(r.status, 204);
    assert_string_equal(header(&r, "allow"), "GET, HEAD, OPTIONS");
    assert_string_equal(header(&r, "access-control-allow-origin"), "");
    preflight("/apix", "https://a.example", "GET", NULL, &r); /* "apix" is not under "api" */
    assert_string_equal(header(&r, "access-control-allow-origin"), "");
    preflight("/api/late", "https://a.example", "GET", NULL, &r);
    assert_string_equal(header(&r, "access-control-allow-origin"), "https://a.example");

    /* an OPTIONS route of the app's own: the server answers preflights, the route the rest */
    preflight("/api/opt", "https://a.example", "GET", NULL, &r);
    assert_int_equal(r.status, 204);
    assert_string_equal(header(&r, "access-control-allow-origin"), "https://a.example");
    request("OPTIONS /api/opt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "small");

    with_origin("POST", "/api/items/7", "https://a.example", &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(header(&r, "access-control-allow-origin"), "https://a.example");
    assert_string_equal(header(&r, "access-control-allow-credentials"), "true");
    assert_string_equal(header(&r, "access-control-expose-headers"), "X-Total");
    assert_string_equal(header(&r, "vary"), "Origin");
    with_origin("GET", "/api/a", "https://evil.example", &r);
    assert_int_equal(r.status, 200); /* served; the browser keeps the answer from the script */
    assert_string_equal(header(&r, "access-control-allow-origin"), "");
    assert_string_equal(header(&r, "vary"), "Origin");
    with_origin("GET", "/open", "https://anyone.example", &r);
    assert_string_equal(header(&r, "access-control-allow-origin"), "*");
    assert_string_equal(header(&r, "vary"), "");
    get("/api/a", &r);
    assert_string_equal(header(&r, "access-control-allow-origin"), "");
    canal_app_destroy(app);
}

static int a_hello(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_text(req, 200, "hello");
}

static void cors_controller(void **state)
{
    static const canal_action_def_t actions[] = {
        {.name = "Hello", .methods = "GET,POST", .routes = {"hello"}, .handler = a_hello},
        {.name = NULL},
    };
    static const canal_controller_def_t with = {.name = "With", .prefix = "with", .actions = actions};
    static const canal_controller_def_t without = {.name = "Without", .prefix = "without", .actions = actions};
    canal_app_t *app = new_app(1);
    canal_mvc_t *mvc = canal_mvc_create(app);
    canal_error_info_t err;
    canal_controller_t *c = NULL;
    assert_int_equal(canal_mvc_add_controller(mvc, &with, &c, &err), 0);
    assert_int_equal(canal_mvc_add_controller(mvc, &without, NULL, &err), 0);
    canal_filter_t f = canal_cors_filter(&strict);
    assert_int_equal(canal_controller_filter(c, &f), 0);
    app_run(app);

    struct reply r;
    preflight("/with/hello", "https://a.example", "POST", "Content-Type", &r);
    assert_int_equal(r.status, 204);
    assert_string_equal(header(&r, "access-control-allow-origin"), "https://a.example");
    assert_string_equal(header(&r, "access-control-allow-headers"), "Content-Type");
    preflight("/without/hello", "https://a.example", "POST", NULL, &r);
    assert_string_equal(header(&r, "access-control-allow-origin"), "");
    with_origin("GET", "/with/hello", "https://b.example", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "hello");
    assert_string_equal(header(&r, "access-control-allow-origin"), "https://b.example");
    with_origin("GET", "/without/hello", "https://b.example", &r);
    assert_string_equal(header(&r, "access-control-allow-origin"), "");
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
}

int main(void)
{
    memset(big, 'x', sizeof(big));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_errors),  cmocka_unit_test(static_root), cmocka_unit_test(metrics_counts),
        cmocka_unit_test(compression), cmocka_unit_test(cors_router), cmocka_unit_test(cors_controller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
