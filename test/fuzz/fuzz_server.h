/* SPDX-License-Identifier: MIT */
/*
 * The in-process canal app shared by fuzz_binding.c and fuzz_query.c, and a blocking HTTP/1.1
 * client to talk to it. Included by exactly one fuzzer each (static functions).
 *
 * The app: one worker thread on 127.0.0.1 and an ephemeral port, production environment,
 * max_body_size FUZZ_MAX_BODY, small limits on the target (2048 bytes), header fields (16,
 * 1024 bytes) and query parameters (32), so that 414 and 431 are reached. Controller "Bind" declares parameters of every type and source:
 *   GET    /q/{id:int}      Q: route int32; query int32/int64/double/bool/string with bounds,
 *                              lengths, a pattern and allowed lists; headers; a default
 *   DELETE /q/{id:int}      Del: 204
 *   POST, PUT /b, /b/{id:long}  B: JSON body members of every type, and the whole body
 *   POST   /w               W: the whole JSON body, required
 *   POST   /items           Items: 201 Created with a Location made by link generation
 *   GET    /fail            Fail: 500 when ?boom=true (the only deliberate failure)
 * and at the router level:
 *   GET    /echo/{**rest}   dumps canal_req_query_all() as JSON (names and values hex-encoded,
 *                           as they may be any bytes) with canal_req_query_int64("n"), the raw
 *                           path and query (canal_req_path, canal_req_query_string)
 *   GET    /health          "ok"
 * Every action re-checks, on the server thread, that the values it was given satisfy their
 * declarations and came from where they were declared to come from (abort() otherwise, which
 * libFuzzer reports as a crash of the current input); the echo handler checks the query
 * accessors against each other (no NUL byte in a name or value, counts, first values,
 * canal_req_query_int64).
 */
#ifndef CANAL_FUZZ_SERVER_H
#define CANAL_FUZZ_SERVER_H

#include <stdbool.h>
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <regex.h> /* the oracle's own check of the declared patterns (POSIX, apart from canal's PCRE2) */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <sanitizer/asan_interface.h>
#include <canal.h>

#define FUZZ_MAX_BODY 4096

static canal_app_t *fz_app;
static canal_mvc_t *fz_mvc;
static uint16_t fz_port;
static atomic_ulong fz_deliberate_failures;

static void fz_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

/* LeakSanitizer: libh2o 2.2.5 keeps per-thread caches of freed memory that look leaked once
 * the worker thread has ended (test/lsan.supp says the same); built in, so that replaying an
 * input by hand needs no LSAN_OPTIONS. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:h2o_mem_alloc_recycle\n";
}

/* ---- server side ---- */

static const char *const fz_colours[] = {"red", "green", "blue", NULL};
static const char *const fz_small[] = {"1", "2", "3", "-4", NULL};
static const char *const fz_reals[] = {"0.5", "1.5", NULL};

static regex_t fz_re_p, fz_re_name, fz_re_t;

static int fz_in_list(const char *const *list, canal_str_t v)
{
    for (size_t i = 0; list[i] != NULL; i++)
        if (strlen(list[i]) == v.len && memcmp(list[i], v.base, v.len) == 0)
            return 1;
    return 0;
}

static int fz_matches(const regex_t *re, canal_str_t v)
{
    if (memchr(v.base, '\0', v.len) != NULL)
        return 0;
    char *s = strndup(v.base, v.len);
    fz_check(s != NULL, "strndup");
    int ok = regexec(re, s, 0, NULL, 0) == 0;
    free(s);
    return ok;
}

/* A JSON string of the bytes, or a marker when they are not UTF-8. */
static json_t *fz_jstr(canal_str_t s)
{
    json_t *j = json_stringn(s.base, s.len);
    return j ? j : json_string("<not utf-8>");
}

/* ---- the actions' args: one struct and schema each ---- */

