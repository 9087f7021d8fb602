/* SPDX-License-Identifier: MIT */
/*
 * W3C Trace Context for each request (canal/trace.h): part of the request's identity, as
 * its ID is. (The begin and end hooks are a feature: lib/observability/hooks.c.)
 *
 * The trace is made on first use (canal_req_trace()): whoever asks first, a handler, the JSON
 * access log, a problem's "traceId", the echo in put_head() (res.c), a hook. A valid
 * traceparent gives the trace ID, the parent span and the sampled flag; anything else starts
 * a new trace. IDs come from a per-worker splitmix64 generator seeded once from getrandom():
 * three 64-bit draws per new trace (two for the trace ID, one for the span), no system call
 * and no lock per request. Trace IDs need to be unique and spread, not secret (the
 * specification asks for randomness, not unpredictability).
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "core/core.h"

/* ---- parsing (plain C) ---- */

/* 1 if s[0..n) are lower-case hex digits */
static int lchex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int all_zeros(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return 0;
    return 1;
}

static unsigned hexval(char c)
{
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

int canal__traceparent_parse(const char *s, size_t len, canal_trace_t *t)
{
    /* version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 */
    if (len < 55 || !lchex(s, 2) || memcmp(s, "ff", 2) == 0 || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return -1;
    int v00 = memcmp(s, "00", 2) == 0;
    /* version 00 is exactly 55 characters; a later one may go on after a '-' */
    if (v00 ? len != 55 : len > 55 && s[55] != '-')
        return -1;
    if (!lchex(s + 3, 32) || !lchex(s + 36, 16) || !lchex(s + 53, 2) || all_zeros(s + 3, 32) ||
        all_zeros(s + 36, 16))
        return -1;
    memcpy(t->trace_id, s + 3, 32);
    t->trace_id[32] = '\0';
    memcpy(t->parent_id, s + 36, 16);
    t->parent_id[16] = '\0';
    t->flags = (uint8_t)((hexval(s[53]) << 4 | hexval(s[54])) & CANAL_TRACE_SAMPLED);
    return 0;
}

/* key: simple-key = lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/"), or
 * multi-tenant-key = (lcalpha / DIGIT) 0*240(...) "@" lcalpha 0*13(...) */
static int key_ok(const char *k, size_t n)
{
    const char *at = memchr(k, '@', n);
    if (n == 0 || n > 256 || (at == NULL && !(k[0] >= 'a' && k[0] <= 'z')))
        return 0;
    if (at != NULL && (at == k || at - k > 241 || n - (size_t)(at - k) - 1 > 14 ||
                       n - (size_t)(at - k) - 1 == 0 || !(at[1] >= 'a' && at[1] <= 'z')))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/' ||
              (k + i == at)))
            return 0;
    }
    return 1;
}

/* value = 0*255(chr) nblk-chr, chr = %x20 / nblk-chr, nblk-chr = %x21-7E but ',' and '=' */
static int value_ok(const char *v, size_t n)
{
    if (n == 0 || n > 256 || v[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
            return 0;
    return 1;
}

int canal__tracestate_ok(const char *s, size_t len)
{
    struct {
        const char *base;
        size_t len;
    } keys[32];
    size_t nkeys = 0;
    if (len > 512)
        return 0;
    for (size_t at = 0; at <= len;) {
        const char *comma = memchr(s + at, ',', len - at);
        size_t end = comma != NULL ? (size_t)(comma - s) : len, b = at, e = end;
        while (b < e && (s[b] == ' ' || s[b] == '\t'))
            b++;
        while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
            e--;
        if (e > b) { /* empty members are allowed, and do not count */
            const char *eq = memchr(s + b, '=', e - b);
            if (eq == NULL || nkeys == 32)
                return 0;
            size_t klen = (size_t)(eq - (s + b));
            if (!key_ok(s + b, klen) || !value_ok(eq + 1, e - b - klen - 1))
                return 0;
            for (size_t i = 0; i < nkeys; i++)
                if (keys[i].len == klen && memcmp(keys[i].base, s + b, klen) == 0)
                    return 0; /* a key appears once */
            keys[nkeys].base = s + b;
            keys[nkeys++].len = klen;
        }
        at = end + 1;
    }
    return 1;
}

/* ---- a request's trace ---- */

/* A worker's generator is seeded on its first trace: out of line, as it is done once */
static __attribute__((noinline, cold)) void seed_random(struct canal_worker *w)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 16 ^ w->index;
    }
    w->trace_rng = seed;
    w->trace_seeded = 1;
}

/* splitmix64 (S. Vigna): a Weyl sequence through a 64-bit mixer */
static inline uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The 16 hex digits of v, most significant first, in one 16-byte vector (the vector
 * extensions of GCC 12 and clang: SSE2 on x86-64; the compiler lowers them where there is no
 * such unit): v's high and low nibbles are split into two 8-byte words (the shift on 64 bits,
 * as SSE2 has no byte shift), interleaved into 16 nibbles, most significant first, and each
 * gets '0', and 'a' - '0' - 10 more where it is 10 or more. Per 64-bit ID: 137 instructions
 * with a loop over the nibbles, 58 with a 64-bit SWAR per half, 18 with this. */
