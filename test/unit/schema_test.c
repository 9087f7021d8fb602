/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of typed models (canal/schema.h): writing a struct is byte-identical to jansson's
 * compact dump of the same object; absent, null and required fields; binding every source
 * (route, query with repeats, header, cookie, urlencoded and multipart forms with a file, a
 * nested JSON body with arrays) with JSON pointer errors; a schema's validate callback; the
 * answer for an unregistered schema; registration errors of nested tables.
 */
#include "test.h"
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <h2o.h>
#include <canal.h>
#include "models/models.h"
#include "client.h"

/* ---- a nested model: an order with lines ---- */

enum state { DRAFT, PAID, SHIPPED };
static const char *const states[] = {"draft", "paid", "shipped", NULL};

typedef struct {
    canal_str_t sku;
    int32_t qty;
    double price;
} line_t;

typedef struct {
    int64_t id;
    const char *note;   /* nullable */
    canal_str_t coupon; /* optional: left out when absent */
    bool rush;
    int state;          /* enum state */
    line_t *lines;
    size_t nlines;
    const char **tags;
    size_t ntags;
    line_t main;        /* a nested object */
    bool has_main;
} order_t;

static const canal_field_t line_fields[] = {
    {.name = "sku", CANAL_FIELD(line_t, sku), .flags = CANAL_REQUIRED, .pattern = "[A-Z]{3}-\\d+"}, /* PCRE2, whole value, case-sensitive */
    {.name = "qty", CANAL_FIELD(line_t, qty), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED, CANAL_MIN(1),
     CANAL_MAX(99)},
    {.name = "price", CANAL_FIELD(line_t, price), .type = CANAL_TYPE_DOUBLE, .def = "0", CANAL_MIN(0)},
    {.name = NULL}};
static const canal_schema_t line_schema = {.name = "Line", .size = sizeof(line_t), .fields = line_fields};

static const canal_field_t order_fields[] = {
    {.name = "id", CANAL_FIELD(order_t, id), .type = CANAL_TYPE_INT64, .flags = CANAL_REQUIRED},
    {.name = "note", CANAL_FIELD(order_t, note), .type = CANAL_TYPE_CSTRING, .flags = CANAL_NULLABLE,
     .max_length = 20},
    {.name = "coupon", CANAL_FIELD(order_t, coupon), .format = "uuid"},
    {.name = "rush", CANAL_FIELD(order_t, rush), .type = CANAL_TYPE_BOOL, .def = "false"},
    {.name = "state", CANAL_FIELD(order_t, state), .type = CANAL_TYPE_ENUM, .allowed = states, .def = "draft"},
    {.name = "lines", CANAL_FIELD(order_t, lines), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_OBJECT,
     .schema = &line_schema, CANAL_COUNT(order_t, nlines), .flags = CANAL_REQUIRED, .min_items = 1,
     .max_items = 5},
    {.name = "tags", CANAL_FIELD(order_t, tags), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_CSTRING,
     CANAL_COUNT(order_t, ntags), .max_length = 8},
    {.name = "main", CANAL_FIELD(order_t, main), .type = CANAL_TYPE_OBJECT, .schema = &line_schema,
     CANAL_PRESENT(order_t, has_main)},
    {.name = NULL}};

/* cross-field: a rush order ships with at most 3 lines */
static int order_rules(canal_req_t *req, void *obj)
{
    const order_t *o = obj;
    if (o->rush && o->nlines > 3)
        canal_req_invalid(req, "/lines", "A rush order has at most 3 lines, not %zu.", o->nlines);
    return 0;
}

static const canal_schema_t order_schema = {.name = "Order", .size = sizeof(order_t), .fields = order_fields,
                                            .validate = order_rules};

/* Writes obj with canal_jw_model and compares with jansson's compact dump of want. */
static void same_as_jansson(const canal_schema_t *s, const void *obj, json_t *want)
{
    h2o_mem_pool_t pool;
    h2o_mem_init_pool(&pool);
    struct canal_jw w;
    canal__jw_init(&w, &pool, 16);
    assert_int_equal(canal_jw_model(&w, s, obj), 0);
    const char *body;
    size_t len;
    assert_int_equal(canal_jw_finish(&w, &body, &len), 0);
    char *theirs = json_dumps(want, JSON_COMPACT);
    if (strlen(theirs) != len || memcmp(theirs, body, len) != 0)
        fail_msg("canal: %.*s\njansson: %s", (int)len, body, theirs);
    free(theirs);
    json_decref(want);
    h2o_mem_clear_pool(&pool);
}

