/* SPDX-License-Identifier: MIT */
/*
 * Views (canal/view.h): escaping of every dangerous byte, data from json_t, typed models,
 * arrays of them and callbacks, layouts, syntax errors with line and column, the limits, the
 * app's templates (registration errors, canal_res_view(), the development reload) and the
 * controller's canal_ctx_view(), streamed pages (canal_res_view_stream()). The specification's
 * own cases are in view_spec_test.c.
 */
#include "test.h"
#include <stdbool.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <canal.h>
#include <canal/testing.h>
#include <stdatomic.h>

/* Renders text with data; returns the output (free() it) or NULL with err filled */
static char *render(const char *text, const canal_view_data_t *data, canal_error_info_t *err)
{
    canal_views_t *v = canal_views_create();
    assert_non_null(v);
    char *out = NULL;
    if (canal_views_add(v, "t", text, strlen(text), err) == 0)
        canal_views_render(v, "t", NULL, data, &out, NULL, err);
    canal_views_destroy(v);
    return out;
}

static void expect(const char *text, const canal_view_data_t *data, const char *want)
{
    canal_error_info_t err = {0};
    char *out = render(text, data, &err);
    if (out == NULL)
        fail_msg("%s: %s", text, err.message);
    assert_string_equal(out, want);
    free(out);
}

static void expect_json(const char *text, const char *json, const char *want)
{
    json_t *j = json_loads(json, 0, NULL);
    assert_non_null(j);
    canal_view_data_t d = CANAL_VIEW_JSON(j);
    expect(text, &d, want);
    json_decref(j);
}

/* Every byte 1..255 through {{x}}: the five dangerous ones become entities, every other byte
 * comes out as it went in; {{{x}}} and {{&x}} leave all of them. */
