/* SPDX-License-Identifier: MIT */
/*
 * ETags (canal/etag.h): the tag of a body, If-None-Match's weak comparison and its 304 with no
 * body, the scopes (route, group, app, and a route turning it off), and where there is never
 * one: other methods, non-2xx answers, streams, routes without it.
 */
#include "test.h"
#include <canal.h>
#include <canal/etag.h>
#include <canal/stream.h>
#include <canal/testing.h>

static int h_page(canal_req_t *req, void *data)
{
    const char *body = data ? data : "<p>hello</p>";
    return canal_res_body_static(req, 200, "text/html; charset=utf-8", body, strlen(body));
}

static int h_copy(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "copied");
}

static int h_missing(canal_req_t *req, void *data)
{
    return canal_res_problem(req, 404, "no such thing");
}

static int h_stream(canal_req_t *req, void *data)
{
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", NULL, NULL);
    if (s == NULL)
        return -1;
    canal_stream_write(s, "streamed", 8);
    return canal_stream_end(s);
}

static canal_test_response_t *get(canal_test_t *t, const char *method, const char *path, const char *inm)
{
    canal_kv_t h[] = {{"If-None-Match", inm}};
    return canal_test_request(t, method, path, h, inm ? 1 : 0, NULL, 0);
}

static canal_app_t *new_app(void)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 1;
    cfg.port = 1;
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    return app;
}

static void route(canal_app_t *app, const char *method, const char *tmpl, canal_handler_fn fn, void *data, int etag)
{
    canal_endpoint_spec_t spec = {.method = method, .tmpl = tmpl, .handler = fn, .data = data};
    if (etag >= 0)
        spec.options[0] = (canal_route_option_t)CANAL_ETAG(etag);
    canal_error_info_t err;
    if (canal_app_route(app, &spec, NULL, &err) != 0)
        fail_msg("%s: %s", tmpl, err.message);
}

static void tags(void **state)
{
    canal_app_t *app = new_app();
    route(app, "GET", "page", h_page, NULL, 1);
    route(app, "GET", "other", h_page, "<p>other</p>", 1);
    route(app, "GET", "copy", h_copy, NULL, 1);
    route(app, "GET", "plain", h_page, NULL, -1);
    route(app, "POST", "page", h_page, NULL, 1);
    route(app, "GET", "missing", h_missing, NULL, 1);
    route(app, "GET", "stream", h_stream, NULL, 1);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);

    canal_test_response_t *r = get(t, "GET", "/page", NULL);
    assert_int_equal(r->status, 200);
    char tag[32];
    snprintf(tag, sizeof(tag), "%s", canal_test_header(r, "etag"));
    assert_int_equal(strlen(tag), 18);
    assert_true(tag[0] == '"' && tag[17] == '"');
    canal_test_response_free(r);
    r = get(t, "GET", "/page", NULL);
    assert_string_equal(canal_test_header(r, "etag"), tag); /* the same bytes, the same tag */
    canal_test_response_free(r);
    r = get(t, "GET", "/other", NULL);
    assert_string_not_equal(canal_test_header(r, "etag"), tag);
    canal_test_response_free(r);

    /* If-None-Match: the weak comparison, lists, "*"; a 304 has the tag and no body */
    char weak[40], list[80];
    snprintf(weak, sizeof(weak), "W/%s", tag);
    snprintf(list, sizeof(list), "\"a\", W/\"b\",%s", tag);
    const char *matching[] = {tag, weak, list, "*", " *"};
    for (size_t i = 0; i < sizeof(matching) / sizeof(matching[0]); i++) {
        r = get(t, "GET", "/page", matching[i]);
        if (r->status != 304)
            fail_msg("If-None-Match: %s: %d", matching[i], r->status);
        assert_int_equal(r->body_len, 0);
        assert_string_equal(canal_test_header(r, "etag"), tag);
        assert_null(canal_test_header(r, "content-length"));
        canal_test_response_free(r);
    }
    char other[40];
    snprintf(other, sizeof(other), "\"%.15sx\"", tag + 1);
    const char *not_matching[] = {other, "\"a\"", "", "W/", tag + 1, "nonsense, *"};
    for (size_t i = 0; i < sizeof(not_matching) / sizeof(not_matching[0]); i++) {
        r = get(t, "GET", "/page", not_matching[i]);
        if (r->status != 200)
            fail_msg("If-None-Match: %s: %d", not_matching[i], r->status);
        assert_string_equal(r->body, "<p>hello</p>");
        canal_test_response_free(r);
    }
    /* HEAD: the tag when the body was kept (canal_res_body_static()), and its 304 */
    r = get(t, "HEAD", "/page", NULL);
    assert_string_equal(canal_test_header(r, "etag"), tag);
    assert_string_equal(canal_test_header(r, "content-length"), "12");
    canal_test_response_free(r);
    r = get(t, "HEAD", "/page", tag);
    assert_int_equal(r->status, 304);
    canal_test_response_free(r);
    /* a copied body has its tag on GET */
    r = get(t, "GET", "/copy", NULL);
    assert_non_null(canal_test_header(r, "etag"));
    canal_test_response_free(r);

    /* never: without the setting, other methods, non-2xx, streams */
    const char *never[][2] = {{"GET", "/plain"}, {"POST", "/page"}, {"GET", "/missing"}, {"GET", "/stream"}};
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
        r = get(t, never[i][0], never[i][1], "*");
        if (canal_test_header(r, "etag") != NULL || r->status == 304)
            fail_msg("%s %s: %d with an ETag", never[i][0], never[i][1], r->status);
        canal_test_response_free(r);
    }
    canal_test_stop(t);
    canal_app_destroy(app);
}

/* The app's setting covers every route; a route's CANAL_ETAG(0) turns it off; a group's */
static void scopes(void **state)
{
    canal_app_t *app = new_app();
    assert_int_equal(canal_app_etag(app, NULL, 1), 0);
    route(app, "GET", "on", h_page, NULL, -1);
    route(app, "GET", "off", h_page, NULL, 0);
    canal_route_group_t *g = canal_app_group(app, NULL, "g");
    assert_int_equal(canal_app_etag(app, g, 0), 0);
    canal_endpoint_spec_t spec = {.tmpl = "x", .handler = h_page, .group = g};
    assert_int_equal(canal_app_route(app, &spec, NULL, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    const char *paths[][2] = {{"/on", "yes"}, {"/off", "no"}, {"/g/x", "no"}};
    for (size_t i = 0; i < 3; i++) {
        canal_test_response_t *r = get(t, "GET", paths[i][0], NULL);
        assert_int_equal(r->status, 200);
        if ((canal_test_header(r, "etag") != NULL) != (strcmp(paths[i][1], "yes") == 0))
            fail_msg("%s: ETag %s", paths[i][0], canal_test_header(r, "etag"));
        canal_test_response_free(r);
    }
    assert_int_equal(canal_app_etag(app, NULL, 1), CANAL_ESTATE);
    canal_test_stop(t);
    canal_app_destroy(app);
}

/* A value that is not CANAL_ETAG()'s is the route's registration error */
static void bad_option(void **state)
{
    canal_app_t *app = new_app();
    canal_endpoint_spec_t spec = {.tmpl = "x", .handler = h_page, .options = {{&canal_etag_option, "yes"}}};
    canal_error_info_t err;
    assert_int_equal(canal_app_route(app, &spec, NULL, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "CANAL_ETAG"));
    assert_int_equal(canal_app_etag(NULL, NULL, 1), CANAL_EINVAL);
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tags),
        cmocka_unit_test(scopes),
        cmocka_unit_test(bad_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
