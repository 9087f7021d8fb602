/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the access log's line formats (lib/observability/acclog_line.c): CLF as libh2o 2.2.5
 * escapes (every byte value checked against its rule), JSON strings for hostile bytes, the
 * UTC time stamp, absent fields, the word-at-a-time scan at every place, the route's leading
 * '/', and the bound: no line is ever longer than
 * canal__acclog_bound() says, on random bytes.
 */
#include "test.h"
#include "observability/acclog_internal.h"
#include "common/common.h"

#define S(lit) ((canal_str_t){(lit), sizeof(lit) - 1})
#define NONE ((canal_str_t){NULL, 0})

static struct canal__acclog_entry sample(void)
{
    return (struct canal__acclog_entry){
        .client = S("203.0.113.9"),
        .clf_time = S("02/Dec/2026:07:46:58 +0000"),
        .unix_us = 1796197618123456,
        .method = S("GET"),
        .target = S("/home/plaintext"),
        .version = 0x101,
        .status = 200,
        .bytes = 13,
        .duration_us = 1234,
        .route = S("/home/plaintext"),
        .request_id = S("5f3a09c1-0-1a"),
        .trace_id = S("4bf92f3577b34da6a3ce929d0e0e4736"),
        .span_id = S("00f067aa0ba902b7"),
        .referer = NONE,
        .user_agent = S("curl/8"),
        .id_column = 1,
    };
}

static char *line(const struct canal__acclog_entry *e, int json)
{
    static char buf[1 << 16];
    size_t bound = canal__acclog_bound(e);
    assert_true(bound <= sizeof(buf));
    size_t n = json ? canal__acclog_json(buf, e) : canal__acclog_clf(buf, e);
    assert_true(n <= bound);
    assert_int_equal(buf[n - 1], '\n');
    buf[n] = '\0';
    return buf;
}

static void clf_line(void **state)
{
    struct canal__acclog_entry e = sample();
    assert_string_equal(line(&e, 0), "203.0.113.9 - - [02/Dec/2026:07:46:58 +0000] \"GET /home/plaintext HTTP/1.1\" "
                                     "200 13 \"-\" \"curl/8\" \"5f3a09c1-0-1a\"\n");
    e.id_column = 0;
    e.clf_time = NONE;
    e.version = 0x200;
    e.status = 0; /* the client left before an answer */
    e.bytes = 0;
    assert_string_equal(line(&e, 0), "203.0.113.9 - - - \"GET /home/plaintext HTTP/2\" 0 0 \"-\" \"curl/8\"\n");
    e.version = 0x100;
    e.id_column = 1;
    e.request_id = NONE;
    e.bytes = UINT64_MAX;
    assert_string_equal(line(&e, 0), "203.0.113.9 - - - \"GET /home/plaintext HTTP/1.0\" 0 18446744073709551615 "
                                     "\"-\" \"curl/8\" \"-\"\n");
}

/* libh2o's rule: kept if ' ' <= c < '}' and c != '"', else \xNN (a backslash is kept) */
static void clf_every_byte(void **state)
{
    struct canal__acclog_entry e = sample();
    for (unsigned c = 0; c < 256; c++) {
        char b = (char)c, want[64];
        e.user_agent = (canal_str_t){&b, 1};
        if (c >= 0x20 && c < 0x7d && c != '"')
            snprintf(want, sizeof(want), "\"%c\" \"5f3a", (int)c);
        else
            snprintf(want, sizeof(want), "\"\\x%02x\" \"5f3a", c);
        assert_non_null(strstr(line(&e, 0), want));
    }
}

/* The word-at-a-time scan: each byte value at each place of strings of 1 to 24 bytes (a
 * word's every lane, the overlapping last word, the byte-by-byte tail), escaped in both formats
 * as the byte-by-byte rules say; the other bytes kept. */
static char *want_clf(char *o, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        o += p[i] >= 0x20 && p[i] < 0x7d && p[i] != '"' ? sprintf(o, "%c", p[i]) : sprintf(o, "\\x%02x", p[i]);
    return o;
}

static char *want_json(char *o, const unsigned char *p, size_t n) /* ASCII only */
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"' || p[i] == '\\')
            o += sprintf(o, "\\%c", p[i]);
        else
            o += p[i] >= 0x20 && p[i] < 0x7f ? sprintf(o, "%c", p[i]) : sprintf(o, "\\u%04x", p[i]);
    }
    return o;
}

static void every_byte_every_place(void **state)
{
    struct canal__acclog_entry e = sample();
    e.id_column = 0;
    unsigned char s[24];
    char want[256], *o;
    for (size_t n = 1; n <= sizeof(s); n++) {
        for (size_t at = 0; at < n; at++) {
            for (unsigned c = 0; c < 256; c++) {
                memset(s, 'a' + (int)(n % 26), sizeof(s));
                s[at] = (unsigned char)c;
                e.user_agent = (canal_str_t){(const char *)s, n};
                o = want + sprintf(want, "\" \"");
                o = want_clf(o, s, n);
                strcpy(o, "\"\n");
                assert_non_null(strstr(line(&e, 0), want));
                if (c >= 0x80)
                    continue;
                o = want + sprintf(want, "\"user_agent\":\"");
                o = want_json(o, s, n);
                strcpy(o, "\"}\n");
                assert_non_null(strstr(line(&e, 1), want));
            }
        }
    }
}