static int write_error(const canal_schema_t *s, const void *obj)
{
    h2o_mem_pool_t pool;
    h2o_mem_init_pool(&pool);
    struct canal_jw w;
    canal__jw_init(&w, &pool, 16);
    int rc = canal_jw_model(&w, s, obj);
    h2o_mem_clear_pool(&pool);
    return rc;
}

static void writing(void **state)
{
    line_t lines[] = {{{"ABC-1", 5}, 2, 9.5}, {{"XYZ-22", 6}, 1, 0.1}};
    const char *tags[] = {"a\"b", "\xc3\xa9t\xc3\xa9"};
    order_t o = {.id = 9007199254740993LL, .note = NULL, .rush = true, .state = SHIPPED, .lines = lines,
                 .nlines = 2, .tags = tags, .ntags = 2};
    /* note is nullable: null; coupon absent: left out; main has no presence: left out */
    same_as_jansson(&order_schema, &o,
                    json_pack("{s:I, s:n, s:b, s:s, s:[{s:s, s:i, s:f}, {s:s, s:i, s:f}], s:[s, s]}", "id",
                              (json_int_t)o.id, "note", "rush", 1, "state", "shipped", "lines", "sku", "ABC-1", "qty",
                              2, "price", 9.5, "sku", "XYZ-22", "qty", 1, "price", 0.1, "tags", "a\"b",
                              "\xc3\xa9t\xc3\xa9"));
    o.note = "n\n\x01";
    o.coupon = (canal_str_t){"c", 1};
    o.main = lines[1];
    o.has_main = true;
    o.tags = NULL; /* optional: left out */
    same_as_jansson(&order_schema, &o,
                    json_pack("{s:I, s:s, s:s, s:b, s:s, s:[{s:s, s:i, s:f}, {s:s, s:i, s:f}], s:{s:s, s:i, s:f}}",
                              "id", (json_int_t)o.id, "note", "n\n\x01", "coupon", "c", "rush", 1, "state",
                              "shipped", "lines", "sku", "ABC-1", "qty", 2, "price", 9.5, "sku", "XYZ-22", "qty", 1,
                              "price", 0.1, "main", "sku", "XYZ-22", "qty", 1, "price", 0.1));
    /* the errors: a required field absent, an enum without a name, a NaN, invalid UTF-8 */
    order_t bad = o;
    bad.lines = NULL;
    assert_int_equal(write_error(&order_schema, &bad), CANAL_EINVAL);
    bad = o;
    bad.state = 3;
    assert_int_equal(write_error(&order_schema, &bad), CANAL_EINVAL);
    line_t nan_line = {{"A", 1}, 1, NAN};
    assert_int_equal(write_error(&line_schema, &nan_line), CANAL_EINVAL);
    line_t bad_utf8 = {{"\xff", 1}, 1, 0};
    assert_int_equal(write_error(&line_schema, &bad_utf8), CANAL_EINVAL);
    assert_int_equal(write_error(&line_schema, NULL), CANAL_EINVAL);
}

/* Keys are escaped once per call and copied for every row: names that JSON escapes, a
 * name that is not UTF-8, and arrays of rows (at the top and inside a row) */
typedef struct {
    int32_t a;
    const char *b;
} kv_t;

