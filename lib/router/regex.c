/* SPDX-License-Identifier: MIT */
/*
 * regex(...) constraints: PCRE2 patterns, compiled once at registration and matched against a
 * route value with no allocation, from any number of threads at once; and the translation of
 * such a pattern into the ECMA-262 dialect (JavaScript's RegExp with the "u" flag) that an
 * OpenAPI document's "pattern" means.
 *
 * The dialect is ASP.NET Core's where the two agree: not anchored, case-insensitive (when the
 * router is, as it is by default; ASP.NET Core always is), \d \w \s \b ASCII-only (as in
 * ECMA-262; .NET's \d also takes other scripts' digits). '$' matches only at the very end
 * (PCRE2_DOLLAR_ENDONLY: "abc\n" does not pass ^[a-z]+$), and '.' anything but "\n". A route
 * value may be any bytes after percent-decoding, and pcre2_jit_match() does not check UTF-8
 * (invalid input is undefined behaviour there): a value that is not valid UTF-8
 * (canal_utf8_valid(), RFC 3629 as PCRE2's own check) matches no regex, and the match itself
 * runs with PCRE2_NO_UTF_CHECK. (PCRE2_MATCH_INVALID_UTF would let such values match in
 * parts, but 10.42's JIT then fails \S, \D and \W on any non-ASCII character: PCRE2 issue
 * 224, fixed in 10.43.)
 *
 * Matching needs a match data block, which PCRE2 allocates and which one thread cannot share
 * with another. Each match makes its own from a small arena on the stack (a general context
 * whose allocator hands out that arena), so there is no malloc, no per-thread state and
 * nothing to free at thread exit. With the JIT (PCRE2_JIT_COMPLETE, on amd64 and arm64) the
 * match runs on 32 KiB of the machine stack and allocates nothing at all; a pattern the JIT
 * cannot take is matched by the interpreter, whose backtracking frames (20 KiB and up) come
 * from malloc through the same allocator. A match that exceeds its limits (the JIT stack,
 * CANAL__REGEX_MATCH_LIMIT) is "no match", never a crash.
 *
 * The translation walks the pattern once (PCRE2 accepted it first, so it is well formed) and
 * writes every construct either as the same ECMA-262 text, as an equivalent one (\s as its
 * ASCII set, '.' as [^\n], POSIX classes as ranges, \A as ^, \z as $, \x{e9} as \u{E9},
 * letters as [aA] when case-insensitive), or refuses it with its offset: backreferences,
 * possessive quantifiers, atomic groups, inline options, recursion, conditionals, verbs, \K,
 * \G, \X, \C. docs/routing.md has the table.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "regex_internal.h"
#include "router_internal.h"

/* Matching that takes longer than this many steps of PCRE2's matcher is "no match": a
 * pattern such as (a+)+b must not hold a worker for seconds on a long value. */
#define CANAL__REGEX_MATCH_LIMIT 1000000

static int jit_enabled = 1;

void canal__regex_use_jit(int on)
{
    jit_enabled = on;
}

/* ---- compiling and matching ------------------------------------------------------------- */

/* The PCRE2 pattern re[0..len) (which PCRE2 compiled) as ECMA-262 source for RegExp(src, "u"),
 * into *out (malloc'd). 0; CANAL_EINVAL with the byte offset in *bad_at and the reason in why
 * for a construct that has no ECMA-262 form here; CANAL_ENOMEM. (Below, with the translator.) */
static int ecma_source(const char *re, size_t len, int caseless, char **out, size_t *bad_at, char *why,
                       size_t whylen);

