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
 *
 * The same code is also the streaming writer of the public API (canal_jw_t, the second half
 * of this file): a handler writes values one by one, the writer adds the commas, colons and
 * brackets and checks their order with a small stack of levels, and its first error sticks.
 * Both start in request memory; a buffer that must grow moves to heap memory (realloc), freed
 * with the pool, so that a failed allocation is an error and not h2o's abort.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

/* Records the writer's first error and returns it. */
static int fail(struct canal_jw *w, int err, const char *why)
{
    if (w->err == 0) {
        w->err = err;
        w->why = why;
    }
    return w->err;
}

int canal__jw_fail(struct canal_jw *w, int err, const char *why)
{
    return fail(w, err, why);
}

static void free_heap(void *holder)
{
    free(*(char **)holder);
}

/* Grows the buffer for n more bytes: 0, or the sticky error (CANAL_ENOMEM). */
static int grow(struct canal_jw *w, size_t n)
{
    if (n > SIZE_MAX / 4 - w->len)
        return fail(w, CANAL_ENOMEM, "the document is too large");
    size_t cap = w->cap < 64 ? 64 : w->cap * 2;
    while (cap < w->len + n)
        cap *= 2;
    char *grown;
    if (w->heap == NULL) {
        if ((grown = malloc(cap)) == NULL)
            return fail(w, CANAL_ENOMEM, "out of memory");
        memcpy(grown, w->buf, w->len);
        /* the holder is tiny and allocated once; h2o aborts if even that fails */
        w->heap = h2o_mem_alloc_shared(w->pool, sizeof(*w->heap), free_heap);
    } else if ((grown = realloc(*w->heap, cap)) == NULL) {
        return fail(w, CANAL_ENOMEM, "out of memory");
    }
    *w->heap = grown;
    w->buf = grown;
    w->cap = cap;
    return 0;
}

/* Makes room for n more bytes: 0, or the sticky error (nothing may be written then). */
static inline int room(struct canal_jw *w, size_t n)
{
    return n <= w->cap - w->len ? 0 : grow(w, n);
}

int canal__jw_room(struct canal_jw *w, size_t n)
{
    return room(w, n);
}

static inline void put(struct canal_jw *w, const char *s, size_t n)
{
    if (room(w, n) == 0) {
        memcpy(w->buf + w->len, s, n);
        w->len += n;
    }
}

static inline void put1(struct canal_jw *w, char c)
{
    if (room(w, 1) == 0)
        w->buf[w->len++] = c;
}

static void put_int(struct canal_jw *w, json_int_t v)
{
    if (room(w, 20) == 0) /* written in place */
        w->len += canal__i64_text(w->buf + w->len, (int64_t)v);
}

/* jansson's jsonp_dtostr(): "%.17g", a ".0" when it would read back as an integer, and the
 * exponent without '+' or leading zeros. */
static void put_real(struct canal_jw *w, double v)
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

/* 1 if none of the 8 bytes of x needs escaping or a UTF-8 check: no byte below 0x20, '"',
 * '\\' or from 0x80 up (the "has a zero byte" test of Hacker's Delight, once per kind). */
static inline int plain_word(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t quote = x ^ (ones * '"'), backslash = x ^ (ones * '\\');
    uint64_t hit = (x - ones * 0x20) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) | x;
    return (hit & high) == 0;
}

/* Copies the len bytes at s to out and returns 1 if none of them needs escaping or a UTF-8
 * check, else 0 (out then holds some of them, to be written over). Whole words, the last one
 * overlapping the one before; under 8 bytes two overlapping halves, or the first, middle and
 * last byte: every read and write has a constant size, so no call to memcpy. */
static inline int copy_plain(char *out, const unsigned char *s, size_t len)
{
    uint64_t word;
    uint32_t lo, hi;
    if (len >= 8) {
        for (size_t i = 0; i + 8 < len; i += 8) {
            memcpy(&word, s + i, 8);
            if (!plain_word(word))
                return 0;
            memcpy(out + i, &word, 8);
        }
        memcpy(&word, s + len - 8, 8);
        memcpy(out + len - 8, &word, 8);
        return plain_word(word);
    }
    if (len >= 4) {
        memcpy(&lo, s, 4);
        memcpy(&hi, s + len - 4, 4);
        memcpy(out, &lo, 4);
        memcpy(out + len - 4, &hi, 4);
        return plain_word((uint64_t)lo << 32 | hi);
    }
    if (len == 0)
        return 1;
    out[0] = (char)s[0];
    out[len / 2] = (char)s[len / 2];
    out[len - 1] = (char)s[len - 1];
    return plain_word(0x2020202020000000ULL | s[0] | (uint64_t)s[len / 2] << 8 | (uint64_t)s[len - 1] << 16);
}

