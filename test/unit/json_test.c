/* SPDX-License-Identifier: MIT */
/*
 * canal's JSON writer must produce exactly the bytes of jansson's
 * json_dumpb(JSON_COMPACT | JSON_ENCODE_ANY): checked on hand-picked values (escapes,
 * UTF-8, integers at the limits, reals jansson prints specially), on the demo's data set,
 * and on many random documents.
 */
#include "test.h"
#include <h2o.h>
#include "server/server_internal.h"

static h2o_mem_pool_t pool;

static void same_as_jansson(const json_t *j)
{
    size_t len;
    char *ours = canal__json_write(&pool, j, 16, &len);
    char *theirs = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_non_null(theirs);
    assert_non_null(ours);
    if (len != strlen(theirs) || memcmp(ours, theirs, len) != 0)
        fail_msg("jansson: %s\ncanal:   %.*s", theirs, (int)len, ours);
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

static void demo_data(void **state)
{
    json_error_t err;
    json_t *j = json_load_file("examples/demo/data/northwind.json", 0, &err);
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
        size_t n = (size_t)(rand_r(seed) % sizeof(s));
        for (size_t i = 0; i < n; i++)
            s[i] = (char)(rand_r(seed) % 0x7F + 1); /* ASCII with controls, quotes, backslashes */
        return json_stringn(s, n);
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

int main(void)
{
    h2o_mem_init_pool(&pool);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values),
        cmocka_unit_test(demo_data),
        cmocka_unit_test(random_documents),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    h2o_mem_clear_pool(&pool);
    return rc;
}
