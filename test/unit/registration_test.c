/* SPDX-License-Identifier: MIT */
/*
 * The registration contract (issue 25): every call that adds a route or a feature's setting
 * reports its failure the same way: the code returned, err (when the call takes one) filled
 * with that code and a message, and the first failure kept by the app, so that
 * canal_app_error() says what it was and canal_app_start() fails with it. One case per call,
 * each on an app of its own, and one per rule of a route's options (canal_route_option_t);
 * and a later failure never replaces the first.
 */
#include "test.h"
#include <canal.h>

static int h_ok(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "ok");
}

static void on_timer(canal_app_t *app, void *data)
{
}

static int key_fn(canal_req_t *req, canal_str_t *key, void *data)
{
    return -1;
}

/* One registration call made to fail: its return code, and whether it takes an err */
struct reg_case {
    const char *name;
    int (*call)(canal_app_t *app, canal_error_info_t *err);
    int code;
    int has_err;
};

static int c_route(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "a"}, NULL, err);
}

static int c_get(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_get(app, "a/{", h_ok, NULL);
}

static int c_static(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_static(app, "/s", "/nonexistent/dir", 0, err);
}

static int c_compress(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_compress(app, &(canal_compress_options_t){.gzip_level = 10});
}

static int c_compress_route(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_compress_route(app, "GET", "nope", 1);
}

static int c_cors(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_cors(app, "", &(canal_cors_t){.origins = " , "});
}

static int c_cors_route(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_cors_route(app, NULL, &(canal_cors_t){.origins = "*"});
}

static int c_metrics(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_metrics(app, "m/{", err);
}

static int c_rate_limit(canal_app_t *app, canal_error_info_t *err)
{
    /* a group of another app */
    canal_app_t *other = canal_app_create(NULL);
    canal_route_group_t *g = canal_app_group(other, NULL, "g");
    int rc = canal_app_rate_limit(app, g, NULL);
    canal_app_destroy(other);
    return rc;
}

static int c_rate_limit_create(canal_app_t *app, canal_error_info_t *err)
{
    canal_rate_limit_t *l = canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 0}, err);
    return l == NULL ? err->code : 0;
}

static int c_security_headers(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_security_headers(app, NULL, &(canal_security_headers_t){.csp = "a\r\nb"});
}

static int c_policy(canal_app_t *app, canal_error_info_t *err)
{
    static const canal_policy_t none = {.scopes = "read"}; /* no scheme */
    return canal_app_policy(app, &none);
}

static int c_group_policy(canal_app_t *app, canal_error_info_t *err)
{
    static const canal_policy_t anyone = {.anonymous = 1};
    canal_app_t *other = canal_app_create(NULL);
    canal_route_group_t *g = canal_app_group(other, NULL, "g");
    int rc = canal_app_group_policy(app, g, &anyone);
    canal_app_destroy(other);
    return rc;
}

static int c_on_request(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_on_request(app, NULL, NULL, NULL);
}

static int c_every(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_every(app, 0, on_timer, NULL);
}

static int c_ws(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_ws(app, NULL, NULL, err);
}

static int c_health(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_health(app, "h/{", NULL, NULL);
}

static int c_openapi(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_openapi(app, "openapi.json", NULL, err);
}

static int c_docs(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_docs(app, "docs", "/openapi.json\"><script>", NULL, err);
}

static int c_schema(canal_app_t *app, canal_error_info_t *err)
{
    typedef struct {
        int32_t n;
    } one_t;
    static const canal_field_t fields[] = {
        {.name = "n", .type = CANAL_TYPE_INT64, CANAL_FIELD(one_t, n)}, /* int64 in an int32 */
        {.name = NULL}};
    static const canal_schema_t s = {.name = "One", .size = sizeof(one_t), .fields = fields};
    return canal_app_schema(app, &s, err);
}

static int c_sessions(canal_app_t *app, canal_error_info_t *err)
{
    canal_sessions_t *s = canal_sessions_create(app, &(canal_sessions_options_t){.signer = NULL}, err);
    return s == NULL ? err->code : 0;
}

