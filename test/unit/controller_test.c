/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the controller layer: registration errors, token replacement, conventional
 * routing, every binding type and failure, filter order and short-circuits, results and link
 * generation. Apps run in this process on an ephemeral port; test/unit/client.h talks to them.
 */
#include "test.h"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <canal.h>
#include "client.h"

static canal_app_t *app;
static canal_mvc_t *mvc;

static void start_app(void)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    cfg.env = CANAL_ENV_DEVELOPMENT;
    app = canal_app_create(&cfg);
    mvc = canal_mvc_create(app);
}

static int ok_text(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_text(req, 200, canal_action_def(canal_ctx_action(ctx))->name);
}

/* ---- registration ---- */

/* The args of the registration error cases: one struct, a schema per case. */
typedef struct {
    int32_t n;
    canal_str_t s, s2;
    json_t *j;
} t_args_t;
#define T_AT(m) CANAL_FIELD(t_args_t, m)
#define T_NAME2(line) "T" #line
#define T_NAME(line) T_NAME2(line)
/* a schema name of its own per case (a schema that passed stays registered) */
#define T_ARGS(...)                                                                                                    \
    &(const canal_schema_t)                                                                                            \
    {                                                                                                                  \
        .name = T_NAME(__LINE__), .size = sizeof(t_args_t), .fields = (const canal_field_t[]){__VA_ARGS__, {.name = NULL}}          \
    }

