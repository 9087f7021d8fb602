/* SPDX-License-Identifier: MIT */
/*
 * The guards without a server: the Cookie parser and the Set-Cookie writer, signed values
 * (every byte tampered, cut, extended, another key, rotation), the in-memory session store
 * (expiry, bound, revoke, threads) and the token bucket on a fake clock (refill, a burst of
 * exactly R, a truthful Retry-After, the table's bound under 100,000 distinct keys); and,
 * through the test client, a rate limit and a security headers preset declared in controller
 * tables (the action's over the controller's).
 */
#include "test.h"
#include <pthread.h>
#include "canal/server.h"
#include "canal/controller.h"
#include "canal/testing.h"

static canal_str_t S(const char *s)
{
    return (canal_str_t){s, strlen(s)};
}

/* every well-formed pair of field as "name=value|", and the malformed count */
static void parse_all(const char *field, char *out, size_t *bad)
{
    canal_cookie_t c;
    size_t at = 0;
    *out = '\0';
    *bad = 0;
    while (canal_cookie_next((canal_str_t){field, strlen(field)}, &at, &c, bad))
        sprintf(out + strlen(out), "%.*s=%.*s|", (int)c.name.len, c.name.base, (int)c.value.len, c.value.base);
}

static void cookie_parse(void **state)
{
    char out[8192];
    size_t bad;
    parse_all("a=1; b=2", out, &bad);
    assert_string_equal(out, "a=1|b=2|");
    assert_int_equal(bad, 0);
    parse_all("a=1;b=2 ;  c=", out, &bad); /* lenient spaces; an empty value is a value */
    assert_string_equal(out, "a=1|b=2|c=|");
    parse_all("q=\"quoted\"; r=\"\"", out, &bad); /* the quotes are not part of the value */
    assert_string_equal(out, "q=quoted|r=|");
    parse_all("sid=x y; sid=a,b; sid=\"a\\b\"; =v; noeq; n\x01=1; ok=1", out, &bad);
    assert_string_equal(out, "ok=1|");
    assert_int_equal(bad, 6);
    parse_all("x=\xc3\xa9; y=\"open", out, &bad); /* non-ASCII, an unclosed quote */
    assert_string_equal(out, "");
    assert_int_equal(bad, 2);
    parse_all("a=1; a=2", out, &bad); /* both come out, in order: the first wins in getters */
    assert_string_equal(out, "a=1|a=2|");
    parse_all("", out, &bad);
    assert_string_equal(out, "");
    parse_all(" ;;; ", out, &bad);
    assert_string_equal(out, "");
    assert_int_equal(bad, 0);
    /* a NUL inside a value makes the pair malformed (length-explicit field) */
    canal_cookie_t c;
    size_t at = 0, nb = 0;
    assert_int_equal(canal_cookie_next((canal_str_t){"sid=abc\0def; k=v", 16}, &at, &c, &nb), 1);
    assert_int_equal(nb, 1);
    assert_int_equal(c.name.len, 1);
    /* a huge field: 100,000 pairs, parsed in one pass */
    size_t n = 100000;
    char *big = malloc(n * 6 + 1), *p = big;
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "k=%03zu;", i % 1000);
    size_t count = 0;
    at = 0;
    while (canal_cookie_next((canal_str_t){big, (size_t)(p - big)}, &at, &c, NULL))
        count++;
    assert_int_equal(count, n);
    free(big);
}

