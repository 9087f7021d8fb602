/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the access log's two line formatters (lib/observability/acclog_line.c) on
 * arbitrary method, target, Referer, User-Agent and route bytes. Checks, besides the
 * sanitizers:
 *   - both lines fit in canal__acclog_bound() and end with their only newline;
 *   - the CLF line is exactly the one a byte-by-byte reference of libh2o's escaping makes
 *     (so the formatter's word-at-a-time scan never keeps a byte it must escape, or the reverse);
 *   - the JSON line parses with jansson as one object; each string is the input byte for byte
 *     when the input is valid UTF-8, and otherwise valid UTF-8 with a U+FFFD in it; the route
 *     is the input with one leading '/'.
 * The input: three bytes that cut the rest into the four request strings, then the bytes;
 * the target is the route too.
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "observability/acclog_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

/* libh2o's apache escaping, one byte at a time */
static char *ref_clf(char *o, canal_str_t s)
{
    for (size_t i = 0; i < s.len; i++) {
        unsigned c = (unsigned char)s.base[i];
        o += c >= 0x20 && c < 0x7d && c != '"' ? sprintf(o, "%c", c) : sprintf(o, "\\x%02x", c);
    }
    return o;
}

static void check_string(json_t *obj, const char *key, canal_str_t in)
{
    json_t *v = json_object_get(obj, key);
    check(json_is_string(v), "a string");
    const char *got = json_string_value(v);
    size_t n = json_string_length(v);
    if (canal_utf8_valid(in))
        check(n == in.len && memcmp(got, in.base, n) == 0, "valid UTF-8 round-trips");
    else
        check(memmem(got, n, "\xef\xbf\xbd", 3) != NULL, "invalid UTF-8 shows U+FFFD");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    const char *p = (const char *)data + 3;
    size_t rest = size - 3, cut[3];
    for (int i = 0; i < 3; i++)
        cut[i] = rest * data[i] / 255;
    if (cut[0] > cut[1]) {
        size_t t = cut[0];
        cut[0] = cut[1], cut[1] = t;
    }
    if (cut[1] > cut[2]) {
        size_t t = cut[1];
        cut[1] = cut[2], cut[2] = t;
    }
    if (cut[0] > cut[1]) {
        size_t t = cut[0];
        cut[0] = cut[1], cut[1] = t;
    }
    struct canal__acclog_entry e = {
        .client = {"203.0.113.9", 11},
        .clf_time = {"02/Dec/2026:07:46:58 +0000", 26},
        .unix_us = 1796197618123456,
        .method = {p, cut[0]},
        .target = {p + cut[0], cut[1] - cut[0]},
        .version = 0x101,
        .status = 200,
        .bytes = 13,
        .duration_us = 1234,
        .route = {p + cut[0], cut[1] - cut[0]},
        .request_id = {"5f3a09c1-0-1a", 13},
        .referer = {p + cut[1], cut[2] - cut[1]},
        .user_agent = {p + cut[2], rest - cut[2]},
        .id_column = 1,
    };
    size_t bound = canal__acclog_bound(&e);
    char *line = malloc(bound + 1), *want = malloc(bound + 1);

    size_t n = canal__acclog_clf(line, &e);
    check(n <= bound, "CLF within the bound");
    check(memchr(line, '\n', n) == line + n - 1, "CLF: one newline, at the end");
    char *o = want + sprintf(want, "203.0.113.9 - - [02/Dec/2026:07:46:58 +0000] \"");
    o = ref_clf(o, e.method);
    *o++ = ' ';
    o = ref_clf(o, e.target);
    o += sprintf(o, " HTTP/1.1\" 200 13 \"");
    o = ref_clf(o, e.referer);
    o += sprintf(o, "\" \"");
    o = ref_clf(o, e.user_agent);
    o += sprintf(o, "\" \"5f3a09c1-0-1a\"\n");
    check((size_t)(o - want) == n && memcmp(line, want, n) == 0, "CLF as the byte-by-byte reference");

    n = canal__acclog_json(line, &e);
    check(n <= bound, "JSON within the bound");
    check(memchr(line, '\n', n) == line + n - 1, "JSON: one newline, at the end");
    json_error_t err;
    json_t *obj = json_loadb(line, n, JSON_ALLOW_NUL, &err);
    if (obj == NULL)
        fprintf(stderr, "jansson: %s\n%.*s", err.text, (int)n, line);
    check(json_is_object(obj), "JSON parses as an object");
    check_string(obj, "method", e.method);
    check_string(obj, "target", e.target);
    check_string(obj, "referer", e.referer);
    check_string(obj, "user_agent", e.user_agent);
    canal_str_t route = e.route;
    while (route.len > 0 && route.base[0] == '/')
        route.base++, route.len--;
    json_t *r = json_object_get(obj, "route");
    check(json_is_string(r) && json_string_value(r)[0] == '/', "the route starts with '/'");
    if (canal_utf8_valid(route))
        check(json_string_length(r) == route.len + 1 && memcmp(json_string_value(r) + 1, route.base, route.len) == 0,
              "the route round-trips");
    json_decref(obj);
    free(line);
    free(want);
    return 0;
}
