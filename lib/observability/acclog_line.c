/* SPDX-License-Identifier: MIT */
/*
 * The access log's two line formats, written straight into a worker's buffer (acclog.c).
 *
 * CLF is the Combined Log Format exactly as libh2o 2.2.5's logger wrote it for canal (the
 * format string app.c gave it, "%h %l %u %t \"%r\" %s %b \"%{Referer}i\" \"%{User-agent}i\"",
 * then " \"%{x-request-id}o\"" with request IDs), escaping included: libh2o's apache escaping
 * writes a byte as \xNN unless it is in ' '..'|' and not '"'. So '}', '~', DEL, control
 * characters and every byte from 0x80 are escaped, and a backslash is not (as before: a log
 * reader that parsed canal's lines keeps working).
 *
 * JSON lines: one object a line, its strings always valid JSON and valid UTF-8: '"' and '\'
 * escaped, control characters and DEL as \u00NN, well-formed UTF-8 kept as it is, and each
 * byte that is not part of a well-formed sequence (a stray continuation byte, an overlong
 * form, a surrogate, past U+10FFFF, a cut sequence) as U+FFFD, written \ufffd.
 *
 * Nothing here calls the C library's formatting (snprintf, strftime): a line costs a few
 * hundred instructions, most of them the copy of its bytes.
 */
#include <string.h>
#include "observability/acclog_internal.h"

static const char hex[] = "0123456789abcdef";

static char *put(char *o, const char *s, size_t n)
{
    memcpy(o, s, n);
    return o + n;
}

#define PUT_LIT(o, lit) put((o), (lit), sizeof(lit) - 1)

/* v in decimal: its digits counted by comparisons, then written from the last one back (a
 * digit costs a multiplication, not a division) */
static char *put_u64(char *o, uint64_t v)
{
    size_t n = 1;
    for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
        n++;
    for (char *d = o + n; d != o; v /= 10)
        *--d = (char)('0' + v % 10);
    return o + n;
}

static char *put_int(char *o, int v)
{
    if (v < 0) {
        *o++ = '-';
        return put_u64(o, (uint64_t)0 - (uint64_t)(int64_t)v);
    }
    return put_u64(o, (uint64_t)v);
}

/* d as exactly n digits */
static char *put_fixed(char *o, unsigned d, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        o[i] = (char)('0' + d % 10);
        d /= 10;
    }
    return o + n;
}