static int compile(struct constraint *c, const char *text, size_t len, int flags, size_t pos,
                   canal_error_info_t *err)
{
    int caseless = (flags & CANAL__REGEX_CASELESS) != 0;
    uint32_t opts = PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UCP | PCRE2_NEVER_BACKSLASH_C |
                    (caseless ? PCRE2_CASELESS : 0) |
                    (flags & CANAL__REGEX_WHOLE ? PCRE2_ANCHORED | PCRE2_ENDANCHORED : 0);
    int code;
    PCRE2_SIZE off;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (cc == NULL)
        return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
    /* '.' and \N exclude "\n" only, whatever newline convention the library was built with */
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)text, len, opts, &code, &off, cc);
    pcre2_compile_context_free(cc);
    if (re == NULL) {
        if (code == PCRE2_ERROR_HEAP_FAILED)
            return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
        PCRE2_UCHAR msg[120];
        if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
            strcpy((char *)msg, "error");
        return canal__error(err, CANAL_EINVAL, pos, "bad regex at offset %zu: %s", (size_t)off,
                            (const char *)msg);
    }
    char why[120];
    size_t at = 0;
    char *ecma = NULL;
    int rc = ecma_source(text, len, caseless, &ecma, &at, why, sizeof(why));
    if (rc != 0) {
        pcre2_code_free(re);
        if (rc == CANAL_ENOMEM)
            return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
        return canal__error(err, CANAL_EINVAL, pos, "regex at offset %zu: %s", at, why);
    }
    if (flags & CANAL__REGEX_WHOLE) { /* the ECMA-262 pattern may match anywhere: anchor it */
        size_t n = strlen(ecma);
        char *whole = malloc(n + 5);
        if (whole == NULL) {
            pcre2_code_free(re);
            free(ecma);
            return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
        }
        memcpy(whole, "^(", 2);
        memcpy(whole + 2, ecma, n);
        memcpy(whole + 2 + n, ")$", 3);
        free(ecma);
        ecma = whole;
    }
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    if (mc == NULL) {
        pcre2_code_free(re);
        free(ecma);
        return canal__error(err, CANAL_ENOMEM, pos, "out of memory");
    }
    pcre2_set_match_limit(mc, CANAL__REGEX_MATCH_LIMIT);
    /* Without the JIT (another architecture, executable memory refused, out of memory, or
     * CANAL_NO_JIT set: the JIT's code is opaque to valgrind's memcheck, which reports its
     * reads of the stack as uninitialised) the interpreter matches the same way. */
    const char *no_jit = getenv("CANAL_NO_JIT");
    c->jit = jit_enabled && (no_jit == NULL || strcmp(no_jit, "") == 0 || strcmp(no_jit, "0") == 0) &&
             pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    c->re = re;
    c->mctx = mc;
    c->ecma = ecma;
    return 0;
}

int canal__regex_compile(struct constraint *c, const char *text, size_t len, int caseless,
                         size_t pos, canal_error_info_t *err)
{
    return compile(c, text, len, caseless ? CANAL__REGEX_CASELESS : 0, pos, err);
}

struct canal__regex {
    struct constraint c;
};

struct canal__regex *canal__regex_create(const char *pattern, int flags, canal_error_info_t *err)
{
    struct canal__regex *re = calloc(1, sizeof(*re));
    if (re == NULL) {
        canal__error(err, CANAL_ENOMEM, 0, "out of memory");
        return NULL;
    }
    if (compile(&re->c, pattern, strlen(pattern), flags, 0, err) != 0) {
        free(re);
        return NULL;
    }
    return re;
}

int canal__regex_test(const struct canal__regex *re, canal_str_t v)
{
    return canal__regex_match(&re->c, v);
}

const char *canal__regex_ecma_form(const struct canal__regex *re)
{
    return re->c.ecma;
}

void canal__regex_destroy(struct canal__regex *re)
{
    if (re == NULL)
        return;
    canal__regex_free(&re->c);
    free(re);
}

void canal__regex_free(struct constraint *c)
{
    pcre2_code_free(c->re); /* NULL: no-op */
    pcre2_match_context_free(c->mctx);
    free(c->ecma);
    c->re = NULL;
    c->mctx = NULL;
    c->ecma = NULL;
}

/* The arena a match takes its general context and match data from (together some 200 bytes
 * here); a larger block, the interpreter's frames, falls through to malloc. */
struct arena {
    alignas(max_align_t) unsigned char buf[512];
    size_t used;
};

static void *arena_malloc(PCRE2_SIZE size, void *data)
{
    struct arena *a = data;
    size_t n = (size + alignof(max_align_t) - 1) & ~(size_t)(alignof(max_align_t) - 1);
    if (n >= size && n <= sizeof(a->buf) - a->used) {
        void *p = a->buf + a->used;
        a->used += n;
        return p;
    }
    return malloc(size);
}

static void arena_free(void *p, void *data)
{
    struct arena *a = data;
    uintptr_t u = (uintptr_t)p, b = (uintptr_t)a->buf;
    if (u >= b && u < b + sizeof(a->buf))
        return; /* the arena goes with the stack frame */
    free(p);
}

