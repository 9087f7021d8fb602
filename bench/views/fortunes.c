/* SPDX-License-Identifier: MIT */
/*
 * The cost of a page: TechEmpower's fortunes page (12 rows of id and message, the <script> row
 * escaped, the Japanese row intact) rendered N times by canal's Mustache engine from typed
 * models (view) or from a json_t of the same rows (view-json), or written N times by hand with
 * snprintf and an escape loop (snprintf), into a buffer kept between pages. bench/views-ir runs it under callgrind at two counts and prints instructions
 * per page; the program checks first that both ways give the same bytes.
 *
 *   fortunes view|view-json|snprintf N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>
#include "views/views.h"

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

/* sorted by message, with the one added at request time */
static const fortune_t fortunes[] = {
    {11, "<script>alert(\"This should not be displayed in a browser alert box.\");</script>"},
    {4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"},
    {5, "A computer program does what you tell it to do, not what you want it to do."},
    {2, "A computer scientist is someone who fixes things that aren't broken."},
    {8, "A list is only as strong as its weakest link. \xe2\x80\x94 Donald Knuth"},
    {0, "Additional fortune added at request time."},
    {3, "After enough decimal places, nobody gives a damn."},
    {7, "Any program that runs right is obsolete."},
    {10, "Computers make very fast, very accurate mistakes."},
    {6, "Emacs is a nice operating system, but I prefer UNIX. \xe2\x80\x94 Tom Christaensen"},
    {9, "Feature: A bug with seniority."},
    {12, "\xe3\x83\x95\xe3\x83\xac\xe3\x83\xbc\xe3\x83\xa0\xe3\x83\xaf\xe3\x83\xbc\xe3\x82\xaf\xe3\x81\xae\xe3\x83\x99\xe3\x83\xb3\xe3\x83\x81\xe3\x83\x9e\xe3\x83\xbc\xe3\x82\xaf"},
};
#define NFORTUNES (sizeof(fortunes) / sizeof(fortunes[0]))

static const char page[] = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th>"
                           "<th>message</th></tr>{{#fortunes}}<tr><td>{{id}}</td><td>{{message}}</td></tr>{{/fortunes}}"
                           "</table></body></html>";

static int data_fn(const char *name, size_t len, canal_view_data_t *out, void *arg)
{
    if (len != 8 || memcmp(name, "fortunes", 8) != 0)
        return 0;
    *out = CANAL_VIEW_MODELS(&fortune_schema, fortunes, NFORTUNES);
    return 1;
}

static void put(struct canal__vbuf *b, const char *s, size_t len)
{
    if (b->cap - b->len < len) {
        b->cap = (b->len + len) * 2;
        b->base = realloc(b->base, b->cap);
    }
    memcpy(b->base + b->len, s, len);
    b->len += len;
}

/* the same bytes by hand: snprintf for the numbers, a loop for the escapes */
static void by_hand(struct canal__vbuf *b)
{
    static const char head[] = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th>"
                               "<th>message</th></tr>";
    static const char foot[] = "</table></body></html>";
    put(b, head, sizeof(head) - 1);
    for (size_t i = 0; i < NFORTUNES; i++) {
        char num[32];
        int n = snprintf(num, sizeof(num), "<tr><td>%d</td><td>", (int)fortunes[i].id);
        put(b, num, (size_t)n);
        const char *s = fortunes[i].message, *run = s;
        for (; *s; s++) {
            const char *e = NULL;
            switch (*s) {
            case '&': e = "&amp;"; break;
            case '<': e = "&lt;"; break;
            case '>': e = "&gt;"; break;
            case '"': e = "&quot;"; break;
            case '\'': e = "&#39;"; break;
            default: continue;
            }
            put(b, run, (size_t)(s - run));
            put(b, e, strlen(e));
            run = s + 1;
        }
        put(b, run, (size_t)(s - run));
        put(b, "</td></tr>", 10);
    }
    put(b, foot, sizeof(foot) - 1);
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "view") != 0 && strcmp(argv[1], "view-json") != 0 &&
                      strcmp(argv[1], "snprintf") != 0)) {
        fprintf(stderr, "usage: fortunes view|view-json|snprintf N\n");
        return 2;
    }
    long n = atol(argv[2]);
    canal_views_t *v = canal_views_create();
    canal_error_info_t err;
    if (canal_views_add(v, "fortunes", page, strlen(page), &err) != 0) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    json_t *rows = json_array();
    for (size_t i = 0; i < NFORTUNES; i++)
        json_array_append_new(rows, json_pack("{s:i, s:s}", "id", (int)fortunes[i].id, "message", fortunes[i].message));
    json_t *root = json_pack("{s:o}", "fortunes", rows);
    canal_view_data_t d = strcmp(argv[1], "view-json") == 0 ? CANAL_VIEW_JSON(root) : CANAL_VIEW_FN(data_fn, NULL);
    struct canal__vbuf a = {0}, b = {0};
    canal__views_render_to(v, "fortunes", NULL, &d, &a, &err);
    by_hand(&b);
    if (a.len != b.len || memcmp(a.base, b.base, a.len) != 0) {
        fprintf(stderr, "the two pages differ:\n%.*s\n%.*s\n", (int)a.len, a.base, (int)b.len, b.base);
        return 1;
    }
    size_t bytes = a.len;
    int view = strcmp(argv[1], "snprintf") != 0;
    for (long i = 0; i < n; i++) {
        if (view) {
            a.len = 0;
            canal__views_render_to(v, "fortunes", NULL, &d, &a, &err);
        } else {
            b.len = 0;
            by_hand(&b);
        }
    }
    printf("%zu bytes a page\n", bytes);
    free(a.base);
    free(b.base);
    canal_views_destroy(v);
    json_decref(root);
    return 0;
}