static void cookie_format(void **state)
{
    char buf[512];
    canal_error_info_t err;
    assert_true(canal_cookie_format(buf, sizeof(buf), "sid", S("abc"), NULL, &err) > 0);
    assert_string_equal(buf, "sid=abc; Path=/; HttpOnly; Secure; SameSite=Lax");
    canal_cookie_options_t o = {.path = "/app", .domain = "example.com", .max_age = 60, .expires = 86400,
                                .same_site = CANAL_SAME_SITE_STRICT};
    assert_true(canal_cookie_format(buf, sizeof(buf), "a", S("1"), &o, &err) > 0);
    assert_string_equal(buf, "a=1; Path=/app; Domain=example.com; Max-Age=60; Expires=Fri, 02 Jan 1970 00:00:00 GMT; "
                             "HttpOnly; Secure; SameSite=Strict");
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "a b", S("1"), NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "", S("1"), NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "a", S("x;y"), NULL, &err), CANAL_EINVAL);
    assert_int_equal(err.position, 1);
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "a", S("x\r\nSet-Cookie: b=1"), NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "a", (canal_str_t){"x\0y", 3}, NULL, &err), CANAL_EINVAL);
    o = (canal_cookie_options_t){.path = "/a;b"};
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "a", S("1"), &o, &err), CANAL_EINVAL);
    o = (canal_cookie_options_t){.same_site = CANAL_SAME_SITE_NONE, .not_secure = 1};
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "a", S("1"), &o, &err), CANAL_EINVAL);
    o = (canal_cookie_options_t){.max_age = -1};
    assert_int_equal(canal_cookie_format(buf, sizeof(buf), "a", S("1"), &o, &err), CANAL_EINVAL);
    assert_int_equal(canal_cookie_format(buf, 10, "a", S("1"), NULL, &err), CANAL_ELIMIT);
}