int canal__regex_match(const struct constraint *c, canal_str_t v)
{
    if (!canal_utf8_valid(v))
        return 0;
    struct arena a;
    a.used = 0;
    pcre2_general_context *g = pcre2_general_context_create(arena_malloc, arena_free, &a);
    pcre2_match_data *md = g != NULL ? pcre2_match_data_create(1, g) : NULL;
    int rc = -1;
    if (md != NULL) {
        PCRE2_SPTR s = (PCRE2_SPTR)(v.base != NULL ? v.base : "");
        rc = c->jit ? pcre2_jit_match(c->re, s, v.len, 0, 0, md, c->mctx)
                    : pcre2_match(c->re, s, v.len, 0, PCRE2_NO_UTF_CHECK, md, c->mctx);
    }
    pcre2_match_data_free(md);
    pcre2_general_context_free(g);
    return rc >= 0;
}

/* ---- translation to ECMA-262 ------------------------------------------------------------ */

struct out {
    char *p;
    size_t len, cap;
    int oom;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->oom)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (p == NULL) {
            o->oom = 1;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > 0)
        put(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

struct tr {
    const char *s;
    size_t n, i;
    int caseless;
    struct out o;
    size_t bad_at;
    const char *why;
};

static int refuse(struct tr *t, size_t at, const char *why)
{
    t->bad_at = at;
    t->why = why;
    return -1;
}

/* The code point at s[*i] (valid UTF-8: PCRE2_UTF checked it), advancing *i. */
static uint32_t next_cp(const struct tr *t, size_t *i)
{
    const unsigned char *u = (const unsigned char *)t->s;
    uint32_t c = u[*i];
    int more = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
    if (more)
        c &= 0x3F >> more;
    (*i)++;
    while (more-- > 0 && *i < t->n)
        c = c << 6 | (u[(*i)++] & 0x3F);
    return c;
}

/* One code point as a class member. */
static void class_cp(struct out *o, uint32_t c)
{
    if (c < 0x20 || c == 0x7F)
        putf(o, "\\x%02X", c);
    else if (c >= 0x80)
        putf(o, "\\u{%X}", c);
    else {
        if (strchr("\\]-[^", (int)c) != NULL)
            put(o, "\\", 1);
        char ch = (char)c;
        put(o, &ch, 1);
    }
}

/* A range of code points as class members, with the other case of its ASCII letters when the
 * pattern is case-insensitive (and KELVIN SIGN for k, LONG S for s, which PCRE2 folds with
 * them in UTF mode, both ways). Other case pairs beyond ASCII are not added, so the ECMA-262
 * form is stricter there (docs/routing.md). */
static void class_range(struct tr *t, uint32_t lo, uint32_t hi)
{
    class_cp(&t->o, lo);
    if (hi > lo) {
        put(&t->o, "-", 1);
        class_cp(&t->o, hi);
    }
    if (!t->caseless)
        return;
    /* the other case of the letters in the range, unless the range holds it already */
    uint32_t l = lo > 'a' ? lo : 'a', h = hi < 'z' ? hi : 'z';
    if (l <= h && !(lo <= l - 32 && h - 32 <= hi)) {
        class_cp(&t->o, l - 32);
        if (h > l) {
            put(&t->o, "-", 1);
            class_cp(&t->o, h - 32);
        }
    }
    l = lo > 'A' ? lo : 'A';
    h = hi < 'Z' ? hi : 'Z';
    if (l <= h && !(lo <= l + 32 && h + 32 <= hi)) {
        class_cp(&t->o, l + 32);
        if (h > l) {
            put(&t->o, "-", 1);
            class_cp(&t->o, h + 32);
        }
    }
    int has_k = (lo <= 'k' && 'k' <= hi) || (lo <= 'K' && 'K' <= hi);
    int has_s = (lo <= 's' && 's' <= hi) || (lo <= 'S' && 'S' <= hi);
    if (has_k && !(lo <= 0x212A && 0x212A <= hi))
        puts_(&t->o, "\\u{212A}");
    if (has_s && !(lo <= 0x17F && 0x17F <= hi))
        puts_(&t->o, "\\u{17F}");
    if (lo <= 0x212A && 0x212A <= hi)
        puts_(&t->o, "kK");
    if (lo <= 0x17F && 0x17F <= hi)
        puts_(&t->o, "sS");
}

/* One literal code point outside a class. */
static void literal(struct tr *t, uint32_t c)
{
    if (t->caseless && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
        put(&t->o, "[", 1);
        class_range(t, c, c);
        put(&t->o, "]", 1);
    } else if (c < 0x20 || c == 0x7F) {
        putf(&t->o, "\\x%02X", c);
    } else if (c >= 0x80) {
        putf(&t->o, "\\u{%X}", c);
    } else {
        if (strchr("^$\\.*+?()[]{}|/", (int)c) != NULL)
            put(&t->o, "\\", 1);
        char ch = (char)c;
        put(&t->o, &ch, 1);
    }
}

/* The ASCII members of a POSIX class, or -1 for an unknown name. */
static int posix_class(const char *name, size_t len, int caseless, unsigned char bits[128])
{
    static const char *const names[] = {"alpha", "digit", "alnum", "upper", "lower", "space",
                                        "blank", "punct", "xdigit", "cntrl", "print", "graph",
                                        "word", "ascii"};
    size_t k;
    for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (strlen(names[k]) == len && memcmp(names[k], name, len) == 0)
            break;
    if (k == sizeof(names) / sizeof(names[0]))
        return -1;
    if (caseless && (k == 3 || k == 4))
        k = 0; /* as PCRE2 does: caseless [:upper:] and [:lower:] are [:alpha:] */
    for (int c = 0; c < 128; c++) {
        int up = c >= 'A' && c <= 'Z', low = c >= 'a' && c <= 'z', dig = c >= '0' && c <= '9';
        int in = 0;
        switch (k) {
        case 0: in = up || low; break;
        case 1: in = dig; break;
        case 2: in = up || low || dig; break;
        case 3: in = up; break;
        case 4: in = low; break;
        case 5: in = (c >= 9 && c <= 13) || c == ' '; break;
        case 6: in = c == '\t' || c == ' '; break;
        case 7: in = c > ' ' && c < 127 && !up && !low && !dig; break;
        case 8: in = dig || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); break;
        case 9: in = c < 32 || c == 127; break;
        case 10: in = c >= 32 && c < 127; break;
        case 11: in = c > 32 && c < 127; break;
        case 12: in = up || low || dig || c == '_'; break;
        case 13: in = 1; break;
        }
        bits[c] = (unsigned char)in;
    }
    return 0;
}