static void escaping(void **state)
{
    char in[256], want[256 * 6 + 1], *w = want;
    for (int c = 1; c < 256; c++) {
        in[c - 1] = (char)c;
        const char *e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;"
                        : c == '\'' ? "&#39;" : NULL;
        if (e)
            w += sprintf(w, "%s", e);
        else
            *w++ = (char)c;
    }
    in[255] = '\0';
    *w = '\0';
    /* bytes that are not UTF-8 too: the engine passes them through */
    json_t *j = json_object();
    json_object_set_new(j, "x", json_stringn_nocheck(in, 255));
    canal_view_data_t d = CANAL_VIEW_JSON(j);
    expect("{{x}}", &d, want);
    expect("{{{x}}}", &d, in);
    expect("{{& x}}", &d, in);
    json_decref(j);
    char out[64];
    assert_int_equal(canal_html_escape(out, "<a href='x'>&\"", 14), 37);
    assert_string_equal(out, "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
    expect_json("{{x}}", "{\"x\": \"<script>alert(1)</script>\"}", "&lt;script&gt;alert(1)&lt;/script&gt;");
}

/* Sections, inverted sections, lists, dotted names, the implicit iterator and missing names */
static void json_data(void **state)
{
    expect_json("{{#list}}[{{.}}]{{/list}}", "{\"list\": [1, \"a\", 2.5, true]}", "[1][a][2.5][true]");
    expect_json("{{#a}}yes{{/a}}{{^a}}no{{/a}}", "{\"a\": []}", "no");
    expect_json("{{#a}}{{b.c}}{{/a}}", "{\"a\": {\"b\": {\"c\": \"deep\"}}}", "deep");
    expect_json("[{{missing}}][{{a.missing}}][{{#missing}}x{{/missing}}]", "{\"a\": {}}", "[][][]");
    expect_json("{{n}} {{f}} {{b}} {{z}}", "{\"n\": -42, \"f\": 0.1, \"b\": false, \"z\": null}", "-42 0.1 false ");
    expect_json("{{=<% %>=}}<% x %>{{x}}", "{\"x\": 1}", "1{{x}}");
    expect_json("{{! a comment }}ok", "{}", "ok");
    expect_json("\xe6\x97\xa5\xe6\x9c\xac{{x}}", "{\"x\": \"\xe8\xaa\x9e\"}", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e");
    expect("{{x}}|{{#x}}no{{/x}}", NULL, "|");
}

/* Typed models: a struct and its schema, an array of them, fields of every type */
enum color { RED, GREEN };
static const char *const colors[] = {"red", "green", NULL};
struct tag {
    const char *name;
};
struct row {
    int32_t id;
    canal_str_t message;
    const char *note; /* NULL: missing */
    int64_t big;
    double ratio;
    bool on;
    enum color color;
    struct tag tag;
    int32_t *nums;
    size_t nnums;
    int32_t opt;
    bool has_opt;
};
static const canal_schema_t tag_schema = {
    .name = "Tag",
    .size = sizeof(struct tag),
    .fields = (const canal_field_t[]){{.name = "name", .type = CANAL_TYPE_CSTRING, CANAL_FIELD(struct tag, name)}, {0}},
};
static const canal_schema_t row_schema = {
    .name = "Row",
    .size = sizeof(struct row),
    .fields =
        (const canal_field_t[]){
            {.name = "id", .type = CANAL_TYPE_INT32, CANAL_FIELD(struct row, id)},
            {.name = "message", .type = CANAL_TYPE_STRING, CANAL_FIELD(struct row, message)},
            {.name = "note", .type = CANAL_TYPE_CSTRING, CANAL_FIELD(struct row, note)},
            {.name = "big", .type = CANAL_TYPE_INT64, CANAL_FIELD(struct row, big)},
            {.name = "ratio", .type = CANAL_TYPE_DOUBLE, CANAL_FIELD(struct row, ratio)},
            {.name = "on", .type = CANAL_TYPE_BOOL, CANAL_FIELD(struct row, on)},
            {.name = "color", .type = CANAL_TYPE_ENUM, CANAL_FIELD(struct row, color), .allowed = colors},
            {.name = "tag", .type = CANAL_TYPE_OBJECT, CANAL_FIELD(struct row, tag), .schema = &tag_schema},
            {.name = "nums", .type = CANAL_TYPE_ARRAY, CANAL_FIELD(struct row, nums), .items = CANAL_TYPE_INT32,
             CANAL_COUNT(struct row, nnums)},
            {.name = "opt", .type = CANAL_TYPE_INT32, CANAL_FIELD(struct row, opt), CANAL_PRESENT(struct row, has_opt)},
            {0},
        },
};

static void models(void **state)
{
    int32_t nums[] = {1, 2, 3};
    struct row rows[2] = {
        {.id = 1, .message = {"a<b", 3}, .note = "n", .big = 9007199254740993LL, .ratio = 1.5, .on = true,
         .color = GREEN, .tag = {"t&"}, .nums = nums, .nnums = 3, .opt = 7, .has_opt = true},
        {.id = 2, .message = {"'q'", 3}},
    };
    canal_view_data_t one = CANAL_VIEW_MODEL(&row_schema, &rows[0]);
    expect("{{id}} {{message}} {{note}} {{big}} {{ratio}} {{on}} {{color}} {{tag.name}} "
           "{{#nums}}{{.}},{{/nums}} {{opt}}",
           &one, "1 a&lt;b n 9007199254740993 1.5 true green t&amp; 1,2,3, 7");
    canal_view_data_t two = CANAL_VIEW_MODEL(&row_schema, &rows[1]);
    expect("[{{note}}][{{opt}}][{{#on}}on{{/on}}][{{^nums}}none{{/nums}}][{{color}}]", &two, "[][][][none][red]");
    canal_view_data_t list = CANAL_VIEW_MODELS(&row_schema, rows, 2);
    expect("{{#.}}<tr><td>{{id}}</td><td>{{message}}</td></tr>{{/.}}", &list,
           "<tr><td>1</td><td>a&lt;b</td></tr><tr><td>2</td><td>&#39;q&#39;</td></tr>");
    canal_view_data_t none = CANAL_VIEW_MODELS(&row_schema, NULL, 0);
    expect("{{^.}}empty{{/.}}", &none, "empty");
}

/* A callback answers names; it may answer with models, JSON, text or booleans */
static int page_fn(const char *name, size_t len, canal_view_data_t *out, void *arg)
{
    static const struct row rows[] = {{.id = 11, .message = {"x", 1}}};
    if (len == 5 && memcmp(name, "title", 5) == 0)
        *out = CANAL_VIEW_TEXT("T&T");
    else if (len == 4 && memcmp(name, "rows", 4) == 0)
        *out = CANAL_VIEW_MODELS(&row_schema, rows, 1);
    else if (len == 5 && memcmp(name, "admin", 5) == 0)
        *out = CANAL_VIEW_BOOL(0);
    else if (len == 4 && memcmp(name, "json", 4) == 0)
        *out = CANAL_VIEW_JSON(arg);
    else
        return 0;
    return 1;
}

static void callback(void **state)
{
    json_t *j = json_pack("{s:s}", "k", "v");
    canal_view_data_t d = CANAL_VIEW_FN(page_fn, j);
    expect("{{title}}|{{#rows}}{{id}}:{{title}}{{/rows}}|{{^admin}}guest{{/admin}}|{{json.k}}|{{nothing}}", &d,
           "T&amp;T|11:T&amp;T|guest|v|");
    json_decref(j);
}

/* TechEmpower's fortunes page byte for byte: the <script> row escaped, the Japanese row and
 * the em dash intact, from typed models (the rows sorted by message, as the test wants) */
typedef struct {
    int32_t id;
    const char *message;
} fortune_t;

static const canal_schema_t fortune_schema = {
    .name = "Fortune",
    .size = sizeof(fortune_t),
    .fields = (const canal_field_t[]){{.name = "id", .type = CANAL_TYPE_INT32, CANAL_FIELD(fortune_t, id)},
                                      {.name = "message", .type = CANAL_TYPE_CSTRING, CANAL_FIELD(fortune_t, message)},
                                      {0}},
};

static void fortunes_page(void **state)
{
    static const fortune_t rows[] = {
        {11, "<script>alert(\"This should not be displayed in a browser alert box.\");</script>"},
        {4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"},
        {0, "Additional fortune added at request time."},
        {6, "Emacs is a nice operating system, but I prefer UNIX. \xe2\x80\x94 Tom Christaensen"},
        {12, "\xe3\x83\x95\xe3\x83\xac\xe3\x83\xbc\xe3\x83\xa0\xe3\x83\xaf\xe3\x83\xbc\xe3\x82\xaf"},
    };
    canal_view_data_t d = CANAL_VIEW_MODELS(&fortune_schema, rows, 5);
    expect("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"
           "{{#.}}<tr><td>{{id}}</td><td>{{message}}</td></tr>{{/.}}</table></body></html>",
           &d,
           "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"
           "<tr><td>11</td><td>&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);"
           "&lt;/script&gt;</td></tr>"
           "<tr><td>4</td><td>A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1</td></tr>"
           "<tr><td>0</td><td>Additional fortune added at request time.</td></tr>"
           "<tr><td>6</td><td>Emacs is a nice operating system, but I prefer UNIX. \xe2\x80\x94 Tom Christaensen</td></tr>"
           "<tr><td>12</td><td>\xe3\x83\x95\xe3\x83\xac\xe3\x83\xbc\xe3\x83\xa0\xe3\x83\xaf\xe3\x83\xbc\xe3\x82\xaf</td></tr>"
           "</table></body></html>");
}

/* A layout around a page: both see the data; the page goes where the layout says {{>body}} */
static void layout(void **state)
{
    canal_views_t *v = canal_views_create();
    const char *lay = "<html>\n  {{>body}}\n</html>\n", *page = "<h1>{{t}}</h1>\n<p>{{t}}</p>\n";
    assert_int_equal(canal_views_add(v, "layout", lay, strlen(lay), NULL), 0);
    assert_int_equal(canal_views_add(v, "page", page, strlen(page), NULL), 0);
    json_t *j = json_pack("{s:s}", "t", "x");
    canal_view_data_t d = CANAL_VIEW_JSON(j);
    char *out;
    size_t len;
    assert_int_equal(canal_views_render(v, "page", "layout", &d, &out, &len, NULL), 0);
    assert_string_equal(out, "<html>\n  <h1>x</h1>\n  <p>x</p>\n</html>\n");
    assert_int_equal(len, strlen(out));
    free(out);
    canal_error_info_t err;
    assert_int_equal(canal_views_render(v, "page", "nope", &d, &out, &len, &err), CANAL_ENOTFOUND);
    assert_null(out);
    assert_int_equal(canal_views_render(v, "nope", NULL, &d, &out, &len, &err), CANAL_ENOTFOUND);
    assert_non_null(strstr(err.message, "nope"));
    json_decref(j);
    canal_views_destroy(v);
}

/* Syntax errors: the code, the position and "NAME:LINE:COLUMN: what" */
static void syntax_errors(void **state)
{
    static const struct {
        const char *text, *where;
        int code;
    } cases[] = {
        {"ab\n  {{#rows}}x", "t:2:3: unclosed section", CANAL_ESYNTAX},
        {"{{#a}}{{/b}}", "t:1:7: a closing tag of another section", CANAL_ESYNTAX},
        {"x\n\n{{/a}}", "t:3:1: a closing tag without a section", CANAL_ESYNTAX},
        {"{{name", "t:1:1: unclosed tag", CANAL_ESYNTAX},
        {"{{{name}}", "t:1:1: unclosed tag", CANAL_ESYNTAX},
        {"{{}}", "t:1:1: a tag without a name", CANAL_ESYNTAX},
        {"{{a b}}", "t:1:1: a tag without a name, or with spaces", CANAL_ESYNTAX},
        {"{{=<% %>}}", "t:1:1: unclosed tag", CANAL_ESYNTAX},
        {"{{= x =}}", "t:1:1: bad delimiters", CANAL_ESYNTAX},
        {"{{=a= b=}}", "t:1:1: bad delimiters", CANAL_ESYNTAX},
        {"{{", "t:1:1: unclosed tag", CANAL_ESYNTAX},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        canal_error_info_t err = {0};
        char *out = render(cases[i].text, NULL, &err);
        assert_null(out);
        assert_int_equal(err.code, cases[i].code);
        if (strncmp(err.message, cases[i].where, strlen(cases[i].where)) != 0)
            fail_msg("%s: \"%s\", want \"%s\"", cases[i].text, err.message, cases[i].where);
    }
    canal_views_t *v = canal_views_create();
    assert_int_equal(canal_views_add(v, "nul", "a\0b", 3, NULL), CANAL_ESYNTAX);
    assert_int_equal(canal_views_add(NULL, "x", "", 0, NULL), CANAL_EINVAL);
    assert_int_equal(canal_views_add(v, NULL, "", 0, NULL), CANAL_EINVAL);
    /* a failure leaves the set as it was: the old "t" still renders */
    assert_int_equal(canal_views_add(v, "t", "old", 3, NULL), 0);
    assert_int_equal(canal_views_add(v, "t", "{{#x}}", 6, NULL), CANAL_ESYNTAX);
    char *out;
    assert_int_equal(canal_views_render(v, "t", NULL, NULL, &out, NULL, NULL), 0);
    assert_string_equal(out, "old");
    free(out);
    canal_views_destroy(v);
    canal_views_destroy(NULL);
}

/* The limits: size, section depth, partial depth; each a defined error */
static void limits(void **state)
{
    canal_views_t *v = canal_views_create();
    canal_error_info_t err;
    char *big = malloc(CANAL_VIEW_MAX_SIZE + 1);
    memset(big, 'a', CANAL_VIEW_MAX_SIZE + 1);
    assert_int_equal(canal_views_add(v, "big", big, CANAL_VIEW_MAX_SIZE + 1, &err), CANAL_ELIMIT);
    assert_int_equal(canal_views_add(v, "big", big, CANAL_VIEW_MAX_SIZE, &err), 0);
    free(big);
    char deep[CANAL_VIEW_MAX_DEPTH * 12 + 64] = "", *p = deep;
    for (int i = 0; i < CANAL_VIEW_MAX_DEPTH; i++)
        p += sprintf(p, "{{#a}}");
    for (int i = 0; i < CANAL_VIEW_MAX_DEPTH; i++)
        p += sprintf(p, "{{/a}}");
    assert_int_equal(canal_views_add(v, "deep", deep, strlen(deep), &err), 0);
    char deeper[sizeof(deep) + 16];
    snprintf(deeper, sizeof(deeper), "{{#a}}%s{{/a}}", deep);
    assert_int_equal(canal_views_add(v, "deeper", deeper, strlen(deeper), &err), CANAL_ELIMIT);
    assert_non_null(strstr(err.message, "nested too deep"));
    /* sections over a list of lists CANAL_VIEW_MAX_DEPTH deep render */
    json_t *a = json_true();
    for (int i = 0; i < CANAL_VIEW_MAX_DEPTH; i++)
        a = json_pack("{s:[o]}", "a", a);
    canal_view_data_t d = CANAL_VIEW_JSON(a);
    char *out;
    assert_int_equal(canal_views_render(v, "deep", NULL, &d, &out, NULL, &err), 0);
    free(out);
    json_decref(a);
    /* a partial that includes itself without end */
    assert_int_equal(canal_views_add(v, "loop", "x{{>loop}}", 10, &err), 0);
    assert_int_equal(canal_views_render(v, "loop", NULL, NULL, &out, NULL, &err), CANAL_ELIMIT);
    assert_null(out);
    assert_non_null(strstr(err.message, "partials nested deeper"));
    /* one that ends renders */
    assert_int_equal(canal_views_add(v, "node", "{{n}}{{#kids}}({{>node}}){{/kids}}", 34, &err), 0);
    json_t *tree = json_pack("{s:i, s:[{s:i, s:[{s:i, s:[]}]}]}", "n", 1, "kids", "n", 2, "kids", "n", 3, "kids");
    d = CANAL_VIEW_JSON(tree);
    assert_int_equal(canal_views_render(v, "node", NULL, &d, &out, NULL, &err), 0);
    assert_string_equal(out, "1(2(3))");
    free(out);
    json_decref(tree);
    canal_views_destroy(v);
}

/* ---- the app's templates ---- */

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/canal-views-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char sub[128];
    snprintf(sub, sizeof(sub), "%s/layouts", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file("layouts/main.mustache", "<!DOCTYPE html><title>{{title}}</title>{{>body}}\n");
    write_file("home.mustache", "<h1>{{title}}</h1>");
    write_file("ignored.txt", "{{#broken");
}

static int h_home(canal_req_t *req, void *data)
{
    json_t *j = json_pack("{s:s}", "title", "A & B");
    canal_view_data_t d = CANAL_VIEW_JSON(j);
    int rc = canal_res_view(req, 200, "home", &d);
    json_decref(j);
    return rc;
}

static int h_missing(canal_req_t *req, void *data)
{
    return canal_res_view(req, 200, "nope", NULL) == CANAL_ENOTFOUND ? 0 : -1;
}

static canal_app_t *new_app(canal_env_t env)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 1;
    cfg.port = 1;
    cfg.env = env;
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    assert_int_equal(canal_app_get(app, "home", h_home, NULL), 0);
    assert_int_equal(canal_app_get(app, "missing", h_missing, NULL), 0);
    return app;
}

static void app_views(void **state)
{
    make_dir();
    canal_app_t *app = new_app(CANAL_ENV_PRODUCTION);
    canal_error_info_t err;
    assert_int_equal(canal_app_views(app, dir, &err), 0);
    assert_int_equal(canal_app_view_layout(app, "layouts/main", &err), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    canal_test_response_t *r = canal_test_get(t, "/home");
    assert_int_equal(r->status, 200);
    assert_string_equal(canal_test_header(r, "content-type"), "text/html; charset=utf-8");
    assert_string_equal(r->body, "<!DOCTYPE html><title>A &amp; B</title><h1>A &amp; B</h1>\n");
    canal_test_response_free(r);
    r = canal_test_get(t, "/missing");
    assert_int_equal(r->status, 500);
    canal_test_response_free(r);
    /* production never looks at the disk again */
    write_file("home.mustache", "changed");
    r = canal_test_get(t, "/home");
    assert_non_null(strstr(r->body, "<h1>"));
    canal_test_response_free(r);
    /* nothing registers once started */
    assert_int_equal(canal_app_view(app, "x", "y", &err), CANAL_ESTATE);
    canal_test_stop(t);
    canal_app_destroy(app);
    remove_dir();
}

/* A syntax error is the app's registration error, with the file, line and column */
static void registration_errors(void **state)
{
    make_dir();
    write_file("bad.mustache", "<ul>\n{{#items}}\n<li>{{name}}</li>\n");
    canal_app_t *app = new_app(CANAL_ENV_PRODUCTION);
    canal_error_info_t err = {0};
    assert_int_equal(canal_app_views(app, dir, &err), CANAL_ESYNTAX);
    assert_non_null(strstr(err.message, "/bad.mustache:2:1: unclosed section"));
    assert_int_equal(canal_app_error(app, &err), CANAL_ESYNTAX);
    assert_non_null(strstr(err.message, "bad.mustache:2:1"));
    assert_int_equal(canal_app_view(app, "inline", "{{/x}}", &err), CANAL_ESYNTAX);
    assert_string_equal(err.message, "views: inline:1:1: a closing tag without a section");
    assert_int_equal(canal_app_views(app, "/nonexistent-canal-views", &err), CANAL_ESYS);
    assert_int_equal(canal_app_views(NULL, dir, &err), CANAL_EINVAL);
    canal_app_destroy(app);
    /* a layout that is not a template fails the start */
    app = new_app(CANAL_ENV_PRODUCTION);
    assert_int_equal(canal_app_view(app, "home", "x", &err), 0);
    assert_int_equal(canal_app_view_layout(app, "nope", &err), 0);
    assert_null(canal_test_start(app, &err));
    canal_app_destroy(app);
    remove_dir();
}

/* Development: a changed file is compiled again on the next request; a broken change answers
 * 500 and the last good set stays */
static void dev_reload(void **state)
{
    make_dir();
    canal_app_t *app = new_app(CANAL_ENV_DEVELOPMENT);
    canal_error_info_t err;
    assert_int_equal(canal_app_views(app, dir, &err), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    canal_test_response_t *r = canal_test_get(t, "/home");
    assert_string_equal(r->body, "<h1>A &amp; B</h1>");
    canal_test_response_free(r);
    write_file("home.mustache", "<h2>{{title}}</h2>");
    /* a modification time of its own, whatever the clock's resolution */
    char path[256];
    snprintf(path, sizeof(path), "%s/home.mustache", dir);
    struct timespec ts[2] = {{.tv_sec = 1000000000, .tv_nsec = 0}, {.tv_sec = 1000000000, .tv_nsec = 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
    r = canal_test_get(t, "/home");
    assert_string_equal(r->body, "<h2>A &amp; B</h2>");
    canal_test_response_free(r);
    write_file("home.mustache", "{{#broken}}");
    ts[1].tv_sec++;
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
    r = canal_test_get(t, "/home");
    assert_int_equal(r->status, 500);
    assert_non_null(strstr(r->body, "unclosed section"));
    canal_test_response_free(r);
    canal_test_stop(t);
    canal_app_destroy(app);
    remove_dir();
}

/* The controller layer: an action answers a page */
static int a_page(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_view_data_t d = CANAL_VIEW_TEXT("unused");
    d = CANAL_VIEW_FN(page_fn, NULL);
    return canal_ctx_view(ctx, 201, "page", &d);
}

static void controller(void **state)
{
    canal_app_t *app = new_app(CANAL_ENV_PRODUCTION);
    canal_error_info_t err;
    assert_int_equal(canal_app_view(app, "page", "<b>{{title}}</b>", &err), 0);
    canal_mvc_t *mvc = canal_mvc_create(app);
    static const canal_action_def_t actions[] = {{.name = "Index", .handler = a_page, .routes = {"pages"}}, {0}};
    static const canal_controller_def_t def = {.name = "Pages", .actions = actions};
    assert_int_equal(canal_mvc_add_controller(mvc, &def, NULL, &err), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    canal_test_response_t *r = canal_test_get(t, "/pages");
    assert_int_equal(r->status, 201);
    assert_string_equal(r->body, "<b>T&amp;T</b>");
    assert_string_equal(canal_test_header(r, "content-type"), "text/html; charset=utf-8");
    canal_test_response_free(r);
    assert_int_equal(canal_ctx_view(NULL, 200, "page", NULL), CANAL_EINVAL);
    canal_test_stop(t);
    canal_mvc_destroy(mvc);
    canal_app_destroy(app);
}

/* ---- streamed pages ---- */

typedef struct {
    int32_t id;
    const char *msg;
} srow_t;

static const canal_field_t srow_fields[] = {
    {.name = "id", CANAL_FIELD(srow_t, id), .type = CANAL_TYPE_INT32},
    {.name = "msg", CANAL_FIELD(srow_t, msg), .type = CANAL_TYPE_CSTRING},
    {.name = NULL}};
static const canal_schema_t srow_schema = {.name = "SRow", .size = sizeof(srow_t), .fields = srow_fields};

#define SROWS 400000
static srow_t *srows;             /* the data outlives the handler: freed by the test */
static atomic_long ticks;         /* rows rendered so far ({{#tick}} in each row) */
static atomic_int done_calls, done_rc;

static int root_fn(const char *name, size_t len, canal_view_data_t *out, void *arg)
{
    if (len == 4 && memcmp(name, "rows", 4) == 0) {
        *out = CANAL_VIEW_MODELS(&srow_schema, srows, (size_t)(uintptr_t)arg);
        return 1;
    }
    if (len == 4 && memcmp(name, "tick", 4) == 0) {
        atomic_fetch_add(&ticks, 1);
        *out = CANAL_VIEW_BOOL(0);
        return 1;
    }
    return 0;
}

static void page_done(int rc, void *arg)
{
    atomic_store(&done_rc, rc);
    atomic_fetch_add(&done_calls, 1);
}

/* /big?n=N: N rows streamed; /nostream: a template that does not exist */
static int h_big(canal_req_t *req, void *data)
{
    canal_str_t q = {0};
    char digits[16] = "";
    if (canal_req_query(req, "n", &q) > 0 && q.len < sizeof(digits))
        memcpy(digits, q.base, q.len); /* the value is not NUL-terminated */
    size_t n = digits[0] ? strtoul(digits, NULL, 10) : SROWS;
    canal_view_data_t d = CANAL_VIEW_FN(root_fn, (void *)(uintptr_t)n);
    return canal_res_view_stream(req, 203, "rows", &d, page_done, NULL);
}

static int h_nostream(canal_req_t *req, void *data)
{
    return canal_res_view_stream(req, 200, "none", NULL, page_done, NULL) == CANAL_ENOTFOUND ? 0 : -1;
}

static int wait_done(int calls)
{
    for (int i = 0; i < 500 && atomic_load(&done_calls) < calls; i++)
        usleep(10000);
    return atomic_load(&done_calls);
}

static void streamed(void **state)
{
    static const char rows_tpl[] = "<table>{{#rows}}{{#tick}}{{/tick}}<tr><td>{{id}}</td><td>{{msg}}</td></tr>\n{{/rows}}</table>";
    srows = malloc(SROWS * sizeof(*srows));
    assert_non_null(srows);
    for (int i = 0; i < SROWS; i++)
        srows[i] = (srow_t){i, i % 7 ? "a <b> & \"c\"" : "\xe3\x83\x95\xe3\x83\xac\xe3\x83\xbc\xe3\x83\xa0"};
    canal_app_t *app = new_app(CANAL_ENV_PRODUCTION);
    canal_error_info_t err;
    assert_int_equal(canal_app_view(app, "rows", rows_tpl, &err), 0);
    assert_int_equal(canal_app_get(app, "big", h_big, NULL), 0);
    assert_int_equal(canal_app_get(app, "nostream", h_nostream, NULL), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    canal_test_set_timeout(t, 20000);

    /* the same bytes as the whole render */
    canal_views_t *v = canal_views_create();
    assert_int_equal(canal_views_add(v, "rows", rows_tpl, strlen(rows_tpl), &err), 0);
    canal_view_data_t d = CANAL_VIEW_FN(root_fn, (void *)(uintptr_t)SROWS);
    char *whole = NULL;
    size_t whole_len = 0;
    assert_int_equal(canal_views_render(v, "rows", NULL, &d, &whole, &whole_len, &err), 0);
    assert_true(whole_len > 16u << 20);
    atomic_store(&ticks, 0);
    canal_test_response_t *r = canal_test_get(t, "/big");
    assert_non_null(r);
    assert_int_equal(r->status, 203);
    assert_string_equal(canal_test_header(r, "content-type"), "text/html; charset=utf-8");
    assert_null(canal_test_header(r, "content-length"));
    assert_int_equal(r->body_len, whole_len);
    assert_memory_equal(r->body, whole, whole_len);
    canal_test_response_free(r);
    assert_int_equal(wait_done(1), 1);
    assert_int_equal(atomic_load(&done_rc), 0);
    assert_int_equal(atomic_load(&ticks), SROWS);

    /* a page that ends within its first part: answered whole, with its length */
    r = canal_test_get(t, "/big?n=3");
    assert_int_equal(r->status, 203);
    assert_non_null(canal_test_header(r, "content-length"));
    assert_int_equal(r->body_len, strlen("<table></table>") + 3 * strlen("<tr><td>0</td><td>a &lt;b&gt; &amp; &quot;c&quot;</td></tr>\n") -
                                       strlen("a &lt;b&gt; &amp; &quot;c&quot;") + strlen("\xe3\x83\x95\xe3\x83\xac\xe3\x83\xbc\xe3\x83\xa0"));
    canal_test_response_free(r);
    assert_int_equal(wait_done(2), 2);
    assert_int_equal(atomic_load(&done_rc), 0);

    /* no such template: a 500 before anything is sent, and done is not called */
    r = canal_test_get(t, "/nostream");
    assert_int_equal(r->status, 500);
    canal_test_response_free(r);
    assert_int_equal(atomic_load(&done_calls), 2);

    /* a client that stops reading holds the render back; gone, it ends it */
    atomic_store(&ticks, 0);
    canal_test_stream_t *s = canal_test_stream_open(t, "GET", "/big", NULL, 0);
    assert_non_null(s);
    assert_int_equal(canal_test_stream_head(s)->status, 203);
    usleep(300000);
    long held = atomic_load(&ticks);
    assert_true(held > 0);
    assert_true(held < SROWS * 3 / 4); /* what the sockets' buffers (about 3 MB here) and a part take */
    char buf[65536];
    assert_true(canal_test_stream_read(s, buf, sizeof(buf), 5000) > 0);
    canal_test_stream_close(s);
    assert_int_equal(wait_done(3), 3);
    assert_int_equal(atomic_load(&done_rc), CANAL_ECLOSED);
    assert_true(atomic_load(&ticks) < SROWS);
    print_message("streamed: %ld of %d rows rendered while the client read nothing\n", held, SROWS);

    assert_int_equal(canal_res_view_stream(NULL, 200, "rows", NULL, NULL, NULL), CANAL_EINVAL);
    canal_test_stop(t);
    canal_app_destroy(app);
    canal_views_destroy(v);
    free(whole);
    free(srows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escaping),      cmocka_unit_test(json_data),     cmocka_unit_test(models),
        cmocka_unit_test(callback),      cmocka_unit_test(fortunes_page), cmocka_unit_test(layout),        cmocka_unit_test(syntax_errors),
        cmocka_unit_test(limits),        cmocka_unit_test(app_views),     cmocka_unit_test(registration_errors),
        cmocka_unit_test(dev_reload),    cmocka_unit_test(controller),    cmocka_unit_test(streamed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
