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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>

static int route_handler(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, canal_route_template(canal_req_route(req)));
}

static int action(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_text(req, 200, canal_route_template(canal_req_route(req)));
}

static const char *const sorts[] = {"asc", "desc", NULL};
static const char *const sizes[] = {"10", "20", "50", NULL};

/* Each action's arguments: the structs are never read (the handlers answer with the template),
 * the schemas are what the document describes. */
typedef struct {
    canal_str_t q, sort, request_id;
    int32_t page;
    int sizes_at; /* an enum: the index of the size in sizes */
    bool has_size;
} list_args_t;
static const canal_field_t list_fields[] = {
    {.name = "q", CANAL_FIELD(list_args_t, q), .source = CANAL_FROM_QUERY, .max_length = 50, .pattern = "[a-z ]*",
     .description = "words of the name"},
    {.name = "page", CANAL_FIELD(list_args_t, page), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT32,
     .def = "1", CANAL_MIN(1)},
    {.name = "size", CANAL_FIELD(list_args_t, sizes_at), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_ENUM,
     .allowed = sizes, CANAL_PRESENT(list_args_t, has_size)},
    {.name = "sort", CANAL_FIELD(list_args_t, sort), .source = CANAL_FROM_QUERY, .allowed = sorts},
    {.name = "X-Request-Id", CANAL_FIELD(list_args_t, request_id), .source = CANAL_FROM_HEADER,
     .flags = CANAL_REQUIRED, .min_length = 8},
    {.name = NULL}};
static const canal_schema_t list_args = {.name = "ListArgs", .size = sizeof(list_args_t), .fields = list_fields};

typedef struct {
    int64_t id;
} id_args_t;
static const canal_field_t get_fields[] = {
    {.name = "id", CANAL_FIELD(id_args_t, id), .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT64,
     .flags = CANAL_REQUIRED, CANAL_MIN(1)},
    {.name = NULL}};
static const canal_schema_t get_args = {.name = "GetArgs", .size = sizeof(id_args_t), .fields = get_fields};

/* a product: the body of Create, the answer of Get and the body of Replace */
typedef struct {
    const char *name;
    double price;
    bool public;
    const char **tags;
    size_t ntags;
} product_t;
static const canal_field_t product_fields[] = {
    {.name = "name", CANAL_FIELD(product_t, name), .type = CANAL_TYPE_CSTRING, .flags = CANAL_REQUIRED,
     .min_length = 1, .max_length = 100, .example = "\"kettle\""},
    {.name = "price", CANAL_FIELD(product_t, price), .type = CANAL_TYPE_DOUBLE, .flags = CANAL_REQUIRED,
     CANAL_MIN(0)},
    {.name = "public", CANAL_FIELD(product_t, public), .type = CANAL_TYPE_BOOL, .def = "true"},
    {.name = "tags", CANAL_FIELD(product_t, tags), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_CSTRING,
     CANAL_COUNT(product_t, ntags), .max_items = 10, .max_length = 20},
    {.name = NULL}};
static const canal_schema_t product = {.name = "Product", .size = sizeof(product_t), .fields = product_fields,
                                       .description = "A product of the shop."};

typedef struct {
    int64_t id;
    product_t product;
} replace_args_t;
static const canal_field_t replace_fields[] = {
    {.name = "id", CANAL_FIELD(replace_args_t, id), .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT64,
     .flags = CANAL_REQUIRED},
    {.name = "product", CANAL_FIELD(replace_args_t, product), .source = CANAL_FROM_BODY_WHOLE,
     .type = CANAL_TYPE_OBJECT, .schema = &product, .flags = CANAL_REQUIRED, .description = "the whole product"},
    {.name = NULL}};
static const canal_schema_t replace_args = {.name = "ReplaceArgs", .size = sizeof(replace_args_t),
                                            .fields = replace_fields};

typedef struct {
    int32_t id;
    bool has_id;
} index_args_t;
static const canal_field_t index_fields[] = {
    {.name = "id", CANAL_FIELD(index_args_t, id), .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32,
     CANAL_PRESENT(index_args_t, has_id)},
    {.name = NULL}};
static const canal_schema_t index_args = {.name = "IndexArgs", .size = sizeof(index_args_t), .fields = index_fields};

static const canal_action_def_t shop_actions[] = {
    {.name = "List", .handler = action, .args = &list_args,
     .options = {CANAL_DOC(.summary = "Search the products",
                           .description = "Every product whose name contains *q*.",
                           .responses = {{.status = 200, .schema = &product, .array = 1}, {.status = 400}})}},
    {.name = "Get", .routes = {"{id}"}, .route_name = "product", .handler = action, .args = &get_args,
     .options = {CANAL_DOC(.summary = "One product",
                           .responses = {{.status = 200, .schema = &product}, {.status = 404}})}},
    {.name = "Create", .methods = "POST", .handler = action, .args = &product,
     .options = {CANAL_DOC(.responses = {{.status = 201, .schema = &product}, {.status = 400}})}},
    {.name = "Replace", .methods = "PUT", .routes = {"{id:long}"}, .handler = action, .args = &replace_args,
     .options = {CANAL_DOC(.responses = {{.status = 204}, {.status = 400}, {.status = 404}})}},
    {.name = "Export", .routes = {"export/{format:regex(^(csv|tsv)$)}"}, .handler = action,
     .options = {CANAL_DOC(.responses = {{.status = 200, .content_type = "text/csv"}, {.status = 303}})}},
    {.name = NULL},
};

static const canal_action_def_t home_actions[] = {
    {.name = "Index", .handler = action, .args = &index_args,
     .options = {CANAL_DOC(.summary = "The home page")}},
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