/* Writes the members of a set of ASCII characters as ranges, and all of U+0080 and above when
 * beyond is set (a negated ASCII set). */
static void class_bits(struct tr *t, const unsigned char bits[128], int beyond)
{
    unsigned char all[128];
    memcpy(all, bits, sizeof(all));
    if (t->caseless) /* both cases at once, so that each range is written once */
        for (int c = 'A'; c <= 'Z'; c++)
            all[c] = all[c + 32] = all[c] || all[c + 32];
    struct tr plain = *t;
    plain.caseless = 0;
    for (uint32_t c = 0; c < 128; c++) {
        if (!all[c])
            continue;
        uint32_t e = c;
        while (e + 1 < 128 && all[e + 1])
            e++;
        class_range(&plain, c, e);
        c = e;
    }
    /* (PCRE2 does not fold KELVIN SIGN and LONG S into a POSIX class) */
    if (beyond)
        puts_(&plain.o, "\\u{80}-\\u{10FFFF}");
    t->o = plain.o;
}

/* \s without Unicode properties (PCRE2_NEVER_UCP): tab, LF, VT, FF, CR, space. JavaScript's
 * \s also takes Unicode spaces, so it is written out. */
#define SPACE_MEMBERS "\\t\\n\\x0B\\f\\r "
#define HSPACE_MEMBERS "\\t \\xA0\\u{1680}\\u{180E}\\u{2000}-\\u{200A}\\u{202F}\\u{205F}\\u{3000}"
#define VSPACE_MEMBERS "\\n\\x0B\\f\\r\\x85\\u{2028}\\u{2029}"

/* General categories: the same name in both dialects. */
static int general_category(const char *p, size_t n)
{
    static const char *const gc[] = {"C",  "Cc", "Cf", "Cn", "Co", "Cs", "L",  "Ll", "Lm",
                                     "Lo", "Lt", "Lu", "M",  "Mc", "Me", "Mn", "N",  "Nd",
                                     "Nl", "No", "P",  "Pc", "Pd", "Pe", "Pf", "Pi", "Po",
                                     "Ps", "S",  "Sc", "Sk", "Sm", "So", "Z",  "Zl", "Zp",
                                     "Zs", "Any"};
    for (size_t k = 0; k < sizeof(gc) / sizeof(gc[0]); k++)
        if (strlen(gc[k]) == n && memcmp(gc[k], p, n) == 0)
            return 1;
    return 0;
}

