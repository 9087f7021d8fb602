/* SPDX-License-Identifier: MIT */
/*
 * canal-openapiapp: an app with every kind of route and declaration that OpenAPI describes,
 * for test/e2e/openapi.sh: each constraint, optional parameters, defaults, catch-alls, escaped
 * braces, a method OpenAPI has no field for, and (--mode controller) controllers with route,
 * query, header and body parameters, rules, allowed values, summaries and statuses, and a
 * WebSocket route.
 *
 *   canal-openapiapp [--mode router|controller] [--routes] [canal's flags]
 *
 * It serves its document at /openapi.json; --routes prints the route table and exits.
 * Handlers answer with the template that matched, so a test can send the document's example
 * paths back to the server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>

static int route_handler(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, canal_route_template(canal_req_route(req)));
}

static int action(canal_ctx_t *ctx, canal_req_t *req)
{
    return canal_res_text(req, 200, canal_route_template(canal_req_route(req)));
}

static const char *const sorts[] = {"asc", "desc", NULL};
static const char *const sizes[] = {"10", "20", "50", NULL};

static const canal_action_def_t shop_actions[] = {
    {.name = "List",
     .handler = action,
     .summary = "Search the products",
     .description = "Every product whose name contains *q*.",
     .params = {{.name = "q", .source = CANAL_FROM_QUERY, .max_length = 50,
                 .pattern = "[a-z ]*", .description = "words of the name"},
                {.name = "page", .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT32, .def = "1",
                 .min = "1"},
                {.name = "size", .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT32,
                 .allowed = sizes},
                {.name = "sort", .source = CANAL_FROM_QUERY, .allowed = sorts},
                {.name = "X-Request-Id", .source = CANAL_FROM_HEADER, .required = 1,
                 .min_length = 8}},
     .produces = {200, 400}},
    {.name = "Get",
     .routes = {"{id}"},
     .route_name = "product",
     .handler = action,
     .params = {{.name = "id", .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT64,
                 .required = 1, .min = "1"}},
     .summary = "One product",
     .produces = {200, 404}},
    {.name = "Create",
     .methods = "POST",
     .handler = action,
     .params = {{.name = "name", .source = CANAL_FROM_BODY, .required = 1, .min_length = 1,
                 .max_length = 100},
                {.name = "price", .source = CANAL_FROM_BODY, .type = CANAL_TYPE_DOUBLE,
                 .required = 1, .min = "0"},
                {.name = "public", .source = CANAL_FROM_BODY, .type = CANAL_TYPE_BOOL,
                 .def = "true"},
                {.name = "tags", .source = CANAL_FROM_BODY, .type = CANAL_TYPE_JSON}},
     .produces = {201, 400}},
    {.name = "Replace",
     .methods = "PUT",
     .routes = {"{id:long}"},
     .handler = action,
     .params = {{.name = "id", .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT64,
                 .required = 1},
                {.name = "product", .source = CANAL_FROM_BODY_WHOLE, .type = CANAL_TYPE_JSON,
                 .required = 1, .description = "the whole product"}},
     .produces = {204, 400, 404}},
    {.name = "Export",
     .routes = {"export/{format:regex(^(csv|tsv)$)}"},
     .handler = action,
     .content_type = "text/csv",
     .produces = {200, 303}},
    {.name = NULL},
};

static const canal_action_def_t home_actions[] = {
    {.name = "Index", .handler = action, .summary = "The home page",
     .params = {{.name = "id", .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32}}},
    {.name = "About", .handler = action},
    {.name = NULL},
};

static int controller_mode(canal_mvc_t *mvc, canal_error_info_t *err)
{
    static const canal_controller_def_t shop = {.name = "Shop", .prefix = "api/[controller]",
                                                .actions = shop_actions};
    static const canal_controller_def_t home = {.name = "Home", .actions = home_actions};
    int rc;
    if ((rc = canal_mvc_map_route(mvc, "{controller=Home}/{action=Index}/{id?}", err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &shop, NULL, err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &home, NULL, err)) != 0)
        return rc;
    return 0;
}

static int router_mode(canal_app_t *app, canal_error_info_t *err)
{
    static const struct {
        const char *method, *tmpl, *name;
    } routes[] = {
        {"GET", "", "root"},
        {"GET", "items/{id:int:range(1,1000)}", "item"},
        {"POST", "items", NULL},
        {"PUT", "items/{id:long:min(1)}", NULL},
        {"DELETE", "items/{id:long:max(99999)}", NULL},
        {"PATCH", "items/{id:int}", NULL},
        {"GET", "users/{name:alpha:length(2,20)}", NULL},
        {"GET", "nick/{nick:minlength(3):maxlength(12)}", NULL},
        {"GET", "codes/{code:length(4)}", NULL},
        {"GET", "files/{*path}", NULL},
        {"GET", "raw/{**path}", NULL},
        {"GET", "posts/{year:int:min(2000)}/{slug:regex(^[a-z0-9-]+$)}", NULL},
        {"GET", "flags/{on:bool}/{ratio:double}", NULL},
        {"GET", "guids/{g:guid}", NULL},
        {"GET", "pages/{page=1}", NULL},
        {"GET", "archive/{year:int?}", NULL},
        {"GET", "braces/{{literal}}/{x}", NULL},
        {"GET", "twice/{a:regex(^a):regex(b$)}", NULL},
        {"PURGE", "cache", NULL},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        int rc = canal_app_route(app, &(canal_endpoint_spec_t){.method = routes[i].method, .tmpl = routes[i].tmpl, .name = routes[i].name, .handler = route_handler}, NULL, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    const char *mode = "router";
    int list = 0;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1; /* --mode, --routes: below */
    if (canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        if (err.code != CANAL_EHELP)
            fprintf(stderr, "canal-openapiapp: %s\n", err.message);
        fprintf(err.code == CANAL_EHELP ? stdout : stderr,
                "usage: canal-openapiapp [--mode router|controller] [--routes]\n%s", canal_config_usage());
        return err.code == CANAL_EHELP ? 0 : 2;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strcmp(argv[i], "--routes") == 0) {
            list = 1;
        } else {
            fprintf(stderr, "usage: canal-openapiapp [--mode router|controller] [--routes]\n%s",
                    canal_config_usage());
            return 2;
        }
    }
    canal_app_t *app = canal_app_create(&cfg);
    canal_mvc_t *mvc = strcmp(mode, "controller") == 0 ? canal_mvc_create(app) : NULL;
    int rc = mvc ? controller_mode(mvc, &err) : router_mode(app, &err);
    /* a WebSocket route, in both modes: a GET marked x-websocket with its 101 and 400/405/426 */
    if (rc == 0)
        rc = canal_app_ws(app, &(canal_ws_spec_t){.tmpl = "/ws/rooms/{room:alpha}"}, NULL, &err);
    if (rc != 0) {
        fprintf(stderr, "canal-openapiapp: %s\n", err.message);
        return 1;
    }
    canal_openapi_info_t info = {.title = "kitchen sink", .version = "1.2.3",
                                 .server_url = "/"};
    json_t *doc = mvc ? canal_mvc_openapi(mvc, &info) : canal_openapi_build(app, &info, NULL, NULL);
    if ((rc = canal_app_openapi(app, "/openapi.json", doc, &err)) != 0) {
        fprintf(stderr, "canal-openapiapp: %s\n", err.message);
        return 1;
    }
    if (list) {
        char buf[8192];
        size_t n = canal_router_list(canal_app_router(app), buf, sizeof(buf));
        fputs(buf, stdout);
        rc = n < sizeof(buf) ? 0 : 1;
    } else if ((rc = canal_app_start(app)) == 0) {
        fprintf(stderr, "listening on http://%s:%u\n", canal_app_config(app)->host,
                canal_app_port(app, 0));
        rc = canal_app_wait(app);
    }
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    return rc == 0 ? 0 : 1;
}
