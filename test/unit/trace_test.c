/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of W3C Trace Context and the request hooks (lib/core/trace.c, canal/trace.h):
 * the traceparent parser on the specification's rules (version 00 exactly, later versions by
 * their prefix, version ff, case, zeros, lengths), the tracestate bounds (32 members, 512
 * bytes) and syntax, and in a running app: a caller's trace continued (IDs, flags,
 * tracestate, the echo, "traceId" in problem details), a malformed one replaced by a new
 * trace with a 200, IDs that differ between requests, tracing off; the begin and end hooks
 * (route, status, bytes, duration, the same trace) and their registration errors.
 */
#include "test.h"
#include <pthread.h>
#include <canal.h>
#include <canal/testing.h>
#include "client.h"
#include "core/core.h"

#define TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define PARENT "00f067aa0ba902b7"

static int parse(const char *s, canal_trace_t *t)
{
    return canal__traceparent_parse(s, strlen(s), t);
}

static void traceparent_rules(void **state)
{
    canal_trace_t t;
    assert_int_equal(parse("00-" TRACE "-" PARENT "-01", &t), 0);
    assert_string_equal(t.trace_id, TRACE);
    assert_string_equal(t.parent_id, PARENT);
    assert_int_equal(t.flags, CANAL_TRACE_SAMPLED);
    assert_int_equal(parse("00-" TRACE "-" PARENT "-00", &t), 0);
    assert_int_equal(t.flags, 0);
    assert_int_equal(parse("00-" TRACE "-" PARENT "-ff", &t), 0);
    assert_int_equal(t.flags, CANAL_TRACE_SAMPLED); /* the other bits are not passed on */
    /* a later version: its prefix, then the end or a '-' */
    assert_int_equal(parse("01-" TRACE "-" PARENT "-01", &t), 0);
    assert_int_equal(parse("cc-" TRACE "-" PARENT "-01-what-the-future-adds", &t), 0);
    assert_string_equal(t.trace_id, TRACE);
    assert_int_equal(parse("cc-" TRACE "-" PARENT "-01.future", &t), -1);
    static const char *bad[] = {
        "00-" TRACE "-" PARENT "-01-",                 /* version 00 has nothing after */
        "00-" TRACE "-" PARENT "-1",                   /* too short */
        "00-" TRACE "-" PARENT "-001",                 /* too long */
        "ff-" TRACE "-" PARENT "-01",                  /* version ff is invalid */
        "0g-" TRACE "-" PARENT "-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-" PARENT "-01", /* upper case */
        "00-" TRACE "-00F067AA0BA902B7-01",
        "00-" TRACE "-" PARENT "-0A",
        "00-00000000000000000000000000000000-" PARENT "-01", /* all zeros */
        "00-" TRACE "-0000000000000000-01",
        "00_" TRACE "-" PARENT "-01",
        "00-" TRACE "_" PARENT "-01",
        "00-" TRACE "-" PARENT "_01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-" PARENT "-01x", /* a field one short */
        "00-" TRACE "-" PARENT "-0 ",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (parse(bad[i], &t) != -1)
            fail_msg("accepted '%s'", bad[i]);
}

static void hex_ids(void **state)
{
    uint64_t v = 0x0123456789abcdefULL, seed = 88172645463325252ULL;
    for (int i = 0; i < 100000; i++) {
        char got[17] = {0}, want[17];
        canal__hex64(got, v);
        snprintf(want, sizeof(want), "%016llx", (unsigned long long)v);
        if (strcmp(got, want) != 0)
            fail_msg("%s for %s", got, want);
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift64 */
        v = i < 16 ? (uint64_t)0xf << (4 * i) : i < 32 ? ~((uint64_t)0xf << (4 * (i - 16))) : seed;
    }
}

static int ts_ok(const char *s)
{
    return canal__tracestate_ok(s, strlen(s));
}

static void tracestate_rules(void **state)
{
    assert_true(ts_ok("congo=t61rcWkgMzE"));
    assert_true(ts_ok("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
    assert_true(ts_ok(" rojo=1 ,, congo=2 ")); /* optional spaces, empty members */
    assert_true(ts_ok("fw529a3039@dt=123,1tenant@vendor=x"));
    assert_true(ts_ok("a_-*/9=value with spaces"));
    assert_false(ts_ok("Rojo=1"));                 /* upper-case key */
    assert_false(ts_ok("rojo"));                   /* no '=' */
    assert_false(ts_ok("rojo="));                  /* empty value */
    assert_false(ts_ok("rojo=a=b"));
    assert_false(ts_ok("rojo=1,rojo=2"));          /* a key twice */
    assert_false(ts_ok("1rojo=1"));                /* a simple key starts with a letter */
    assert_false(ts_ok("a@b@c=1"));
    assert_false(ts_ok("rojo=\x01"));
    /* 32 members, then 33 */
    char buf[1024];
    size_t n = 0;
    for (int i = 0; i < 32; i++)
        n += (size_t)sprintf(buf + n, "%sk%d=v", i ? "," : "", i);
    assert_true(canal__tracestate_ok(buf, n));
    n += (size_t)sprintf(buf + n, ",k32=v");
    assert_false(canal__tracestate_ok(buf, n));
    /* 512 bytes, then 513 */
    memset(buf, 'v', sizeof(buf));
    memcpy(buf, "k=", 2);
    assert_true(canal__tracestate_ok(buf, 256 + 2));
    memcpy(buf + 258, ",l=", 3);
    assert_true(canal__tracestate_ok(buf, 512));
    assert_false(canal__tracestate_ok(buf, 513));
}

/* ---- in an app ---- */

static int h_trace(canal_req_t *req, void *data)
{
    const canal_trace_t *t = canal_req_trace(req);
    if (t == NULL)
        return canal_res_text(req, 200, "off");
    char *s = canal_req_printf(req, "%s %s %s %02x %s %.*s", t->trace_id, t->span_id,
                               t->parent_id[0] ? t->parent_id : "-", t->flags, t->traceparent,
                               (int)t->tracestate.len, t->tracestate.base ? t->tracestate.base : "");
    assert_ptr_equal(canal_req_trace(req), t); /* made once */
    return canal_res_text(req, 200, s);
}

static int h_problem(canal_req_t *req, void *data)
{
    return canal_res_problem(req, 409, "taken");
}

static canal_app_t *trace_app(int trace, int echo)
{
    canal_config_t cfg;
    app_config(&cfg, 2);
    cfg.trace = trace;
    cfg.trace_echo = echo;
    canal_app_t *a = canal_app_create(&cfg);
    assert_non_null(a);
    assert_int_equal(canal_app_get(a, "t", h_trace, NULL), 0);
    assert_int_equal(canal_app_get(a, "p", h_problem, NULL), 0);
    return a;
}

static canal_test_response_t *tget(canal_test_t *t, const char *target, const char *tp, const char *ts)
{
    canal_kv_t h[3];
    size_t n = 0;
    if (tp != NULL)
        h[n++] = (canal_kv_t){"traceparent", tp};
    if (ts != NULL)
        h[n++] = (canal_kv_t){"tracestate", ts};
    canal_test_response_t *r = canal_test_request(t, "GET", target, h, n, NULL, 0);
    assert_non_null(r);
    return r;
}

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[n] == ' ' || s[n] == '\0';
}

static void continues_a_trace(void **state)
{
    canal_app_t *a = trace_app(1, 1);
    canal_test_t *t = canal_test_start(a, NULL);
    assert_non_null(t);
    canal_test_response_t *r = tget(t, "/t", "00-" TRACE "-" PARENT "-01", "rojo=00f067aa0ba902b7,congo=t61");
    assert_int_equal(r->status, 200);
    char trace[33], span[17], parent[17], flags[3], tp[56], ts[64];
    assert_int_equal(sscanf(r->body, "%32s %16s %16s %2s %55s %63s", trace, span, parent, flags, tp, ts), 6);
    assert_string_equal(trace, TRACE);
    assert_string_equal(parent, PARENT);
    assert_true(is_hex(span, 16));
    assert_string_not_equal(span, PARENT);
    assert_string_equal(flags, "01");
    char want[64];
    snprintf(want, sizeof(want), "00-%s-%s-01", TRACE, span);
    assert_string_equal(tp, want);
    assert_string_equal(ts, "rojo=00f067aa0ba902b7,congo=t61");
    assert_string_equal(canal_test_header(r, "traceparent"), want); /* echoed */
    canal_test_response_free(r);

    /* not sampled by the caller: passed on as such */
    r = tget(t, "/t", "00-" TRACE "-" PARENT "-00", NULL);
    assert_non_null(strstr(canal_test_header(r, "traceparent"), "-00"));
    canal_test_response_free(r);

    /* problem details carry it as "traceId" */
    r = tget(t, "/p", "00-" TRACE "-" PARENT "-01", NULL);
    assert_int_equal(r->status, 409);
    json_t *j = canal_test_response_json(r, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "traceId")), canal_test_header(r, "traceparent"));
    assert_int_equal(strncmp(json_string_value(json_object_get(j, "traceId")), "00-" TRACE "-", 36), 0);
    json_decref(j);
    canal_test_response_free(r);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(a);
}