static void signed_values(void **state)
{
    canal_str_t k1 = S("0123456789abcdef0123456789abcdef"), k2 = S("another key, 32 bytes long!!!!!!");
    canal_error_info_t err;
    assert_null(canal_signer_create(&(canal_str_t){"short", 5}, 1, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    canal_signer_t *a = canal_signer_create(&k1, 1, NULL), *b = canal_signer_create(&k2, 1, NULL);
    canal_str_t both[2] = {k2, k1};
    canal_signer_t *rotated = canal_signer_create(both, 2, NULL);
    assert_non_null(a);
    char v[256], out[256];
    int n = canal_signer_sign(a, "sid", S("session-id-bytes"), v, sizeof(v));
    assert_int_equal((size_t)n, canal_signed_length(16));
    for (int i = 0; i < n; i++) /* cookie-octets only */
        assert_true(v[i] > 0x20 && v[i] < 0x7f && !strchr("\";,\\ ", v[i]));
    assert_int_equal(canal_signer_verify(a, "sid", (canal_str_t){v, (size_t)n}, out, sizeof(out)), 16);
    assert_memory_equal(out, "session-id-bytes", 16);
    /* every byte changed to every other cookie-octet: refused */
    for (int i = 0; i < n; i++) {
        char t[256];
        memcpy(t, v, (size_t)n);
        for (int c = 0x21; c < 0x7f; c++) {
            if (c == v[i])
                continue;
            t[i] = (char)c;
            assert_true(canal_signer_verify(a, "sid", (canal_str_t){t, (size_t)n}, out, sizeof(out)) < 0);
        }
    }
    for (int len = 0; len < n; len++) /* every truncation */
        assert_true(canal_signer_verify(a, "sid", (canal_str_t){v, (size_t)len}, out, sizeof(out)) < 0);
    memcpy(out, v, (size_t)n);
    for (int c = 0; c < 256; c++) { /* every appended byte */
        char t[256];
        memcpy(t, v, (size_t)n);
        t[n] = (char)c;
        assert_true(canal_signer_verify(a, "sid", (canal_str_t){t, (size_t)n + 1}, out, sizeof(out)) < 0);
    }
    assert_true(canal_signer_verify(b, "sid", (canal_str_t){v, (size_t)n}, out, sizeof(out)) < 0); /* other key */
    assert_true(canal_signer_verify(a, "other", (canal_str_t){v, (size_t)n}, out, sizeof(out)) < 0); /* purpose */
    assert_int_equal(canal_signer_verify(rotated, "sid", (canal_str_t){v, (size_t)n}, out, sizeof(out)), 16);
    n = canal_signer_sign(rotated, "sid", S("new"), v, sizeof(v)); /* the first key signs */
    assert_int_equal(canal_signer_verify(b, "sid", (canal_str_t){v, (size_t)n}, out, sizeof(out)), 3);
    assert_true(canal_signer_verify(a, "sid", (canal_str_t){v, (size_t)n}, out, sizeof(out)) < 0);
    assert_int_equal(canal_signer_sign(a, "sid", S("x"), v, 10), CANAL_ELIMIT);
    canal_signer_destroy(a);
    canal_signer_destroy(b);
    canal_signer_destroy(rotated);
}

static void session_store(void **state)
{
    const canal_session_store_ops_t *ops;
    void *st;
    char buf[64];
    assert_int_equal(canal_session_store_memory(3, &ops, &st), 0);
    char ids[5][16];
    for (int i = 0; i < 5; i++)
        memset(ids[i], 'a' + i, 16);
#define ID(i) ((canal_str_t){ids[i], 16})
    assert_int_equal(ops->put(st, ID(0), S("alice"), 1000, 100), 0);
    assert_int_equal(ops->get(st, ID(0), 1050, buf, sizeof(buf)), 5);
    assert_memory_equal(buf, "alice", 5);
    assert_int_equal(ops->get(st, ID(0), 1100, buf, sizeof(buf)), CANAL_ENOTFOUND); /* expired */
    assert_int_equal(ops->put(st, ID(1), S("b"), 2000, 100), 0);
    assert_int_equal(ops->put(st, ID(2), S("c"), 2001, 100), 0);
    assert_int_equal(ops->put(st, ID(3), S("d"), 2002, 100), 0);
    assert_int_equal(ops->put(st, ID(4), S("e"), 2003, 100), 0); /* full: the oldest goes */
    assert_int_equal(ops->get(st, ID(1), 2004, buf, sizeof(buf)), CANAL_ENOTFOUND);
    assert_int_equal(ops->get(st, ID(4), 2004, buf, sizeof(buf)), 1);
    assert_int_equal(ops->revoke(st, ID(3)), 0);
    assert_int_equal(ops->get(st, ID(3), 2004, buf, sizeof(buf)), CANAL_ENOTFOUND);
    assert_int_equal(ops->revoke(st, ID(3)), CANAL_ENOTFOUND);
    assert_int_equal(ops->get(st, ID(2), 2004, buf, 0), CANAL_ELIMIT);
    ops->destroy(st);
#undef ID
}

struct thread_arg {
    const canal_session_store_ops_t *ops;
    void *st;
    int t;
};

static void *session_thread(void *p)
{
    struct thread_arg *a = p;
    char id[16], buf[16];
    for (int i = 0; i < 2000; i++) {
        memset(id, 0, sizeof(id));
        memcpy(id, &a->t, sizeof(a->t));
        memcpy(id + 4, &i, sizeof(i));
        a->ops->put(a->st, (canal_str_t){id, 16}, S("data"), (uint64_t)i, 50);
        a->ops->get(a->st, (canal_str_t){id, 16}, (uint64_t)i, buf, sizeof(buf));
        if (i % 3 == 0)
            a->ops->revoke(a->st, (canal_str_t){id, 16});
    }
    return NULL;
}

static void session_store_threads(void **state)
{
    struct thread_arg args[4];
    pthread_t th[4];
    const canal_session_store_ops_t *ops;
    void *st;
    assert_int_equal(canal_session_store_memory(100, &ops, &st), 0);
    for (int t = 0; t < 4; t++) {
        args[t] = (struct thread_arg){ops, st, t};
        pthread_create(&th[t], NULL, session_thread, &args[t]);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    ops->destroy(st);
}

/* canal_rate_limit_set(): new numbers for the next requests; a full bucket is cut to them */
static void bucket_set(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_rate_limit_t *l =
        canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 5, .window_ms = 2000}, NULL);
    canal_rate_decision_t d;
    uint64_t t = 1000000;
    canal_rate_limit_take(l, S("a"), t, &d);
    assert_int_equal(d.remaining, 4);
    assert_int_equal(canal_rate_limit_set(l, 0, 1000), CANAL_EINVAL);
    assert_int_equal(canal_rate_limit_set(l, 2, 86400001), CANAL_EINVAL);
    assert_int_equal(canal_rate_limit_set(l, 2, 1000), 0);
    canal_rate_limit_take(l, S("a"), t, &d); /* 4 of 5 left, cut to 2 of 2, one taken */
    assert_int_equal(d.allowed, 1);
    assert_int_equal(d.limit, 2);
    assert_int_equal(d.remaining, 1);
    canal_rate_limit_take(l, S("a"), t, &d);
    canal_rate_limit_take(l, S("a"), t, &d);
    assert_int_equal(d.allowed, 0);
    assert_int_equal(d.retry_after, 1);
    canal_rate_limit_take(l, S("b"), t, &d); /* a new key: a bucket of the new numbers */
    assert_int_equal(d.remaining, 1);
    assert_int_equal(canal_rate_limit_set(l, 100, 1000), 0);
    canal_rate_limit_take(l, S("c"), t, &d);
    assert_int_equal(d.limit, 100);
    assert_int_equal(d.remaining, 99);
    canal_app_destroy(app);
}

static void bucket(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_rate_limit_t *l =
        canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 5, .window_ms = 2000}, NULL);
    canal_rate_decision_t d;
    uint64_t t = 1000000;
    for (int i = 0; i < 5; i++) { /* a burst of exactly R */
        canal_rate_limit_take(l, S("127.0.0.1"), t, &d);
        assert_int_equal(d.allowed, 1);
        assert_int_equal(d.remaining, 4 - i);
        assert_int_equal(d.limit, 5);
    }
    canal_rate_limit_take(l, S("127.0.0.1"), t, &d);
    assert_int_equal(d.allowed, 0);
    assert_int_equal(d.remaining, 0);
    assert_true(d.retry_after >= 1 && d.retry_after <= 3);
    canal_rate_limit_take(l, S("127.0.0.2"), t, &d); /* another key: its own bucket */
    assert_int_equal(d.allowed, 1);
    /* Retry-After is truthful: a request after it is allowed */
    canal_rate_limit_take(l, S("127.0.0.1"), t + 399, &d);
    assert_int_equal(d.allowed, 0);
    uint32_t wait = d.retry_after;
    canal_rate_limit_take(l, S("127.0.0.1"), t + 399 + wait * 1000, &d);
    assert_int_equal(d.allowed, 1);
    /* after W without requests, R again, and exactly R */
    t += 10000;
    int ok = 0;
    for (int i = 0; i < 7; i++) {
        canal_rate_limit_take(l, S("127.0.0.1"), t, &d);
        ok += d.allowed;
    }
    assert_int_equal(ok, 5);
    /* refill at R/W: one token per 400 ms */
    canal_rate_limit_take(l, S("127.0.0.1"), t + 399, &d);
    assert_int_equal(d.allowed, 0);
    canal_rate_limit_take(l, S("127.0.0.1"), t + 400, &d);
    assert_int_equal(d.allowed, 1);
    assert_int_equal(canal_rate_limit_refused(l), 5);
    /* every Retry-After over a range of windows is within 1..ceil(W)+1 and truthful */
    canal_rate_limit_t *w3 =
        canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 3, .window_ms = 2500}, NULL);
    for (uint64_t now = 0; now < 20000; now += 37) {
        canal_rate_limit_take(w3, S("k"), now, &d);
        if (!d.allowed) {
            assert_true(d.retry_after >= 1 && d.retry_after <= 4);
            canal_rate_decision_t e;
            canal_rate_limit_take(w3, S("probe"), now, &e); /* another key, untouched */
        }
    }
    canal_app_destroy(app);
}