/*
 * The run of bytes at p that need no escape: those from ' ' to max, except q1 and q2. Eight
 * bytes at a time (the word tests of "Bit Twiddling Hacks": hasless, hasmore and haszero, each
 * exact on whether some byte of the word matches, which is all that is asked), the last eight
 * overlapping the ones before; byte by byte only from a word that has a byte to escape, and in
 * a string shorter than a word. Most targets, agents and referers have none, and cost about
 * two instructions a byte instead of a dozen.
 */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static inline uint64_t word_at(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

/* whether some byte of x needs an escape: one < 0x20, one > max (max - ONES * 127: kmax), q1
 * or q2 (k1, k2: the byte in every place) */
static inline int word_escapes(uint64_t x, uint64_t kmax, uint64_t k1, uint64_t k2)
{
    uint64_t below = (x - ONES * 0x20) & ~x, above = (x + kmax) | x;
    uint64_t is1 = ((x ^ k1) - ONES) & ~(x ^ k1), is2 = ((x ^ k2) - ONES) & ~(x ^ k2);
    return ((below | above | is1 | is2) & HIGHS) != 0;
}

static inline size_t plain_run(const unsigned char *p, const unsigned char *end, unsigned max, unsigned q1,
                               unsigned q2)
{
    const uint64_t kmax = ONES * (127 - max), k1 = ONES * q1, k2 = ONES * q2; /* max < 0x7f */
    const unsigned char *start = p;
    if (end - p >= 8) {
        for (; end - p > 8; p += 8)
            if (word_escapes(word_at(p), kmax, k1, k2))
                goto bytes;
        if (!word_escapes(word_at(end - 8), kmax, k1, k2))
            return (size_t)(end - start);
    }
bytes:
    for (; p != end; p++) {
        unsigned c = *p;
        if (c - 0x20u > max - 0x20u || c == q1 || c == q2)
            break;
    }
    return (size_t)(p - start);
}

/* libh2o 2.2.5's apache escaping (lib/core/logconf.c, append_unsafe_string_apache) */
static char *clf_str(char *o, canal_str_t s)
{
    if (s.len == 0)
        return o;
    const unsigned char *p = (const unsigned char *)s.base, *end = p + s.len;
    for (;;) {
        size_t n = plain_run(p, end, '|', '"', '"');
        o = put(o, (const char *)p, n);
        if ((p += n) == end)
            return o;
        unsigned c = *p++;
        o[0] = '\\', o[1] = 'x', o[2] = hex[c >> 4], o[3] = hex[c & 15];
        o += 4;
    }
}

/* "value" quoted and escaped, or "-" for an absent one, after a space */
static char *clf_quoted(char *o, canal_str_t s)
{
    *o++ = ' ';
    *o++ = '"';
    if (s.base != NULL)
        o = clf_str(o, s);
    else
        *o++ = '-';
    *o++ = '"';
    return o;
}

static char *put_protocol(char *o, int version)
{
    if (version < 0x200) {
        o = PUT_LIT(o, "HTTP/1.");
        *o++ = (char)('0' + (version & 0xff));
        return o;
    }
    return PUT_LIT(o, "HTTP/2");
}

size_t canal__acclog_bound(const struct canal__acclog_entry *e)
{
    /* a byte becomes at most 6 (\u00NN, \ufffd); the fixed parts fit in 320 */
    size_t n = e->client.len + e->clf_time.len + e->method.len + e->target.len + e->route.len +
               e->request_id.len + e->trace_id.len + e->span_id.len + e->referer.len + e->user_agent.len;
    return 320 + 6 * n;
}

size_t canal__acclog_clf(char *out, const struct canal__acclog_entry *e)
{
    char *o = put(out, e->client.base, e->client.len);
    o = PUT_LIT(o, " - - ");
    if (e->clf_time.base != NULL) {
        *o++ = '[';
        o = put(o, e->clf_time.base, e->clf_time.len);
        *o++ = ']';
    } else {
        *o++ = '-';
    }
    o = PUT_LIT(o, " \"");
    o = clf_str(o, e->method);
    *o++ = ' ';
    o = clf_str(o, e->target);
    *o++ = ' ';
    o = put_protocol(o, e->version);
    o = PUT_LIT(o, "\" ");
    o = put_int(o, e->status);
    *o++ = ' ';
    o = put_u64(o, e->bytes);
    o = clf_quoted(o, e->referer);
    o = clf_quoted(o, e->user_agent);
    if (e->id_column)
        o = clf_quoted(o, e->request_id);
    *o++ = '\n';
    return (size_t)(o - out);
}

/* The length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), or 0: its length
 * by the lead byte, checked by the router's canal_utf8_valid(). */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
    size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
    if ((size_t)(end - p) < n || !canal_utf8_valid((canal_str_t){(const char *)p, n}))
        return 0;
    return n;
}

/* the bytes p..end as the inside of a JSON string */
static char *json_chars(char *o, const unsigned char *p, const unsigned char *end)
{
    for (;;) {
        size_t n = plain_run(p, end, '~', '"', '\\');
        o = put(o, (const char *)p, n);
        if ((p += n) == end)
            return o;
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
            p++;
        } else if (c < 0x80) {
            o = PUT_LIT(o, "\\u00");
            o[0] = hex[c >> 4], o[1] = hex[c & 15];
            o += 2;
            p++;
        } else if ((n = utf8_seq(p, end)) > 0) {
            o = put(o, (const char *)p, n);
            p += n;
        } else {
            o = PUT_LIT(o, "\\ufffd");
            p++;
        }
    }
}

