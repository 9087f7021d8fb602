/* SPDX-License-Identifier: MIT */
/*
 * canal's JSON writers must produce exactly the bytes of jansson's
 * json_dumpb(JSON_COMPACT | JSON_ENCODE_ANY): the json_t writer (canal__json_write) and the
 * streaming writer (canal_jw_t, fed value by value and with canal_jw_json()), checked on
 * hand-picked values (escapes, UTF-8, integers at the limits, reals jansson prints
 * specially), on the demo's data set, and on many random documents. Then every misuse of the
 * streaming writer (sticky errors), running out of memory, and its answers through a running
 * app in both layers (200 with the bytes, 500 for a failed writer).
 */
#include "test.h"
#include <math.h>
#include <stdatomic.h>
#include <h2o.h>
#include <canal/controller.h>
#include <canal/testing.h>
#include "core/core.h"
#include "counting_malloc.h"

static h2o_mem_pool_t pool;

/* Writes j through the streaming writer, one call per value, key and bracket. */
static void write_through(canal_jw_t *w, const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *key;
        size_t klen;
        json_t *v;
        canal_jw_object_begin(w);
        json_object_keylen_foreach((json_t *)j, key, klen, v)
        {
            canal_jw_keyn(w, key, klen);
            write_through(w, v);
        }
        canal_jw_object_end(w);
        break;
    }
    case JSON_ARRAY:
        canal_jw_array_begin(w);
        for (size_t i = 0; i < json_array_size(j); i++)
            write_through(w, json_array_get(j, i));
        canal_jw_array_end(w);
        break;
    case JSON_STRING:
        canal_jw_stringn(w, json_string_value(j), json_string_length(j));
        break;
    case JSON_INTEGER:
        canal_jw_int(w, json_integer_value(j));
        break;
    case JSON_REAL:
        canal_jw_real(w, json_real_value(j));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        canal_jw_bool(w, json_is_true(j));
        break;
    case JSON_NULL:
        canal_jw_null(w);
        break;
    }
}

static void same_bytes(const char *theirs, const char *ours, size_t len, const char *who)
{
    if (len != strlen(theirs) || memcmp(ours, theirs, len) != 0)
        fail_msg("jansson: %s\n%s:   %.*s", theirs, who, (int)len, ours);
}

static void same_as_jansson(const json_t *j)
{
    size_t len;
    const char *body;
    char *ours = canal__json_write(&pool, j, 16, &len);
    char *theirs = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_non_null(theirs);
    assert_non_null(ours);
    same_bytes(theirs, ours, len, "canal");
    /* the streaming writer, value by value (a small first buffer: it grows) */
    struct canal_jw w;
    canal__jw_init(&w, &pool, 16);
    write_through(&w, j);
    if (canal_jw_finish(&w, &body, &len) != 0)
        fail_msg("%s: writer failed: %s", theirs, canal_jw_error_text(&w));
    same_bytes(theirs, body, len, "canal_jw");
    /* and the value embedded whole, alone and as the member of an object */
    canal__jw_init(&w, &pool, 100);
    assert_int_equal(canal_jw_json(&w, j), 0);
    assert_int_equal(canal_jw_finish(&w, &body, &len), 0);
    same_bytes(theirs, body, len, "canal_jw_json");
    canal__jw_init(&w, &pool, 100);
    canal_jw_object_begin(&w);
    canal_jw_key(&w, "v");
    canal_jw_json(&w, j);
    canal_jw_object_end(&w);
    assert_int_equal(canal_jw_finish(&w, &body, &len), 0);
    json_t *wrap = json_pack("{s:O}", "v", j);
    char *theirs2 = json_dumps(wrap, JSON_COMPACT | JSON_ENCODE_ANY);
    same_bytes(theirs2, body, len, "canal_jw_json in an object");
    free(theirs2);
    json_decref(wrap);
    free(theirs);
}

