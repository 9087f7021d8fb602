/* SPDX-License-Identifier: MIT */
/*
 * A fast writer of jansson documents into request memory, for responses.
 *
 * jansson's json_dumpb() spends 75-90 instructions per output byte (a callback per chunk,
 * snprintf for every number, per-character escaping), which made it most of the cost of a
 * JSON answer. This writer produces the very bytes json_dumpb(json, ..., JSON_COMPACT |
 * JSON_ENCODE_ANY) produces (test/unit/json_test.c compares them), in one pass: strings are
 * copied in runs between the bytes that need escaping, integers are converted by hand, and
 * only reals go through snprintf ("%.17g", then jansson's own touch-ups). Invalid UTF-8 in a
 * string fails, as it does in jansson.
 */
#include <stdio.h>
#include <string.h>
#include "server_internal.h"

struct jw {
    h2o_mem_pool_t *pool;
    char *buf;
    size_t len, cap;
};

/* Makes room for n more bytes, moving the buffer to a larger block of request memory. */
static inline char *room(struct jw *w, size_t n)
{
    if (w->len + n > w->cap) {
        size_t cap = w->cap * 2;
        while (cap < w->len + n)
            cap *= 2;
        char *grown = h2o_mem_alloc_pool(w->pool, cap);
        memcpy(grown, w->buf, w->len);
        w->buf = grown;
        w->cap = cap;
    }
    return w->buf + w->len;
}

static inline void put(struct jw *w, const char *s, size_t n)
{
    memcpy(room(w, n), s, n);
    w->len += n;
}

static void put_int(struct jw *w, json_int_t v)
{
    char tmp[24], *p = tmp + sizeof(tmp);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--p = '-';
    put(w, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* jansson's jsonp_dtostr(): "%.17g", a ".0" when it would read back as an integer, and the
 * exponent without '+' or leading zeros. */
static void put_real(struct jw *w, double v)
{
    char buf[40];
    int n = snprintf(buf, sizeof(buf), "%.17g", v);
    if (n < 0 || n >= (int)sizeof(buf) - 3)
        return;
    char *dot = strchr(buf, ',');
    if (dot != NULL) /* a locale with a decimal comma */
        *dot = '.';
    if (strchr(buf, '.') == NULL && strchr(buf, 'e') == NULL) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    char *e = strchr(buf, 'e');
    if (e != NULL) {
        char *start = e + 1, *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, (size_t)(buf + n - end) + 1);
            n -= (int)(end - start);
        }
    }
    put(w, buf, (size_t)n);
}

/* The length of the valid UTF-8 sequence at s (jansson's rules: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0], need, cp;
    if (c >= 0xC2 && c <= 0xDF)
        need = 1, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        need = 2, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        need = 3, cp = c & 0x07;
    else
        return 0;
    if (need >= avail)
        return 0;
    for (unsigned i = 1; i <= need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return need + 1;
}

static int put_string(struct jw *w, const char *str, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;
    room(w, len + 2);
    w->buf[w->len++] = '"';
    while (i < len) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t n = utf8_len(s + i, len - i);
            if (n == 0)
                return -1;
            i += n;
            continue;
        }
        put(w, str + run, i - run);
        char esc[6] = {'\\', 0};
        size_t elen = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        }
        put(w, esc, elen);
        run = ++i;
    }
    put(w, str + run, len - run);
    put(w, "\"", 1);
    return 0;
}

static int put_value(struct jw *w, const json_t *j, int depth)
{
    if (depth > 2048) /* a bound on recursion: documents built in code can nest without end */
        return -1;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *key;
        size_t klen;
        json_t *v;
        int first = 1;
        put(w, "{", 1);
        /* keys may hold NUL (json_object_setn): their length, not strlen */
        json_object_keylen_foreach((json_t *)j, key, klen, v)
        {
            if (!first)
                put(w, ",", 1);
            first = 0;
            if (put_string(w, key, klen) != 0)
                return -1;
            put(w, ":", 1);
            if (put_value(w, v, depth + 1) != 0)
                return -1;
        }
        put(w, "}", 1);
        return 0;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        put(w, "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i)
                put(w, ",", 1);
            if (put_value(w, json_array_get(j, i), depth + 1) != 0)
                return -1;
        }
        put(w, "]", 1);
        return 0;
    }
    case JSON_STRING:
        return put_string(w, json_string_value(j), json_string_length(j));
    case JSON_INTEGER:
        put_int(w, json_integer_value(j));
        return 0;
    case JSON_REAL:
        put_real(w, json_real_value(j));
        return 0;
    case JSON_TRUE:
        put(w, "true", 4);
        return 0;
    case JSON_FALSE:
        put(w, "false", 5);
        return 0;
    case JSON_NULL:
        put(w, "null", 4);
        return 0;
    }
    return -1;
}

char *canal__json_write(h2o_mem_pool_t *pool, const json_t *json, size_t hint, size_t *len)
{
    struct jw w = {pool, NULL, 0, hint < 64 ? 64 : hint};
    w.buf = h2o_mem_alloc_pool(pool, w.cap);
    if (json == NULL || put_value(&w, json, 0) != 0)
        return NULL;
    *len = w.len;
    return w.buf;
}