static void bucket_eviction(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_rate_limit_t *l = canal_rate_limit_create(
        app, &(canal_rate_limit_options_t){.requests = 1, .window_ms = 60000, .max_keys = 1024}, NULL);
    canal_rate_decision_t d;
    char key[32];
    /* 100,000 distinct keys in a table of 1,024: each is allowed once (nobody is refused for
     * others), and the memory is the table's */
    size_t allowed = 0;
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(key, sizeof(key), "10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255);
        canal_rate_limit_take(l, (canal_str_t){key, (size_t)n}, 1000 + (uint64_t)i / 100, &d);
        allowed += d.allowed;
    }
    assert_int_equal(allowed, 100000);
    /* a key seen just now is still remembered: refused */
    canal_rate_limit_take(l, (canal_str_t){key, strlen(key)}, 2000, &d);
    assert_int_equal(d.allowed, 0);
    canal_error_info_t err;
    assert_null(canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 0, .window_ms = 1}, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    canal_app_destroy(app);
}

static int ctl_ok(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_text(req, 200, "ok");
}

/* GET target n times: how many 200s, and the last answer's field name (or "-") */
static int get_n(canal_test_t *t, const char *target, int n, const char *name, char *value, size_t size)
{
    int ok = 0;
    for (int i = 0; i < n; i++) {
        canal_test_response_t *r = canal_test_get(t, target);
        assert_non_null(r);
        ok += r->status == 200;
        const char *v = canal_test_header(r, name);
        snprintf(value, size, "%s", v ? v : "-");
        canal_test_response_free(r);
    }
    return ok;
}