static void values(void **state)
{
    static const char *const docs[] = {
        "{}", "[]", "null", "true", "false", "0", "-0", "9223372036854775807", "-9223372036854775808",
        "\"\"", "\"plain\"", "\"quote \\\" backslash \\\\ slash /\"", "\"\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"",
        "\"caf\\u00e9 \\u20ac \\ud83d\\ude00\"", "[1.5,-2.25,0.1,1e300,-1e-300,100.0,1e22,123456789012345678.0,5e-324]",
        "[0.5,32.38,746.625,3.0,-0.0,1.7976931348623157e308]",
        "{\"a\":{\"b\":[1,{\"c\":null}]},\"k\\u0001ey\":1,\"nul\":\"a\\u0000b\",\"\":2}",
        "[[[[[[[[[[]]]]]]]]]]",
        /* escaping: every control character, quotes, backslashes, U+2028/2029 (left as they
         * are, as jansson does), non-ASCII of every length, markup characters */
        "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f"
        "\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d"
        "\\u001e\\u001f \\u007f\"",
        "[\"\\u2028\",\"\\u2029\",\"a\\u2028b\",\"\\\\\\\"\\/\",\"<script>&amp;'\"]",
        "{\"\\u00e9t\\u00e9\":\"\\u4e2d\\u6587\",\"\\ud83d\\ude00\":[\"\\udbff\\udfff\",\"\\u0080\\u07ff\\u0800\\uffff\"]}",
        "{\"a\":[],\"b\":{},\"c\":[{}],\"d\":[true,false,null,0,-1,1.0]}",
        "[1e-7,1e21,1e-5,123.456,-9.999999999999999e-310,2.2250738585072014e-308,4503599627370496.0]",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_error_t err;
        json_t *j = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        if (j == NULL)
            fail_msg("%s: %s", docs[i], err.text);
        same_as_jansson(j);
        json_decref(j);
    }
    /* invalid UTF-8 cannot be written, by jansson or by canal */
    json_t *bad = json_stringn_nocheck("\xC0\xAF", 2);
    size_t len;
    assert_null(canal__json_write(&pool, bad, 16, &len));
    json_decref(bad);
    assert_null(canal__json_write(&pool, NULL, 16, &len));
}

/* Strings of every length up to 40 with one byte that needs escaping or a UTF-8 check at each
 * position: the writer reads short strings in overlapping pieces, so every length and every
 * position of the odd byte is a case of its own. An invalid byte fails in both writers. */
static void string_positions(void **state)
{
    static const char *const odd[] = {"\"", "\\", "\n", "\x01", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xff"};
    char buf[64];
    size_t wlen;
    for (size_t len = 0; len <= 40; len++) {
        memset(buf, 'a', sizeof(buf));
        json_t *j = json_stringn(buf, len);
        same_as_jansson(j);
        json_decref(j);
        for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++)
            for (size_t at = 0; at <= len; at++) {
                memset(buf, 'a', sizeof(buf));
                memcpy(buf + at, odd[k], strlen(odd[k]));
                j = json_stringn_nocheck(buf, len + strlen(odd[k]));
                if (odd[k][0] == '\xff')
                    assert_null(canal__json_write(&pool, j, 16, &wlen));
                else
                    same_as_jansson(j);
                json_decref(j);
            }
    }
}

static void demo_data(void **state)
{
    json_error_t err;
    json_t *j = json_load_file(CANAL_SRCDIR "/examples/demo/data/northwind.json", 0, &err);
    assert_non_null(j);
    same_as_jansson(j);
    same_as_jansson(json_object_get(j, "employees"));
    json_decref(j);
}