static void writing_keys(void **state)
{
    static const canal_field_t odd_fields[] = {
        {.name = "q\"t\\b\n", CANAL_FIELD(kv_t, a), .type = CANAL_TYPE_INT32},
        {.name = "\xc3\xa9t\xc3\xa9", CANAL_FIELD(kv_t, b), .type = CANAL_TYPE_CSTRING, .flags = CANAL_NULLABLE},
        {.name = NULL}};
    static const canal_schema_t odd = {.name = "Odd", .size = sizeof(kv_t), .fields = odd_fields};
    kv_t rows[] = {{1, "x"}, {-2, NULL}, {2147483647, "\"y\""}};
    same_as_jansson(&odd, &rows[0], json_pack("{s:i, s:s}", "q\"t\\b\n", 1, "\xc3\xa9t\xc3\xa9", "x"));

    h2o_mem_pool_t pool;
    h2o_mem_init_pool(&pool);
    struct canal_jw w;
    canal__jw_init(&w, &pool, 16);
    assert_int_equal(canal_jw_model_array(&w, &odd, rows, 3), 0);
    const char *body;
    size_t len;
    assert_int_equal(canal_jw_finish(&w, &body, &len), 0);
    json_t *want = json_pack("[{s:i, s:s}, {s:i, s:n}, {s:i, s:s}]", "q\"t\\b\n", 1, "\xc3\xa9t\xc3\xa9", "x",
                             "q\"t\\b\n", -2, "\xc3\xa9t\xc3\xa9", "q\"t\\b\n", 2147483647,
                             "\xc3\xa9t\xc3\xa9", "\"y\"");
    char *theirs = json_dumps(want, JSON_COMPACT);
    assert_int_equal(len, strlen(theirs));
    assert_memory_equal(body, theirs, len);
    free(theirs);
    json_decref(want);

    /* no rows: [] */
    canal__jw_init(&w, &pool, 16);
    assert_int_equal(canal_jw_model_array(&w, &odd, NULL, 0), 0);
    assert_int_equal(canal_jw_finish(&w, &body, &len), 0);
    assert_int_equal(len, 2);
    assert_memory_equal(body, "[]", 2);
    h2o_mem_clear_pool(&pool);

    /* a name that is not UTF-8 fails the writer, for one row and for many */
    static const canal_field_t bad_fields[] = {{.name = "\xff", CANAL_FIELD(kv_t, a), .type = CANAL_TYPE_INT32},
                                               {.name = NULL}};
    static const canal_schema_t bad = {.name = "Bad", .size = sizeof(kv_t), .fields = bad_fields};
    assert_int_equal(write_error(&bad, &rows[0]), CANAL_EINVAL);
    h2o_mem_init_pool(&pool);
    canal__jw_init(&w, &pool, 16);
    assert_int_equal(canal_jw_model_array(&w, &bad, rows, 3), CANAL_EINVAL);
    assert_int_equal(canal_jw_error(&w), CANAL_EINVAL);
    h2o_mem_clear_pool(&pool);
    assert_int_equal(canal_jw_model(NULL, &odd, &rows[0]), CANAL_EINVAL);
    assert_int_equal(canal_jw_model_array(NULL, &odd, rows, 3), CANAL_EINVAL);

    /* the keys never come from the writer's pool (a stream's writer keeps its pool for the
     * stream's life): a writer without a pool, on a buffer of its own, writes rows; a schema
     * of 40 long names takes the malloc'd table (ASan and valgrind see it freed) */
    static char big[1 << 16];
    struct canal_jw nopool = {.buf = big, .cap = sizeof(big), .why = ""};
    for (int i = 0; i < 200; i++) {
        nopool = (struct canal_jw){.buf = big, .cap = sizeof(big), .why = ""};
        assert_int_equal(canal_jw_model(&nopool, &odd, &rows[i % 3]), 0);
        nopool = (struct canal_jw){.buf = big, .cap = sizeof(big), .why = ""};
        assert_int_equal(canal_jw_model_array(&nopool, &odd, rows, 3), 0);
    }
    enum { NF = 40 };
    static char names[NF][48];
    static canal_field_t many[NF + 1];
    static int32_t vals[NF];
    json_t *expect = json_object();
    for (int i = 0; i < NF; i++) {
        snprintf(names[i], sizeof(names[i]), "a_rather_long_field_name_number_%02d", i);
        many[i] = (canal_field_t){.name = names[i], .type = CANAL_TYPE_INT32, .offset = (size_t)i * 4, .size = 4};
        vals[i] = i * 7;
        json_object_set_new(expect, names[i], json_integer(i * 7));
    }
    const canal_schema_t wide = {.name = "Wide", .size = sizeof(vals), .fields = many};
    nopool = (struct canal_jw){.buf = big, .cap = sizeof(big), .why = ""};
    assert_int_equal(canal_jw_model(&nopool, &wide, vals), 0);
    assert_int_equal(canal_jw_finish(&nopool, &body, &len), 0);
    theirs = json_dumps(expect, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_int_equal(len, strlen(theirs));
    assert_memory_equal(body, theirs, len);
    free(theirs);
    json_decref(expect);
}

/* ---- binding, end to end ---- */

typedef struct {
    int32_t shop;          /* route */
    int32_t *ids;          /* query, repeated */
    size_t nids;
    canal_str_t lang;      /* header */
    const char *session;   /* cookie */
    order_t order;         /* the whole JSON body */
} put_args_t;

static const canal_field_t put_fields[] = {
    {.name = "shop", CANAL_FIELD(put_args_t, shop), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED},
    {.name = "id", CANAL_FIELD(put_args_t, ids), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_INT32,
     CANAL_COUNT(put_args_t, nids), .source = CANAL_FROM_QUERY, .max_items = 3, CANAL_MIN(0)},
    {.name = "accept-language", CANAL_FIELD(put_args_t, lang), .source = CANAL_FROM_HEADER, .def = "en"},
    {.name = "sid", CANAL_FIELD(put_args_t, session), .type = CANAL_TYPE_CSTRING, .source = CANAL_FROM_COOKIE},
    {.name = "order", CANAL_FIELD(put_args_t, order), .type = CANAL_TYPE_OBJECT, .schema = &order_schema,
     .source = CANAL_FROM_BODY_WHOLE, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t put_args = {.name = "PutArgs", .size = sizeof(put_args_t), .fields = put_fields};

typedef struct {
    canal_str_t title;
    int32_t stars;
    canal_str_t *labels;
    size_t nlabels;
    canal_part_t photo;
} review_t;

static const canal_field_t review_fields[] = {
    {.name = "title", CANAL_FIELD(review_t, title), .source = CANAL_FROM_FORM, .flags = CANAL_REQUIRED,
     .min_length = 1},
    {.name = "stars", CANAL_FIELD(review_t, stars), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_FORM,
     .def = "3", CANAL_MIN(1), CANAL_MAX(5)},
    {.name = "label", CANAL_FIELD(review_t, labels), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_STRING,
     CANAL_COUNT(review_t, nlabels), .source = CANAL_FROM_FORM},
    {.name = "photo", CANAL_FIELD(review_t, photo), .type = CANAL_TYPE_FILE, .source = CANAL_FROM_FORM},
    {.name = NULL}};
static const canal_schema_t review_args = {.name = "Review", .size = sizeof(review_t), .fields = review_fields};

/* PUT /shops/{shop}/order: the bound args, written back (the order by its own schema) */
static int put_order(canal_req_t *req, void *data)
{
    put_args_t a;
    int rc = canal_req_bind(req, &put_args, &a);
    if (rc != 0)
        return rc == CANAL_EINVAL ? 0 : rc;
    canal_jw_t *w = canal_req_jw(req);
    canal_jw_object_begin(w);
    canal_jw_key(w, "shop");
    canal_jw_int(w, a.shop);
    canal_jw_key(w, "ids");
    canal_jw_int(w, (int64_t)a.nids);
    if (a.nids > 0) {
        canal_jw_key(w, "last");
        canal_jw_int(w, a.ids[a.nids - 1]);
    }
    canal_jw_key(w, "lang");
    canal_jw_stringn(w, a.lang.base, a.lang.len);
    canal_jw_key(w, "sid");
    a.session ? canal_jw_string(w, a.session) : canal_jw_null(w);
    canal_jw_key(w, "order");
    canal_jw_model(w, &order_schema, &a.order);
    canal_jw_object_end(w);
    return canal_res_jw(req, 200, w);
}

/* POST /reviews: a form with a file */
static int post_review(canal_req_t *req, void *data)
{
    review_t a;
    int rc = canal_req_bind(req, &review_args, &a);
    if (rc != 0)
        return rc == CANAL_EINVAL ? 0 : rc;
    /* an action's own rule joins the same 400 shape */
    if (a.title.len == 4 && memcmp(a.title.base, "spam", 4) == 0) {
        canal_req_invalid(req, "title", "The title %s is not allowed.", "spam");
        return canal_res_invalid(req);
    }
    return canal_res_text(req, 200,
                          canal_req_printf(req, "%.*s %d %zu %.*s %.*s %zu", (int)a.title.len, a.title.base, (int)a.stars,
                                           a.nlabels, a.nlabels ? (int)a.labels[0].len : 1,
                                           a.nlabels ? a.labels[0].base : "-",
                                           a.photo.data.base ? (int)a.photo.filename.len : 1,
                                           a.photo.data.base ? a.photo.filename.base : "-", a.photo.data.len));
}

static const canal_field_t never_fields[] = {
    {.name = "x", .offset = 0, .size = sizeof(int32_t), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t never_registered = {.name = "Never", .size = sizeof(int32_t), .fields = never_fields};

static int unregistered(canal_req_t *req, void *data)
{
    int32_t x;
    return canal_req_bind(req, &never_registered, &x);
}

static void send_body(const char *method, const char *path, const char *headers, const char *body, struct reply *r)
{
    char raw[6000];
    snprintf(raw, sizeof(raw), "%s %s HTTP/1.1\r\nHost: t\r\n%sContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
             method, path, headers, strlen(body), body);
    request(raw, r);
}

static void expect(const struct reply *r, int status, const char *piece)
{
    if (r->status != status || strstr(r->body, piece) == NULL)
        fail_msg("expected %d with %s, got %d: %s", status, piece, r->status, r->body);
}

static void binding(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    canal_app_t *app = canal_app_create(&cfg);
    canal_error_info_t err;
    canal_endpoint_spec_t specs[] = {
        {.method = "PUT", .tmpl = "shops/{shop:int}/order", .handler = put_order,
         .options = {CANAL_ARGS(&put_args), CANAL_DOC(.responses = {{.status = 200, .schema = &order_schema}})}},
        {.method = "POST", .tmpl = "reviews", .handler = post_review, .options = {CANAL_ARGS(&review_args)}},
        {.tmpl = "never", .handler = unregistered},
    };
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
        if (canal_app_route(app, &specs[i], NULL, &err) != 0)
            fail_msg("%s", err.message);
    app_run(app);
    struct reply r;
    const char *json = "Content-Type: application/json\r\n";

    send_body("PUT", "/shops/4/order?id=1&id=7", "Content-Type: application/json\r\nCookie: a=b; sid=\"s1\"\r\n",
              "{\"id\":12,\"lines\":[{\"sku\":\"ABC-1\",\"qty\":2}],\"tags\":[\"x\"]}", &r);
    expect(&r, 200,
           "{\"shop\":4,\"ids\":2,\"last\":7,\"lang\":\"en\",\"sid\":\"s1\",\"order\":{\"id\":12,\"note\":null,"
           "\"rush\":false,\"state\":\"draft\",\"lines\":[{\"sku\":\"ABC-1\",\"qty\":2,\"price\":0.0}],\"tags\":[\"x\"]}}");
    /* every error at once, nested ones by JSON pointer */
    send_body("PUT", "/shops/4/order?id=-1&id=2&id=3&id=4", json,
              "{\"id\":\"12\",\"note\":\"far more than twenty characters\",\"coupon\":\"nope\",\"state\":\"lost\","
              "\"lines\":[{\"sku\":\"ABC-1\",\"qty\":2},{\"sku\":\"bad\",\"qty\":0,\"price\":-1},{\"qty\":1},null],"
              "\"tags\":[\"ok\",7],\"main\":[]}",
              &r);
    static const char *const pieces[] = {
        "\"id\":[\"The field id must have from 0 to 3 items.\"]",
        "\"/id\":[\"The value for id must be an integer.\"]",
        "\"/note\":[\"The field note must be a string with a maximum length of 20.\"]",
        "\"/coupon\":[\"The field coupon must be a valid uuid.\"]",
        "\"/state\":[\"The field state must be one of: draft, paid, shipped.\"]",
        "\"/lines/1/sku\":[\"The field sku must match the regular expression '[A-Z]{3}-\\\\d+'.\"]",
        "\"/lines/1/qty\":[\"The field qty must be between 1 and 99.\"]",
        "\"/lines/1/price\":[\"The field price must be at least 0.\"]",
        "\"/lines/2/sku\":[\"The sku field is required.\"]",
        "\"/lines/3\":[\"The value for lines must be an object.\"]",
        "\"/tags/1\":[\"The value for tags must be a string.\"]",
        "\"/main\":[\"The value for main must be an object.\"]",
    };
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
        expect(&r, 400, pieces[i]);
    expect(&r, 400, "\"title\":\"One or more validation errors occurred.\"");
    /* the schema's own rule runs when the fields are valid, into the same 400 */
    send_body("PUT", "/shops/4/order", json,
              "{\"id\":1,\"rush\":true,\"lines\":[{\"sku\":\"ABC-1\",\"qty\":1},{\"sku\":\"ABC-2\",\"qty\":1},"
              "{\"sku\":\"ABC-3\",\"qty\":1},{\"sku\":\"ABC-4\",\"qty\":1}]}",
              &r);
    expect(&r, 400, "\"/lines\":[\"A rush order has at most 3 lines, not 4.\"]");
    /* no body: the required whole body; an empty array: too few lines */
    send_body("PUT", "/shops/4/order", "", "", &r);
    expect(&r, 400, "\"$body\":[\"The order field is required.\"]");
    send_body("PUT", "/shops/4/order", json, "{\"id\":1,\"lines\":[]}", &r);
    expect(&r, 400, "\"/lines\":[\"The field lines must have from 1 to 5 items.\"]");
    send_body("PUT", "/shops/4/order", "Content-Type: text/plain\r\n", "{}", &r);
    expect(&r, 415, "application/json");

    /* forms: urlencoded, multipart with a file, their errors */
    const char *urlenc = "Content-Type: application/x-www-form-urlencoded\r\n";
    send_body("POST", "/reviews", urlenc, "title=Good+one&label=a%2Fb&label=c", &r);
    expect(&r, 200, "Good one 3 2 a/b - 0");
    send_body("POST", "/reviews", urlenc, "title=&stars=6&stars=2", &r);
    expect(&r, 400, "\"title\":[\"The field title must be a string with a minimum length of 1.\"]");
    expect(&r, 400, "\"stars\":[\"The stars field must be given once.\"]");
    send_body("POST", "/reviews", urlenc, "title=spam", &r);
    expect(&r, 400, "\"title\":[\"The title spam is not allowed.\"]");
    send_body("POST", "/reviews", urlenc, "title=%zz", &r);
    expect(&r, 400, "\"$body\":[\"The form body is malformed:");
    send_body("POST", "/reviews", json, "{\"title\":\"x\"}", &r);
    expect(&r, 415, "multipart/form-data");
    const char *mp = "Content-Type: multipart/form-data; boundary=XX\r\n";
    send_body("POST", "/reviews", mp,
              "--XX\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nNice\r\n"
              "--XX\r\nContent-Disposition: form-data; name=\"stars\"\r\n\r\n5\r\n"
              "--XX\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"p.png\"\r\n"
              "Content-Type: image/png\r\n\r\n\x89PNG\r\n--XX-\r\n--XX--\r\n",
              &r);
    expect(&r, 200, "Nice 5 0 - p.png 11");
    send_body("POST", "/reviews", mp, "--XX\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nNice\r\n", &r);
    expect(&r, 400, "\"$body\":[\"The form body is malformed:");

    /* a schema nobody registered: a 500, never a crash */
    get("/never", &r);
    assert_int_equal(r.status, 500);
    app_stop(app);
    canal_app_destroy(app);
}

/* ---- strict schemas and the fields' own messages ---- */

typedef struct {
    int32_t level;
} meta_t;
typedef struct {
    canal_str_t slug;
    int32_t n;
    meta_t meta;
    bool has_n, has_meta;
} slug_t;
static const canal_field_t meta_fields[] = {
    {.name = "level", CANAL_FIELD(meta_t, level), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_BODY, .def = "1"},
    {.name = NULL}};
static const canal_schema_t meta_schema = {.name = "Meta", .size = sizeof(meta_t), .fields = meta_fields, .strict = 1};
static const canal_field_t slug_fields[] = {
    {.name = "slug", CANAL_FIELD(slug_t, slug), .type = CANAL_TYPE_STRING, .source = CANAL_FROM_BODY,
     .flags = CANAL_REQUIRED, .pattern = "[a-z]+(-[a-z]+)*", .message = "must be a lower-case slug"},
    {.name = "n", CANAL_FIELD(slug_t, n), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_BODY, CANAL_MIN(1),
     CANAL_MAX(9), CANAL_PRESENT(slug_t, has_n)},
    {.name = "meta", CANAL_FIELD(slug_t, meta), .type = CANAL_TYPE_OBJECT, .schema = &meta_schema,
     .source = CANAL_FROM_BODY, CANAL_PRESENT(slug_t, has_meta)},
    {.name = NULL}};
static const canal_schema_t slug_schema = {.name = "Slug", .size = sizeof(slug_t), .fields = slug_fields, .strict = 1};
/* the same members, not strict: unknown members are ignored */
static const canal_schema_t loose_schema = {.name = "Loose", .size = sizeof(slug_t), .fields = slug_fields};

static int post_slug(canal_req_t *req, void *data)
{
    slug_t a;
    int rc = canal_req_bind(req, data, &a);
    if (rc != 0)
        return rc == CANAL_EINVAL ? 0 : rc;
    return canal_res_text(req, 200, canal_req_printf(req, "%.*s", (int)a.slug.len, a.slug.base));
}

static void strict_and_messages(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    canal_app_t *app = canal_app_create(&cfg);
    canal_error_info_t err;
    canal_endpoint_spec_t specs[] = {
        {.method = "POST", .tmpl = "slugs", .handler = post_slug, .data = (void *)&slug_schema,
         .options = {CANAL_ARGS(&slug_schema)}},
        {.method = "POST", .tmpl = "loose", .handler = post_slug, .data = (void *)&loose_schema,
         .options = {CANAL_ARGS(&loose_schema)}},
    };
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
        if (canal_app_route(app, &specs[i], NULL, &err) != 0)
            fail_msg("%s", err.message);
    json_t *doc = canal_openapi_build(app, NULL, NULL, NULL);
    json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    assert_true(json_is_false(json_object_get(json_object_get(schemas, "Slug"), "additionalProperties")));
    assert_true(json_is_false(json_object_get(json_object_get(schemas, "Meta"), "additionalProperties")));
    assert_null(json_object_get(json_object_get(schemas, "Loose"), "additionalProperties"));
    json_decref(doc);
    app_run(app);
    struct reply r;
    const char *json = "Content-Type: application/json\r\n";
    send_body("POST", "/slugs", json, "{\"slug\":\"good-one\",\"n\":3,\"meta\":{\"level\":2}}", &r);
    expect(&r, 200, "good-one");
    /* unknown members, at the top and nested, each by its JSON pointer ("~1" is a '/') */
    send_body("POST", "/slugs", json, "{\"slug\":\"a\",\"admin\":true,\"a/b\":1,\"meta\":{\"level\":2,\"x\":0}}", &r);
    expect(&r, 400, "\"/admin\":[\"The member admin is not a field of Slug.\"]");
    expect(&r, 400, "\"/a~1b\":[\"The member a/b is not a field of Slug.\"]");
    expect(&r, 400, "\"/meta/x\":[\"The member x is not a field of Meta.\"]");
    send_body("POST", "/loose", json, "{\"slug\":\"a\",\"admin\":true}", &r);
    expect(&r, 200, "a");
    /* the field's own message instead of the regular expression; canal's text elsewhere */
    send_body("POST", "/slugs", json, "{\"slug\":\"Not A Slug\",\"n\":10}", &r);
    expect(&r, 400, "\"/slug\":[\"must be a lower-case slug\"]");
    expect(&r, 400, "\"/n\":[\"The field n must be between 1 and 9.\"]");
    send_body("POST", "/slugs", json, "{\"slug\":7}", &r);
    expect(&r, 400, "\"/slug\":[\"The value for slug must be a string.\"]");
    send_body("POST", "/slugs", json, "{}", &r);
    expect(&r, 400, "\"/slug\":[\"The slug field is required.\"]");
    app_stop(app);
    canal_app_destroy(app);
}

/* ---- registration of nested tables ---- */

typedef struct node node_t;
struct node {
    node_t *kids;
    size_t nkids;
};
static const canal_schema_t node_schema;
static const canal_field_t node_fields[] = {
    {.name = "kids", CANAL_FIELD(node_t, kids), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_OBJECT,
     .schema = &node_schema, CANAL_COUNT(node_t, nkids)},
    {.name = NULL}};
static const canal_schema_t node_schema = {.name = "Node", .size = sizeof(node_t), .fields = node_fields};

static void registration(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    canal_app_t *app = canal_app_create(&cfg);
    canal_error_info_t err;
    /* a tree refers to itself: registered once, by name */
    assert_int_equal(canal_app_schema(app, &node_schema, &err), 0);
    assert_int_equal(canal_app_schema(app, &order_schema, &err), 0);
    assert_int_equal(canal_app_schema(app, &order_schema, &err), 0); /* twice: a no-op */
    /* a nested table's error names the nested schema and field */
    static const canal_field_t bad_line_fields[] = {
        {.name = "qty", CANAL_FIELD(line_t, qty), .type = CANAL_TYPE_INT64, .flags = CANAL_REQUIRED},
        {.name = NULL}};
    static const canal_schema_t bad_line = {.name = "BadLine", .size = sizeof(line_t), .fields = bad_line_fields};
    static const canal_field_t holder_fields[] = {
        {.name = "line", .offset = 0, .size = sizeof(line_t), .type = CANAL_TYPE_OBJECT, .schema = &bad_line,
         .flags = CANAL_REQUIRED},
        {.name = NULL}};
    static const canal_schema_t holder = {.name = "Holder", .size = sizeof(line_t), .fields = holder_fields};
    assert_int_equal(canal_app_schema(app, &holder, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "schema BadLine, field qty: member size 4"));
    /* another schema with a taken name */
    static const canal_schema_t other_line = {.name = "Line", .size = sizeof(line_t), .fields = line_fields};
    assert_int_equal(canal_app_schema(app, &other_line, &err), CANAL_EEXIST);
    /* an example that breaks its own rule */
    static const canal_field_t ex_fields[] = {
        {.name = "qty", CANAL_FIELD(line_t, qty), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED,
         .example = "\"two\""},
        {.name = NULL}};
    static const canal_schema_t ex = {.name = "Ex", .size = sizeof(line_t), .fields = ex_fields};
    assert_int_equal(canal_app_schema(app, &ex, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "example \"two\""));
    /* a C string's example is held to its length and pattern as a slice's is */
    static const canal_field_t cex_fields[] = {
        {.name = "note", CANAL_FIELD(order_t, note), .type = CANAL_TYPE_CSTRING, .max_length = 3,
         .example = "\"four\""},
        {.name = NULL}};
    static const canal_schema_t cex = {.name = "CEx", .size = sizeof(order_t), .fields = cex_fields};
    assert_int_equal(canal_app_schema(app, &cex, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "maximum length of 3"));
    /* patterns: the router's dialect (PCRE2), refused when PCRE2 refuses them or when they have
     * no ECMA-262 form for the OpenAPI document */
    static const char *const pat_msgs[] = {
        NULL, NULL, "bad pattern 'a++': regex at offset 2: possessive quantifiers are not translated",
        "bad pattern '(?i)abc': regex at offset 0: inline options",
        "bad pattern '((': bad regex at offset 2: missing closing parenthesis"};
#define PAT_FIELDS(p) {{.name = "sku", CANAL_FIELD(line_t, sku), .pattern = p}, {.name = NULL}}
    static const canal_field_t pf[][2] = {PAT_FIELDS("[[:alpha:]]\\w*"), PAT_FIELDS("\\p{Lu}\\s\\S"),
                                          PAT_FIELDS("a++"), PAT_FIELDS("(?i)abc"), PAT_FIELDS("((")};
#undef PAT_FIELDS
    static canal_schema_t ps[5];
    for (size_t i = 0; i < 5; i++) {
        static char names[5][8];
        snprintf(names[i], sizeof(names[i]), "Pat%zu", i);
        ps[i] = (canal_schema_t){.name = names[i], .size = sizeof(line_t), .fields = pf[i]};
        int rc = canal_app_schema(app, &ps[i], &err);
        if (pat_msgs[i] == NULL ? rc != 0 : rc != CANAL_EINVAL || strstr(err.message, pat_msgs[i]) == NULL)
            fail_msg("pattern %s: %s %s", pf[i][0].pattern, canal_err_name(rc), rc ? err.message : "");
    }
    /* a file from JSON, a form mixed with JSON */
    static const canal_field_t file_fields[] = {
        {.name = "f", CANAL_FIELD(review_t, photo), .type = CANAL_TYPE_FILE}, {.name = NULL}};
    static const canal_schema_t file_json = {.name = "FileJson", .size = sizeof(review_t), .fields = file_fields};
    assert_int_equal(canal_app_schema(app, &file_json, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "files come from a form"));
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writing),
        cmocka_unit_test(writing_keys),
        cmocka_unit_test(binding),
        cmocka_unit_test(strict_and_messages),
        cmocka_unit_test(registration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