/* The scripts written as \p{Script=Name}, in the spelling both dialects take. */
static int known_script(const char *p, size_t n)
{
    static const char *const sc[] = {"Arabic", "Armenian", "Bengali", "Cyrillic", "Devanagari",
                                     "Georgian", "Greek", "Han", "Hangul", "Hebrew", "Hiragana",
                                     "Katakana", "Latin", "Thai"};
    for (size_t k = 0; k < sizeof(sc) / sizeof(sc[0]); k++)
        if (strlen(sc[k]) == n && memcmp(sc[k], p, n) == 0)
            return 1;
    return 0;
}

/* \p or \P at s[at] (the backslash), its name from t->i on: \pL or \p{Lu} or \p{^Lu}. */
static int property(struct tr *t, size_t at, int neg)
{
    const char *name;
    size_t len;
    if (t->i < t->n && t->s[t->i] == '{') {
        size_t e = t->i + 1;
        while (e < t->n && t->s[e] != '}')
            e++;
        name = t->s + t->i + 1;
        len = e - t->i - 1;
        t->i = e + 1;
    } else {
        name = t->s + t->i;
        len = 1;
        t->i++;
    }
    if (len > 0 && name[0] == '^') {
        neg = !neg;
        name++;
        len--;
    }
    if (len == 2 && (memcmp(name, "L&", 2) == 0 || memcmp(name, "Lc", 2) == 0 ||
                     memcmp(name, "LC", 2) == 0)) {
        puts_(&t->o, neg ? "\\P{LC}" : "\\p{LC}");
        return 0;
    }
    if (general_category(name, len)) {
        putf(&t->o, "\\%c{%.*s}", neg ? 'P' : 'p', (int)len, name);
        return 0;
    }
    if (known_script(name, len)) {
        putf(&t->o, "\\%c{Script=%.*s}", neg ? 'P' : 'p', (int)len, name);
        return 0;
    }
    return refuse(t, at, "\\p{...}: only general categories (\\p{L}, \\p{Nd}, ...) and the "
                         "scripts Arabic to Thai are translated");
}

/* \x, \o, \0 and \c escapes, from t->i (after the letter or digit): the code point, or -1. */
static long numeric_escape(struct tr *t, char kind)
{
    uint32_t v = 0;
    int digits = 0;
    if (kind == 'x') {
        if (t->i < t->n && t->s[t->i] == '{') {
            t->i++;
            while (t->i < t->n && t->s[t->i] != '}') {
                int h = canal__hexval((unsigned char)t->s[t->i++]);
                v = v * 16 + (uint32_t)(h < 0 ? 0 : h);
            }
            t->i++;
            return v;
        }
        while (digits < 2 && t->i < t->n && canal__hexval((unsigned char)t->s[t->i]) >= 0) {
            v = v * 16 + (uint32_t)canal__hexval((unsigned char)t->s[t->i++]);
            digits++;
        }
        return v;
    }
    if (kind == 'o') {
        t->i++; /* '{' */
        while (t->i < t->n && t->s[t->i] != '}')
            v = v * 8 + (uint32_t)(t->s[t->i++] - '0');
        t->i++;
        return v;
    }
    if (kind == '0') {
        while (digits < 2 && t->i < t->n && t->s[t->i] >= '0' && t->s[t->i] <= '7') {
            v = v * 8 + (uint32_t)(t->s[t->i++] - '0');
            digits++;
        }
        return v;
    }
    /* \cX: X's code with bit 6 flipped, X upper-cased */
    char x = t->s[t->i++];
    if (x >= 'a' && x <= 'z')
        x = (char)(x - 32);
    return (unsigned char)x ^ 0x40;
}

/* An escape inside a class, at t->s[t->i] (the backslash): writes its members. *cp receives
 * the code point when it is a single character (for ranges), else -1. */
static int class_escape(struct tr *t, long *cp)
{
    size_t at = t->i;
    t->i++;
    char e = t->s[t->i];
    *cp = -1;
    switch (e) {
    case 'd': case 'D': case 'w': case 'W':
        t->i++;
        putf(&t->o, "\\%c", e);
        return 0;
    case 's':
        t->i++;
        puts_(&t->o, SPACE_MEMBERS);
        return 0;
    case 'S': {
        t->i++;
        unsigned char bits[128];
        posix_class("space", 5, 0, bits);
        for (int c = 0; c < 128; c++)
            bits[c] = !bits[c];
        class_bits(t, bits, 1);
        return 0;
    }
    case 'h':
        t->i++;
        puts_(&t->o, HSPACE_MEMBERS);
        return 0;
    case 'v':
        t->i++;
        puts_(&t->o, VSPACE_MEMBERS);
        return 0;
    case 'p': case 'P':
        t->i++;
        return property(t, at, e == 'P');
    case 'b': t->i++; *cp = 8; return 0;
    case 't': t->i++; *cp = 9; return 0;
    case 'n': t->i++; *cp = 10; return 0;
    case 'f': t->i++; *cp = 12; return 0;
    case 'r': t->i++; *cp = 13; return 0;
    case 'e': t->i++; *cp = 27; return 0;
    case 'a': t->i++; *cp = 7; return 0;
    case 'x': case 'o': case 'c': case '0':
        t->i++;
        *cp = numeric_escape(t, e);
        return 0;
    default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '1' && e <= '9'))
            return refuse(t, at, "this escape has no ECMA-262 equivalent in a class");
        *cp = (long)next_cp(t, &t->i); /* an escaped non-alphanumeric: itself */
        return 0;
    }
}