static int c_option_twice(canal_app_t *app, canal_error_info_t *err)
{
    static const canal_policy_t anyone = {.anonymous = 1};
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "two", .handler = h_ok,
                                                         .options = {CANAL_POLICY(&anyone), CANAL_POLICY(&anyone)}},
                           NULL, err);
}

static int c_option_policy(canal_app_t *app, canal_error_info_t *err)
{
    static const canal_policy_t none = {.roles = "admin"}; /* no scheme */
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "p", .handler = h_ok, .options = {CANAL_POLICY(&none)}},
                           NULL, err);
}

static int c_option_rate_limit(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "r", .handler = h_ok, .options = {CANAL_RATE_LIMIT(NULL)}},
                           NULL, err);
}

static int c_option_headers(canal_app_t *app, canal_error_info_t *err)
{
    static const canal_security_headers_t bad = {.referrer_policy = "no-referrer\r\nx-evil: 1"};
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "h", .handler = h_ok,
                                                         .options = {CANAL_SECURITY_HEADERS(&bad)}},
                           NULL, err);
}

static int c_option_args(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "a", .handler = h_ok, .options = {CANAL_ARGS(NULL)}},
                           NULL, err);
}

/* the args check that needs the route (the option kind's added()): a field bound from the
 * route that the template does not have */
static int c_option_args_route(canal_app_t *app, canal_error_info_t *err)
{
    typedef struct {
        int32_t id;
    } route_id_t;
    static const canal_field_t fields[] = {
        {.name = "id", .type = CANAL_TYPE_INT32, CANAL_FIELD(route_id_t, id), .source = CANAL_FROM_ROUTE,
         .flags = CANAL_REQUIRED},
        {.name = NULL}};
    static const canal_schema_t s = {.name = "Id", .size = sizeof(route_id_t), .fields = fields};
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "no-id", .handler = h_ok, .options = {CANAL_ARGS(&s)}},
                           NULL, err);
}

static int c_option_doc_status(canal_app_t *app, canal_error_info_t *err)
{
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "d", .handler = h_ok,
                                                         .options = {CANAL_DOC(.responses = {{.status = 99}})}},
                           NULL, err);
}

static int c_option_doc_header(canal_app_t *app, canal_error_info_t *err)
{
    static const canal_header_def_t spaced[] = {{"Not a token", NULL}, {NULL, NULL}};
    return canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "d", .handler = h_ok,
                                                         .options = {CANAL_DOC(.responses = {{.status = 201, .headers = spaced}})}},
                           NULL, err);
}

static const struct reg_case cases[] = {
    {"two options of one kind", c_option_twice, CANAL_EINVAL, 1},
    {"CANAL_POLICY() without a scheme", c_option_policy, CANAL_EINVAL, 1},
    {"CANAL_RATE_LIMIT(NULL)", c_option_rate_limit, CANAL_EINVAL, 1},
    {"CANAL_SECURITY_HEADERS() with CR LF", c_option_headers, CANAL_EINVAL, 1},
    {"CANAL_ARGS(NULL)", c_option_args, CANAL_EINVAL, 1},
    {"CANAL_ARGS() against the template", c_option_args_route, CANAL_EINVAL, 1},
    {"CANAL_DOC() with status 99", c_option_doc_status, CANAL_EINVAL, 1},
    {"CANAL_DOC() with a header name not a token", c_option_doc_header, CANAL_EINVAL, 1},
    {"canal_app_route", c_route, CANAL_EINVAL, 1},
    {"canal_app_get", c_get, CANAL_ESYNTAX, 0},
    {"canal_app_static", c_static, CANAL_EINVAL, 1},
    {"canal_app_compress", c_compress, CANAL_EINVAL, 0},
    {"canal_app_compress_route", c_compress_route, CANAL_ENOTFOUND, 0},
    {"canal_app_cors", c_cors, CANAL_EINVAL, 0},
    {"canal_app_cors_route", c_cors_route, CANAL_EINVAL, 0},
    {"canal_app_metrics", c_metrics, CANAL_ESYNTAX, 1},
    {"canal_app_rate_limit", c_rate_limit, CANAL_EINVAL, 0},
    {"canal_rate_limit_create", c_rate_limit_create, CANAL_EINVAL, 1},
    {"canal_app_security_headers", c_security_headers, CANAL_EINVAL, 0},
    {"canal_app_policy", c_policy, CANAL_EINVAL, 0},
    {"canal_app_group_policy", c_group_policy, CANAL_EINVAL, 0},
    {"canal_app_on_request", c_on_request, CANAL_EINVAL, 0},
    {"canal_app_every", c_every, CANAL_EINVAL, 0},
    {"canal_app_ws", c_ws, CANAL_EINVAL, 1},
    {"canal_app_health", c_health, CANAL_ESYNTAX, 0},
    {"canal_app_openapi", c_openapi, CANAL_EINVAL, 1},
    {"canal_app_docs", c_docs, CANAL_EINVAL, 1},
    {"canal_app_schema", c_schema, CANAL_EINVAL, 1},
    {"canal_sessions_create", c_sessions, CANAL_EINVAL, 1},
};