typedef int8_t canal__i8x16 __attribute__((vector_size(16))); /* signed: SSE2 compares those */
typedef int8_t canal__i8x8 __attribute__((vector_size(8)));

static inline void put_hex64(char *out, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v); /* the most significant byte first in memory */
#endif
    uint64_t hi64 = v >> 4 & 0x0f0f0f0f0f0f0f0fULL, lo64 = v & 0x0f0f0f0f0f0f0f0fULL;
    canal__i8x8 hi, lo;
    memcpy(&hi, &hi64, 8);
    memcpy(&lo, &lo64, 8);
    canal__i8x16 n = __builtin_shufflevector(hi, lo, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    canal__i8x16 d = n + '0' + ((n > 9) & ('a' - '0' - 10));
    memcpy(out, &d, 16);
}

void canal__hex64(char *out, uint64_t v)
{
    put_hex64(out, v);
}

/* The value of the first field called name (base NULL if none) and, in *count, how many there
 * are: one pass over the fields (h2o has lower-cased their names), lengths compared first */
static canal_str_t only_field(h2o_req_t *h, const char *name, size_t nlen, size_t *count)
{
    canal_str_t v = {NULL, 0};
    size_t n = 0;
    for (size_t i = 0; i < h->headers.size; i++) {
        const h2o_header_t *f = &h->headers.entries[i];
        if (f->name->len == nlen && memcmp(f->name->base, name, nlen) == 0 && n++ == 0)
            v = (canal_str_t){f->value.base, f->value.len};
    }
    *count = n;
    return v;
}

/* tracestate's fields joined by ',' into request memory (a list may be split over fields) */
static canal_str_t tracestate(h2o_req_t *h)
{
    size_t n;
    canal_str_t v = only_field(h, H2O_STRLIT("tracestate"), &n);
    if (n > 1) {
        size_t total = 0;
        for (ssize_t c = -1; (c = h2o_find_header_by_str(&h->headers, H2O_STRLIT("tracestate"), c)) != -1;)
            total += h->headers.entries[c].value.len + 1;
        if (total - 1 > 512)
            return (canal_str_t){NULL, 0};
        char *buf = h2o_mem_alloc_pool(&h->pool, total), *o = buf;
        for (ssize_t c = -1; (c = h2o_find_header_by_str(&h->headers, H2O_STRLIT("tracestate"), c)) != -1;) {
            if (o != buf)
                *o++ = ',';
            memcpy(o, h->headers.entries[c].value.base, h->headers.entries[c].value.len);
            o += h->headers.entries[c].value.len;
        }
        v = (canal_str_t){buf, (size_t)(o - buf)};
    }
    return v.base != NULL && canal__tracestate_ok(v.base, v.len) ? v : (canal_str_t){NULL, 0};
}

const canal_trace_t *canal_req_trace(canal_req_t *req)
{
    if (req->trace != NULL || !req->app->cfg.trace)
        return req->trace;
    h2o_req_t *h = req->h2o;
    canal_trace_t *t = h2o_mem_alloc_pool(&h->pool, sizeof(*t));
    size_t n;
    canal_str_t tp = only_field(h, H2O_STRLIT("traceparent"), &n);
    t->tracestate = (canal_str_t){NULL, 0};
    struct canal_worker *w = req->worker;
    if (__builtin_expect(!w->trace_seeded, 0))
        seed_random(w);
    uint64_t rng = w->trace_rng; /* drawn from a copy, stored back once */
    if (n == 1 && canal__traceparent_parse(tp.base, tp.len, t) == 0) {
        t->tracestate = tracestate(h);
    } else {
        uint64_t hi, lo;
        do {
            hi = next_random(&rng);
            lo = next_random(&rng);
        } while ((hi | lo) == 0);
        put_hex64(t->trace_id, hi);
        put_hex64(t->trace_id + 16, lo);
        t->trace_id[32] = '\0';
        t->parent_id[0] = '\0';
        t->flags = CANAL_TRACE_SAMPLED;
    }
    uint64_t span;
    while ((span = next_random(&rng)) == 0)
        ;
    w->trace_rng = rng;
    put_hex64(t->span_id, span);
    t->span_id[16] = '\0';
    /* "00-" trace "-" span "-" flags */
    char *o = t->traceparent;
    memcpy(o, "00-", 3);
    memcpy(o + 3, t->trace_id, 32);
    o[35] = '-';
    memcpy(o + 36, t->span_id, 16);
    o[52] = '-';
    o[53] = '0';
    o[54] = (char)('0' + t->flags); /* 0 or CANAL_TRACE_SAMPLED: the other bits are 0 */
    o[55] = '\0';
    req->trace = t;
    return t;
}