/* A class, from its '[' at t->s[t->i] to its ']'. */
static int char_class(struct tr *t)
{
    t->i++;
    put(&t->o, "[", 1);
    if (t->i < t->n && t->s[t->i] == '^') {
        put(&t->o, "^", 1);
        t->i++;
    }
    int first = 1, quoted = 0;
    while (t->i < t->n) {
        char ch = t->s[t->i];
        if (quoted) {
            if (ch == '\\' && t->i + 1 < t->n && t->s[t->i + 1] == 'E') {
                quoted = 0;
                t->i += 2;
                continue;
            }
            uint32_t c = next_cp(t, &t->i);
            class_range(t, c, c);
            first = 0;
            continue;
        }
        if (ch == ']' && !first)
            break;
        if (ch == '\\' && t->i + 1 < t->n && (t->s[t->i + 1] == 'Q' || t->s[t->i + 1] == 'E')) {
            quoted = t->s[t->i + 1] == 'Q';
            t->i += 2;
            continue;
        }
        first = 0;
        if (ch == '[' && t->i + 1 < t->n && strchr(":.=", t->s[t->i + 1]) != NULL) {
            size_t at = t->i;
            char kind = t->s[t->i + 1];
            const char *close = NULL;
            for (size_t k = t->i + 2; k + 1 < t->n && close == NULL; k++)
                if (t->s[k] == kind && t->s[k + 1] == ']')
                    close = t->s + k;
            if (kind != ':' || close == NULL)
                return refuse(t, at, "collating elements ([.x.], [=x=]) are not translated");
            const char *name = t->s + t->i + 2;
            int neg = name[0] == '^';
            if (neg)
                name++;
            unsigned char bits[128];
            if (posix_class(name, (size_t)(close - name), t->caseless, bits) != 0)
                return refuse(t, at, "unknown POSIX class");
            if (neg)
                for (int c = 0; c < 128; c++)
                    bits[c] = !bits[c];
            class_bits(t, bits, neg);
            t->i = (size_t)(close - t->s) + 2;
            continue;
        }
        long lo;
        if (ch == '\\') {
            if (class_escape(t, &lo) != 0)
                return -1;
            if (lo < 0)
                continue; /* a set: written already */
        } else {
            lo = (long)next_cp(t, &t->i);
        }
        long hi = lo;
        if (t->i + 1 < t->n && t->s[t->i] == '-' && t->s[t->i + 1] != ']') {
            size_t save = t->i;
            t->i++;
            if (t->s[t->i] == '\\') {
                size_t mark = t->o.len;
                if (class_escape(t, &hi) != 0)
                    return -1;
                if (hi < 0) { /* "a-\d": a literal '-' between a character and a set */
                    char *set = strndup(t->o.p + mark, t->o.len - mark);
                    if (set == NULL) {
                        t->o.oom = 1;
                        return -1;
                    }
                    t->o.len = mark;
                    class_range(t, (uint32_t)lo, (uint32_t)lo);
                    puts_(&t->o, "\\-");
                    puts_(&t->o, set);
                    free(set);
                    continue;
                }
            } else if (t->s[t->i] == '[' && t->i + 1 < t->n && t->s[t->i + 1] == ':') {
                t->i = save; /* "a-[:digit:]": the '-' is a literal, taken next round */
                class_range(t, (uint32_t)lo, (uint32_t)lo);
                continue;
            } else {
                hi = (long)next_cp(t, &t->i);
            }
        }
        class_range(t, (uint32_t)lo, (uint32_t)hi);
    }
    put(&t->o, "]", 1);
    t->i++;
    return 0;
}

