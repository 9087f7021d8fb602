/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: route templates. The input (up to its first NUL) is registered as a
 * template under every trailing-slash policy. A refused template must come with a sane error
 * (code as returned, position inside the template, a message) and leave the router usable; an
 * accepted one must answer its accessors, generate links and list. The value parsers and
 * percent-decoding get the raw input too.
 *
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "canal/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

static void values_and_parsers(const uint8_t *data, size_t size)
{
    canal_str_t s = {(const char *)data, size};
    int32_t i32;
    int64_t i64;
    double d;
    int b;
    int rc = canal_parse_int64(s, &i64);
    check(rc == 0 || rc == CANAL_ETYPE || rc == CANAL_ERANGE, "parse_int64 result");
    if (canal_parse_int32(s, &i32) == 0)
        check(rc == 0 && i64 == i32, "int32 agrees with int64");
    rc = canal_parse_double(s, &d);
    check(rc == 0 || rc == CANAL_ETYPE || rc == CANAL_ERANGE, "parse_double result");
    rc = canal_parse_bool(s, &b);
    check(rc == CANAL_ETYPE || (rc == 0 && (b == 0 || b == 1)), "parse_bool result");
    char *dst = malloc(size + 1);
    if (dst == NULL)
        return;
    for (int plus = 0; plus < 2; plus++) {
        rc = canal_percent_decode(s, dst, plus);
        check(rc == CANAL_EBADREQ || (rc >= 0 && (size_t)rc <= size), "percent_decode length");
        /* %00 is refused, so a NUL comes out only if one went in */
        if (rc >= 0 && memchr(data, 0, size) == NULL)
            check(memchr(dst, 0, (size_t)rc) == NULL, "decoded value holds no NUL");
    }
    free(dst);
}

/* glibc's regcomp can take gigabytes on a pattern of stacked quantifiers ("a+++...+"):
 * templates are the developer's, not the client's, so such regexes are not fuzzed here. */
static int regex_too_costly(const char *t, size_t n)
{
    int has_regex = 0, quantifiers = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 5 <= n && strncasecmp(t + i, "regex", 5) == 0)
            has_regex = 1;
        quantifiers += t[i] == '+' || t[i] == '*' || t[i] == '?' || t[i] == '{';
    }
    return has_regex && quantifiers > 8;
}

static void try_template(const char *tmpl, int policy)
{
    canal_router_options_t opts = {.trailing_slash = policy, .case_sensitive = policy == 1};
    canal_router_t *r = canal_router_create(&opts);
    if (r == NULL)
        return;
    canal_route_spec_t keep = {.tmpl = "/keep/{k:int}"};
    check(canal_router_add(r, &keep, NULL, NULL) == 0, "baseline route");

    canal_error_info_t err;
    memset(&err, 0, sizeof(err));
    const canal_route_t *rt = NULL;
    canal_route_spec_t spec = {.method = "PUT", .tmpl = tmpl, .name = "n"};
    int rc = canal_router_add(r, &spec, &rt, &err);
    size_t n = strlen(tmpl);
    if (rc != 0) {
        check(rc == CANAL_ESYNTAX || rc == CANAL_EINVAL || rc == CANAL_EEXIST ||
                  rc == CANAL_ELIMIT || rc == CANAL_ENOMEM,
              "error code");
        check(err.code == rc, "err.code");
        check(err.position <= n, "err.position inside the template");
        check(err.message[0] != '\0' && memchr(err.message, 0, sizeof(err.message)) != NULL,
              "err.message");
        check(canal_router_route_count(r) == 1, "router unchanged");
        check(canal_router_method_count(r) == 1, "methods unchanged");
    } else {
        check(rt != NULL && strcmp(canal_route_template(rt), tmpl) == 0, "template kept");
        check(strcmp(canal_route_method(rt), "PUT") == 0, "method kept");
        check(canal_router_find(r, "n") == rt, "found by name");
        size_t np = canal_route_param_count(rt);
        check(np <= CANAL_ROUTER_MAX_PARAMS, "param count");
        check(canal_route_param_name(rt, np) == NULL, "param past the end");
        /* links: no values, then "1" for every parameter, then a value with '/' and a space */
        canal_kv_t vals[CANAL_ROUTER_MAX_PARAMS + 1];
        char buf[1024];
        for (int round = 0; round < 3; round++) {
            size_t nv = 0;
            if (round > 0)
                for (size_t i = 0; i < np; i++)
                    vals[nv++] = (canal_kv_t){canal_route_param_name(rt, i),
                                              round == 1 ? "1" : "a/b c"};
            vals[nv++] = (canal_kv_t){"q", "x y"};
            int len = canal_route_link(rt, vals, nv, buf, sizeof(buf));
            check(len == CANAL_EINVAL || len >= 1, "link result");
            if (len >= 1) {
                check(buf[0] == '/', "a link starts with '/'");
                check(strlen(buf) == ((size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1),
                      "link length");
                char small[8];
                check(canal_route_link(rt, vals, nv, small, sizeof(small)) == len,
                      "link length with a small buffer");
                /* the generated path (no query) is a valid request target */
                char scratch[1024];
                canal_match_t m;
                if ((size_t)len < sizeof(buf)) {
                    char *q = strchr(buf, '?');
                    size_t plen = q ? (size_t)(q - buf) : (size_t)len;
                    int st = canal_router_match(r, (canal_str_t){"PUT", 3},
                                                (canal_str_t){buf, plen}, scratch,
                                                sizeof(scratch), &m);
                    check(st != 400, "a generated link is never a bad request");
                }
            }
        }
        char list[64];
        size_t need = canal_router_list(r, list, sizeof(list));
        check(need >= n + 4, "list length");
        /* the same template under a group */
        canal_route_group_t *g = canal_router_group(r, NULL, "/grp/{g0}/");
        if (g != NULL) {
            canal_route_spec_t gs = {.method = "POST", .tmpl = tmpl};
            (void)canal_group_add(g, &gs, NULL, NULL);
        }
    }
    /* still usable */
    char scratch[64];
    canal_match_t m;
    check(canal_router_match(r, (canal_str_t){"GET", 3}, (canal_str_t){"/keep/5", 7}, scratch,
                             sizeof(scratch), &m) == 200,
          "baseline still matches");
    canal_router_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    values_and_parsers(data, size);
    char *tmpl = malloc(size + 1);
    if (tmpl == NULL)
        return 0;
    memcpy(tmpl, data, size);
    tmpl[size] = '\0';
    if (!regex_too_costly(tmpl, strlen(tmpl)))
        for (int policy = 0; policy < 3; policy++)
            try_template(tmpl, policy);
    free(tmpl);
    return 0;
}
