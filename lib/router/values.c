/* SPDX-License-Identifier: MIT */
/*
 * Strict value parsers (the route constraints and the typed accessors use them) and
 * percent-decoding. Strict means: exactly the characters of the type, nothing around them,
 * so " 1", "+3", "0x10" and "1e3" are not integers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "router_internal.h"

int canal_parse_int64(canal_str_t s, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    uint64_t v = 0, limit;
    if (s.len > 0 && s.base[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == s.len)
        return CANAL_ETYPE;
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int overflow = 0;
    for (; i < s.len; i++) {
        unsigned d = (unsigned char)s.base[i] - '0';
        if (d > 9)
            return CANAL_ETYPE;
        if (v > (limit - d) / 10)
            overflow = 1; /* keep scanning: "99999999999999999999x" is a type error */
        else
            v = v * 10 + d;
    }
    if (overflow)
        return CANAL_ERANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int canal_parse_int32(canal_str_t s, int32_t *out)
{
    int64_t v;
    int rc = canal_parse_int64(s, &v);
    if (rc != 0)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return CANAL_ERANGE;
    *out = (int32_t)v;
    return 0;
}

int canal_parse_double(canal_str_t s, double *out)
{
    size_t i = 0, digits = 0;
    char buf[128];
    if (i < s.len && s.base[i] == '-')
        i++;
    while (i < s.len && s.base[i] >= '0' && s.base[i] <= '9')
        i++, digits++;
    if (i < s.len && s.base[i] == '.') {
        i++;
        while (i < s.len && s.base[i] >= '0' && s.base[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return CANAL_ETYPE;
    if (i < s.len && (s.base[i] == 'e' || s.base[i] == 'E')) {
        size_t exp_digits = 0;
        i++;
        if (i < s.len && (s.base[i] == '+' || s.base[i] == '-'))
            i++;
        while (i < s.len && s.base[i] >= '0' && s.base[i] <= '9')
            i++, exp_digits++;
        if (exp_digits == 0)
            return CANAL_ETYPE;
    }
    if (i != s.len)
        return CANAL_ETYPE;
    if (s.len >= sizeof(buf))
        return CANAL_ERANGE;
    memcpy(buf, s.base, s.len);
    buf[s.len] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE && isinf(d))
        return CANAL_ERANGE;
    *out = d;
    return 0;
}

int canal_parse_bool(canal_str_t s, int *out)
{
    if (s.len == 4 && strncasecmp(s.base, "true", 4) == 0) {
        *out = 1;
        return 0;
    }
    if (s.len == 5 && strncasecmp(s.base, "false", 5) == 0) {
        *out = 0;
        return 0;
    }
    return CANAL_ETYPE;
}

int canal_utf8_valid(canal_str_t s)
{
    /* RFC 3629: the shortest form only (no C0/C1 leads, no E0 80..9F, no F0 80..8F), no
     * UTF-16 surrogates (ED A0..BF), nothing above U+10FFFF (F4 90.. and F5..FF). These are
     * the forms decoders disagree on, which is how "/" sneaks past a check as C0 AF. */
    const unsigned char *p = (const unsigned char *)s.base, *end = p + s.len;
    while (p < end) {
        unsigned char c = *p++;
        if (c < 0x80)
            continue;
        unsigned char lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
        int more;
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return 0;
        }
        if (end - p < more || p[0] < lo || p[0] > hi)
            return 0;
        for (int k = 1; k < more; k++)
            if ((p[k] & 0xC0) != 0x80)
                return 0;
        p += more;
    }
    return 1;
}

int canal__hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = canal__lower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int canal_percent_decode(canal_str_t src, char *dst, int plus_is_space)
{
    size_t o = 0;
    for (size_t i = 0; i < src.len; i++) {
        char c = src.base[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= src.len)
                return CANAL_EBADREQ;
            if ((hi = canal__hexval((unsigned char)src.base[i + 1])) < 0 ||
                (lo = canal__hexval((unsigned char)src.base[i + 2])) < 0 || (hi | lo) == 0)
                return CANAL_EBADREQ;
            dst[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            dst[o++] = ' ';
        } else {
            dst[o++] = c;
        }
    }
    return (int)o;
}
