/* SPDX-License-Identifier: MIT */
/*
 * Tests of the todo API, as an app's own tests would be written: the app runs in this
 * process (canal/testing.h starts it on a free 127.0.0.1 port) and each test sends it HTTP
 * requests and checks the answers. cmocka here; any framework does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <canal/testing.h>
#include "todo.h"

struct fixture {
    todo_store_t *store;
    canal_app_t *app;
    canal_test_t *client;
};

/* A fresh app per test: tests do not see each other's items. */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    f->store = todo_store_create();
    f->app = canal_app_create(NULL);
    if (f->store == NULL || f->app == NULL || todo_routes(f->app, f->store) != 0)
        return -1;
    canal_error_info_t err;
    if ((f->client = canal_test_start(f->app, &err)) == NULL) {
        fprintf(stderr, "canal_test_start: %s\n", err.message);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    int rc = canal_test_stop(f->client);
    canal_app_destroy(f->app);
    todo_store_destroy(f->store);
    free(f);
    return rc;
}

/* POSTs a todo and returns its id. */
static int add(canal_test_t *t, const char *title)
{
    json_t *in = json_pack("{s:s}", "title", title);
    canal_test_response_t *r = canal_test_json(t, "POST", "/todos", NULL, 0, in);
    json_decref(in);
    assert_non_null(r);
    assert_int_equal(r->status, 201);
    json_t *item = canal_test_response_json(r, NULL);
    int id = (int)json_integer_value(json_object_get(item, "id"));
    char location[32];
    snprintf(location, sizeof(location), "/todos/%d", id);
    assert_string_equal(canal_test_header(r, "location"), location);
    json_decref(item);
    canal_test_response_free(r);
    return id;
}

static void starts_empty(void **state)
{
    struct fixture *f = *state;
    canal_test_response_t *r = canal_test_get(f->client, "/todos");
    assert_non_null(r);
    assert_int_equal(r->status, 200);
    assert_string_equal(canal_test_header(r, "content-type"), "application/json");
    assert_string_equal(r->body, "[]");
    canal_test_response_free(r);
}

static void create_then_read(void **state)
{
    struct fixture *f = *state;
    int a = add(f->client, "write docs"), b = add(f->client, "test them");
    assert_int_equal(b, a + 1);

    canal_test_response_t *r = canal_test_get(f->client, "/todos/2");
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "{\"id\":2,\"title\":\"test them\",\"done\":false}");
    canal_test_response_free(r);

    r = canal_test_get(f->client, "/todos");
    json_t *list = canal_test_response_json(r, NULL);
    assert_int_equal(json_array_size(list), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "title")), "write docs");
    json_decref(list);
    canal_test_response_free(r);
}

static void update_and_delete(void **state)
{
    struct fixture *f = *state;
    int id = add(f->client, "ship it");
    char path[32];
    snprintf(path, sizeof(path), "/todos/%d", id);

    json_t *done = json_pack("{s:b}", "done", 1);
    canal_test_response_t *r = canal_test_json(f->client, "PATCH", path, NULL, 0, done);
    json_decref(done);
    assert_int_equal(r->status, 200);
    assert_non_null(strstr(r->body, "\"done\":true"));
    canal_test_response_free(r);

    r = canal_test_request(f->client, "DELETE", path, NULL, 0, NULL, 0);
    assert_int_equal(r->status, 204);
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);

    r = canal_test_request(f->client, "DELETE", path, NULL, 0, NULL, 0);
    assert_int_equal(r->status, 404);
    assert_string_equal(canal_test_header(r, "content-type"), "application/problem+json");
    canal_test_response_free(r);
}

static void bad_requests(void **state)
{
    struct fixture *f = *state;
    /* not JSON, no title, a title that is not a string: 400 problem details */
    static const char *const bodies[] = {"{", "{}", "{\"title\":3}", "{\"title\":\"\"}"};
    static const canal_kv_t json_type[] = {{"Content-Type", "application/json"}};
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        canal_test_response_t *r =
            canal_test_request(f->client, "POST", "/todos", json_type, 1, bodies[i], strlen(bodies[i]));
        assert_int_equal(r->status, 400);
        json_t *problem = canal_test_response_json(r, NULL);
        assert_int_equal(json_integer_value(json_object_get(problem, "status")), 400);
        json_decref(problem);
        canal_test_response_free(r);
    }
    /* the route only matches integer ids; a method the path has no route for is a 405 */
    canal_test_response_t *r = canal_test_get(f->client, "/todos/abc");
    assert_int_equal(r->status, 404);
    canal_test_response_free(r);
    r = canal_test_request(f->client, "PUT", "/todos/1", NULL, 0, "{}", 2);
    assert_int_equal(r->status, 405);
    assert_string_equal(canal_test_header(r, "allow"), "GET, HEAD, PATCH, DELETE, OPTIONS");
    canal_test_response_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(starts_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(create_then_read, setup, teardown),
        cmocka_unit_test_setup_teardown(update_and_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_requests, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
