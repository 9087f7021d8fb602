/* SPDX-License-Identifier: MIT */
/*
 * canal's own part of RFC 6455 (lib/realtime/ws_frame.c): the UTF-8 check (against an
 * independent decoder on every sequence of up to three bytes, and at the edges of four),
 * close codes, Sec-WebSocket-Key, and the scan of a client's frames: what it passes on to
 * wslay, where it stops, and the close code of every rule it enforces.
 */
#include "test.h"
#include "canal/router.h"
#include "realtime/ws_internal.h"
#include "../fuzz/ws_oracle.h"

static void test_utf8(void **state)
{
    static const struct {
        const char *s;
        size_t n;
        int ok;
    } cases[] = {
        {"", 0, 1}, {"plain", 5, 1}, {"\xc2\x80", 2, 1}, {"\xdf\xbf", 2, 1}, {"\xe0\xa0\x80", 3, 1},
        {"\xef\xbf\xbf", 3, 1}, {"\xf0\x90\x80\x80", 4, 1}, {"\xf4\x8f\xbf\xbf", 4, 1},
        {"\xc0\x80", 2, 0}, {"\xc1\xbf", 2, 0}, {"\xe0\x9f\xbf", 3, 0}, {"\xed\xa0\x80", 3, 0},
        {"\xed\xbf\xbf", 3, 0}, {"\xf0\x8f\xbf\xbf", 4, 0}, {"\xf4\x90\x80\x80", 4, 0},
        {"\xf5\x80\x80\x80", 4, 0}, {"\xff", 1, 0}, {"\x80", 1, 0}, {"ok\xe2\x82", 4, 0},
        {"\xe2\x28\xa1", 3, 0}, {"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5", 11, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(canal_utf8_valid((canal_str_t){(const char *)(cases[i].s), cases[i].n}), cases[i].ok);
        assert_int_equal(oracle_utf8((const unsigned char *)cases[i].s, cases[i].n), cases[i].ok);
    }
    unsigned char b[4];
    for (uint32_t v = 0; v < (1u << 24); v++) { /* every 1-, 2- and 3-byte sequence */
        b[0] = v >> 16, b[1] = v >> 8, b[2] = (unsigned char)v;
        assert_int_equal(canal_utf8_valid((canal_str_t){(const char *)(b), 3}), oracle_utf8(b, 3));
        if (v < (1u << 16))
            assert_int_equal(canal_utf8_valid((canal_str_t){(const char *)(b + 1), 2}), oracle_utf8(b + 1, 2));
    }
    for (uint32_t v = 0; v < (1u << 16); v++) { /* 4 bytes: every lead and second byte */
        b[0] = v >> 8, b[1] = (unsigned char)v, b[2] = 0x80, b[3] = 0xBF;
        assert_int_equal(canal_utf8_valid((canal_str_t){(const char *)(b), 4}), oracle_utf8(b, 4));
    }
}

static void test_close_codes(void **state)
{
    for (int c = 0; c < 70000; c++) {
        int want = (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1014) || (c >= 3000 && c <= 4999);
        assert_int_equal(canal__ws_close_code_ok(c), want);
    }
}

static void test_key(void **state)
{
    const char *k;
    size_t n;
    assert_true(canal__ws_key_ok(" dGhlIHNhbXBsZSBub25jZQ== \t", 27, &k, &n));
    assert_int_equal(n, 24);
    assert_memory_equal(k, "dGhlIHNhbXBsZSBub25jZQ==", 24);
    assert_false(canal__ws_key_ok("", 0, &k, &n));
    assert_false(canal__ws_key_ok("dGhlIHNhbXBsZSBub25jZQ=", 23, &k, &n));   /* 23 */
    assert_false(canal__ws_key_ok("dGhlIHNhbXBsZSBub25jZQ===", 25, &k, &n)); /* 25 */
    assert_false(canal__ws_key_ok("dGhlIHNhbXBsZSBub25jZ!==", 24, &k, &n));  /* not base64 */
    assert_false(canal__ws_key_ok("dGhlIHNhbXBsZSBub25jZQQQ", 24, &k, &n));  /* 18 bytes */
    assert_false(canal__ws_key_ok("dGhlIHNhbXBsZSBub25j=Q==", 24, &k, &n));
}

/* A client frame: masked with the zero mask (so payload bytes stay readable) unless told. */
static size_t frame(uint8_t *out, int fin, int rsv, int opcode, int masked, const void *payload, size_t n)
{
    size_t at = 0;
    out[at++] = (uint8_t)(fin << 7 | rsv << 4 | opcode);
    uint8_t m = masked ? 0x80 : 0;
    if (n < 126) {
        out[at++] = m | (uint8_t)n;
    } else if (n < 65536) {
        out[at++] = m | 126;
        out[at++] = (uint8_t)(n >> 8), out[at++] = (uint8_t)n;
    } else {
        out[at++] = m | 127;
        for (int i = 7; i >= 0; i--)
            out[at++] = (uint8_t)((uint64_t)n >> (8 * i));
    }
    if (masked)
        memset(out + at, 0, 4), at += 4;
    memcpy(out + at, payload, n);
    return at + n;
}

static int scan(struct canal__ws_scan *s, const uint8_t *b, size_t len, size_t *n, struct canal__ws_close *c)
{
    return canal__ws_scan(s, b, len, 4096, n, c);
}

static void test_scan_pass(void **state)
{
    uint8_t b[8192];
    struct canal__ws_scan s = {.max_message = 1000};
    struct canal__ws_close c;
    size_t n, len = frame(b, 1, 0, 1, 1, "hello", 5);
    assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, len);
    assert_int_equal(scan(&s, b, 1, &n, &c), CANAL__WS_PASS); /* half a header: wait */
    assert_int_equal(n, 0);
    /* a ping is passed whole or not at all; data payload as it comes */
    size_t p = frame(b, 1, 0, 9, 1, "ping", 4);
    assert_int_equal(scan(&s, b, p - 1, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, 0);
    len = p + frame(b + p, 0, 0, 2, 1, "0123456789", 10);
    assert_int_equal(scan(&s, b, len - 4, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, len - 4);
    assert_int_equal(scan(&s, b + len - 4, 4, &n, &c), CANAL__WS_PASS); /* the payload's end */
    assert_int_equal(n, 4);
    /* a ping between fragments, then the last fragment */
    len = frame(b, 1, 0, 9, 1, "", 0);
    len += frame(b + len, 1, 0, 0, 1, "x", 1);
    assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, len);
    /* limit: no more than it, and a control frame that does not fit waits */
    struct canal__ws_scan t = {.max_message = 5000};
    uint8_t big[3000] = {0};
    len = frame(b, 1, 0, 2, 1, big, sizeof(big));
    len += frame(b + len, 1, 0, 9, 1, "p", 1);
    assert_int_equal(canal__ws_scan(&t, b, len, 1000, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, 1000);
    assert_int_equal(canal__ws_scan(&t, b + 1000, len - 1000, 2011, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, 3008 - 1000); /* the data frame's end, not the ping */
    assert_int_equal(canal__ws_scan(&t, b + 3008, len - 3008, 4096, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, len - 3008);
}

static void test_scan_close(void **state)
{
    uint8_t b[512];
    struct canal__ws_scan s = {.max_message = 1000};
    struct canal__ws_close c;
    size_t n, t = frame(b, 1, 0, 1, 1, "m", 1);
    size_t len = t + frame(b + t, 1, 0, 8, 1, "\x03\xe8" "bye \xe2\x98\x83", 9);
    assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_PASS); /* the message first */
    assert_int_equal(n, t);
    assert_int_equal(scan(&s, b + t, len - t, &n, &c), CANAL__WS_CLOSE);
    assert_int_equal(n, len - t);
    assert_int_equal(c.code, 1000);
    assert_int_equal(c.reason_len, 7);
    assert_memory_equal(c.reason, "bye \xe2\x98\x83", 7);
    len = frame(b, 1, 0, 8, 1, "", 0);
    assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_CLOSE);
    assert_int_equal(c.code, 0);
    len = frame(b, 1, 0, 8, 1, "\x03\xf4", 2); /* 1012: valid, though wslay refuses it */
    assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_CLOSE);
    assert_int_equal(c.code, 1012);
    static const struct {
        const char *payload;
        size_t n;
        int code;
    } bad[] = {
        {"\x03", 1, 1002}, {"\x03\xed", 2, 1002}, {"\x00\x00", 2, 1002}, {"\x0b\xb8" "\xff", 3, 1007},
        {"\x03\xe8" "\xc0\x80", 4, 1007}, {"\x13\x88", 2, 1002},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct canal__ws_scan fresh = {.max_message = 1000};
        len = frame(b, 1, 0, 8, 1, bad[i].payload, bad[i].n);
        assert_int_equal(scan(&fresh, b, len, &n, &c), bad[i].code);
    }
}

static void test_scan_faults(void **state)
{
    uint8_t b[512];
    struct canal__ws_close c;
    size_t n, len;
    struct {
        int fin, rsv, opcode, masked;
        size_t n;
    } bad[] = {
        {1, 1, 1, 1, 1}, {1, 2, 1, 1, 1}, {1, 4, 2, 1, 1}, {1, 0, 3, 1, 1}, {1, 0, 7, 1, 1}, {1, 0, 11, 1, 1},
        {1, 0, 15, 1, 1}, {1, 0, 1, 0, 1}, {1, 0, 9, 1, 126}, {0, 0, 9, 1, 1}, {0, 0, 8, 1, 2}, {1, 0, 0, 1, 1},
    };
    uint8_t zeros[200] = {0};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct canal__ws_scan s = {.max_message = 1000};
        size_t good = frame(b, 1, 0, 2, 1, "ok", 2);
        len = good + frame(b + good, bad[i].fin, bad[i].rsv, bad[i].opcode, bad[i].masked, zeros, bad[i].n);
        assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_PASS); /* the good frame first */
        assert_int_equal(n, good);
        assert_int_equal(scan(&s, b + good, len - good, &n, &c), CANAL__WS_PROTOCOL_ERROR);
    }
    /* a new message inside a fragmented one */
    struct canal__ws_scan s = {.max_message = 1000};
    len = frame(b, 0, 0, 1, 1, "a", 1);
    assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_PASS);
    len = frame(b, 1, 0, 2, 1, "b", 1);
    assert_int_equal(scan(&s, b, len, &n, &c), CANAL__WS_PROTOCOL_ERROR);
    /* lengths not in their shortest form, or with the top bit set */
    const uint8_t short16[] = {0x82, 0xFE, 0x00, 0x7D, 0, 0, 0, 0};
    const uint8_t short64[] = {0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0};
    const uint8_t top[] = {0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    struct canal__ws_scan f = {.max_message = 1000};
    assert_int_equal(scan(&f, short16, sizeof(short16), &n, &c), CANAL__WS_PROTOCOL_ERROR);
    assert_int_equal(scan(&f, short64, sizeof(short64), &n, &c), CANAL__WS_PROTOCOL_ERROR);
    assert_int_equal(scan(&f, top, sizeof(top), &n, &c), CANAL__WS_PROTOCOL_ERROR);
}