static canal_app_t *new_app(void)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.port = 0;
    cfg.threads = 1;
    cfg.no_signals = 1;
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    assert_int_equal(canal_app_get(app, "ok", h_ok, NULL), 0);
    return app;
}

/* Each call's failure: returned, in err, kept by the app, and canal_app_start() fails with it */
static void each_call(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct reg_case *c = &cases[i];
        canal_app_t *app = new_app();
        canal_error_info_t err = {.code = 12345}, kept = {0};
        int rc = c->call(app, &err);
        if (rc != c->code)
            fail_msg("%s returned %d (%s), not %s", c->name, rc, canal_err_name(rc), canal_err_name(c->code));
        if (c->has_err && (err.code != c->code || err.message[0] == '\0'))
            fail_msg("%s: err is code %d, message '%s'", c->name, err.code, err.message);
        if (canal_app_error(app, &kept) != c->code || kept.code != c->code || kept.message[0] == '\0')
            fail_msg("%s: the app kept code %d, message '%s'", c->name, kept.code, kept.message);
        if (c->has_err && strcmp(kept.message, err.message) != 0)
            fail_msg("%s: the app kept '%s', the call said '%s'", c->name, kept.message, err.message);
        assert_int_equal(canal_app_start(app), c->code);
        canal_app_destroy(app);
    }
}

/* The first failure stays: a later one, of another call, does not replace it */
static void first_stays(void **state)
{
    canal_app_t *app = new_app();
    canal_error_info_t err;
    assert_int_equal(canal_app_static(app, "/s", "/nonexistent/dir", 0, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_get(app, "b/{", h_ok, NULL), CANAL_ESYNTAX);
    assert_int_equal(canal_app_compress_route(app, "GET", "nope", 1), CANAL_ENOTFOUND);
    assert_int_equal(canal_app_error(app, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "/nonexistent/dir"));
    assert_int_equal(canal_app_start(app), CANAL_EINVAL);
    canal_app_destroy(app);
}

/* After the start every registration call is CANAL_ESTATE, and the running app is unharmed */
static void after_start(void **state)
{
    canal_app_t *app = new_app();
    canal_error_info_t err;
    assert_int_equal(canal_app_start(app), 0);
    assert_int_equal(canal_app_get(app, "late", h_ok, NULL), CANAL_ESTATE);
    assert_int_equal(canal_app_static(app, "/t", "/tmp", 0, &err), CANAL_ESTATE);
    assert_int_equal(err.code, CANAL_ESTATE);
    assert_int_equal(canal_app_compress(app, NULL), CANAL_ESTATE);
    assert_int_equal(canal_app_cors(app, "", &(canal_cors_t){.origins = "*"}), CANAL_ESTATE);
    assert_int_equal(canal_app_metrics(app, "m", &err), CANAL_ESTATE);
    assert_int_equal(canal_app_on_request(app, NULL, NULL, NULL), CANAL_ESTATE);
    assert_null(canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 1, .window_ms = 1,
                                                                           .key = CANAL_RATE_KEY_CUSTOM,
                                                                           .key_fn = key_fn},
                                        &err));
    assert_int_equal(err.code, CANAL_ESTATE);
    canal_app_stop(app);
    assert_int_equal(canal_app_wait(app), 0);
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_call),
        cmocka_unit_test(first_stays),
        cmocka_unit_test(after_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
