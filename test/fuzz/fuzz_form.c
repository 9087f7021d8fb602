/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the urlencoded form iterator (canal_form_next(), lib/models/form.c).
 * Checks, besides the sanitizers, against a reference decoder written here:
 *   - the pairs come out in order, each name and value equal to the reference's decoding
 *     ('&' pieces, empty ones skipped, the first '=' splits, %XX and '+'), inside the buffer;
 *   - the iterator fails exactly where the reference finds a bad escape or %00, with
 *     CANAL_EBADREQ, the pair's offset, and the same error again on the next call;
 *   - decoding in place (buf = the body's own copy) gives the same pairs;
 *   - it always ends.
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

static int hex(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The reference: decodes s[0..n) into out; its length, or -1 for a bad escape or %00. */
static long ref_decode(const uint8_t *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            if (n - i < 3 || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
                return -1;
            int v = hex(s[i + 1]) * 16 + hex(s[i + 2]);
            if (v == 0)
                return -1;
            out[o++] = (char)v;
            i += 2;
        } else {
            out[o++] = s[i] == '+' ? ' ' : (char)s[i];
        }
    }
    return (long)o;
}

static int same(canal_str_t s, const char *p, long n)
{
    return n >= 0 && s.len == (size_t)n && memcmp(s.base, p, (size_t)n) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *own = malloc(size + 1), *rk = malloc(size + 1), *rv = malloc(size + 1);
    memcpy(own, data, size);
    canal_str_t body = {(const char *)data, size};
    size_t at = 0, at2 = 0, i = 0, pairs = 0;
    for (;;) {
        /* the reference's next pair */
        while (i < size && data[i] == '&')
            i++;
        canal_param_t p, q;
        canal_error_info_t err;
        int rc = canal_form_next(body, &at, buf, &p, &err);
        int rc2 = canal_form_next((canal_str_t){own, size}, &at2, own, &q, NULL);
        check(rc == rc2, "in place: the same outcome");
        if (i == size) {
            check(rc == 0 && at == size, "the end where the reference ends");
            break;
        }
        const uint8_t *piece = data + i, *amp = memchr(piece, '&', size - i);
        size_t n = amp ? (size_t)(amp - piece) : size - i;
        const uint8_t *eq = memchr(piece, '=', n);
        size_t kn = eq ? (size_t)(eq - piece) : n;
        long k = ref_decode(piece, kn, rk), v = eq ? ref_decode(eq + 1, n - kn - 1, rv) : 0;
        if (k < 0 || v < 0) {
            check(rc == CANAL_EBADREQ && err.code == CANAL_EBADREQ && err.position == i, "an error where the reference finds one");
            check(canal_form_next(body, &at, buf, &p, NULL) == CANAL_EBADREQ, "the same error again");
            break;
        }
        check(rc == 1, "a pair where the reference has one");
        check(same(p.name, rk, k) && same(p.value, rv, v), "the reference's name and value");
        check(same(q.name, rk, k) && same(q.value, rv, v), "in place: the same name and value");
        check(p.name.base >= buf && p.name.base + p.name.len <= buf + size, "the name inside buf");
        check(p.value.len == 0 || (p.value.base >= buf && p.value.base + p.value.len <= buf + size), "the value inside buf");
        check(at == i + n, "past the pair");
        check(++pairs <= size, "the iterator ends");
        i += n;
    }
    free(buf);
    free(own);
    free(rk);
    free(rv);
    return 0;
}