/* Whether t->s[t->i] starts a {n}, {n,} or {n,m} quantifier (PCRE2 10.42 reads any other '{'
 * as a literal); *end receives the index after its '}'. */
static int brace_quantifier(const struct tr *t, size_t *end)
{
    size_t k = t->i + 1, d = 0;
    while (k < t->n && t->s[k] >= '0' && t->s[k] <= '9')
        k++, d++;
    if (d == 0)
        return 0;
    if (k < t->n && t->s[k] == ',') {
        k++;
        while (k < t->n && t->s[k] >= '0' && t->s[k] <= '9')
            k++;
    }
    if (k < t->n && t->s[k] == '}') {
        *end = k + 1;
        return 1;
    }
    return 0;
}

enum { G_PLAIN, G_LOOK };

static int translate(struct tr *t)
{
    char groups[256]; /* the kind of each open group */
    size_t depth = 0;
    int quantifiable = 0; /* the last item may take a quantifier in ECMA-262's u mode */
    int quoted = 0;
    while (t->i < t->n) {
        size_t at = t->i;
        char ch = t->s[t->i];
        if (quoted) {
            if (ch == '\\' && t->i + 1 < t->n && t->s[t->i + 1] == 'E') {
                quoted = 0;
                t->i += 2;
                continue;
            }
            literal(t, next_cp(t, &t->i));
            quantifiable = 1;
            continue;
        }
        size_t qend = 0; /* set by brace_quantifier() when it is used (gcc -O1 cannot tell) */
        if (ch == '*' || ch == '+' || ch == '?' || (ch == '{' && brace_quantifier(t, &qend))) {
            if (!quantifiable)
                return refuse(t, at, "a quantified assertion is not valid ECMA-262");
            if (ch == '{') {
                put(&t->o, t->s + t->i, qend - t->i);
                t->i = qend;
            } else {
                put(&t->o, &ch, 1);
                t->i++;
            }
            if (t->i < t->n && t->s[t->i] == '+')
                return refuse(t, t->i, "possessive quantifiers are not translated: drop the '+'");
            if (t->i < t->n && t->s[t->i] == '?') {
                put(&t->o, "?", 1);
                t->i++;
            }
            quantifiable = 0;
            continue;
        }
        int before = quantifiable;
        quantifiable = 1;
        switch (ch) {
        case '[':
            if (char_class(t) != 0)
                return -1;
            continue;
        case '.':
            puts_(&t->o, "[^\\n]");
            t->i++;
            continue;
        case '^': case '$':
            put(&t->o, &ch, 1);
            t->i++;
            quantifiable = 0;
            continue;
        case '|':
            put(&t->o, "|", 1);
            t->i++;
            quantifiable = 0;
            continue;
        case ')':
            if (depth == 0)
                return refuse(t, at, "unbalanced ')'");
            depth--;
            put(&t->o, ")", 1);
            t->i++;
            quantifiable = groups[depth] != G_LOOK;
            continue;
        case '(': {
            const char *p = t->s + t->i + 1;
            size_t left = t->n - t->i - 1;
            int kind = G_PLAIN;
            quantifiable = 0;
            if (left >= 1 && p[0] == '*')
                return refuse(t, at, "(*VERB) and start-of-pattern options are not translated");
            if (left >= 1 && p[0] == '?') {
                if (left >= 2 && p[1] == '#') { /* a comment: dropped */
                    const char *e = memchr(p, ')', left);
                    t->i = (size_t)(e - t->s) + 1;
                    quantifiable = before; /* as if it were not there */
                    continue;
                }
                if (left >= 2 && (p[1] == ':' || p[1] == '=' || p[1] == '!')) {
                    kind = p[1] == ':' ? G_PLAIN : G_LOOK;
                    put(&t->o, t->s + t->i, 3);
                    t->i += 3;
                } else if (left >= 3 && p[1] == '<' && (p[2] == '=' || p[2] == '!')) {
                    kind = G_LOOK;
                    put(&t->o, t->s + t->i, 4);
                    t->i += 4;
                } else if ((left >= 2 && (p[1] == '<' || p[1] == '\'')) ||
                           (left >= 3 && p[1] == 'P' && p[2] == '<')) {
                    size_t k = p[1] == 'P' ? 3 : 2, s = k;
                    char close = p[1] == '\'' ? '\'' : '>';
                    while (k < left && p[k] != close)
                        k++;
                    putf(&t->o, "(?<%.*s>", (int)(k - s), p + s);
                    t->i += 1 + k + 1;
                } else if (left >= 2 && p[1] == '>') {
                    return refuse(t, at, "atomic groups (?>...) are not translated");
                } else if (left >= 2 && (p[1] == 'P' || p[1] == '&' || p[1] == 'R' ||
                                         (p[1] >= '0' && p[1] <= '9') || p[1] == '+' ||
                                         p[1] == '-' || p[1] == '(' || p[1] == 'C' ||
                                         p[1] == '|')) {
                    if (p[1] == '-' && left >= 3 && !(p[2] >= '0' && p[2] <= '9'))
                        return refuse(t, at, "inline options ((?i), (?-i), ...) are not translated");
                    return refuse(t, at, "recursion, conditionals, callouts, backreferences and "
                                         "(?|...) are not translated");
                } else {
                    return refuse(t, at, "inline options ((?i), (?x), ...) are not translated");
                }
            } else {
                put(&t->o, "(", 1);
                t->i++;
            }
            if (depth == sizeof(groups))
                return refuse(t, at, "groups nested too deep");
            groups[depth++] = (char)kind;
            continue;
        }
        case '\\': {
            t->i++;
            char e = t->i < t->n ? t->s[t->i] : '\\';
            switch (e) {
            case 'd': case 'D': case 'w': case 'W':
                putf(&t->o, "\\%c", e);
                t->i++;
                continue;
            case 'b': case 'B':
                putf(&t->o, "\\%c", e);
                t->i++;
                quantifiable = 0;
                continue;
            case 's': case 'S':
                putf(&t->o, "[%s" SPACE_MEMBERS "]", e == 'S' ? "^" : "");
                t->i++;
                continue;
            case 'h': case 'H':
                putf(&t->o, "[%s", e == 'H' ? "^" : "");
                puts_(&t->o, HSPACE_MEMBERS "]");
                t->i++;
                continue;
            case 'v': case 'V':
                putf(&t->o, "[%s", e == 'V' ? "^" : "");
                puts_(&t->o, VSPACE_MEMBERS "]");
                t->i++;
                continue;
            case 'R':
                puts_(&t->o, "(?:\\r\\n|[" VSPACE_MEMBERS "])");
                t->i++;
                continue;
            case 'N':
                puts_(&t->o, "[^\\n]");
                t->i++;
                continue;
            case 'A':
                puts_(&t->o, "^");
                t->i++;
                quantifiable = 0;
                continue;
            case 'z':
                puts_(&t->o, "$");
                t->i++;
                quantifiable = 0;
                continue;
            case 'Z':
                puts_(&t->o, "(?=\\n?$)");
                t->i++;
                quantifiable = 0;
                continue;
            case 'Q':
                quoted = 1;
                t->i++;
                quantifiable = 0;
                continue;
            case 'E':
                t->i++;
                quantifiable = 0;
                continue;
            case 'p': case 'P':
                t->i++;
                if (property(t, at, e == 'P') != 0)
                    return -1;
                continue;
            case 't': t->i++; literal(t, 9); continue;
            case 'n': t->i++; literal(t, 10); continue;
            case 'f': t->i++; literal(t, 12); continue;
            case 'r': t->i++; literal(t, 13); continue;
            case 'e': t->i++; literal(t, 27); continue;
            case 'a': t->i++; literal(t, 7); continue;
            case 'x': case 'o': case 'c': case '0':
                t->i++;
                literal(t, (uint32_t)numeric_escape(t, e));
                continue;
            default:
                if ((e >= '1' && e <= '9') || e == 'g' || e == 'k')
                    return refuse(t, at, "backreferences are not translated");
                if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'))
                    return refuse(t, at, "this escape (\\K, \\G, \\X, ...) has no ECMA-262 "
                                         "equivalent");
                literal(t, next_cp(t, &t->i)); /* an escaped non-alphanumeric: itself */
                continue;
            }
        }
        default:
            literal(t, next_cp(t, &t->i));
            continue;
        }
    }
    return 0;
}

static int ecma_source(const char *re, size_t len, int caseless, char **out, size_t *bad_at, char *why,
                       size_t whylen)
{
    struct tr t = {.s = re, .n = len, .caseless = caseless};
    put(&t.o, "", 0);
    int rc = translate(&t);
    if (t.o.oom) {
        free(t.o.p);
        return CANAL_ENOMEM;
    }
    if (rc != 0) {
        free(t.o.p);
        *bad_at = t.bad_at;
        snprintf(why, whylen, "%s", t.why);
        return CANAL_EINVAL;
    }
    *out = t.o.p;
    return 0;
}