static void registration_errors(void **state)
{
    canal_error_info_t err;
    start_app();
    static const canal_action_def_t dup[] = {
        {.name = "A", .routes = {"x/{id}"}, .handler = ok_text},
        {.name = "B", .routes = {"x/{other}"}, .handler = ok_text},
        {.name = NULL},
    };
    canal_controller_def_t c = {.name = "Dup", .actions = dup};
    assert_int_equal(canal_mvc_add_controller(mvc, &c, NULL, &err), CANAL_EEXIST);
    assert_non_null(strstr(err.message, "Dup.B"));

    const struct {
        canal_action_def_t def;
        int code;
        const char *says;
    } bad[] = {
        {{.name = "T", .routes = {"[nothing]/x"}, .handler = ok_text}, CANAL_ESYNTAX, "unknown token"},
        {{.name = "T", .routes = {"x/{"}, .handler = ok_text}, CANAL_ESYNTAX, "'{' without '}'"},
        {{.name = "T", .routes = {"t1"}}, CANAL_EINVAL, "no handler"},
        {{.name = "bad name", .routes = {"t2"}, .handler = ok_text}, CANAL_EINVAL, "letters"},
        {{.name = "T", .routes = {"t3"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(n), .source = CANAL_FROM_QUERY,
          .type = CANAL_TYPE_INT32, .def = "ten"})}, CANAL_EINVAL, "default 'ten'"},
        {{.name = "T", .routes = {"t4"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(s), .source = CANAL_FROM_QUERY,
          CANAL_MAX(1.5)})}, CANAL_EINVAL, "bounds are for numbers"},
        {{.name = "T", .routes = {"t5"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(n), .source = CANAL_FROM_QUERY,
          .type = CANAL_TYPE_INT32, .def = "1", .max_length = 3})}, CANAL_EINVAL, "are for strings"},
        {{.name = "T", .routes = {"t6"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(j), .source = CANAL_FROM_QUERY,
          .type = CANAL_TYPE_JSON})}, CANAL_EINVAL, "a text source"},
        {{.name = "T", .routes = {"t7"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(s), .source = CANAL_FROM_QUERY,
          .pattern = "(("})}, CANAL_EINVAL, "bad pattern"},
        {{.name = "T", .routes = {"t8"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(n), .source = CANAL_FROM_QUERY,
          .type = CANAL_TYPE_INT32, .def = "1", .allowed = (const char *const[]){"1", "two", NULL}})}, CANAL_EINVAL,
         "allowed values are for strings"},
        {{.name = "T", .routes = {"t9"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(s)}, {.name = "n", T_AT(s2)})},
         CANAL_EEXIST, "declared twice"},
        {{.name = "T", .routes = {"t11"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(n), .type = CANAL_TYPE_INT64,
          .flags = CANAL_REQUIRED})}, CANAL_EINVAL, "member size 4"},
        {{.name = "T", .routes = {"t12"}, .handler = ok_text, .args = T_ARGS({.name = "a", T_AT(s)},
          {.name = "b", .offset = offsetof(t_args_t, s) + 8, .size = sizeof(canal_str_t)})}, CANAL_EINVAL, "overlap"},
        {{.name = "T", .routes = {"t13"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(s), .format = "ipv7"})},
         CANAL_EINVAL, "unknown format 'ipv7'"},
        {{.name = "T", .routes = {"t14"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(n), .type = CANAL_TYPE_INT32,
          .source = CANAL_FROM_QUERY})}, CANAL_EINVAL, "presence flag"},
        {{.name = "T", .routes = {"t15/{id:long}"}, .handler = ok_text, .args = T_ARGS({.name = "id", T_AT(n),
          .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE, .flags = CANAL_REQUIRED})}, CANAL_EINVAL,
         "says {id:long}"},
        {{.name = "T", .routes = {"t16"}, .handler = ok_text, .args = T_ARGS({.name = "id", T_AT(n),
          .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE, .flags = CANAL_REQUIRED})}, CANAL_EINVAL,
         "has no {id}"},
        {{.name = "T", .routes = {"t17"}, .handler = ok_text, .args = T_ARGS({.name = "n", T_AT(n),
          .type = CANAL_TYPE_INT32, .def = "0", CANAL_MIN(1)})}, CANAL_EINVAL, "must be at least 1"},
        {{.name = "T", .routes = {"t10"}, .methods = "GET,,POST", .handler = ok_text}, CANAL_ESYNTAX, "bad methods"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char name[3] = {'C', (char)('a' + i), 0};
        canal_controller_t *ctrl = canal_mvc_controller(mvc, name, NULL, NULL, NULL, &err);
        assert_non_null(ctrl);
        int rc = canal_controller_add_action(ctrl, &bad[i].def, &err);
        if (rc != bad[i].code || strstr(err.message, bad[i].says) == NULL)
            fail_msg("case %zu: rc %d, message '%s'", i, rc, err.message);
    }
    assert_null(canal_mvc_controller(mvc, "Ca", NULL, NULL, NULL, &err)); /* taken (case-insensitively) */
    assert_int_equal(err.code, CANAL_EEXIST);
    assert_null(canal_mvc_controller(mvc, "X", "[what]", NULL, NULL, &err));
    assert_int_equal(canal_mvc_map_route(mvc, "{controller}/x", &err), CANAL_EINVAL);
    canal_filter_t f = {0};
    for (int i = 0; i < CANAL_MAX_FILTERS; i++)
        assert_int_equal(canal_mvc_filter(mvc, &f), 0);
    assert_int_equal(canal_mvc_filter(mvc, &f), CANAL_ELIMIT);
    app_finish(&app, &mvc);
}