static void starts_a_new_trace(void **state)
{
    canal_app_t *a = trace_app(1, 0);
    canal_test_t *t = canal_test_start(a, NULL);
    assert_non_null(t);
    char first[33] = "";
    static const char *malformed[] = {NULL, "00-" TRACE "-" PARENT "-1", "ff-" TRACE "-" PARENT "-01",
                                      "00-00000000000000000000000000000000-" PARENT "-01", "garbage"};
    for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
        canal_test_response_t *r = tget(t, "/t", malformed[i], "rojo=1");
        assert_int_equal(r->status, 200); /* never a 400 */
        assert_null(canal_test_header(r, "traceparent")); /* no echo unless asked */
        char trace[33], span[17], parent[2], flags[3], tp[56];
        assert_int_equal(sscanf(r->body, "%32s %16s %1s %2s %55s", trace, span, parent, flags, tp), 5);
        assert_true(is_hex(trace, 32));
        assert_string_not_equal(trace, TRACE);
        assert_string_equal(parent, "-");
        assert_string_equal(flags, "01");
        assert_null(strstr(r->body, "rojo")); /* no tracestate without a valid traceparent */
        assert_string_not_equal(trace, first); /* a new one each time */
        memcpy(first, trace, sizeof(first));
        canal_test_response_free(r);
    }
    /* two traceparent fields: malformed */
    const canal_kv_t two[] = {{"traceparent", "00-" TRACE "-" PARENT "-01"}, {"traceparent", "00-" TRACE "-" PARENT "-01"}};
    canal_test_response_t *r = canal_test_request(t, "GET", "/t", two, 2, NULL, 0);
    assert_non_null(r);
    assert_null(strstr(r->body, TRACE));
    canal_test_response_free(r);
    /* tracestate over its bounds is dropped, the trace kept */
    char big[600];
    memset(big, 'v', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big, "k=", 2);
    r = tget(t, "/t", "00-" TRACE "-" PARENT "-01", big);
    assert_non_null(strstr(r->body, TRACE));
    assert_null(strstr(r->body, "k=v"));
    canal_test_response_free(r);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(a);
}

