/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of route introspection (canal_route_segment(), canal_route_param_info(),
 * canal_route_param_constraint()) and of the OpenAPI documents: canal_openapi_build() from
 * routes, canal_mvc_openapi() from declarations, the callback's choices, what is left out, and
 * the errors of canal_app_openapi() and canal_app_docs(). One app is served to check that the
 * document and the page answer. (test/e2e/openapi.sh validates documents with a real OpenAPI
 * validator; here the exact JSON is checked.)
 */
#include <stdbool.h>
#include "test.h"
#include <canal.h>
#include "client.h"

static const canal_route_t *add(canal_router_t *r, const char *method, const char *tmpl)
{
    const canal_route_t *route = NULL;
    canal_error_info_t err;
    canal_route_spec_t spec = {.method = method, .tmpl = tmpl};
    int rc = canal_router_add(r, &spec, &route, &err);
    if (rc != 0)
        fail_msg("%s: %s", tmpl, err.message);
    return route;
}

static void introspection(void **state)
{
    canal_router_t *r = canal_router_create(NULL);
    const canal_route_t *a =
        add(r, "GET", "/shop/{{x}}/{id:int:range(1,9)}/{tag:regex(^[a-z]+$)?}");
    canal_segment_info_t s;
    assert_int_equal(canal_route_segment_count(a), 4);
    assert_int_equal(canal_route_required_segments(a), 3);
    assert_int_equal(canal_route_segment(a, 0, &s), 0);
    assert_int_equal(s.kind, CANAL_SEGMENT_LITERAL);
    assert_string_equal(s.text, "shop");
    assert_int_equal(canal_route_segment(a, 1, &s), 0);
    assert_string_equal(s.text, "{x}"); /* unescaped */
    assert_int_equal(canal_route_segment(a, 2, &s), 0);
    assert_int_equal(s.kind, CANAL_SEGMENT_PARAM);
    assert_string_equal(s.text, "id");
    assert_int_equal(s.param, 0);
    assert_int_equal(canal_route_segment(a, 4, &s), CANAL_EINVAL);

    canal_route_param_info_t p;
    assert_int_equal(canal_route_param_info(a, 0, &p), 0);
    assert_string_equal(p.name, "id");
    assert_int_equal(p.nconstraints, 2);
    assert_int_equal(p.optional, 0);
    assert_null(p.def);
    canal_constraint_info_t c;
    assert_int_equal(canal_route_param_constraint(a, 0, 0, &c), 0);
    assert_int_equal(c.kind, CANAL_CONSTRAINT_INT);
    assert_int_equal(canal_route_param_constraint(a, 0, 1, &c), 0);
    assert_int_equal(c.kind, CANAL_CONSTRAINT_RANGE);
    assert_int_equal(c.a, 1);
    assert_int_equal(c.b, 9);
    assert_null(c.regex);
    assert_int_equal(canal_route_param_constraint(a, 0, 2, &c), CANAL_EINVAL);
    assert_int_equal(canal_route_param_info(a, 1, &p), 0);
    assert_int_equal(p.optional, 1);
    assert_int_equal(canal_route_param_constraint(a, 1, 0, &c), 0);
    assert_int_equal(c.kind, CANAL_CONSTRAINT_REGEX);
    assert_string_equal(c.regex, "^[a-z]+$");
    assert_int_equal(canal_route_param_info(a, 2, &p), CANAL_EINVAL);

    const canal_route_t *b = add(r, "GET", "files/{dir=home}/{**rest}");
    assert_int_equal(canal_route_required_segments(b), 1);
    assert_int_equal(canal_route_param_info(b, 0, &p), 0);
    assert_string_equal(p.def, "home");
    assert_int_equal(p.catch_all, 0);
    assert_int_equal(canal_route_param_info(b, 1, &p), 0);
    assert_int_equal(p.catch_all, 2);
    assert_int_equal(canal_route_segment(b, 2, &s), 0);
    assert_int_equal(s.kind, CANAL_SEGMENT_CATCHALL);
    const canal_route_t *u = add(r, "GET", "names/{name:utf8}");
    assert_int_equal(canal_route_param_constraint(u, 0, 0, &c), 0);
    assert_int_equal(c.kind, CANAL_CONSTRAINT_UTF8);
    const canal_route_t *c1 = add(r, "GET", "x/{*rest}");
    assert_int_equal(canal_route_param_info(c1, 0, &p), 0);
    assert_int_equal(p.catch_all, 1);
    const canal_route_t *root = add(r, "GET", "/");
    assert_int_equal(canal_route_segment_count(root), 0);
    assert_int_equal(canal_route_required_segments(root), 0);
    const canal_route_t *len = add(r, "GET", "l/{a:length(3)}/{b:length(2,4)}/{c:min(-5)}");
    assert_int_equal(canal_route_param_constraint(len, 0, 0, &c), 0);
    assert_int_equal(c.kind, CANAL_CONSTRAINT_LENGTH);
    assert_int_equal(c.a, 3);
    assert_int_equal(c.b, 3);
    assert_int_equal(canal_route_param_constraint(len, 1, 0, &c), 0);
    assert_int_equal(c.b, 4);
    assert_int_equal(canal_route_param_constraint(len, 2, 0, &c), 0);
    assert_int_equal(c.kind, CANAL_CONSTRAINT_MIN);
    assert_int_equal(c.a, -5);
    canal_router_destroy(r);
}