static void tokens_and_conventional(void **state)
{
    canal_error_info_t err;
    char url[128];
    start_app();
    static const canal_action_def_t items[] = {
        {.name = "Get", .routes = {"[action]/{id:int}", "/abs/[controller]"}, .route_name = "item", .handler = ok_text},
        {.name = "List", .handler = ok_text},
        {.name = "Make", .methods = "POST, PUT", .routes = {"[[x]]"}, .handler = ok_text},
        {.name = NULL},
    };
    static const canal_action_def_t home[] = {
        {.name = "Index", .handler = ok_text},
        {.name = "About", .handler = ok_text},
        {.name = NULL},
    };
    static const canal_action_def_t other[] = {{.name = "List", .handler = ok_text}, {.name = NULL}};
    canal_controller_def_t c1 = {.name = "Items", .prefix = "/api/[controller]/", .actions = items};
    canal_controller_def_t c2 = {.name = "Home", .actions = home};
    canal_controller_def_t c3 = {.name = "Other", .actions = other};
    assert_int_equal(canal_mvc_add_controller(mvc, &c1, NULL, &err), 0);
    assert_int_equal(canal_mvc_add_controller(mvc, &c2, NULL, &err), 0); /* before the conventional route */
    assert_int_equal(canal_mvc_map_route(mvc, "{controller=Home}/{action=Index}/{id?}", &err), 0);
    assert_int_equal(canal_mvc_add_controller(mvc, &c3, NULL, &err), 0); /* after it */

    /* the templates the actions were registered under */
    const canal_controller_t *c = canal_mvc_controller_at(mvc, 0);
    assert_string_equal(canal_controller_name(c), "Items");
    const canal_action_t *get_action = canal_controller_action_at(c, 0), *make = canal_controller_action_at(c, 2);
    assert_int_equal(canal_action_route_count(get_action), 2);
    assert_string_equal(canal_route_template(canal_action_route_at(get_action, 0)), "api/items/get/{id:int}"); /* lower-cased names */
    assert_string_equal(canal_route_template(canal_action_route_at(get_action, 1)), "/abs/items");
    assert_string_equal(canal_route_template(canal_action_route_at(canal_controller_action_at(c, 1), 0)), "api/items");
    assert_int_equal(canal_action_route_count(make), 2);
    assert_string_equal(canal_route_method(canal_action_route_at(make, 1)), "PUT");
    assert_string_equal(canal_route_template(canal_action_route_at(make, 0)), "api/items/[x]"); /* [[x]] is text, kept as written */
    const canal_action_t *index = canal_controller_action_at(canal_mvc_controller_at(mvc, 1), 0);
    assert_int_equal(canal_action_route_count(index), 3); /* Home/Index/{id?}, Home, / */

    /* link generation by controller and action, and by route name */
    assert_int_equal(canal_mvc_link(mvc, "items", "GET", (canal_kv_t[]){{"id", "7"}, {"q", "a b"}}, 2, url, sizeof(url)), 24);
    assert_string_equal(url, "/api/items/get/7?q=a%20b");
    assert_int_equal(canal_router_link(canal_app_router(app), "item", (canal_kv_t[]){{"id", "8"}}, 1, url, sizeof(url)), 16);
    assert_int_equal(canal_mvc_link(mvc, "items", "Get", (canal_kv_t[]){{"id", "x"}}, 1, url, sizeof(url)), CANAL_EINVAL);
    assert_int_equal(canal_mvc_link(mvc, "Nope", "Get", NULL, 0, url, sizeof(url)), CANAL_ENOTFOUND);
    canal_mvc_link(mvc, "Home", "Index", NULL, 0, url, sizeof(url));
    assert_string_equal(url, "/home/index");
    app_run(app);

    static const struct {
        const char *path;
        int status;
        const char *body;
    } cases[] = {
        {"/", 200, "Index"},           {"/home", 200, "Index"},         {"/HOME/index", 200, "Index"},
        {"/home/index/3", 200, "Index"}, {"/home/about", 200, "About"},  {"/home/about/x", 200, "About"},
        {"/other/list", 200, "List"},  {"/other", 404, NULL},           {"/nope/list", 404, NULL},
        {"/api/items", 200, "List"},   {"/api/items/get/4", 200, "Get"}, {"/api/items/get/x", 404, NULL},
        {"/abs/items", 200, "Get"},    {"/api/items/[x]", 405, NULL},   {"/items/list", 404, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct reply r;
        get(cases[i].path, &r);
        if (r.status != cases[i].status || (cases[i].body && strcmp(r.body, cases[i].body) != 0))
            fail_msg("%s: %d %s", cases[i].path, r.status, r.body);
    }
    struct reply r;
    request("PUT /api/items/%5Bx%5D HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "Make");
    app_finish(&app, &mvc);
}

/* canal_mvc_lowercase_urls(mvc, 0): the names stay as written in the templates (and so in the
 * document and the metrics labels); matching is case-insensitive either way. */
static void names_as_written(void **state)
{
    canal_error_info_t err;
    char url[128];
    start_app();
    canal_mvc_lowercase_urls(mvc, 0);
    static const canal_action_def_t items[] = {
        {.name = "GetOne", .routes = {"[action]/{id:int}"}, .handler = ok_text},
        {.name = "List", .handler = ok_text},
        {.name = NULL},
    };
    static const canal_action_def_t home[] = {{.name = "Index", .handler = ok_text}, {.name = NULL}};
    canal_controller_def_t c1 = {.name = "Items", .prefix = "api/[controller]", .actions = items};
    canal_controller_def_t c2 = {.name = "Home", .actions = home};
    assert_int_equal(canal_mvc_map_route(mvc, "{controller=Home}/{action=Index}", &err), 0);
    assert_int_equal(canal_mvc_add_controller(mvc, &c1, NULL, &err), 0);
    assert_int_equal(canal_mvc_add_controller(mvc, &c2, NULL, &err), 0);
    const canal_controller_t *c = canal_mvc_controller_at(mvc, 0);
    assert_string_equal(canal_route_template(canal_action_route_at(canal_controller_action_at(c, 0), 0)),
                        "api/Items/GetOne/{id:int}");
    assert_string_equal(canal_route_template(canal_action_route_at(canal_controller_action_at(c, 1), 0)), "api/Items");
    const canal_action_t *index = canal_controller_action_at(canal_mvc_controller_at(mvc, 1), 0);
    assert_string_equal(canal_route_template(canal_action_route_at(index, 0)), "Home/Index");
    canal_mvc_link(mvc, "Home", "Index", NULL, 0, url, sizeof(url));
    assert_string_equal(url, "/Home/Index");
    app_run(app);
    const char *paths[] = {"/api/items/getone/4", "/API/Items/GetOne/4", "/home/index", "/Home/Index", "/"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        struct reply r;
        get(paths[i], &r);
        if (r.status != 200)
            fail_msg("%s: %d %s", paths[i], r.status, r.body);
    }
    app_finish(&app, &mvc);
}

/* ---- binding ---- */

/* Answers the bound args as JSON, walking the action's schema: "-" for an absent field. */
static int show(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const canal_schema_t *schema = canal_action_def(canal_ctx_action(ctx))->args;
    json_t *out = json_object();
    for (const canal_field_t *f = schema->fields; f->name != NULL; f++) {
        const char *at = (const char *)args + f->offset;
        json_t *v;
        if (f->present && !*(const bool *)((const char *)args + f->present - 1)) {
            v = json_string("-");
        } else {
            switch (f->type) {
            case CANAL_TYPE_INT32: v = json_integer(*(const int32_t *)at); break;
            case CANAL_TYPE_INT64: v = json_integer(*(const int64_t *)at); break;
            case CANAL_TYPE_DOUBLE: v = json_real(*(const double *)at); break;
            case CANAL_TYPE_BOOL: v = json_boolean(*(const bool *)at); break;
            case CANAL_TYPE_ENUM: v = json_integer(*(const int *)at); break;
            case CANAL_TYPE_JSON: v = *(json_t *const *)at ? json_incref(*(json_t *const *)at) : json_string("-"); break;
            case CANAL_TYPE_CSTRING: v = *(const char *const *)at ? json_string(*(const char *const *)at) : json_string("-"); break;
            default: {
                const canal_str_t *str = (const canal_str_t *)at;
                v = str->base ? json_stringn(str->base, str->len) : json_string("-");
            }
            }
        }
        json_object_set_new(out, f->name, v);
    }
    return canal_res_json_new(req, 200, out);
}

static const char *const colours[] = {"red", "green", NULL};

typedef struct {
    int32_t r, i, xh;
    int64_t l;
    double d;
    bool b, has_i, has_d, has_b, has_xh;
    canal_str_t s, p, c, need;
} q_args_t;
#define Q(m) CANAL_FIELD(q_args_t, m)
static const canal_field_t q_fields[] = {
    {.name = "r", Q(r), .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "i", Q(i), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT32, CANAL_MIN(-5), CANAL_MAX(5),
     CANAL_PRESENT(q_args_t, has_i)},
    {.name = "l", Q(l), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT64, .def = "-9000000000"},
    {.name = "d", Q(d), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_DOUBLE, CANAL_MAX(2.5),
     CANAL_PRESENT(q_args_t, has_d)},
    {.name = "b", Q(b), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_BOOL, CANAL_PRESENT(q_args_t, has_b)},
    {.name = "s", Q(s), .source = CANAL_FROM_QUERY, .min_length = 2, .max_length = 4},
    {.name = "p", Q(p), .source = CANAL_FROM_QUERY, .pattern = "[a-z]+[0-9]?"},
    {.name = "c", Q(c), .source = CANAL_FROM_QUERY, .allowed = colours},
    {.name = "x-h", Q(xh), .source = CANAL_FROM_HEADER, .type = CANAL_TYPE_INT32, CANAL_PRESENT(q_args_t, has_xh)},
    {.name = "need", Q(need), .source = CANAL_FROM_QUERY, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t q_args = {.name = "QArgs", .size = sizeof(q_args_t), .fields = q_fields};

typedef struct {
    int32_t n;
    canal_str_t t;
    double f;
    bool has_f;
    json_t *o;
} b_args_t;
#define BA(m) CANAL_FIELD(b_args_t, m)
static const canal_field_t b_fields[] = {
    {.name = "n", BA(n), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "t", BA(t), .type = CANAL_TYPE_STRING, .def = "dflt"},
    {.name = "f", BA(f), .type = CANAL_TYPE_DOUBLE, .flags = CANAL_NULLABLE, CANAL_PRESENT(b_args_t, has_f)},
    {.name = "o", BA(o), .type = CANAL_TYPE_JSON},
    {.name = NULL}};
static const canal_schema_t b_args = {.name = "BArgs", .size = sizeof(b_args_t), .fields = b_fields};

typedef struct {
    json_t *all;
} w_args_t;
static const canal_field_t w_fields[] = {
    {.name = "all", CANAL_FIELD(w_args_t, all), .source = CANAL_FROM_BODY_WHOLE, .type = CANAL_TYPE_JSON},
    {.name = NULL}};
static const canal_schema_t w_args = {.name = "WArgs", .size = sizeof(w_args_t), .fields = w_fields};

static const canal_action_def_t bind_actions[] = {
    {.name = "Q", .routes = {"q/{r:int}"}, .handler = show, .args = &q_args},
    {.name = "B", .methods = "POST", .routes = {"b"}, .handler = show, .args = &b_args},
    {.name = "W", .methods = "POST", .routes = {"w"}, .handler = show, .args = &w_args},
    {.name = NULL},
};

static void post_json(const char *path, const char *ctype, const char *body, struct reply *r)
{
    char raw[2048];
    snprintf(raw, sizeof(raw), "POST %s HTTP/1.1\r\nHost: t\r\n%s%s%sContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
             path, ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "", strlen(body), body);
    request(raw, r);
}

static void binding(void **state)
{
    canal_error_info_t err;
    start_app();
    canal_controller_def_t c = {.name = "Bind", .actions = bind_actions};
    assert_int_equal(canal_mvc_add_controller(mvc, &c, NULL, &err), 0);
    app_run(app);
    static const struct {
        const char *path;
        int status;
        const char *body; /* the whole body (200) or a piece of it (400) */
    } cases[] = {
        {"/q/1?need=y", 200,
         "{\"r\":1,\"i\":\"-\",\"l\":-9000000000,\"d\":\"-\",\"b\":\"-\",\"s\":\"-\",\"p\":\"-\",\"c\":\"-\",\"x-h\":\"-\",\"need\":\"y\"}"},
        {"/q/-2?need=&i=-5&l=9223372036854775807&d=-1e3&b=TRUE&s=ab&p=abc1&c=green", 200,
         "{\"r\":-2,\"i\":-5,\"l\":9223372036854775807,\"d\":-1000.0,\"b\":true,\"s\":\"ab\",\"p\":\"abc1\",\"c\":\"green\",\"x-h\":\"-\",\"need\":\"\"}"},
        {"/q/1", 400, "\"errors\":{\"need\":[\"The need field is required.\"]}"},
        {"/q/1?need=&i=6", 400, "\"i\":[\"The field i must be between -5 and 5.\"]"},
        {"/q/1?need=&i=%2B1", 400, "\"i\":[\"The value '+1' is not valid for i.\"]"},
        {"/q/1?need=&i=+1", 400, "\"i\":[\"The value ' 1' is not valid for i.\"]"},
        {"/q/1?need=&i=2147483648", 400, "\"i\":[\"The value '2147483648' is not valid for i.\"]"},
        {"/q/1?need=&l=9223372036854775808", 400, "\"l\":[\"The value '9223372036854775808' is not valid for l.\"]"},
        {"/q/1?need=&d=2.51", 400, "\"d\":[\"The field d must be at most 2.5.\"]"},
        {"/q/1?need=&d=nan", 400, "\"d\":[\"The value 'nan' is not valid for d.\"]"},
        {"/q/1?need=&b=1", 400, "\"b\":[\"The value '1' is not valid for b.\"]"},
        {"/q/1?need=&s=a", 400, "\"s\":[\"The field s must be a string with a minimum length of 2 and a maximum length of 4.\"]"},
        {"/q/1?need=&s=%C3%A9%C3%A9%C3%A9%C3%A9", 200, NULL}, /* 4 characters, 8 bytes */
        {"/q/1?need=&p=ABC", 400, "\"p\":[\"The field p must match the regular expression '[a-z]+[0-9]?'.\"]"},
        {"/q/1?need=&p=abc12", 400, "must match"},
        {"/q/1?need=&c=blue", 400, "\"c\":[\"The field c must be one of: red, green.\"]"},
        {"/q/1?need=&c=red&c=red", 400, "\"c\":[\"The c field must be given once.\"]"},
        /* strings are well-formed UTF-8, or a 400 that does not quote them */
        {"/q/1?need=%C0%AF", 400, "\"need\":[\"The field need must be valid UTF-8.\"]"},
        {"/q/1?need=%ED%A0%80", 400, "\"need\":[\"The field need must be valid UTF-8.\"]"},
        {"/q/1?need=%F4%90%80%80", 400, "must be valid UTF-8"},
        {"/q/1?need=ab%E2%82", 400, "must be valid UTF-8"},
        {"/q/1?need=%E2%82%AC", 200, NULL},
        {"/q/1?need=&s=%80%80%80", 400, "\"s\":[\"The field s must be valid UTF-8.\"]"},
        /* a quoted value is JSON without markup: < > & as \u escapes */
        {"/q/1?need=&i=%3Cb%3E%26", 400, "\"i\":[\"The value '\\u003cb\\u003e\\u0026' is not valid for i.\"]"},
        {"/q/1?need=&i=9&b=x", 400, "\"errors\":{\"i\":[\"The field i must be between -5 and 5.\"],\"b\":[\"The value 'x' is not valid for b.\"]}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct reply r;
        get(cases[i].path, &r);
        int good = r.status == cases[i].status;
        if (cases[i].body != NULL)
            good &= cases[i].status == 200 ? strcmp(r.body, cases[i].body) == 0 : strstr(r.body, cases[i].body) != NULL;
        if (good && r.status == 400)
            good = strstr(r.head, "content-type: application/problem+json") != NULL &&
                   strncmp(r.body, "{\"type\":\"https://tools.ietf.org/html/rfc9110#section-15.5.1\",\"title\":\"One or more validation errors occurred.\",\"status\":400,\"errors\":{", 132) == 0;
        if (!good)
            fail_msg("%s: %d %s", cases[i].path, r.status, r.body);
    }
    struct reply r;
    request("GET /q/3?need=1 HTTP/1.1\r\nHost: t\r\nX-H: 12\r\nConnection: close\r\n\r\n", &r);
    assert_non_null(strstr(r.body, "\"x-h\":12"));
    request("GET /q/3?need=1 HTTP/1.1\r\nHost: t\r\nX-H: twelve\r\nConnection: close\r\n\r\n", &r);
    assert_non_null(strstr(r.body, "\"x-h\":[\"The value 'twelve' is not valid for x-h.\"]"));

    static const struct {
        const char *ctype, *body;
        int status;
        const char *says;
    } bodies[] = {
        {"application/json", "{\"n\":5,\"f\":1,\"o\":[1,{\"a\":null}]}", 200,
         "{\"n\":5,\"t\":\"dflt\",\"f\":1.0,\"o\":[1,{\"a\":null}]}"},
        {"application/json; charset=utf-8", "{\"n\":-1,\"t\":\"x\",\"f\":null}", 200, "\"t\":\"x\",\"f\":\"-\""},
        {"application/json", "{\"t\":\"x\"}", 400, "\"/n\":[\"The n field is required.\"]"},
        {"application/json", "{\"n\":\"5\"}", 400, "\"/n\":[\"The value for n must be a 32-bit integer.\"]"},
        {"application/json", "{\"n\":5,\"t\":7}", 400, "\"/t\":[\"The value for t must be a string.\"]"},
        {"application/json", "{\"n\":null}", 400, "\"/n\":[\"The value for n must be a 32-bit integer.\"]"},
        {"application/json", "{\"n\":4294967296}", 400, "must be a 32-bit integer"},
        {"application/json", "[1,2]", 400, "\"$body\":[\"The JSON body must be an object.\"]"},
        {"application/json", "{\"n\":", 400, "\"$body\":[\"The JSON body is malformed:"},
        {"text/plain", "{\"n\":1}", 415, "\"detail\":\"the request body must be application/json\""},
        {NULL, "{\"n\":1}", 415, "\"status\":415"},
        {"application/json", "{\"n\":1,\"t\":\"a\\u0000b\"}", 400, "a string with \\\\u0000 (NUL) in it"},
        {"application/json", "", 400, "\"/n\":[\"The n field is required.\"]"},
    };
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        post_json("/b", bodies[i].ctype, bodies[i].body, &r);
        int good = r.status == bodies[i].status &&
                   (bodies[i].status == 200 && bodies[i].says[0] == '{' ? strcmp(r.body, bodies[i].says) == 0
                                                                        : strstr(r.body, bodies[i].says) != NULL);
        if (!good)
            fail_msg("body %zu: %d %s", i, r.status, r.body);
    }
    /* the whole body, any JSON value */
    post_json("/w", "application/json", "[1,{\"a\":null}]", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"all\":[1,{\"a\":null}]}");
    post_json("/w", "application/json", "", &r);
    assert_string_equal(r.body, "{\"all\":\"-\"}");
    app_finish(&app, &mvc);
}

/* ---- filters and results ---- */

static char trace[256];
/* The main thread resets the trace and workers write it; TCP orders them in reality, but
 * ThreadSanitizer does not see through sockets, so a lock says it. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

static void trace_add(const char *a, const char *b)
{
    pthread_mutex_lock(&trace_lock);
    strcat(trace, a);
    strcat(trace, b);
    strcat(trace, " ");
    pthread_mutex_unlock(&trace_lock);
}

static void trace_reset(void)
{
    pthread_mutex_lock(&trace_lock);
    trace[0] = '\0';
    pthread_mutex_unlock(&trace_lock);
}

/* Requests are served one at a time by one worker thread, so a plain buffer will do. */
static int trace_before(canal_ctx_t *ctx, void *data)
{
    trace_add("b:", data);
    /* the auth filter: no X-User header, 401 and stop */
    if (strcmp(data, "ctrl") == 0 && canal_req_header(canal_ctx_req(ctx), "x-user").base == NULL) {
        canal_res_problem(canal_ctx_req(ctx), 401, "who are you?");
        return 1;
    }
    return 0;
}

static int trace_after(canal_ctx_t *ctx, void *data)
{
    trace_add("a:", data);
    if (strcmp(data, "app") == 0) {
        pthread_mutex_lock(&trace_lock);
        canal_res_header(canal_ctx_req(ctx), "x-trace", trace);
        pthread_mutex_unlock(&trace_lock);
    }
    return 0;
}

static int act(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    trace_add("action", "");
    return canal_res_text(req, 200, "done");
}

typedef struct {
    canal_str_t kind;
} res_args_t;
static const canal_field_t res_fields[] = {
    {.name = "kind", CANAL_FIELD(res_args_t, kind), .source = CANAL_FROM_ROUTE, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t res_args = {.name = "ResArgs", .size = sizeof(res_args_t), .fields = res_fields};

typedef struct {
    int32_t id;
} created_t;
static const canal_field_t created_fields[] = {
    {.name = "id", CANAL_FIELD(created_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED}, {.name = NULL}};
static const canal_schema_t created_schema = {.name = "Created", .size = sizeof(created_t), .fields = created_fields};

static int results(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_str_t kind = ((const res_args_t *)args)->kind;
    canal_res_header(req, "x-kind", canal_req_printf(req, "%.*s", (int)kind.len, kind.base));
    if (kind.len == 7 && memcmp(kind.base, "created", 7) == 0)
        return canal_ctx_created(ctx, NULL, "Act", NULL, 0, &created_schema, &(created_t){9});
    if (kind.len == 8 && memcmp(kind.base, "redirect", 8) == 0)
        return canal_res_redirect(req, 303, "/elsewhere");
    if (kind.len == 6 && memcmp(kind.base, "status", 6) == 0)
        return canal_res_status(req, 202);
    if (kind.len == 8 && memcmp(kind.base, "notfound", 8) == 0)
        return canal_res_problem(req, 404, "nothing here");
    if (kind.len == 4 && memcmp(kind.base, "fail", 4) == 0)
        return canal_req_fail(req, "it <broke>");
    if (kind.len == 7 && memcmp(kind.base, "nothing", 7) == 0)
        return 0;
    canal_res_text(req, 500, "overwritten");
    return canal_res_json_new(req, 200, json_pack("[i,s]", 1, "two"));
}

static void filters_and_results(void **state)
{
    canal_error_info_t err;
    struct reply r;
    start_app();
    canal_filter_t app_filter = {.before = trace_before, .after = trace_after, .data = "app"};
    assert_int_equal(canal_mvc_filter(mvc, &app_filter), 0);
    static const canal_action_def_t actions[] = {
        {.name = "Act", .routes = {"act"}, .handler = act, .filters = {{.before = trace_before, .after = trace_after, .data = "action"}}},
        {.name = "Res", .routes = {"res/{kind}"}, .handler = results,
         .args = &res_args},
        {.name = NULL},
    };
    canal_controller_def_t c = {.name = "F", .filters = {{.before = trace_before, .after = trace_after, .data = "ctrl"}}, .actions = actions};
    assert_int_equal(canal_mvc_add_controller(mvc, &c, NULL, &err), 0);
    app_run(app);

    trace_reset();
    request("GET /act HTTP/1.1\r\nHost: t\r\nX-User: me\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(trace, "b:app b:ctrl b:action action a:action a:ctrl a:app ");
    assert_non_null(strstr(r.head, "x-trace: b:app b:ctrl b:action action a:action a:ctrl a:app"));

    trace_reset();
    get("/act", &r); /* no X-User: the controller filter answers 401; the action never runs */
    assert_int_equal(r.status, 401);
    assert_string_equal(trace, "b:app b:ctrl a:ctrl a:app ");
    assert_non_null(strstr(r.body, "\"detail\":\"who are you?\""));
    assert_non_null(strstr(r.head, "x-trace: "));

    static const struct {
        const char *kind;
        int status;
        const char *head, *body;
    } cases[] = {
        {"created", 201, "location: /act", "{\"id\":9}"},
        {"redirect", 303, "location: /elsewhere", ""},
        {"status", 202, "x-kind: status", ""},
        {"notfound", 404, "application/problem+json", "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,\"detail\":\"nothing here\"}"},
        {"json", 200, "content-type: application/json", "[1,\"two\"]"},
        {"fail", 500, "text/html", NULL},
        {"nothing", 500, "text/html", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/res/%s", cases[i].kind);
        char raw[256];
        trace_reset();
        snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: t\r\nX-User: me\r\nConnection: close\r\n\r\n", path);
        request(raw, &r);
        if (r.status != cases[i].status || strstr(r.head, cases[i].head) == NULL ||
            (cases[i].body && strcmp(r.body, cases[i].body) != 0))
            fail_msg("%s: %d\n%s\n%s", cases[i].kind, r.status, r.head, r.body);
    }
    /* the developer page names the controller and the action, escaped */
    trace_reset();
    request("GET /res/fail HTTP/1.1\r\nHost: t\r\nX-User: me\r\nConnection: close\r\n\r\n", &r);
    assert_non_null(strstr(r.body, "it &lt;broke&gt;"));
    assert_non_null(strstr(r.body, "<th>controller</th><td>F</td>"));
    assert_non_null(strstr(r.body, "<th>action</th><td>Res</td>"));
    app_finish(&app, &mvc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registration_errors),
        cmocka_unit_test(tokens_and_conventional),
        cmocka_unit_test(names_as_written),
        cmocka_unit_test(binding),
        cmocka_unit_test(filters_and_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