static void tracing_off(void **state)
{
    canal_app_t *a = trace_app(0, 0);
    canal_test_t *t = canal_test_start(a, NULL);
    assert_non_null(t);
    canal_test_response_t *r = tget(t, "/t", "00-" TRACE "-" PARENT "-01", NULL);
    assert_string_equal(r->body, "off");
    assert_null(canal_test_header(r, "traceparent"));
    canal_test_response_free(r);
    r = tget(t, "/p", NULL, NULL);
    assert_null(strstr(r->body, "traceId"));
    canal_test_response_free(r);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(a);
}

/* ---- hooks ---- */

static struct {
    pthread_mutex_t lock;
    int begins, ends;
    char begin_route[64], end_route[64], trace[33], span[17], begin_span[17];
    int status;
    int64_t start, duration;
    uint64_t bytes;
} seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_begin(canal_req_t *req, const canal_request_info_t *info, void *data)
{
    pthread_mutex_lock(&seen.lock);
    seen.begins++;
    snprintf(seen.begin_route, sizeof(seen.begin_route), "%s", info->route ? info->route : "(none)");
    snprintf(seen.begin_span, sizeof(seen.begin_span), "%s", info->trace->span_id);
    assert_int_equal(info->status, 0);
    seen.start = info->start_unix_ns;
    assert_int_equal(*(int *)data, 7);
    pthread_mutex_unlock(&seen.lock);
}