static canal_app_t *new_app(void)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    return canal_app_create(&cfg);
}

static int ok_handler(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "ok");
}

/* The object at a JSON pointer-like path of keys, or NULL. */
static json_t *at(json_t *j, const char *const *keys)
{
    for (; *keys != NULL && j != NULL; keys++)
        j = json_is_array(j) ? json_array_get(j, (size_t)atoi(*keys)) : json_object_get(j, *keys);
    return j;
}
#define AT(j, ...) at((j), (const char *const[]){__VA_ARGS__, NULL})

static int seen;
static int hook(json_t *op, const canal_route_t *route, const char *path, void *data)
{
    seen++;
    if (strcmp(path, "/hidden") == 0)
        return 1;
    if (strcmp(path, "/fail") == 0 && data != NULL)
        return -1;
    json_object_set_new(op, "summary", json_string(canal_route_template(route)));
    return 0;
}

static void from_routes(void **state)
{
    canal_app_t *app = new_app();
    canal_error_info_t err;
    static const char *const routes[][2] = {
        {"GET", "items/{id:int:range(1,1000)}"}, {"GET", "items/{id:long}"},
        {"DELETE", "items/{id:guid}"},           {"GET", "pages/{page:int=1}"},
        {"GET", "files/{*path}"},                {"GET", "hidden"},
        {"PURGE", "cache"},                      {"GET", "re/{a:regex(^a):regex(b$):alpha}"},
        {"GET", "fail"},                         {"POST", "{{b}}"},
        {"GET", "d/{x:double}/{y:bool}/{z:minlength(2):maxlength(4)}"},
        {"GET", "doc/{name:alpha}.{ext}"},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        assert_int_equal(canal_app_route(app, &(canal_endpoint_spec_t){.method = routes[i][0], .tmpl = routes[i][1], .name = i == 0 ? "item" : NULL, .handler = ok_handler}, NULL, &err), 0);
    /* a route that says what its 200 is: an event stream */
    char ctype[] = "text/event-stream";
    canal_route_doc_t about = {.summary = "Events", .description = "A stream.",
                               .responses = {{.status = 200, .content_type = ctype}}};
    canal_endpoint_spec_t events = {.tmpl = "events", .handler = ok_handler,
                                    .options = {{&canal_doc_option, &about}}};
    assert_int_equal(canal_app_route(app, &events, NULL, &err), 0);
    about.responses[0].status = 500; /* the documentation is copied (its strings are borrowed) */
    /* answers without a body: a redirect that names none, a declared one, any answer to HEAD */
    static const canal_header_def_t location[] = {{"Location", NULL}, {NULL, NULL}};
    canal_endpoint_spec_t moved = {.tmpl = "moved", .handler = ok_handler,
                                   .options = {CANAL_DOC(.responses = {{.status = 302, .headers = location},
                                                                       {.status = 200, .no_body = 1},
                                                                       {.status = 409, .no_body = 1}})}};
    assert_int_equal(canal_app_route(app, &moved, NULL, &err), 0);
    canal_endpoint_spec_t probe = {.method = "HEAD", .tmpl = "probe", .handler = ok_handler,
                                   .options = {CANAL_DOC(.responses = {{.status = 200, .content_type = "text/plain"}})}};
    assert_int_equal(canal_app_route(app, &probe, NULL, &err), 0);
    assert_int_equal(canal_app_docs(app, "/docs", "/openapi.json", "/nonexistent", &err),
                     CANAL_ENOTFOUND);
    assert_non_null(strstr(err.message, "swagger-ui-bundle.js"));

    canal_openapi_info_t info = {.title = "T", .version = "9", .description = "D",
                                 .server_url = "http://x", .license = "MIT"};
    seen = 0;
    json_t *doc = canal_openapi_build(app, &info, hook, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(AT(doc, "openapi")), "3.1.0");
    assert_string_equal(json_string_value(AT(doc, "info", "title")), "T");
    assert_string_equal(json_string_value(AT(doc, "info", "version")), "9");
    assert_string_equal(json_string_value(AT(doc, "info", "description")), "D");
    assert_string_equal(json_string_value(AT(doc, "servers", "0", "url")), "http://x");
    assert_string_equal(json_string_value(AT(doc, "info", "license", "identifier")), "MIT");
    assert_int_equal(json_array_size(AT(doc, "security")), 0);
    /* what canal and libh2o answer to any request, each described once */
    static const char *const answers[][2] = {{"400", "MalformedRequest"}, {"404", "NotFound"},
                                             {"405", "MethodNotAllowed"}, {"413", "ContentTooLarge"},
                                             {"414", "UriTooLong"}, {"431", "HeaderFieldsTooLarge"}};
    assert_int_equal(json_object_size(AT(doc, "x-canal-responses")), 6);
    for (size_t i = 0; i < 6; i++) {
        char ref[96];
        snprintf(ref, sizeof(ref), "#/components/responses/%s", answers[i][1]);
        assert_string_equal(json_string_value(AT(doc, "x-canal-responses", answers[i][0], "$ref")), ref);
        assert_non_null(AT(doc, "components", "responses", answers[i][1], "content", "application/problem+json"));
    }
    assert_true(json_is_true(AT(doc, "components", "responses", "MethodNotAllowed", "headers", "Allow", "required")));
    json_t *paths = AT(doc, "paths");
    /* the first route registered describes /items/{id}; the second is left out */
    json_t *item = AT(paths, "/items/{id}", "get");
    assert_string_equal(json_string_value(AT(item, "operationId")), "item");
    assert_string_equal(json_string_value(AT(item, "summary")), "items/{id:int:range(1,1000)}");
    json_t *schema = AT(item, "parameters", "0", "schema");
    assert_string_equal(json_string_value(AT(schema, "type")), "integer");
    assert_string_equal(json_string_value(AT(schema, "format")), "int32");
    assert_int_equal(json_integer_value(AT(schema, "minimum")), 1);
    assert_int_equal(json_integer_value(AT(schema, "maximum")), 1000);
    assert_true(json_is_true(AT(item, "parameters", "0", "required")));
    assert_string_equal(json_string_value(AT(item, "responses", "404", "$ref")),
                        "#/components/responses/NotFound");
    assert_string_equal(json_string_value(AT(paths, "/items/{id}", "delete", "parameters", "0",
                                             "schema", "format")), "uuid");
    /* a default: two paths, the default typed */
    assert_int_equal(json_integer_value(AT(paths, "/pages/{page}", "get", "parameters", "0",
                                           "schema", "default")), 1);
    assert_non_null(AT(paths, "/pages", "get"));
    assert_null(AT(paths, "/pages", "get", "parameters"));
    /* a catch-all */
    assert_true(json_is_true(AT(paths, "/files/{path}", "get", "parameters", "0",
                                "x-canal-catch-all")));
    assert_null(AT(paths, "/files/{path}", "get", "parameters", "0", "schema", "minLength"));
    assert_non_null(AT(paths, "/files", "get"));
    /* a complex segment: each parameter by its name, both described */
    assert_string_equal(json_string_value(AT(paths, "/doc/{name}.{ext}", "get", "parameters", "0", "name")), "name");
    assert_string_equal(json_string_value(AT(paths, "/doc/{name}.{ext}", "get", "parameters", "1", "name")), "ext");
    /* left out: by the callback, a method OpenAPI has no field for, canal's own /docs */
    assert_null(AT(paths, "/hidden"));
    assert_null(AT(paths, "/cache"));
    assert_null(AT(paths, "/docs"));
    /* two regexes and alpha: one pattern, the others under allOf */
    schema = AT(paths, "/re/{a}", "get", "parameters", "0", "schema");
    assert_string_equal(json_string_value(AT(schema, "pattern")), "^[aA]");
    assert_string_equal(json_string_value(AT(schema, "allOf", "0", "pattern")), "[bB]$");
    assert_string_equal(json_string_value(AT(schema, "allOf", "1", "pattern")), "^[A-Za-z]+$");
    /* braces in a literal are percent-encoded: they are not a path parameter */
    assert_string_equal(json_string_value(AT(paths, "/%7Bb%7D", "post", "operationId")),
                        "post_7Bb_7D");
    schema = AT(paths, "/d/{x}/{y}/{z}", "get", "parameters");
    assert_string_equal(json_string_value(AT(schema, "0", "schema", "type")), "number");
    assert_string_equal(json_string_value(AT(schema, "1", "schema", "type")), "boolean");
    assert_int_equal(json_integer_value(AT(schema, "2", "schema", "minLength")), 2);
    assert_int_equal(json_integer_value(AT(schema, "2", "schema", "maxLength")), 4);
    /* components */
    assert_string_equal(json_string_value(AT(doc, "components", "responses", "ValidationProblem",
                                             "content", "application/problem+json", "schema",
                                             "anyOf", "0", "$ref")),
                        "#/components/schemas/ValidationProblemDetails");
    /* where binding happens a malformed target is still the plain problem */
    assert_string_equal(json_string_value(AT(doc, "components", "responses", "ValidationProblem",
                                             "content", "application/problem+json", "schema",
                                             "anyOf", "1", "$ref")),
                        "#/components/schemas/ProblemDetails");
    /* every operation: the malformed target's 400; the spec's summary and description */
    assert_string_equal(json_string_value(AT(item, "responses", "400", "$ref")),
                        "#/components/responses/MalformedRequest");
    assert_string_equal(json_string_value(AT(paths, "/events", "get", "responses", "400", "$ref")),
                        "#/components/responses/MalformedRequest");
    assert_string_equal(json_string_value(AT(paths, "/events", "get", "summary")), "events"); /* the hook's */
    assert_string_equal(json_string_value(AT(paths, "/events", "get", "description")), "A stream.");
    /* the event stream's documented 200 replaces the "default" */
    assert_non_null(AT(paths, "/events", "get", "responses", "200", "content", "text/event-stream", "schema"));
    assert_null(AT(paths, "/events", "get", "responses", "default"));
    assert_non_null(AT(paths, "/moved", "get", "responses", "302", "headers", "Location"));
    assert_null(AT(paths, "/moved", "get", "responses", "302", "content"));
    assert_string_equal(json_string_value(AT(paths, "/moved", "get", "responses", "200", "description")), "OK");
    assert_null(AT(paths, "/moved", "get", "responses", "200", "content"));
    assert_null(AT(paths, "/moved", "get", "responses", "409", "content"));
    assert_null(AT(paths, "/moved", "get", "responses", "409", "$ref"));
    assert_non_null(AT(paths, "/probe", "head", "responses", "200"));
    assert_null(AT(paths, "/probe", "head", "responses", "200", "content"));
    assert_null(AT(item, "responses", "200"));
    assert_int_equal(seen, 15); /* the duplicate /items/{id} is not made; PURGE neither */
    json_decref(doc);

    /* a failing callback fails the build */
    assert_null(canal_openapi_build(app, NULL, hook, app));
    /* NULL info and callback */
    doc = canal_openapi_build(app, NULL, NULL, NULL);
    assert_string_equal(json_string_value(AT(doc, "info", "title")), "canal app");
    assert_null(AT(doc, "info", "license"));
    assert_string_equal(json_string_value(AT(doc, "servers", "0", "url")), "/");
    assert_string_equal(json_string_value(AT(doc, "paths", "/hidden", "get", "summary")), "GET /hidden");
    assert_string_equal(json_string_value(AT(doc, "paths", "/events", "get", "summary")), "Events");
    assert_non_null(AT(doc, "paths", "/hidden", "get"));
    assert_string_equal(json_string_value(AT(doc, "paths", "/hidden", "get", "operationId")),
                        "get_hidden");
    char *text = json_dumps(doc, JSON_INDENT(2));
    char length[64];
    snprintf(length, sizeof(length), "Content-Length: %zu\r\n", strlen(text));
    free(text);
    assert_int_equal(canal_app_openapi(app, "/openapi.json", doc, &err), 0);
    /* a failed registration keeps an app from starting: the errors on one of their own */
    canal_app_t *other = new_app();
    assert_int_equal(canal_app_openapi(other, "/other.json", NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_docs(other, "/d2", "/x\"y", "/nonexistent", &err), CANAL_EINVAL);
    assert_int_equal(canal_app_docs(other, "/d3", "/x<y>", "/nonexistent", &err), CANAL_EINVAL);
    assert_int_equal(canal_app_start(other), CANAL_EINVAL);
    canal_app_destroy(other);
    /* a documented header's name is a token */
    static const canal_header_def_t spaced[] = {{"Bad Name", NULL}, {NULL, NULL}};
    canal_endpoint_spec_t bad = {.tmpl = "/bad-header", .handler = ok_handler,
        .options = {CANAL_DOC(.responses = {{.status = 201, .headers = spaced}})}};
    other = new_app();
    assert_int_equal(canal_app_route(other, &bad, NULL, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "answer 201 documents a header named 'Bad Name'"));
    canal_app_destroy(other);

    /* served: the document, and /docs's 503 page naming the way out */
    app_run(app);
    struct reply res; /* HEAD: the document is larger than the test client's buffer */
    request("HEAD /openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &res);
    assert_int_equal(res.status, 200);
    assert_non_null(strstr(res.head, length));
    assert_non_null(strstr(res.head, "content-type: application/json"));
    get("/docs", &res);
    assert_int_equal(res.status, 503);
    assert_non_null(strstr(res.body, "make npm"));
    canal_app_destroy(app);
}

static int action(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_status(req, 204);
}

typedef struct {
    int32_t id;
    canal_str_t code, color, if_match;
    double ratio;
    bool has_id, has_ratio;
} get_args_t;

typedef struct {
    int64_t n;
    bool on, has_on;
} post_args_t;

static void from_controllers(void **state)
{
    static const char *const colors[] = {"red", "blue", NULL};
    static const canal_field_t get_fields[] = {
        {.name = "id", CANAL_FIELD(get_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
         CANAL_MIN(1), CANAL_MAX(99), CANAL_PRESENT(get_args_t, has_id), .description = "the id"},
        {.name = "code", CANAL_FIELD(get_args_t, code), .source = CANAL_FROM_ROUTE, .pattern = "[[:upper:]]+"},
        {.name = "color", CANAL_FIELD(get_args_t, color), .source = CANAL_FROM_QUERY, .allowed = colors,
         .def = "red"},
        {.name = "ratio", CANAL_FIELD(get_args_t, ratio), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_DOUBLE,
         CANAL_MIN(0.5), CANAL_PRESENT(get_args_t, has_ratio)},
        {.name = "If-Match", CANAL_FIELD(get_args_t, if_match), .source = CANAL_FROM_HEADER, .flags = CANAL_REQUIRED},
        {.name = NULL}};
    static const canal_schema_t get_args = {.name = "GetArgs", .size = sizeof(get_args_t), .fields = get_fields};
    static const canal_field_t post_fields[] = {
        {.name = "n", CANAL_FIELD(post_args_t, n), .type = CANAL_TYPE_INT64, .flags = CANAL_REQUIRED},
        {.name = "on", CANAL_FIELD(post_args_t, on), .type = CANAL_TYPE_BOOL, CANAL_PRESENT(post_args_t, has_on)},
        {.name = NULL}};
    static const canal_schema_t post_args = {.name = "PostArgs", .size = sizeof(post_args_t), .fields = post_fields};
    static const canal_header_def_t etag[] = {{"ETag", "The thing's version."}, {"X-Trace", NULL}, {NULL, NULL}};
    static const canal_header_def_t retry[] = {{"Retry-After", NULL}, {NULL, NULL}};
    /* not static: CANAL_DOC() in a function is a compound literal of the function's */
    const canal_action_def_t actions[] = {
        {.name = "Get", .routes = {"{id}", "by-code/{code:length(3)}"}, .handler = action, .args = &get_args,
         .options = {CANAL_DOC(.summary = "S", .description = "Long",
                               .responses = {{.status = 200, .content_type = "text/plain", .headers = etag},
                                             {.status = 304},
                                             {.status = 404},
                                             {.status = 409, .headers = retry}})}},
        {.name = "Post", .methods = "POST,PURGE", .handler = action, .args = &post_args},
        {.name = NULL},
    };
    const canal_controller_def_t def = {.name = "Things", .prefix = "things", .actions = actions};
    canal_app_t *app = new_app();
    canal_mvc_t *mvc = canal_mvc_create(app);
    canal_error_info_t err;
    if (canal_mvc_add_controller(mvc, &def, NULL, &err) != 0)
        fail_msg("%s", err.message);
    assert_int_equal(canal_app_get(app, "plain", ok_handler, NULL), 0);
    json_t *doc = canal_mvc_openapi(mvc, NULL);
    assert_non_null(doc);
    json_t *get = AT(doc, "paths", "/things/{id}", "get");
    assert_string_equal(json_string_value(AT(get, "operationId")), "Things_Get");
    assert_string_equal(json_string_value(AT(get, "tags", "0")), "Things");
    assert_string_equal(json_string_value(AT(get, "summary")), "S");
    assert_string_equal(json_string_value(AT(get, "description")), "Long");
    /* route value: the plain {id}'s string replaced by the declared int32, with its bounds */
    json_t *id = AT(get, "parameters", "0");
    assert_string_equal(json_string_value(AT(id, "name")), "id");
    assert_string_equal(json_string_value(AT(id, "description")), "the id");
    assert_string_equal(json_string_value(AT(id, "schema", "type")), "integer");
    assert_null(AT(id, "schema", "minLength"));
    assert_int_equal(json_integer_value(AT(id, "schema", "minimum")), 1);
    assert_int_equal(json_integer_value(AT(id, "schema", "maximum")), 99);
    /* query: allowed values and a default; a double bound; a required header */
    json_t *color = AT(get, "parameters", "1");
    assert_string_equal(json_string_value(AT(color, "in")), "query");
    assert_false(json_is_true(AT(color, "required")));
    assert_string_equal(json_string_value(AT(color, "schema", "enum", "1")), "blue");
    assert_string_equal(json_string_value(AT(color, "schema", "default")), "red");
    assert_true(json_real_value(AT(get, "parameters", "2", "schema", "minimum")) == 0.5);
    assert_string_equal(json_string_value(AT(get, "parameters", "3", "in")), "header");
    assert_true(json_is_true(AT(get, "parameters", "3", "required")));
    assert_null(AT(get, "parameters", "4"));
    /* responses: produces, with the content type on 2xx, 304 without a body, 409 a problem */
    assert_non_null(AT(get, "responses", "200", "content", "text/plain"));
    assert_null(AT(get, "responses", "304", "content"));
    assert_string_equal(json_string_value(AT(get, "responses", "404", "$ref")),
                        "#/components/responses/NotFound");
    assert_non_null(AT(get, "responses", "409", "content", "application/problem+json"));
    /* documented headers: a string schema each, a description where given */
    assert_string_equal(json_string_value(AT(get, "responses", "200", "headers", "ETag", "description")),
                        "The thing's version.");
    assert_string_equal(json_string_value(AT(get, "responses", "200", "headers", "X-Trace", "schema", "type")),
                        "string");
    assert_null(AT(get, "responses", "200", "headers", "X-Trace", "description"));
    assert_non_null(AT(get, "responses", "409", "headers", "Retry-After", "schema"));
    assert_null(AT(get, "responses", "404", "headers"));
    assert_non_null(AT(get, "responses", "400")); /* declared parameters: binding may refuse */
    assert_null(AT(get, "responses", "default"));
    /* the second route: the constraint and the declared pattern ([[:upper:]]+: anchored, as ECMA-262) */
    json_t *code = AT(doc, "paths", "/things/by-code/{code}", "get", "parameters", "0", "schema");
    assert_int_equal(json_integer_value(AT(code, "minLength")), 3);
    assert_string_equal(json_string_value(AT(code, "pattern")), "^([A-Z]+)$");
    assert_string_equal(json_string_value(AT(doc, "paths", "/things/by-code/{code}", "get",
                                             "operationId")), "Things_Get_2");
    /* a JSON body object, by reference to its schema; PURGE has no OpenAPI field */
    json_t *post = AT(doc, "paths", "/things", "post");
    json_t *body = AT(post, "requestBody", "content", "application/json", "schema");
    assert_string_equal(json_string_value(AT(body, "$ref")), "#/components/schemas/PostArgs");
    body = AT(doc, "components", "schemas", "PostArgs");
    assert_string_equal(json_string_value(AT(body, "properties", "n", "type")), "integer");
    assert_string_equal(json_string_value(AT(body, "properties", "on", "type")), "boolean");
    assert_string_equal(json_string_value(AT(body, "required", "0")), "n");
    assert_null(AT(body, "required", "1"));
    assert_true(json_is_true(AT(post, "requestBody", "required")));
    assert_non_null(AT(post, "responses", "default"));
    assert_null(AT(doc, "paths", "/things", "purge"));
    /* a route that is not an action */
    assert_string_equal(json_string_value(AT(doc, "paths", "/plain", "get", "operationId")),
                        "get_plain");
    assert_null(AT(doc, "paths", "/plain", "get", "tags"));
    json_decref(doc);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(introspection),
        cmocka_unit_test(from_routes),
        cmocka_unit_test(from_controllers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