static void test_scan_limit(void **state)
{
    uint8_t b[64];
    struct canal__ws_close c;
    size_t n;
    /* exactly the limit, in one frame: its header passes (the payload follows) */
    struct canal__ws_scan s = {.max_message = 1048576};
    const uint8_t exact[] = {0x82, 0xFF, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0};
    assert_int_equal(scan(&s, exact, sizeof(exact), &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, sizeof(exact));
    assert_int_equal(s.left, 1048576);
    /* one more: 1009 from the header alone */
    struct canal__ws_scan t = {.max_message = 1048576};
    const uint8_t over[] = {0x82, 0xFF, 0, 0, 0, 0, 0, 0x10, 0, 1, 0, 0, 0, 0};
    assert_int_equal(scan(&t, over, sizeof(over), &n, &c), CANAL__WS_TOO_BIG);
    /* fragments: the sum counts */
    struct canal__ws_scan u = {.max_message = 10};
    size_t len = frame(b, 0, 0, 1, 1, "12345", 5);
    len += frame(b + len, 0, 0, 0, 1, "67890", 5);
    assert_int_equal(scan(&u, b, len, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, len);
    len = frame(b, 1, 0, 0, 1, "", 0); /* exactly 10 so far: an empty last fragment is fine */
    assert_int_equal(scan(&u, b, len, &n, &c), CANAL__WS_PASS);
    len = frame(b, 0, 0, 2, 1, "1234567890", 10);
    len += frame(b + len, 1, 0, 0, 1, "x", 1);
    assert_int_equal(scan(&u, b, len, &n, &c), CANAL__WS_PASS);
    assert_int_equal(n, 16); /* the first fragment; the second would make 11 */
    assert_int_equal(scan(&u, b + 16, len - 16, &n, &c), CANAL__WS_TOO_BIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8),        cmocka_unit_test(test_close_codes), cmocka_unit_test(test_key),
        cmocka_unit_test(test_scan_pass),   cmocka_unit_test(test_scan_close),  cmocka_unit_test(test_scan_faults),
        cmocka_unit_test(test_scan_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