static void on_end(canal_req_t *req, const canal_request_info_t *info, void *data)
{
    pthread_mutex_lock(&seen.lock);
    seen.ends++;
    snprintf(seen.end_route, sizeof(seen.end_route), "%s", info->route ? info->route : "(none)");
    snprintf(seen.trace, sizeof(seen.trace), "%s", info->trace->trace_id);
    snprintf(seen.span, sizeof(seen.span), "%s", info->trace->span_id);
    assert_int_equal(info->start_unix_ns, seen.start);
    seen.status = info->status;
    seen.duration = info->duration_ns;
    seen.bytes = info->bytes;
    pthread_mutex_unlock(&seen.lock);
}

/* the end hook runs after the answer went: wait for it; returns with seen.lock held */
static void await_ends(int n)
{
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&seen.lock);
        if (seen.ends >= n)
            return;
        pthread_mutex_unlock(&seen.lock);
        usleep(2000);
    }
    fail_msg("the end hook did not run %d times", n);
}

static void hooks(void **state)
{
    static int seven = 7;
    canal_app_t *a = trace_app(1, 0);
    assert_int_equal(canal_app_on_request(a, NULL, NULL, NULL), CANAL_EINVAL);
    assert_int_equal(canal_app_on_request(a, on_begin, on_end, &seven), 0);
    assert_int_equal(canal_app_on_request(a, on_begin, NULL, &seven), CANAL_EEXIST);
    assert_int_equal(canal_app_error(a, NULL), CANAL_EINVAL); /* the first one is kept */
    /* canal_app_start() fails with the registration error: a second app for the run */
    canal_app_destroy(a);
    a = trace_app(1, 0);
    assert_int_equal(canal_app_get(a, "users/{id:int}", h_problem, NULL), 0);
    assert_int_equal(canal_app_on_request(a, on_begin, on_end, &seven), 0);
    canal_test_t *t = canal_test_start(a, NULL);
    assert_non_null(t);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    canal_test_response_t *r = tget(t, "/users/3", "00-" TRACE "-" PARENT "-01", NULL);
    assert_int_equal(r->status, 409);
    await_ends(1);
    assert_int_equal(seen.begins, 1);
    assert_string_equal(seen.begin_route, "users/{id:int}");
    assert_string_equal(seen.end_route, "users/{id:int}");
    assert_int_equal(seen.status, 409);
    assert_int_equal(seen.bytes, r->body_len);
    assert_true(seen.duration > 0 && seen.duration < 5 * 1000000000LL);
    int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    assert_true(seen.start >= now_ns - 1000000000 && seen.start <= now_ns + 5 * 1000000000LL);
    assert_string_equal(seen.trace, TRACE);
    assert_string_equal(seen.span, seen.begin_span);
    json_t *j = canal_test_response_json(r, NULL);
    assert_non_null(strstr(json_string_value(json_object_get(j, "traceId")), seen.span));
    json_decref(j);
    pthread_mutex_unlock(&seen.lock);
    canal_test_response_free(r);
    /* no route; refused before routing */
    r = tget(t, "/nothing", NULL, NULL);
    assert_int_equal(r->status, 404);
    canal_test_response_free(r);
    await_ends(2);
    assert_string_equal(seen.begin_route, "(none)");
    assert_int_equal(seen.status, 404);
    pthread_mutex_unlock(&seen.lock);
    r = tget(t, "/t/../etc", NULL, NULL);
    assert_int_equal(r->status, 400);
    canal_test_response_free(r);
    await_ends(3);
    assert_int_equal(seen.begins, 3);
    assert_int_equal(seen.status, 400);
    pthread_mutex_unlock(&seen.lock);
    assert_int_equal(canal_test_stop(t), 0);
    assert_int_equal(canal_app_on_request(a, on_begin, on_end, NULL), CANAL_ESTATE);
    canal_app_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(traceparent_rules), cmocka_unit_test(hex_ids),     cmocka_unit_test(tracestate_rules),
        cmocka_unit_test(continues_a_trace), cmocka_unit_test(starts_a_new_trace), cmocka_unit_test(tracing_off),
        cmocka_unit_test(hooks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