static int put_string(struct canal_jw *w, const char *str, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;
    if (len > SIZE_MAX / 8)
        fail(w, CANAL_ENOMEM, "the document is too large");
    if (w->err != 0 || room(w, len + 2) != 0)
        return 0; /* not a UTF-8 error: the memory error sticks */
    char *out = w->buf + w->len;
    if (copy_plain(out + 1, s, len)) { /* most keys and strings: copied as they are */
        out[0] = '"';
        out[len + 1] = '"';
        w->len += len + 2;
        return 0;
    }
    w->buf[w->len++] = '"';
    while (i < len) {
        uint64_t word;
        if (i + 8 <= len && (memcpy(&word, s + i, 8), plain_word(word))) {
            i += 8;
            continue;
        }
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

static int put_value(struct canal_jw *w, const json_t *j, int depth)
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
    struct canal_jw w;
    canal__jw_init(&w, pool, hint);
    if (json == NULL || put_value(&w, json, 0) != 0 || w.err != 0)
        return NULL;
    *len = w.len;
    return w.buf;
}

/* ---- the streaming writer ---- */

void canal__jw_init(struct canal_jw *w, h2o_mem_pool_t *pool, size_t hint)
{
    w->pool = pool;
    w->cap = hint < 64 ? 64 : hint;
    w->buf = h2o_mem_alloc_pool(pool, w->cap);
    w->len = 0;
    w->heap = NULL;
    w->worker = NULL;
    w->err = 0;
    w->why = "";
    w->depth = 0;
    w->st[0] = 0; /* the other levels are set when opened */
}

canal_jw_t *canal_req_jw(canal_req_t *req)
{
    /* the writer and its first buffer in one piece of request memory */
    size_t hint = req->worker->json_hint;
    struct canal_jw *w = h2o_mem_alloc_pool(&req->h2o->pool, sizeof(*w) + hint);
    w->pool = &req->h2o->pool;
    w->buf = (char *)(w + 1);
    w->cap = hint;
    w->len = 0;
    w->heap = NULL;
    w->worker = req->worker;
    w->err = 0;
    w->why = "";
    w->depth = 0;
    w->st[0] = 0;
    return w;
}

/* Before a value: checks that one may come here and writes the comma before it. */
static inline int value_slot(struct canal_jw *w)
{
    uint8_t *s = &w->st[w->depth];
    if (w->err != 0)
        return w->err;
    if (*s & JW_OBJ) {
        if (!(*s & JW_KEY))
            return fail(w, CANAL_ESTATE, "a value where an object key is expected");
        *s &= (uint8_t)~JW_KEY;
        return 0;
    }
    if (*s & JW_ITEMS) {
        if (w->depth == 0)
            return fail(w, CANAL_ESTATE, "a second value at the top level");
        put1(w, ',');
    }
    *s |= JW_ITEMS;
    return w->err;
}

static int begin(struct canal_jw *w, char c, uint8_t kind)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (value_slot(w) != 0)
        return w->err;
    if (w->depth == CANAL_JW_MAX_DEPTH)
        return fail(w, CANAL_ELIMIT, "more than CANAL_JW_MAX_DEPTH objects and arrays open");
    put1(w, c);
    w->st[++w->depth] = kind;
    return w->err;
}

static int end(struct canal_jw *w, char c, uint8_t kind)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (w->err != 0)
        return w->err;
    uint8_t s = w->st[w->depth];
    if (w->depth == 0 || (s & JW_OBJ) != kind)
        return fail(w, CANAL_ESTATE, kind ? "an object end without an open object" : "an array end without an open array");
    if (s & JW_KEY)
        return fail(w, CANAL_ESTATE, "an object end after a key, before its value");
    put1(w, c);
    w->depth--;
    return w->err;
}

int canal_jw_object_begin(canal_jw_t *w)
{
    return begin(w, '{', JW_OBJ);
}

int canal_jw_object_end(canal_jw_t *w)
{
    return end(w, '}', JW_OBJ);
}

int canal_jw_array_begin(canal_jw_t *w)
{
    return begin(w, '[', 0);
}

