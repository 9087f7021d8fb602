/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the Mustache compiler and renderer (lib/views/mustache.c) on any bytes.
 * The input is a template; compiled, it is also the partial "p" (so it may include itself) and
 * rendered with data that has lists, objects, dotted names and dangerous text. Checks, besides
 * the sanitizers:
 *   - compiling fails only with CANAL_ESYNTAX, CANAL_ELIMIT, and a message "NAME:LINE:COLUMN";
 *   - rendering fails only with CANAL_ELIMIT (partials or contexts too deep);
 *   - the input as a value: {{x}} leaves none of < > " ' in the output and every & starts one
 *     of the five entities, and {{{x}}} gives the input back byte for byte.
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

static json_t *context(void)
{
    return json_pack("{s:s, s:[i, s, {s:s}], s:{s:{s:b}}, s:b, s:n, s:f}", "x", "<a href='&'>\"", "list", 1, "two",
                     "x", "in list", "a", "b", "c", 1, "t", 1, "z", "f", 1.5);
}

static void escaping(const uint8_t *data, size_t size)
{
    json_t *j = json_object();
    json_object_set_new(j, "x", json_stringn_nocheck((const char *)data, size));
    canal_view_data_t d = CANAL_VIEW_JSON(j);
    canal_views_t *v = canal_views_create();
    check(canal_views_add(v, "e", "{{x}}", 5, NULL) == 0 && canal_views_add(v, "r", "{{{x}}}", 7, NULL) == 0, "compile");
    char *out;
    size_t len;
    check(canal_views_render(v, "e", NULL, &d, &out, &len, NULL) == 0, "render {{x}}");
    for (size_t i = 0; i < len; i++) {
        check(out[i] != '<' && out[i] != '>' && out[i] != '"' && out[i] != '\'', "a dangerous byte escaped");
        if (out[i] == '&') {
            const char *e = out + i;
            check(!strncmp(e, "&amp;", 5) || !strncmp(e, "&lt;", 4) || !strncmp(e, "&gt;", 4) ||
                      !strncmp(e, "&quot;", 6) || !strncmp(e, "&#39;", 5),
                  "& starts an entity");
        }
    }
    free(out);
    check(canal_views_render(v, "r", NULL, &d, &out, &len, NULL) == 0, "render {{{x}}}");
    check(len == size && memcmp(out, data, size) == 0, "raw is the same bytes");
    free(out);
    canal_views_destroy(v);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *ctx;
    if (ctx == NULL)
        ctx = context();
    escaping(data, size);
    canal_views_t *v = canal_views_create();
    canal_error_info_t err = {0};
    int rc = canal_views_add(v, "p", (const char *)data, size, &err);
    if (rc != 0) {
        check(rc == CANAL_ESYNTAX || rc == CANAL_ELIMIT, "compile error code");
        check(strncmp(err.message, "p:", 2) == 0, "the message names the template");
    } else {
        canal_view_data_t d = CANAL_VIEW_JSON(ctx);
        char *out = NULL;
        size_t len;
        rc = canal_views_render(v, "p", NULL, &d, &out, &len, &err);
        check(rc == 0 || rc == CANAL_ELIMIT, "render error code");
        check((rc == 0) == (out != NULL), "output on success only");
        free(out);
    }
    canal_views_destroy(v);
    return 0;
}
