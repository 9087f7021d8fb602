/* SPDX-License-Identifier: MIT */
/*
 * Small text conversions shared by the server's layers, in plain C (libc only): strict
 * base64 (the JWT verifier, signed values) and an IPv4 address's dotted text (client
 * addresses, the access log).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "common.h"

static int b64_value(unsigned char c, int url)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

int canal__b64_decode(const char *s, size_t n, int url, unsigned char *out, size_t *outlen)
{
    if (!url) { /* RFC 4648 4 with its padding: whole quanta, '=' only at the end */
        if (n % 4 != 0)
            return -1;
        if (n > 0 && s[n - 1] == '=')
            n--;
        if (n > 0 && s[n - 1] == '=')
            n--;
    }
    if (n % 4 == 1)
        return -1;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value((unsigned char)s[i], url);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        if ((bits += 6) >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    if ((acc & ((1u << bits) - 1)) != 0)
        return -1; /* bits past the last byte: another spelling of the same bytes */
    *outlen = o;
    return 0;
}

/* v (0..255) in 1 to 3 digits: no loop and no 64-bit division */
static char *put_u8(char *o, unsigned v)
{
    if (v >= 10) {
        if (v >= 100) {
            *o++ = (char)('0' + v / 100);
            v %= 100;
        }
        *o++ = (char)('0' + v / 10);
        v %= 10;
    }
    *o++ = (char)('0' + v);
    return o;
}

size_t canal__i64_text(char *out, int64_t v)
{
    /* the digits counted first, then written from the last, two at a time */
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v, t = u;
    size_t n = 1;
    while (t >= 100) {
        t /= 100;
        n += 2;
    }
    n += t >= 10;
    if (v < 0)
        *out++ = '-';
    char *p = out + n;
    while (u >= 100) {
        const char *d = pairs + 2 * (u % 100);
        u /= 100;
        *--p = d[1];
        *--p = d[0];
    }
    if (u >= 10) {
        *--p = pairs[2 * u + 1];
        *--p = pairs[2 * u];
    } else {
        *--p = (char)('0' + u);
    }
    return n + (v < 0);
}

size_t canal__ipv4_text(char *out, const uint8_t b[4])
{
    char *o = put_u8(out, b[0]);
    for (int i = 1; i < 4; i++) {
        *o++ = '.';
        o = put_u8(o, b[i]);
    }
    return (size_t)(o - out);
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t canal__b64url_len(size_t n)
{
    return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

size_t canal__b64url_encode(const unsigned char *in, size_t n, char *out)
{
    char *o = out;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *o++ = b64url[v >> 18], *o++ = b64url[v >> 12 & 63], *o++ = b64url[v >> 6 & 63], *o++ = b64url[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        *o++ = b64url[v >> 18], *o++ = b64url[v >> 12 & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        *o++ = b64url[v >> 18], *o++ = b64url[v >> 12 & 63], *o++ = b64url[v >> 6 & 63];
    }
    return (size_t)(o - out);
}

/* ---- SipHash-2-4 (Aumasson and Bernstein), written from the paper's description ---- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND(v0, v1, v2, v3)                                                                                 \
    do {                                                                                                       \
        v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32);                                               \
        v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                                                                  \
        v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                                                                  \
        v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32);                                               \
    } while (0)

uint64_t canal__siphash(uint64_t k0, uint64_t k1, const unsigned char *p, size_t n)
{
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    uint64_t b = (uint64_t)n << 56, m;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&m, p + i, 8); /* little-endian hosts; the hash only needs to be keyed, not portable */
        v3 ^= m;
        SIPROUND(v0, v1, v2, v3);
        SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    for (size_t j = 0; i + j < n; j++)
        b |= (uint64_t)p[i + j] << (8 * j);
    v3 ^= b;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int r = 0; r < 4; r++)
        SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