static void controller_tables(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 1;
    canal_app_t *app = canal_app_create(&cfg);
    canal_error_info_t err;
    canal_rate_limit_t *two = canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 2, .window_ms = 60000}, &err),
                       *one = canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = 1, .window_ms = 60000}, &err);
    assert_non_null(two);
    assert_non_null(one);
    const canal_security_headers_t same_origin = {.frame_options = "SAMEORIGIN"}, no_referrer = {.referrer_policy = "no-referrer"};
    const canal_action_def_t actions[] = {
        {.name = "Inherits", .routes = {"inherits"}, .handler = ctl_ok},
        {.name = "Own", .routes = {"own"}, .handler = ctl_ok,
         .options = {CANAL_RATE_LIMIT(one), CANAL_SECURITY_HEADERS(&no_referrer)}},
        {.name = NULL}};
    const canal_controller_def_t def = {.name = "Guarded", .actions = actions,
                                        .options = {CANAL_RATE_LIMIT(two), CANAL_SECURITY_HEADERS(&same_origin)}};
    canal_mvc_t *mvc = canal_mvc_create(app);
    assert_int_equal(canal_mvc_add_controller(mvc, &def, NULL, &err), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    char v[64];
    assert_int_equal(get_n(t, "/inherits", 3, "x-frame-options", v, sizeof(v)), 2); /* the controller's 2 */
    assert_string_equal(v, "SAMEORIGIN");                                      /* on the 429 too */
    get_n(t, "/inherits", 1, "referrer-policy", v, sizeof(v));
    assert_string_equal(v, "strict-origin-when-cross-origin");
    assert_int_equal(get_n(t, "/own", 3, "referrer-policy", v, sizeof(v)), 1); /* the action's 1 */
    assert_string_equal(v, "no-referrer");
    get_n(t, "/own", 1, "x-frame-options", v, sizeof(v));
    assert_string_equal(v, "DENY"); /* the action's preset whole, not merged with the controller's */
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cookie_parse),   cmocka_unit_test(cookie_format),
        cmocka_unit_test(signed_values),  cmocka_unit_test(session_store),
        cmocka_unit_test(session_store_threads), cmocka_unit_test(bucket), cmocka_unit_test(bucket_set),
        cmocka_unit_test(bucket_eviction), cmocka_unit_test(controller_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
