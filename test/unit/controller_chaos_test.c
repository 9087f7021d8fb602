/* SPDX-License-Identifier: MIT */
/*
 * The controller layer's registration under allocation failure, as router_match_test.c does
 * for the router: the same registration is run once to count its allocations, then once per
 * allocation with that one failing. Each call must succeed or return CANAL_ENOMEM (never
 * crash, never another error), the app and the mvc object must then be destroyed cleanly, and
 * nothing may leak: the live count returns to zero in a plain build, and LeakSanitizer checks
 * the sanitizer build.
 *
 * No parameter has a pattern here: glibc's regcomp does not survive running out of memory
 * half-way (see router_match_test.c); the controller layer maps its REG_ESPACE to
 * CANAL_ENOMEM, which this test found.
 *
 * Only the controller calls are failed. The app itself is created first with nothing failing:
 * libh2o's configuration "dies if impossible" (h2o's policy, see canal/server.h).
 */
#include "test.h"
#include <canal.h>
#include "counting_malloc.h"

static int ok(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_status(req, 204);
}

static int before(canal_ctx_t *ctx, void *data)
{
    return 0;
}

static const char *const colours[] = {"red", "green", NULL};

typedef struct {
    int32_t id;
    canal_str_t q, c;
} emp_args_t;
static const canal_field_t emp_fields[] = {
    {.name = "id", CANAL_FIELD(emp_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED, CANAL_MIN(1), CANAL_MAX(1000)},
    {.name = "q", CANAL_FIELD(emp_args_t, q), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_STRING, .def = "all",
     .max_length = 10},
    {.name = "c", CANAL_FIELD(emp_args_t, c), .source = CANAL_FROM_QUERY, .allowed = colours},
    {.name = NULL}};
static const canal_schema_t emp_args = {.name = "EmpArgs", .size = sizeof(emp_args_t), .fields = emp_fields};

typedef struct {
    int64_t n;
} save_args_t;
static const canal_field_t save_fields[] = {
    {.name = "n", CANAL_FIELD(save_args_t, n), .type = CANAL_TYPE_INT64, .flags = CANAL_REQUIRED}, {.name = NULL}};
static const canal_schema_t save_args = {.name = "SaveArgs", .size = sizeof(save_args_t), .fields = save_fields};

typedef struct {
    canal_str_t key;
} key_args_t;
static const canal_field_t key_fields[] = {
    {.name = "x-key", CANAL_FIELD(key_args_t, key), .source = CANAL_FROM_HEADER, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t key_args = {.name = "KeyArgs", .size = sizeof(key_args_t), .fields = key_fields};

static const canal_action_def_t home_actions[] = {
    {.name = "Index", .handler = ok},
    {.name = "Employee", .routes = {"home/employee/{id:int}", "staff/{id:int}"}, .route_name = "emp",
     .handler = ok,
     .args = &emp_args},
    {.name = "Save", .methods = "POST,PUT", .routes = {"[controller]/save/{*rest}"}, .handler = ok,
     .args = &save_args,
     .filters = {{.before = before}}},
    {.name = NULL},
};

static const canal_action_def_t api_actions[] = {
    {.name = "Get", .routes = {"{id:guid}"}, .handler = ok,
     .args = &key_args},
    {.name = "List", .routes = {""}, .handler = ok},
    {.name = NULL},
};

/* Registers everything; returns the number of calls that succeeded, fails the test on an
 * error other than CANAL_ENOMEM (or on any error when nothing fails). */
static int register_all(canal_mvc_t *mvc, int must_succeed)
{
    canal_controller_def_t home = {.name = "Home", .actions = home_actions,
                                   .filters = {{.before = before}}};
    canal_controller_def_t api = {.name = "Orders", .prefix = "api/[controller]", .actions = api_actions};
    canal_filter_t f = {.before = before};
    canal_error_info_t err = {0};
    int rcs[4], nok = 0;
    rcs[0] = canal_mvc_filter(mvc, &f);
    rcs[1] = canal_mvc_map_route(mvc, "{controller=Home}/{action=Index}/{id?}", &err);
    rcs[2] = canal_mvc_add_controller(mvc, &home, NULL, &err);
    rcs[3] = canal_mvc_add_controller(mvc, &api, NULL, &err);
    for (int i = 0; i < 4; i++) {
        if (rcs[i] == 0)
            nok++;
        else if (rcs[i] != CANAL_ENOMEM || must_succeed)
            fail_msg("call %d: %s (%s)", i, canal_err_name(rcs[i]), err.message);
    }
    return nok;
}

static void chaos_registration(void **state)
{
    if (!counting_usable())
        skip();
    /* once without counting: one-time globals of libh2o, OpenSSL and jansson are made here */
    canal_app_t *app = canal_app_create(NULL);
    canal_mvc_t *mvc = canal_mvc_create(app);
    register_all(mvc, 1);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);

    long total = -1, failed_runs = 0, swallowed = 0;
    size_t clean_routes = 0;
    for (long fail_at = -1; total < 0 || fail_at < total; fail_at++) {
        nallocs = 0;
        live = 0;
        fail_countdown = -1;
        counting = 1;
        app = canal_app_create(NULL);
        assert_non_null(app);
        long app_allocs = nallocs;
        fail_countdown = fail_at;
        mvc = canal_mvc_create(app);
        int nok = mvc != NULL ? register_all(mvc, fail_at < 0) : -1;
        fail_countdown = -1;
        if (fail_at < 0)
            total = nallocs - app_allocs;
        else
            failed_runs += mvc == NULL || nok < 4;
        /* a failure no call reported must have cost nothing: the router's path table is best
         * effort (matching is slower without an entry, not different); every route is there */
        size_t nroutes = canal_router_route_count(canal_app_router(app));
        if (fail_at < 0)
            clean_routes = nroutes;
        else if (mvc != NULL && nok == 4 && nroutes != clean_routes)
            fail_msg("fail_at %ld: no error, but %zu routes of %zu", fail_at, nroutes, clean_routes);
        swallowed += fail_at >= 0 && mvc != NULL && nok == 4;
        /* what was registered can be walked (an action may have no route yet: conventional
         * routes come with canal_mvc_map_route(), which may have been the call that failed) */
        for (size_t i = 0; mvc != NULL && i < canal_mvc_controller_count(mvc); i++) {
            const canal_controller_t *c = canal_mvc_controller_at(mvc, i);
            assert_non_null(canal_controller_name(c));
            for (size_t j = 0; j < canal_controller_action_count(c); j++) {
                const canal_action_t *a = canal_controller_action_at(c, j);
                for (size_t k = 0; k < canal_action_route_count(a); k++)
                    assert_non_null(canal_route_template(canal_action_route_at(a, k)));
            }
        }
        canal_app_destroy(app);
        canal_mvc_destroy(mvc);
        counting = 0;
        if (COUNTING_MALLOC == 1 && live != 0)
            fail_msg("fail_at %ld: %ld allocations not freed", fail_at, live);
    }
    assert_int_equal(failed_runs + swallowed, total);
    assert_true(swallowed < total / 10);
    print_message("controller chaos: each of %ld allocations failed in turn; %ld reported as "
                  "CANAL_ENOMEM, %ld harmless (the router's path table)\n", total, failed_runs, swallowed);
}

/* The registration the chaos test fails in pieces, whole: what it must come to when nothing
 * fails (runs in every build, including those that cannot count allocations). */
static void registration_whole(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_mvc_t *mvc = canal_mvc_create(app);
    assert_int_equal(register_all(mvc, 1), 4);
    assert_int_equal(canal_mvc_controller_count(mvc), 2);
    assert_int_equal(canal_controller_action_count(canal_mvc_controller_at(mvc, 0)), 3);
    assert_int_equal(canal_controller_action_count(canal_mvc_controller_at(mvc, 1)), 2);
    /* Index and Save through the conventional route; Employee by its two templates */
    assert_true(canal_router_route_count(canal_app_router(app)) >= 6);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registration_whole),
        cmocka_unit_test(chaos_registration),
    };
    return cmocka_run_group_tests_name("controller_chaos", tests, NULL, NULL);
}