int canal_jw_array_end(canal_jw_t *w)
{
    return end(w, ']', 0);
}

/* Before a key: checks that one may come here and writes the comma before it. */
static inline int key_slot(struct canal_jw *w)
{
    uint8_t *s = &w->st[w->depth];
    if (w->err != 0)
        return w->err;
    if (!(*s & JW_OBJ))
        return fail(w, CANAL_ESTATE, "a key outside an object");
    if (*s & JW_KEY)
        return fail(w, CANAL_ESTATE, "a key where a value is expected");
    if (*s & JW_ITEMS)
        put1(w, ',');
    *s |= JW_ITEMS | JW_KEY;
    return w->err;
}

int canal_jw_keyn(canal_jw_t *w, const char *key, size_t len)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (key_slot(w) != 0)
        return w->err;
    if (key == NULL)
        return fail(w, CANAL_EINVAL, "a NULL key");
    if (put_string(w, key, len) != 0)
        return fail(w, CANAL_EINVAL, "a key that is not valid UTF-8");
    put1(w, ':');
    return w->err;
}

int canal__jw_key_form(struct canal_jw *w, const char *key, size_t len)
{
    return put_string(w, key, len);
}

int canal__jw_key_json(struct canal_jw *w, const char *form, size_t len)
{
    if (key_slot(w) != 0 || room(w, len + 1) != 0)
        return w->err;
    memcpy(w->buf + w->len, form, len);
    w->len += len;
    w->buf[w->len++] = ':';
    return 0;
}

int canal_jw_key(canal_jw_t *w, const char *key)
{
    return canal_jw_keyn(w, key, key ? strlen(key) : 0);
}

int canal_jw_stringn(canal_jw_t *w, const char *str, size_t len)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (value_slot(w) != 0)
        return w->err;
    if (str == NULL)
        return fail(w, CANAL_EINVAL, "a NULL string");
    if (put_string(w, str, len) != 0)
        return fail(w, CANAL_EINVAL, "a string that is not valid UTF-8");
    return w->err;
}

int canal_jw_string(canal_jw_t *w, const char *str)
{
    return canal_jw_stringn(w, str, str ? strlen(str) : 0);
}

int canal_jw_int(canal_jw_t *w, int64_t v)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (value_slot(w) != 0)
        return w->err;
    put_int(w, (json_int_t)v);
    return w->err;
}

int canal_jw_real(canal_jw_t *w, double v)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (value_slot(w) != 0)
        return w->err;
    if (!isfinite(v)) /* json_real() refuses them too: JSON has no such numbers */
        return fail(w, CANAL_EINVAL, "a NaN or infinite real");
    put_real(w, v);
    return w->err;
}

int canal_jw_bool(canal_jw_t *w, int v)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (value_slot(w) != 0)
        return w->err;
    if (v)
        put(w, "true", 4);
    else
        put(w, "false", 5);
    return w->err;
}

int canal_jw_null(canal_jw_t *w)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (value_slot(w) != 0)
        return w->err;
    put(w, "null", 4);
    return w->err;
}

int canal_jw_json(canal_jw_t *w, const json_t *v)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (value_slot(w) != 0)
        return w->err;
    if (v == NULL)
        return fail(w, CANAL_EINVAL, "a NULL json_t");
    if (put_value(w, v, (int)w->depth) != 0)
        return fail(w, CANAL_EINVAL, "a json_t that cannot be written (invalid UTF-8, or nested too deep)");
    return w->err;
}

int canal_jw_error(const canal_jw_t *w)
{
    return w == NULL ? CANAL_EINVAL : w->err;
}

const char *canal_jw_error_text(const canal_jw_t *w)
{
    return w == NULL ? "no writer" : w->why;
}

int canal_jw_finish(canal_jw_t *w, const char **body, size_t *len)
{
    if (w == NULL)
        return CANAL_EINVAL;
    if (w->err != 0)
        return w->err;
    if (w->depth != 0)
        return fail(w, CANAL_ESTATE, "the document ends with an object or array still open");
    if (!(w->st[0] & JW_ITEMS))
        return fail(w, CANAL_ESTATE, "the document is empty");
    if (w->worker != NULL) /* as canal_req_json_dump(): the next writer starts this big */
        w->worker->json_hint = w->len + w->len / 8 < 512 ? 512 : w->len + w->len / 8;
    *body = w->buf;
    *len = w->len;
    return 0;
}