/* the route's template as registered, with or without its '/': one leading '/' in JSON */
static void json_route_slash(void **state)
{
    struct canal__acclog_entry e = sample();
    static const char *in[] = {"home/employee/{id:int}", "/home/employee/{id:int}", "//home/employee/{id:int}"};
    for (size_t i = 0; i < 3; i++) {
        e.route = (canal_str_t){in[i], strlen(in[i])};
        assert_non_null(strstr(line(&e, 1), ",\"route\":\"/home/employee/{id:int}\","));
    }
    e.route = S("");
    assert_non_null(strstr(line(&e, 1), ",\"route\":\"/\","));
}

static void json_line(void **state)
{
    struct canal__acclog_entry e = sample();
    assert_string_equal(line(&e, 1),
                        "{\"time\":\"2026-12-02T07:46:58.123Z\",\"client\":\"203.0.113.9\",\"method\":\"GET\","
                        "\"target\":\"/home/plaintext\",\"protocol\":\"HTTP/1.1\",\"status\":200,\"bytes\":13,"
                        "\"duration_ms\":1.234,\"route\":\"/home/plaintext\",\"request_id\":\"5f3a09c1-0-1a\","
                        "\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"span_id\":\"00f067aa0ba902b7\","
                        "\"referer\":null,\"user_agent\":\"curl/8\"}\n");
    e.unix_us = -1;
    e.duration_us = -1;
    e.route = NONE;
    e.request_id = NONE;
    e.trace_id = e.span_id = NONE;
    char *l = line(&e, 1);
    assert_non_null(strstr(l, "{\"time\":null,"));
    assert_non_null(strstr(l, "\"duration_ms\":null,\"route\":null,\"request_id\":null,\"trace_id\":null,"
                              "\"span_id\":null,"));
    /* the epoch, a leap day, the last millisecond of a year */
    e.unix_us = 0;
    assert_non_null(strstr(line(&e, 1), "\"1970-01-01T00:00:00.000Z\""));
    e.unix_us = 951782400000000; /* 2000-02-29 */
    assert_non_null(strstr(line(&e, 1), "\"2000-02-29T00:00:00.000Z\""));
    e.unix_us = 1798761599999999; /* 2026-12-31T23:59:59.999999 */
    assert_non_null(strstr(line(&e, 1), "\"2026-12-31T23:59:59.999Z\""));
}

static void json_hostile(void **state)
{
    struct canal__acclog_entry e = sample();
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"\x01\t\n\x1f\x7f", "\"\\u0001\\u0009\\u000a\\u001f\\u007f\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"\xff", "\"\\ufffd\""},
        {"\x80x", "\"\\ufffdx\""},                           /* a lone continuation byte */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                  /* overlong '/' */
        {"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""},       /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},       /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* past U+10FFFF */
        {"\xe2\x82", "\"\\ufffd\\ufffd\""},                  /* cut at the end */
        {"\xe2(", "\"\\ufffd(\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        e.user_agent = (canal_str_t){cases[i].in, strlen(cases[i].in)};
        char want[128];
        snprintf(want, sizeof(want), "\"user_agent\":%s}\n", cases[i].out);
        assert_non_null(strstr(line(&e, 1), want));
    }
}

static void ipv4(void **state)
{
    char buf[16];
    static const uint8_t a[4] = {0, 10, 255, 127}, b[4] = {127, 0, 0, 1};
    assert_int_equal(canal__ipv4_text(buf, a), 12);
    assert_memory_equal(buf, "0.10.255.127", 12);
    assert_int_equal(canal__ipv4_text(buf, b), 9);
    assert_memory_equal(buf, "127.0.0.1", 9);
}

/* random bytes in every string: the line stays within the bound, and a JSON line has no raw
 * control byte and no byte 0xf5-0xff (what a validating reader would choke on first) */
static void random_bytes_within_bound(void **state)
{
    static char pool[8][512];
    unsigned seed = 12345;
    for (int round = 0; round < 2000; round++) {
        for (int k = 0; k < 8; k++)
            for (size_t i = 0; i < sizeof(pool[k]); i++)
                pool[k][i] = (char)((seed = seed * 1103515245 + 12345) >> 16);
        size_t len = (seed >> 8) % 512;
        struct canal__acclog_entry e = sample();
        canal_str_t *fields[] = {&e.client, &e.method, &e.target, &e.route, &e.request_id, &e.referer,
                                 &e.user_agent, &e.clf_time};
        for (int k = 0; k < 8; k++)
            *fields[k] = (canal_str_t){pool[k], (len * (size_t)(k + 1)) % 512};
        line(&e, 0);
        char *l = line(&e, 1);
        for (char *p = l; *p != '\n'; p++)
            assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0xf5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clf_line),
        cmocka_unit_test(clf_every_byte),
        cmocka_unit_test(every_byte_every_place),
        cmocka_unit_test(json_route_slash),
        cmocka_unit_test(json_line),
        cmocka_unit_test(json_hostile),
        cmocka_unit_test(ipv4),
        cmocka_unit_test(random_bytes_within_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