static char *json_str(char *o, canal_str_t s)
{
    if (s.base == NULL)
        return PUT_LIT(o, "null");
    *o++ = '"';
    o = json_chars(o, (const unsigned char *)s.base, (const unsigned char *)s.base + s.len);
    *o++ = '"';
    return o;
}

/* a route's template with one leading '/', as metrics labels it: "home/x" and "/home/x" are
 * one template */
static char *json_route(char *o, canal_str_t s)
{
    if (s.base == NULL)
        return PUT_LIT(o, "null");
    const unsigned char *p = (const unsigned char *)s.base, *end = p + s.len;
    while (p != end && *p == '/')
        p++;
    o = PUT_LIT(o, "\"/");
    o = json_chars(o, p, end);
    *o++ = '"';
    return o;
}

/* A trace or span ID: hex digits (trace.c makes them), so copied without escaping */
static char *json_hex(char *o, canal_str_t s)
{
    if (s.base == NULL)
        return PUT_LIT(o, "null");
    *o++ = '"';
    o = put(o, s.base, s.len);
    *o++ = '"';
    return o;
}

/* "2026-12-02T07:46:58.123Z" from microseconds since the epoch (proleptic Gregorian, UTC:
 * the days-to-civil conversion of H. Hinnant's date algorithms) */
static char *put_time(char *o, int64_t us)
{
    int64_t secs = us / 1000000, days = secs / 86400, rem = secs % 86400;
    int64_t z = days + 719468, era = z / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    unsigned day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
    int64_t year = (int64_t)yoe + era * 400 + (month <= 2);
    *o++ = '"';
    o = put_fixed(o, (unsigned)year, 4);
    *o++ = '-';
    o = put_fixed(o, month, 2);
    *o++ = '-';
    o = put_fixed(o, day, 2);
    *o++ = 'T';
    o = put_fixed(o, (unsigned)(rem / 3600), 2);
    *o++ = ':';
    o = put_fixed(o, (unsigned)(rem / 60 % 60), 2);
    *o++ = ':';
    o = put_fixed(o, (unsigned)(rem % 60), 2);
    *o++ = '.';
    o = put_fixed(o, (unsigned)(us / 1000 % 1000), 3);
    *o++ = 'Z';
    *o++ = '"';
    return o;
}

size_t canal__acclog_json(char *out, const struct canal__acclog_entry *e)
{
    char *o = PUT_LIT(out, "{\"time\":");
    o = e->unix_us >= 0 ? put_time(o, e->unix_us) : PUT_LIT(o, "null");
    o = PUT_LIT(o, ",\"client\":");
    o = json_str(o, e->client);
    o = PUT_LIT(o, ",\"method\":");
    o = json_str(o, e->method);
    o = PUT_LIT(o, ",\"target\":");
    o = json_str(o, e->target);
    o = PUT_LIT(o, ",\"protocol\":\"");
    o = put_protocol(o, e->version);
    o = PUT_LIT(o, "\",\"status\":");
    o = put_int(o, e->status);
    o = PUT_LIT(o, ",\"bytes\":");
    o = put_u64(o, e->bytes);
    o = PUT_LIT(o, ",\"duration_ms\":");
    if (e->duration_us >= 0) {
        o = put_u64(o, (uint64_t)e->duration_us / 1000);
        *o++ = '.';
        o = put_fixed(o, (unsigned)((uint64_t)e->duration_us % 1000), 3);
    } else {
        o = PUT_LIT(o, "null");
    }
    o = PUT_LIT(o, ",\"route\":");
    o = json_route(o, e->route);
    o = PUT_LIT(o, ",\"request_id\":");
    o = json_str(o, e->request_id);
    o = PUT_LIT(o, ",\"trace_id\":");
    o = json_hex(o, e->trace_id);
    o = PUT_LIT(o, ",\"span_id\":");
    o = json_hex(o, e->span_id);
    o = PUT_LIT(o, ",\"referer\":");
    o = json_str(o, e->referer);
    o = PUT_LIT(o, ",\"user_agent\":");
    o = json_str(o, e->user_agent);
    *o++ = '}';
    *o++ = '\n';
    return (size_t)(o - out);
}