typedef struct {
    int32_t id, i, xh;
    int64_t l;
    double d;
    bool b, has_i, has_d, has_b, has_n, has_xh, has_r;
    canal_str_t s, p, c, xname, need, e;
    int n, r; /* enums: indexes into fz_small, fz_reals */
} fz_q_t;
#define FQ(m) CANAL_FIELD(fz_q_t, m)
static const canal_field_t fz_q_fields[] = {
    {.name = "id", FQ(id), .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED,
     CANAL_MIN(-100000)},
    {.name = "i", FQ(i), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT32, CANAL_MIN(-5), CANAL_MAX(5),
     CANAL_PRESENT(fz_q_t, has_i)},
    {.name = "l", FQ(l), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT64, .def = "-9000000000",
     CANAL_MIN(-9000000000.0), CANAL_MAX(9000000000.0)},
    {.name = "d", FQ(d), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_DOUBLE, CANAL_MIN(-1.5), CANAL_MAX(2.5),
     CANAL_PRESENT(fz_q_t, has_d)},
    {.name = "b", FQ(b), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_BOOL, CANAL_PRESENT(fz_q_t, has_b)},
    {.name = "s", FQ(s), .source = CANAL_FROM_QUERY, .min_length = 2, .max_length = 4},
    {.name = "p", FQ(p), .source = CANAL_FROM_QUERY, .pattern = "[a-z]+[0-9]?"},
    {.name = "c", FQ(c), .source = CANAL_FROM_QUERY, .allowed = fz_colours},
    {.name = "n", FQ(n), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_ENUM, .allowed = fz_small,
     CANAL_PRESENT(fz_q_t, has_n)},
    {.name = "x-h", FQ(xh), .source = CANAL_FROM_HEADER, .type = CANAL_TYPE_INT32, CANAL_MIN(0),
     CANAL_PRESENT(fz_q_t, has_xh)},
    {.name = "x-name", FQ(xname), .source = CANAL_FROM_HEADER, .max_length = 8, .pattern = "[A-Za-z ]*"},
    {.name = "need", FQ(need), .source = CANAL_FROM_QUERY, .flags = CANAL_REQUIRED},
    {.name = "r", FQ(r), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_ENUM, .allowed = fz_reals,
     CANAL_PRESENT(fz_q_t, has_r)},
    {.name = "e", FQ(e), .source = CANAL_FROM_QUERY, .def = "dflt"},
    {.name = NULL}};
static const canal_schema_t fz_q_args = {.name = "QArgs", .size = sizeof(fz_q_t), .fields = fz_q_fields};