static json_t *random_value(unsigned *seed, int depth)
{
    int kind = rand_r(seed) % (depth > 4 ? 6 : 8);
    char s[16];
    switch (kind) {
    case 0: return json_null();
    case 1: return json_boolean(rand_r(seed) & 1);
    case 2: return json_integer((json_int_t)rand_r(seed) * (rand_r(seed) & 1 ? -1 : 1) * rand_r(seed));
    case 3: return json_real((double)rand_r(seed) / ((rand_r(seed) % 1000) + 1) * (rand_r(seed) & 1 ? 1e-7 : 1e7));
    case 4:
    case 5: {
        /* ASCII with controls, quotes, backslashes, and now and then a longer UTF-8 sequence */
        static const char *const wide[] = {"\xC3\xA9", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xF0\x9F\x98\x80",
                                           "\xEF\xBF\xBF", "\xC2\x80"};
        char t[64];
        size_t n = (size_t)(rand_r(seed) % 16), o = 0;
        for (size_t i = 0; i < n; i++) {
            if (rand_r(seed) % 8 == 0) {
                const char *u = wide[rand_r(seed) % 6];
                memcpy(t + o, u, strlen(u));
                o += strlen(u);
            } else {
                t[o++] = (char)(rand_r(seed) % 0x7F + 1);
            }
        }
        return json_stringn(t, o);
    }
    case 6: {
        json_t *a = json_array();
        for (int i = rand_r(seed) % 5; i > 0; i--)
            json_array_append_new(a, random_value(seed, depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (int i = rand_r(seed) % 5; i > 0; i--) {
            snprintf(s, sizeof(s), "k%d\"\\", rand_r(seed) % 100);
            json_object_set_new(o, s, random_value(seed, depth + 1));
        }
        return o;
    }
    }
}

static void random_documents(void **state)
{
    unsigned seed = 12345;
    for (int i = 0; i < 3000; i++) {
        json_t *j = random_value(&seed, 0);
        same_as_jansson(j);
        json_decref(j);
        h2o_mem_clear_pool(&pool);
    }
}

/* ---- the streaming writer's errors ---- */

static struct canal_jw w;

static canal_jw_t *fresh(void)
{
    canal__jw_init(&w, &pool, 64);
    return &w;
}

/* w failed with err: every later call returns it, the body is never handed out */
static void sticky(canal_jw_t *jw, int err)
{
    const char *body = NULL;
    size_t len = 0;
    assert_int_equal(canal_jw_error(jw), err);
    assert_true(canal_jw_error_text(jw)[0] != '\0');
    const char *why = canal_jw_error_text(jw);
    assert_int_equal(canal_jw_null(jw), err);
    assert_int_equal(canal_jw_int(jw, 1), err);
    assert_int_equal(canal_jw_key(jw, "k"), err);
    assert_int_equal(canal_jw_object_end(jw), err);
    assert_int_equal(canal_jw_array_end(jw), err);
    assert_int_equal(canal_jw_object_begin(jw), err);
    assert_int_equal(canal_jw_finish(jw, &body, &len), err);
    assert_null(body);
    assert_string_equal(canal_jw_error_text(jw), why); /* the first error is the one kept */
}

static void writer_misuse(void **state)
{
    canal_jw_t *j;

    /* a value where a key is expected, in an object, first or after a member */
    j = fresh();
    canal_jw_object_begin(j);
    assert_int_equal(canal_jw_int(j, 1), CANAL_ESTATE);
    assert_string_equal(canal_jw_error_text(j), "a value where an object key is expected");
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_object_begin(j);
    canal_jw_key(j, "a");
    canal_jw_null(j);
    assert_int_equal(canal_jw_string(j, "b"), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_object_begin(j);
    assert_int_equal(canal_jw_object_begin(j), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);

    /* keys outside objects, twice in a row */
    j = fresh();
    assert_int_equal(canal_jw_key(j, "a"), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_array_begin(j);
    assert_int_equal(canal_jw_key(j, "a"), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_object_begin(j);
    canal_jw_key(j, "a");
    assert_int_equal(canal_jw_key(j, "b"), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);

    /* unbalanced ends */
    j = fresh();
    assert_int_equal(canal_jw_object_end(j), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    assert_int_equal(canal_jw_array_end(j), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_array_begin(j);
    assert_int_equal(canal_jw_object_end(j), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_object_begin(j);
    assert_int_equal(canal_jw_array_end(j), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_object_begin(j);
    canal_jw_key(j, "a");
    assert_int_equal(canal_jw_object_end(j), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_array_begin(j);
    canal_jw_array_end(j);
    assert_int_equal(canal_jw_array_end(j), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);

    /* a second value at the top; a document not complete; an empty one */
    j = fresh();
    assert_int_equal(canal_jw_int(j, 1), 0);
    assert_int_equal(canal_jw_int(j, 2), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    canal_jw_object_begin(j);
    canal_jw_key(j, "a");
    canal_jw_array_begin(j);
    const char *body;
    size_t len;
    assert_int_equal(canal_jw_finish(j, &body, &len), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);
    j = fresh();
    assert_int_equal(canal_jw_finish(j, &body, &len), CANAL_ESTATE);
    sticky(j, CANAL_ESTATE);

    /* invalid UTF-8 in strings and keys: overlong, surrogate, cut, past U+10FFFF, a stray
     * continuation byte, 0xFF */
    static const char *const bad[] = {"\xC0\xAF", "a\xED\xA0\x80", "\xE2\x82", "\xF4\x90\x80\x80", "\x80", "x\xFF"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = fresh();
        assert_int_equal(canal_jw_string(j, bad[i]), CANAL_EINVAL);
        sticky(j, CANAL_EINVAL);
        j = fresh();
        canal_jw_object_begin(j);
        assert_int_equal(canal_jw_key(j, bad[i]), CANAL_EINVAL);
        sticky(j, CANAL_EINVAL);
    }
    j = fresh();
    assert_int_equal(canal_jw_string(j, NULL), CANAL_EINVAL);
    sticky(j, CANAL_EINVAL);
    j = fresh();
    canal_jw_object_begin(j);
    assert_int_equal(canal_jw_key(j, NULL), CANAL_EINVAL);
    sticky(j, CANAL_EINVAL);

    /* reals JSON cannot hold */
    const double nonfinite[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        j = fresh();
        canal_jw_array_begin(j);
        assert_int_equal(canal_jw_real(j, nonfinite[i]), CANAL_EINVAL);
        sticky(j, CANAL_EINVAL);
    }

    /* json_t values that cannot be written */
    j = fresh();
    assert_int_equal(canal_jw_json(j, NULL), CANAL_EINVAL);
    sticky(j, CANAL_EINVAL);
    json_t *badstr = json_stringn_nocheck("\xC0\xAF", 2);
    j = fresh();
    assert_int_equal(canal_jw_json(j, badstr), CANAL_EINVAL);
    sticky(j, CANAL_EINVAL);
    json_decref(badstr);

    /* depth: CANAL_JW_MAX_DEPTH containers open is fine, one more is not */
    j = fresh();
    for (int i = 0; i < CANAL_JW_MAX_DEPTH; i++)
        assert_int_equal(i % 2 ? canal_jw_array_begin(j) : (canal_jw_object_begin(j) || canal_jw_key(j, "k")), 0);
    assert_int_equal(canal_jw_array_begin(j), CANAL_ELIMIT);
    sticky(j, CANAL_ELIMIT);
    j = fresh();
    for (int i = 0; i < CANAL_JW_MAX_DEPTH; i++)
        canal_jw_array_begin(j);
    for (int i = 0; i < CANAL_JW_MAX_DEPTH; i++)
        canal_jw_array_end(j);
    assert_int_equal(canal_jw_finish(j, &body, &len), 0);
    assert_int_equal(len, 2 * CANAL_JW_MAX_DEPTH);

    /* a string too large to ever fit (its bytes are not read) */
    j = fresh();
    assert_int_equal(canal_jw_stringn(j, "x", SIZE_MAX / 4), CANAL_ENOMEM);
    sticky(j, CANAL_ENOMEM);

    /* no writer */
    assert_int_equal(canal_jw_int(NULL, 1), CANAL_EINVAL);
    assert_int_equal(canal_jw_key(NULL, "k"), CANAL_EINVAL);
    assert_int_equal(canal_jw_object_begin(NULL), CANAL_EINVAL);
    assert_int_equal(canal_jw_array_end(NULL), CANAL_EINVAL);
    assert_int_equal(canal_jw_json(NULL, NULL), CANAL_EINVAL);
    assert_int_equal(canal_jw_error(NULL), CANAL_EINVAL);
    assert_int_equal(canal_jw_finish(NULL, &body, &len), CANAL_EINVAL);
    assert_string_equal(canal_jw_error_text(NULL), "no writer");

    /* scalars alone are documents (JSON_ENCODE_ANY), and a clean writer has no error text */
    j = fresh();
    assert_int_equal(canal_jw_real(j, 1.0), 0);
    assert_int_equal(canal_jw_error(j), 0);
    assert_string_equal(canal_jw_error_text(j), "");
    assert_int_equal(canal_jw_finish(j, &body, &len), 0);
    assert_int_equal(len, 3);
    assert_memory_equal(body, "1.0", 3);
    h2o_mem_clear_pool(&pool);
}

/* The first heap allocation fails, then a later realloc: CANAL_ENOMEM, no crash, no leak. */
static void writer_out_of_memory(void **state)
{
    if (!counting_usable())
        skip();
    static char big[5000];
    memset(big, 'a', sizeof(big));
    canal_jw_t *j = fresh();
    canal_jw_array_begin(j);
    counting = 1;
    fail_countdown = 0;
    int rc = canal_jw_stringn(j, big, 1000);
    counting = 0;
    fail_countdown = -1;
    assert_int_equal(rc, CANAL_ENOMEM);
    sticky(j, CANAL_ENOMEM);

    j = fresh();
    canal_jw_array_begin(j);
    assert_int_equal(canal_jw_stringn(j, big, 1000), 0); /* moved to the heap */
    counting = 1;
    fail_countdown = 0;
    rc = canal_jw_stringn(j, big, sizeof(big));
    counting = 0;
    fail_countdown = -1;
    assert_int_equal(rc, CANAL_ENOMEM);
    sticky(j, CANAL_ENOMEM);
    h2o_mem_clear_pool(&pool); /* frees the heap buffer */
}

/* ---- answers through a running app ---- */

static int h_ok(canal_req_t *req, void *data)
{
    canal_jw_t *jw = canal_req_jw(req);
    canal_jw_object_begin(jw);
    canal_jw_key(jw, "id");
    canal_jw_int(jw, 1);
    canal_jw_key(jw, "name");
    canal_jw_string(jw, "Woo");
    canal_jw_object_end(jw);
    return canal_res_jw(req, 200, jw);
}

/* A large answer: the writer's buffer moves to the heap on the way. */
static int h_big(canal_req_t *req, void *data)
{
    canal_jw_t *jw = canal_req_jw(req);
    canal_jw_array_begin(jw);
    for (int i = 0; i < 20000; i++)
        canal_jw_int(jw, i);
    canal_jw_array_end(jw);
    return canal_res_jw(req, 201, jw);
}

static atomic_int misuse_seen;

static int h_misuse(canal_req_t *req, void *data)
{
    canal_jw_t *jw = canal_req_jw(req);
    canal_jw_object_begin(jw);
    canal_jw_string(jw, "no key"); /* the error sticks */
    canal_jw_object_end(jw);
    int rc = canal_res_jw(req, 200, jw);
    /* checked on the test's thread (cmocka's asserts are not for the worker's) */
    misuse_seen = rc == CANAL_ESTATE && canal_req_failure(req) != NULL && !canal_res_committed(req);
    return rc;
}

/* The handler ignores the send's error and returns 0: still a 500. */
static int h_open(canal_req_t *req, void *data)
{
    canal_jw_t *jw = canal_req_jw(req);
    canal_jw_array_begin(jw);
    canal_res_jw(req, 200, jw);
    return 0;
}

static int a_ok(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_jw_t *jw = canal_req_jw(req);
    canal_jw_object_begin(jw);
    canal_jw_key(jw, "message");
    canal_jw_string(jw, "Hello, World!");
    canal_jw_object_end(jw);
    return canal_res_jw(req, 200, jw);
}

static int a_bad(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_jw_t *jw = canal_req_jw(req);
    canal_jw_real(jw, NAN);
    return canal_res_jw(req, 200, jw);
}

/* ignores the failed result and returns 0 */
static int a_ignored(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_jw_t *jw = canal_req_jw(req);
    canal_jw_key(jw, "k");
    canal_res_jw(req, 200, jw);
    return 0;
}

static const canal_action_def_t jw_actions[] = {
    {.name = "Ok", .routes = {"/mvc/ok"}, .handler = a_ok},
    {.name = "Bad", .routes = {"/mvc/bad"}, .handler = a_bad},
    {.name = "Ignored", .routes = {"/mvc/ignored"}, .handler = a_ignored},
    {.name = NULL},
};

static void expect(canal_test_t *t, const char *method, const char *target, int status, const char *body)
{
    canal_test_response_t *r = canal_test_request(t, method, target, NULL, 0, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->status, status);
    if (body != NULL)
        assert_string_equal(r->body, body);
    if (status == 200 || status == 201)
        assert_string_equal(canal_test_header(r, "content-type"), "application/json");
    canal_test_response_free(r);
}

static void writer_answers(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 1;
    cfg.port = 1; /* never bound: the test listener replaces it */
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    canal_mvc_t *mvc = canal_mvc_create(app);
    assert_non_null(mvc);
    static const canal_controller_def_t jwc = {.name = "Jw", .actions = jw_actions};
    assert_int_equal(canal_mvc_add_controller(mvc, &jwc, NULL, NULL), 0);
    assert_int_equal(canal_app_get(app, "ok", h_ok, NULL), 0);
    assert_int_equal(canal_app_get(app, "big", h_big, NULL), 0);
    assert_int_equal(canal_app_get(app, "misuse", h_misuse, NULL), 0);
    assert_int_equal(canal_app_get(app, "open", h_open, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);

    static const char problem500[] = "{\"type\":\"about:blank\",\"title\":\"Internal Server Error\",\"status\":500}";
    expect(t, "GET", "/ok", 200, "{\"id\":1,\"name\":\"Woo\"}");
    canal_test_response_t *r = canal_test_request(t, "HEAD", "/ok", NULL, 0, NULL, 0);
    assert_int_equal(r->status, 200);
    assert_int_equal(r->body_len, 0);
    assert_string_equal(canal_test_header(r, "content-length"), "21");
    canal_test_response_free(r);
    r = canal_test_get(t, "/big");
    assert_int_equal(r->status, 201);
    json_t *a = canal_test_response_json(r, NULL);
    assert_int_equal(json_array_size(a), 20000);
    assert_int_equal(json_integer_value(json_array_get(a, 19999)), 19999);
    json_decref(a);
    canal_test_response_free(r);
    expect(t, "GET", "/misuse", 500, problem500);
    assert_int_equal(misuse_seen, 1); /* a failure recorded (a 500 at the commit), the error returned */
    expect(t, "GET", "/open", 500, problem500);
    expect(t, "GET", "/ok", 200, "{\"id\":1,\"name\":\"Woo\"}"); /* the connection goes on */
    expect(t, "GET", "/mvc/ok", 200, "{\"message\":\"Hello, World!\"}");
    expect(t, "GET", "/mvc/bad", 500, problem500);
    expect(t, "GET", "/mvc/ignored", 500, problem500);

    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
}

int main(void)
{
    h2o_mem_init_pool(&pool);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values),
        cmocka_unit_test(string_positions),
        cmocka_unit_test(demo_data),
        cmocka_unit_test(random_documents),
        cmocka_unit_test(writer_misuse),
        cmocka_unit_test(writer_out_of_memory),
        cmocka_unit_test(writer_answers),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    h2o_mem_clear_pool(&pool);
    return rc;
}