typedef struct {
    int32_t id;
} fz_id_t;
static const canal_field_t fz_del_fields[] = {
    {.name = "id", CANAL_FIELD(fz_id_t, id), .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32,
     .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t fz_del_args = {.name = "DelArgs", .size = sizeof(fz_id_t), .fields = fz_del_fields};

typedef struct {
    int64_t id, big;
    int32_t n;
    canal_str_t t, col;
    double f;
    json_t *o;
    bool ok, has_id, has_f, has_ok, has_big;
    int32_t *list; /* an array of int32 */
    size_t nlist;
} fz_b_t;
#define FB(m) CANAL_FIELD(fz_b_t, m)
static const canal_field_t fz_b_fields[] = {
    {.name = "id", FB(id), .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT64, CANAL_PRESENT(fz_b_t, has_id)},
    {.name = "n", FB(n), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED, CANAL_MIN(0), CANAL_MAX(100)},
    {.name = "t", FB(t), .def = "dflt", .max_length = 16, .pattern = "[^<>]*"},
    {.name = "f", FB(f), .type = CANAL_TYPE_DOUBLE, CANAL_MIN(-1e6), CANAL_MAX(1e6), .flags = CANAL_NULLABLE,
     CANAL_PRESENT(fz_b_t, has_f)},
    {.name = "o", FB(o), .type = CANAL_TYPE_JSON},
    {.name = "ok", FB(ok), .type = CANAL_TYPE_BOOL, CANAL_PRESENT(fz_b_t, has_ok)},
    {.name = "big", FB(big), .type = CANAL_TYPE_INT64, CANAL_PRESENT(fz_b_t, has_big)},
    {.name = "col", FB(col), .allowed = fz_colours},
    {.name = "list", FB(list), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_INT32, CANAL_COUNT(fz_b_t, nlist),
     .max_items = 8, CANAL_MIN(-10), CANAL_MAX(10)},
    {.name = NULL}};
static const canal_schema_t fz_b_args = {.name = "BArgs", .size = sizeof(fz_b_t), .fields = fz_b_fields};

typedef struct {
    json_t *doc;
} fz_w_t;
static const canal_field_t fz_w_fields[] = {
    {.name = "doc", CANAL_FIELD(fz_w_t, doc), .source = CANAL_FROM_BODY_WHOLE, .type = CANAL_TYPE_JSON,
     .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t fz_w_args = {.name = "WArgs", .size = sizeof(fz_w_t), .fields = fz_w_fields};

typedef struct {
    canal_str_t name;
} fz_items_t;
static const canal_field_t fz_items_fields[] = {
    {.name = "name", CANAL_FIELD(fz_items_t, name), .flags = CANAL_REQUIRED, .min_length = 1, .max_length = 32},
    {.name = NULL}};
static const canal_schema_t fz_items_args = {.name = "Item", .size = sizeof(fz_items_t), .fields = fz_items_fields};

typedef struct {
    bool boom, has_boom;
} fz_fail_t;
static const canal_field_t fz_fail_fields[] = {
    {.name = "boom", CANAL_FIELD(fz_fail_t, boom), .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_BOOL,
     CANAL_PRESENT(fz_fail_t, has_boom)},
    {.name = NULL}};
static const canal_schema_t fz_fail_args = {.name = "FailArgs", .size = sizeof(fz_fail_t), .fields = fz_fail_fields};

/* Echoes the bound args as JSON, through their schema (canal_res_model): the writer must
 * take whatever the binder stored. */
static int fz_show(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const canal_schema_t *schema = canal_action_def(canal_ctx_action(ctx))->args;
    int rc = canal_res_model(req, 200, schema, args);
    fz_check(rc == 0 || canal_req_failure(req) != NULL, "a bound struct is written");
    return rc;
}

/* The single query value of name: it must be there exactly once when a query parameter was
 * bound from it. */
static canal_str_t fz_query_once(canal_ctx_t *ctx, const char *name)
{
    canal_str_t v = {NULL, 0};
    fz_check(canal_req_query(canal_ctx_req(ctx), name, &v) == 1, "a bound query value was given once");
    return v;
}

static int fz_same(canal_str_t a, canal_str_t b)
{
    return a.len == b.len && memcmp(a.base, b.base, a.len) == 0;
}

static int fz_action_q(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const fz_q_t *a = args;
    int32_t i32;
    int64_t i64;
    double d;
    int b;
    fz_check(canal_req_param_int32(req, "id", &i32) == 0 && i32 == a->id, "id from the route");
    if (a->has_i) {
        fz_check(canal_parse_int32(fz_query_once(ctx, "i"), &i32) == 0 && i32 == a->i, "i from the query");
        fz_check(a->i >= -5 && a->i <= 5, "i within its bounds");
    } else {
        fz_check(canal_req_query(req, "i", NULL) == 0, "i absent only when not given");
    }
    fz_check(a->l >= -9000000000LL && a->l <= 9000000000LL, "l within its bounds");
    if (canal_req_query(req, "l", NULL) == 0)
        fz_check(a->l == -9000000000LL, "l's default");
    else
        fz_check(canal_parse_int64(fz_query_once(ctx, "l"), &i64) == 0 && i64 == a->l, "l from the query");
    if (a->has_d) {
        fz_check(canal_parse_double(fz_query_once(ctx, "d"), &d) == 0 && d == a->d, "d from the query");
        fz_check(a->d >= -1.5 && a->d <= 2.5 && !isnan(a->d), "d within its bounds");
    }
    if (a->has_b)
        fz_check(canal_parse_bool(fz_query_once(ctx, "b"), &b) == 0 && b == a->b, "b from the query");
    if (a->s.base != NULL) {
        fz_check(fz_same(a->s, fz_query_once(ctx, "s")), "s from the query");
        size_t n = canal_str_chars(a->s);
        fz_check(n >= 2 && n <= 4, "s within its lengths");
    }
    if (a->p.base != NULL)
        fz_check(fz_matches(&fz_re_p, a->p), "p matches its pattern");
    if (a->c.base != NULL)
        fz_check(fz_in_list(fz_colours, a->c), "c is an allowed colour");
    if (a->has_n)
        fz_check(a->n >= 0 && a->n < 4 && fz_same((canal_str_t){fz_small[a->n], strlen(fz_small[a->n])},
                                                  fz_query_once(ctx, "n")),
                 "n is an allowed number, by name");
    if (a->has_xh) {
        fz_check(canal_parse_int32(canal_req_header(req, "x-h"), &i32) == 0 && i32 == a->xh, "x-h from the header");
        fz_check(a->xh >= 0, "x-h within its bounds");
    }
    if (a->xname.base != NULL)
        fz_check(canal_str_chars(a->xname) <= 8 && fz_matches(&fz_re_name, a->xname), "x-name within its declaration");
    fz_check(a->need.base != NULL, "required need bound");
    if (a->has_r)
        fz_check(a->r == 0 || a->r == 1, "r is an allowed real");
    fz_check(a->e.base != NULL, "e has its default");
    return fz_show(ctx, req, args);
}

static int fz_action_b(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const fz_b_t *a = args;
    json_t *body = canal_req_json(req, NULL);
    fz_check(body != NULL && json_is_object(body), "body members come from an object");
    fz_check(a->n >= 0 && a->n <= 100, "n within its bounds");
    fz_check(json_integer_value(json_object_get(body, "n")) == a->n, "n from the body");
    fz_check(a->t.base != NULL, "t has its default");
    fz_check(canal_str_chars(a->t) <= 16 && fz_matches(&fz_re_t, a->t), "t within its declaration");
    if (a->has_f)
        fz_check(a->f >= -1e6 && a->f <= 1e6 && a->f == json_number_value(json_object_get(body, "f")), "f");
    else
        fz_check(json_is_null(json_object_get(body, "f")) || json_object_get(body, "f") == NULL, "f absent or null");
    fz_check(a->o == json_object_get(body, "o") || (a->o == NULL && json_is_null(json_object_get(body, "o"))),
             "o is the body's member");
    if (a->has_ok)
        fz_check(json_is_boolean(json_object_get(body, "ok")) && a->ok == json_is_true(json_object_get(body, "ok")),
                 "ok from the body");
    if (a->has_big)
        fz_check(json_integer_value(json_object_get(body, "big")) == a->big, "big from the body");
    if (a->col.base != NULL)
        fz_check(fz_in_list(fz_colours, a->col), "col is an allowed colour");
    if (a->list != NULL) {
        json_t *l = json_object_get(body, "list");
        fz_check(json_array_size(l) == a->nlist && a->nlist <= 8, "list has the body's length");
        for (size_t i = 0; i < a->nlist; i++)
            fz_check(a->list[i] >= -10 && a->list[i] <= 10 && json_integer_value(json_array_get(l, i)) == a->list[i],
                     "list's items from the body, within bounds");
    }
    return fz_show(ctx, req, args);
}

static int fz_action_w(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    fz_check(((const fz_w_t *)args)->doc == canal_req_json(req, NULL), "doc is the whole body");
    return fz_show(ctx, req, args);
}

static int fz_action_items(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_str_t name = ((const fz_items_t *)args)->name;
    size_t n = canal_str_chars(name);
    fz_check(n >= 1 && n <= 32, "name within its lengths");
    int rc = canal_ctx_created(ctx, NULL, "Q", (canal_kv_t[]){{"id", "7"}, {"need", "x y"}}, 2, &fz_items_args, args);
    fz_check(rc == 0, "created");
    return 0;
}

static int fz_action_del(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_status(req, 204);
}

static int fz_action_fail(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const fz_fail_t *a = args;
    if (a->has_boom && a->boom) {
        atomic_fetch_add(&fz_deliberate_failures, 1);
        return canal_req_fail(req, "deliberate failure");
    }
    return canal_res_text(req, 200, "fine");
}

static const canal_action_def_t fz_actions[] = {
    {.name = "Q", .routes = {"q/{id:int}"}, .handler = fz_action_q, .args = &fz_q_args},
    {.name = "Del", .methods = "DELETE", .routes = {"q/{id:int}"}, .handler = fz_action_del, .args = &fz_del_args},
    {.name = "B", .methods = "POST,PUT", .routes = {"b", "b/{id:long}"}, .handler = fz_action_b, .args = &fz_b_args},
    {.name = "W", .methods = "POST", .routes = {"w"}, .handler = fz_action_w, .args = &fz_w_args},
    {.name = "Items", .methods = "POST", .routes = {"items"}, .handler = fz_action_items, .args = &fz_items_args},
    {.name = "Fail", .routes = {"fail"}, .handler = fz_action_fail, .args = &fz_fail_args},
    {.name = NULL},
};

static void fz_hex(json_t *arr, canal_str_t s)
{
    static const char hx[] = "0123456789abcdef";
    char *h = malloc(2 * s.len + 1);
    fz_check(h != NULL, "malloc");
    for (size_t i = 0; i < s.len; i++) {
        h[2 * i] = hx[(unsigned char)s.base[i] >> 4];
        h[2 * i + 1] = hx[(unsigned char)s.base[i] & 15];
    }
    json_array_append_new(arr, json_stringn(h, 2 * s.len));
    free(h);
}

/* GET /echo/{**rest}: the query, checked and dumped. */
static int fz_echo(canal_req_t *req, void *data)
{
    (void)data;
    const canal_param_t *ps;
    size_t n = canal_req_query_all(req, &ps);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const canal_param_t *p = &ps[i];
        fz_check(memchr(p->name.base, '\0', p->name.len) == NULL, "no NUL in a query name");
        fz_check(p->value.len == 0 || memchr(p->value.base, '\0', p->value.len) == NULL, "no NUL in a query value");
        /* every name is visible: canal_req_query counts its occurrences and gives the first */
        char *name = strndup(p->name.base, p->name.len);
        fz_check(name != NULL, "strndup");
        size_t count = 0, first = n;
        for (size_t k = 0; k < n; k++)
            if (ps[k].name.len == p->name.len && memcmp(ps[k].name.base, p->name.base, p->name.len) == 0) {
                count++;
                if (first == n)
                    first = k;
            }
        canal_str_t v = {NULL, 0};
        fz_check(canal_req_query(req, name, &v) == count, "canal_req_query counts every occurrence");
        fz_check(v.base == ps[first].value.base && v.len == ps[first].value.len, "canal_req_query gives the first");
        free(name);
        json_t *pair = json_array();
        fz_hex(pair, p->name);
        fz_hex(pair, p->value);
        json_array_append_new(list, pair);
    }
    /* canal_req_query_int64 on "n": absent, repeated, or the canal_parse_int64 of the value */
    int64_t out = 77, want;
    canal_str_t v;
    size_t count = canal_req_query(req, "n", &v);
    int rc = canal_req_query_int64(req, "n", &out);
    if (count == 0)
        fz_check(rc == CANAL_ENOTFOUND && out == 77, "query_int: absent");
    else if (count > 1)
        fz_check(rc == CANAL_EINVAL, "query_int: repeated");
    else {
        int prc = canal_parse_int64(v, &want);
        fz_check(rc == prc && (rc != 0 || out == want), "query_int: parsed as canal_parse_int64");
    }
    canal_str_t rest = canal_req_param(req, "rest");
    json_t *restj = json_array(), *raw = json_array();
    fz_hex(restj, rest.base ? rest : (canal_str_t){"", 0});
    fz_hex(raw, canal_req_path(req));
    fz_hex(raw, canal_req_query_string(req));
    return canal_res_json_new(req, 200, json_pack("{s:o,s:o,s:o,s:i,s:I}", "query", list, "rest", restj, "raw", raw,
                                                  "rc", rc, "n", (json_int_t)(rc == 0 ? out : 0)));
}

static int fz_health(canal_req_t *req, void *data)
{
    (void)data;
    return canal_res_text(req, 200, "ok");
}

static void fz_stop(void)
{
    if (fz_app != NULL) {
        canal_app_stop(fz_app);
        canal_app_wait(fz_app);
        canal_app_destroy(fz_app);
        canal_mvc_destroy(fz_mvc);
        regfree(&fz_re_p);
        regfree(&fz_re_name);
        regfree(&fz_re_t);
        fz_app = NULL;
    }
}

static void fz_start(void)
{
    signal(SIGPIPE, SIG_IGN);
    fz_check(regcomp(&fz_re_p, "^([a-z]+[0-9]?)$", REG_EXTENDED | REG_NOSUB) == 0 &&
                 regcomp(&fz_re_name, "^([A-Za-z ]*)$", REG_EXTENDED | REG_NOSUB) == 0 &&
                 regcomp(&fz_re_t, "^([^<>]*)$", REG_EXTENDED | REG_NOSUB) == 0,
             "regcomp");
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.host = "127.0.0.1";
    cfg.port = 0;
    cfg.threads = 1;
    cfg.env = CANAL_ENV_PRODUCTION;
    cfg.max_body_size = FUZZ_MAX_BODY;
    /* limits small enough for the fuzzers to cross them: 414, 431 */
    cfg.max_target_length = 2048;
    cfg.max_header_count = 16;
    cfg.max_header_bytes = 1024;
    cfg.max_query_params = 32;
    cfg.no_signals = 1;
    cfg.offload_threads = 1;
    cfg.shutdown_timeout_ms = 2000;
    fz_app = canal_app_create(&cfg);
    fz_mvc = canal_mvc_create(fz_app);
    fz_check(fz_app != NULL && fz_mvc != NULL, "app");
    canal_error_info_t err;
    canal_controller_def_t c = {.name = "Bind", .actions = fz_actions};
    if (canal_mvc_add_controller(fz_mvc, &c, NULL, &err) != 0) {
        fprintf(stderr, "controller: %s\n", err.message);
        abort();
    }
    fz_check(canal_app_get(fz_app, "/echo/{**rest}", fz_echo, NULL) == 0, "echo route");
    fz_check(canal_app_get(fz_app, "/health", fz_health, NULL) == 0, "health route");
    fz_check(canal_app_start(fz_app) == 0, "start");
    fz_port = canal_app_port(fz_app, 0);
    fz_check(fz_port != 0, "port");
    atexit(fz_stop);
}

/* ---- client side ---- */

struct fz_reply {
    int status;
    int complete;        /* the head and the whole body (by Content-Length) arrived */
    int reset;           /* the connection was reset before an answer */
    char *raw;           /* everything read, NUL-terminated */
    size_t raw_len;
    const char *head;    /* the final (non-1xx) answer's head */
    size_t head_len;
    const char *body;
    size_t body_len;
    char ctype[128];
};

static void fz_reply_free(struct fz_reply *r)
{
    free(r->raw);
    memset(r, 0, sizeof(*r));
}

/* The value of header name in the head, or NULL (its length in *len). */
static const char *fz_header(const struct fz_reply *r, const char *name, size_t *len)
{
    size_t n = strlen(name);
    const char *p = r->head, *end = r->head + r->head_len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        if ((size_t)(eol - p) > n + 1 && strncasecmp(p, name, n) == 0 && p[n] == ':') {
            const char *v = p + n + 1;
            while (v < eol && *v == ' ')
                v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
                ve--;
            *len = (size_t)(ve - v);
            return v;
        }
        p = eol + 1;
    }
    return NULL;
}

/*
 * Sends req (len bytes) on a new connection and reads the answer to the end (the request
 * says Connection: close). is_head: the answer has no body. Returns 0, or -1 when the
 * server could not be reached or did not answer in time (r->reset tells a reset apart).
 */
static int fz_request(const char *req, size_t len, int is_head, struct fz_reply *r)
{
    memset(r, 0, sizeof(*r));
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    fz_check(fd >= 0, "socket");
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(fz_port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    /* libFuzzer's timers (SIGALRM) interrupt blocking calls: a socket with a timeout is not
     * restarted (signal(7)), so EINTR is retried everywhere; an interrupted connect goes on
     * in the background, and poll tells when it is done */
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = errno, soerr = 0;
        socklen_t sl = sizeof(soerr);
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (e == EINTR || e == EINPROGRESS) {
            int pr;
            while ((pr = poll(&pfd, 1, 10000)) < 0 && errno == EINTR)
                ;
            if (pr == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
                e = 0;
            else
                e = pr == 1 ? soerr : ETIMEDOUT;
        }
        if (e != 0) {
            fprintf(stderr, "connect: %s\n", strerror(e));
            close(fd);
            return -1;
        }
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* the server may answer (413) and close before reading everything */
        off += (size_t)w;
    }
    size_t cap = 16384;
    r->raw = malloc(cap + 1);
    fz_check(r->raw != NULL, "malloc");
    for (;;) {
        if (r->raw_len == cap) {
            cap *= 2;
            fz_check(cap <= (64u << 20), "an answer under 64 MiB");
            r->raw = realloc(r->raw, cap + 1);
            fz_check(r->raw != NULL, "realloc");
        }
        ssize_t n = recv(fd, r->raw + r->raw_len, cap - r->raw_len, 0);
        if (n > 0) {
            r->raw_len += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == ECONNRESET || errno == EPIPE))
            r->reset = 1;
        else if (n < 0) {
            fprintf(stderr, "recv: %s after %zu bytes\n", strerror(errno), r->raw_len);
            close(fd);
            r->raw[r->raw_len] = '\0';
            return -1;
        }
        break;
    }
    close(fd);
    r->raw[r->raw_len] = '\0';

    /* skip interim (1xx) answers */
    const char *p = r->raw, *end = r->raw + r->raw_len;
    for (;;) {
        const char *hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (hend == NULL || sscanf(p, "HTTP/1.1 %d", &r->status) != 1)
            return 0; /* incomplete */
        r->head = p;
        r->head_len = (size_t)(hend - p);
        p = hend + 4;
        if (r->status >= 200)
            break;
    }
    r->body = p;
    r->body_len = (size_t)(end - p);
    size_t vlen;
    const char *ct = fz_header(r, "content-type", &vlen);
    if (ct != NULL)
        snprintf(r->ctype, sizeof(r->ctype), "%.*s", (int)vlen, ct);
    const char *cl = fz_header(r, "content-length", &vlen);
    if (is_head || r->status == 204 || r->status == 304) {
        r->complete = r->body_len == 0;
    } else if (cl != NULL) {
        r->complete = (size_t)strtoull(cl, NULL, 10) == r->body_len;
    } else {
        r->complete = 1; /* read to the end of the connection */
    }
    return 0;
}

/* GET /health must answer 200 "ok". */
static void fz_health_check(void)
{
    static const char req[] = "GET /health HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n";
    struct fz_reply r;
    fz_check(fz_request(req, sizeof(req) - 1, 0, &r) == 0 && r.complete && r.status == 200 &&
                 r.body_len == 2 && memcmp(r.body, "ok", 2) == 0,
             "the server still answers GET /health");
    fz_reply_free(&r);
}

/* Appends n bytes to a growing buffer. */
struct fz_buf {
    char *p;
    size_t len, cap;
};

static void fz_put(struct fz_buf *b, const void *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = realloc(b->p, cap);
        fz_check(b->p != NULL, "realloc");
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void fz_puts(struct fz_buf *b, const char *s)
{
    fz_put(b, s, strlen(s));
}

/* Appends bytes for a request target: what the request line cannot carry (controls, space,
 * DEL) is percent-encoded, everything else (including '%', '?', '#' and bytes >= 0x80) is
 * sent as it is. */
static void fz_put_target(struct fz_buf *b, const uint8_t *s, size_t n)
{
    static const char hx[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        if (s[i] <= 0x20 || s[i] == 0x7F) {
            char e[3] = {'%', hx[s[i] >> 4], hx[s[i] & 15]};
            fz_put(b, e, 3);
        } else {
            fz_put(b, &s[i], 1);
        }
    }
}

/* Appends bytes for a header value: controls (but tab) and DEL become '_'. */
__attribute__((unused)) static void fz_put_header_value(struct fz_buf *b, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = (s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7F ? '_' : (char)s[i];
        fz_put(b, &c, 1);
    }
}

#endif
