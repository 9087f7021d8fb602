/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: canal's JSON writer (lib/core/json.c, canal__json_write) against
 * jansson's json_dumpb(JSON_COMPACT | JSON_ENCODE_ANY), which it promises to reproduce byte
 * for byte. Two sources of documents:
 *   - the input parsed by json_loadb(JSON_DECODE_ANY | JSON_ALLOW_NUL): when it parses, both
 *     writers must succeed with the same bytes (also wrapped in an array and an object);
 *   - documents built directly from the input's bytes, which the parser would never produce:
 *     strings and object keys of raw bytes (json_stringn_nocheck, json_object_setn_nocheck:
 *     invalid UTF-8, NUL bytes), integers and reals from raw 8-byte words, nesting deeper than
 *     the parser allows. Then both must refuse (canal NULL, jansson 0) or give the same bytes;
 *     the allowed differences are canal's own recursion bound (a value more than 2048
 *     containers deep is refused by canal and written by jansson) and object keys that are
 *     not UTF-8, which canal refuses and jansson writes as broken JSON (see has_bad_key()).
 * Every allocation canal__json_write makes goes through __wrap_h2o_mem_alloc_pool (linked with
 * -Wl,--wrap=h2o_mem_alloc_pool): half of the time it is h2o's pool as in production, half of
 * the time a malloc of exactly the size asked, so that AddressSanitizer sees a write past the
 * end of the writer's buffer (inside an h2o pool chunk it would not).
 *
 * Third, the streaming writer (canal_jw_t): the input is read as a program of calls (begin,
 * end, keys and strings of raw bytes, integers and reals from raw words, booleans, null,
 * embedded json_t values, deliberate misuse, an early finish) that builds the same document
 * with jansson on the side. While every call is valid, the writer's bytes must equal
 * json_dumpb's of that document; the first invalid call (invalid UTF-8, a NaN or an
 * infinity, a 65th open container, a key or an end out of place, an incomplete finish) must
 * fail with its own error, which then sticks, and no body is handed out.
 *
 * Known divergences (reported, not fixed here) are skipped when CANAL_FUZZ_SKIP_KNOWN=1 so
 * that a run can look for new ones; the reproducers are in test/fuzz/crashes/json-*.
 *
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <h2o.h>
#include <jansson.h>
#include "core/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* canal's bound in put_value(): depth > 2048 fails */
#define CANAL_MAX_DEPTH 2048

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

/* ---- the allocator seen by canal__json_write ---- */

void *__real_h2o_mem_alloc_pool(h2o_mem_pool_t *pool, size_t sz);
void *__wrap_h2o_mem_alloc_pool(h2o_mem_pool_t *pool, size_t sz);

static int exact_alloc;
static void **exact_blocks;
static size_t nexact, capexact;

void *__wrap_h2o_mem_alloc_pool(h2o_mem_pool_t *pool, size_t sz)
{
    if (!exact_alloc)
        return __real_h2o_mem_alloc_pool(pool, sz);
    if (nexact == capexact) {
        capexact = capexact ? capexact * 2 : 64;
        exact_blocks = realloc(exact_blocks, capexact * sizeof(*exact_blocks));
        check(exact_blocks != NULL, "malloc");
    }
    void *p = malloc(sz ? sz : 1);
    check(p != NULL, "malloc");
    memset(p, 0xBE, sz);
    exact_blocks[nexact++] = p;
    return p;
}

static h2o_mem_pool_t pool;
static int skip_known;

static void release_memory(void)
{
    for (size_t i = 0; i < nexact; i++)
        free(exact_blocks[i]);
    nexact = 0;
    h2o_mem_clear_pool(&pool);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    h2o_mem_init_pool(&pool);
    const char *s = getenv("CANAL_FUZZ_SKIP_KNOWN");
    skip_known = s != NULL && *s == '1';
    return 0;
}

/* ---- helpers ---- */

/* The deepest nesting of a document: the number of containers around its deepest value. */
static size_t depth_of(const json_t *j)
{
    size_t best = 0;
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) {
            size_t d = 1 + depth_of(json_array_get(j, i));
            best = d > best ? d : best;
        }
        return best;
    }
    if (json_is_object(j)) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)j, key, v)
        {
            size_t d = 1 + depth_of(v);
            best = d > best ? d : best;
        }
        return best;
    }
    return 0;
}

/* A key holding a NUL byte anywhere in the document (only json_object_setn* makes one). */
static int has_nul_key(const json_t *j)
{
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++)
            if (has_nul_key(json_array_get(j, i)))
                return 1;
    } else if (json_is_object(j)) {
        const char *key;
        size_t klen;
        json_t *v;
        json_object_keylen_foreach((json_t *)j, key, klen, v)
        {
            if (strlen(key) != klen || has_nul_key(v))
                return 1;
        }
    }
    return 0;
}

/* A key that is not valid UTF-8 anywhere in the document (json_object_setn_nocheck makes one).
 * jansson 2.14 ignores the failure of dump_string() for keys (dump.c, do_dump(): its return
 * value is not checked), so it writes an opening quote, the part of the key before the bad
 * byte that it had flushed, and goes on: {"\xff":null} comes out as {":null}, which is not
 * JSON. canal refuses such a document, as it refuses invalid UTF-8 in a string value; that
 * is the better answer, so the difference is allowed. json_stringn() validates as jansson's
 * writer does (NUL allowed). */
static int has_bad_key(const json_t *j)
{
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++)
            if (has_bad_key(json_array_get(j, i)))
                return 1;
    } else if (json_is_object(j)) {
        const char *key;
        size_t klen;
        json_t *v;
        json_object_keylen_foreach((json_t *)j, key, klen, v)
        {
            json_t *t = json_stringn(key, klen);
            json_decref(t);
            if (t == NULL || has_bad_key(v))
                return 1;
        }
    }
    return 0;
}

/* json_dumpb's bytes, malloc'ed (NULL when jansson cannot write the document) */
static char *jansson_dump(const json_t *j, size_t *len)
{
    const size_t flags = JSON_COMPACT | JSON_ENCODE_ANY;
    size_t need = json_dumpb(j, NULL, 0, flags);
    if (need == 0)
        return NULL;
    char *buf = malloc(need);
    check(buf != NULL, "malloc");
    size_t got = json_dumpb(j, buf, need, flags);
    check(got == need, "json_dumpb size stable");
    *len = need;
    return buf;
}

/*
 * Compares both writers on j. parsed: j came from the parser (so it must be writable).
 * hint: the first buffer size canal is given (growth is exercised with small ones).
 */
static void compare(const json_t *j, int parsed, size_t hint)
{
    size_t jlen = 0, clen = 0;
    char *theirs = jansson_dump(j, &jlen);
    for (int exact = 0; exact < 2; exact++) {
        exact_alloc = exact;
        clen = (size_t)-1;
        char *ours = canal__json_write(&pool, j, hint, &clen);
        if (theirs == NULL) {
            /* jansson refuses (invalid UTF-8): so must canal */
            check(!parsed, "a parsed document is writable by jansson");
            if (ours != NULL) {
                fprintf(stderr, "jansson refuses, canal wrote: %.*s\n", (int)clen, ours);
                abort();
            }
            continue;
        }
        if (ours == NULL) {
            if (!parsed && depth_of(j) > CANAL_MAX_DEPTH)
                continue; /* canal's documented recursion bound */
            if (!parsed && has_bad_key(j))
                continue; /* jansson writes broken JSON there (see has_bad_key) */
            if (skip_known && has_nul_key(j))
                continue;
            fprintf(stderr, "canal refuses, jansson wrote %zu bytes: %.*s\n", jlen,
                    (int)(jlen > 400 ? 400 : jlen), theirs);
            abort();
        }
        if (clen != jlen || memcmp(ours, theirs, jlen) != 0) {
            if (skip_known && has_nul_key(j))
                continue;
            fprintf(stderr, "different bytes\njansson (%zu): %.*s\ncanal   (%zu): %.*s\n", jlen,
                    (int)(jlen > 2000 ? 2000 : jlen), theirs, clen,
                    (int)(clen > 2000 ? 2000 : clen), ours);
            abort();
        }
    }
    exact_alloc = 0;
    free(theirs);
    release_memory();
}

/* ---- documents built from raw bytes ---- */

static uint64_t word(const uint8_t *p, size_t n)
{
    uint64_t w = 0;
    memcpy(&w, p, n < 8 ? n : 8);
    return w;
}

/* Pieces of the input separated by '\n'. */
static size_t next_piece(const uint8_t *data, size_t size, size_t at, size_t *len)
{
    const uint8_t *nl = at < size ? memchr(data + at, '\n', size - at) : NULL;
    *len = nl ? (size_t)(nl - (data + at)) : size - at;
    return at + *len + 1;
}

static void built_documents(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    unsigned recipe = data[0];
    size_t hint = data[1] & 63;
    const uint8_t *in = data + 2;
    size_t n = size - 2;

    /* 1. the bytes as one string, alone and in a container */
    json_t *s = json_stringn_nocheck((const char *)in, n);
    check(s != NULL, "json_stringn_nocheck");
    compare(s, 0, hint);
    json_t *arr = json_array();
    json_array_append(arr, s);
    json_array_append_new(arr, json_integer((json_int_t)word(in, n)));
    compare(arr, 0, hint);
    json_decref(arr);

    /* 2. an object: the pieces alternate key (raw bytes, NULs allowed) and string value */
    json_t *obj = json_object();
    size_t at = 0, len;
    int k = 0;
    while (at <= n && k < 64) {
        size_t kat = at;
        at = next_piece(in, n, at, &len);
        size_t klen = len, vlen = 0, vat = at;
        if (at <= n)
            at = next_piece(in, n, at, &vlen);
        json_object_setn_new_nocheck(obj, (const char *)in + kat, klen,
                                     vat <= n ? json_stringn_nocheck((const char *)in + vat, vlen)
                                              : json_null());
        k++;
    }
    compare(obj, 0, hint);
    json_decref(obj);

    /* 3. numbers: each 8-byte word as an integer and as a real (NaN and infinities, which
     * json_real refuses, are skipped) */
    json_t *nums = json_array();
    for (size_t i = 0; i + 8 <= n && i < 8 * 64; i += 8) {
        uint64_t w = word(in + i, 8);
        double d;
        memcpy(&d, &w, sizeof(d));
        json_array_append_new(nums, json_integer((json_int_t)w));
        json_t *r = json_real(d);
        if (r != NULL)
            json_array_append_new(nums, r);
    }
    compare(nums, 0, hint);
    json_decref(nums);

    /* 4. with a first byte of 0 (it is slow: jansson checks for cycles at every level),
     * nesting around canal's bound: 2044..2051 containers around the string, arrays or
     * objects as the bits of the input say */
    if (recipe == 0) {
        size_t depth = 2044 + data[1] % 8;
        json_t *cur = json_incref(s);
        for (size_t i = 0; i < depth; i++) {
            int as_obj = n > 0 && (in[(i / 8) % n] >> (i % 8) & 1);
            json_t *c = as_obj ? json_object() : json_array();
            if (as_obj)
                json_object_set_new(c, "k", cur);
            else
                json_array_append_new(c, cur);
            cur = c;
        }
        compare(cur, 0, hint);
        json_decref(cur);
    }
    json_decref(s);
}

/* ---- the streaming writer, driven by the input ---- */

struct prog {
    const uint8_t *p;
    size_t n;
};

static unsigned next_byte(struct prog *g)
{
    if (g->n == 0)
        return 0;
    g->n--;
    return *g->p++;
}

/* up to max raw bytes of the input */
static size_t next_bytes(struct prog *g, size_t max, const char **out)
{
    size_t len = next_byte(g) % (max + 1);
    if (len > g->n)
        len = g->n;
    *out = (const char *)g->p;
    g->p += len;
    g->n -= len;
    return len;
}

static uint64_t next_word(struct prog *g)
{
    uint64_t w = 0;
    for (int i = 0; i < 8; i++)
        w = w << 8 | next_byte(g);
    return w;
}

/* jansson's own check of a string (valid UTF-8; NUL bytes allowed) */
static int valid_utf8(const char *s, size_t len)
{
    json_t *t = json_stringn(s, len);
    json_decref(t);
    return t != NULL;
}

/* The writer failed as expected: the error is err, it sticks, and no body comes out. */
static void expect_failed(canal_jw_t *w, int err)
{
    const char *body = NULL;
    size_t len = 0;
    check(canal_jw_error(w) == err, "the writer's first error is the expected one");
    check(canal_jw_error_text(w)[0] != '\0', "a failed writer says why");
    check(canal_jw_null(w) == err && canal_jw_object_end(w) == err, "the error sticks");
    check(canal_jw_finish(w, &body, &len) == err && body == NULL, "no body from a failed writer");
}

static void writer_program(const uint8_t *data, size_t size)
{
    struct prog g = {data, size};
    struct canal_jw w;
    json_t *stack[CANAL_JW_MAX_DEPTH + 1]; /* the open containers, jansson's side */
    int is_obj[CANAL_JW_MAX_DEPTH + 1];
    unsigned depth = 0, nkeys = 0;
    json_t *root = NULL;
    int expected = 0; /* the error the writer must have failed with, once a call is invalid */

    exact_alloc = next_byte(&g) & 1;
    canal__jw_init(&w, &pool, next_byte(&g) & 127);
    while (g.n > 0 && expected == 0) {
        unsigned op = next_byte(&g) % 12;
        if (root != NULL && depth == 0)
            break; /* the document is complete */
        /* misuse first: these need no key */
        if (op == 9) { /* the wrong end, or an end with nothing open */
            int rc = depth == 0 ? canal_jw_object_end(&w)
                     : is_obj[depth] ? canal_jw_array_end(&w) : canal_jw_object_end(&w);
            check(rc == CANAL_ESTATE, "a wrong end is CANAL_ESTATE");
            expected = CANAL_ESTATE;
            break;
        }
        if (op == 10) { /* a key out of place: outside an object, or twice */
            if (depth > 0 && is_obj[depth])
                check(canal_jw_key(&w, "k") == 0, "a key in an object");
            check(canal_jw_key(&w, "k") == CANAL_ESTATE, "a key out of place is CANAL_ESTATE");
            expected = CANAL_ESTATE;
            break;
        }
        if (op == 11) { /* an early finish */
            const char *body;
            size_t len;
            check(canal_jw_finish(&w, &body, &len) == CANAL_ESTATE, "an incomplete document is CANAL_ESTATE");
            expected = CANAL_ESTATE;
            break;
        }
        if (op == 2) { /* the right end */
            if (depth == 0)
                continue;
            check((is_obj[depth] ? canal_jw_object_end(&w) : canal_jw_array_end(&w)) == 0, "an end");
            depth--;
            continue;
        }
        /* a value: in an object it needs a key, made unique (jansson keeps one per name)
         * and without NUL bytes (canal and jansson differ there: see has_nul_key()) */
        char key[64];
        size_t klen = 0;
        if (depth > 0 && is_obj[depth]) {
            const char *k;
            size_t n = next_bytes(&g, 16, &k);
            memcpy(key, k, n);
            for (size_t i = 0; i < n; i++)
                key[i] = key[i] ? key[i] : 'z';
            klen = n + (size_t)snprintf(key + n, sizeof(key) - n, "#%u", nkeys++);
            int rc = canal_jw_keyn(&w, key, klen);
            if (!valid_utf8(key, klen)) {
                check(rc == CANAL_EINVAL, "a key that is not UTF-8 is CANAL_EINVAL");
                expected = CANAL_EINVAL;
                break;
            }
            check(rc == 0, "a key");
        }
        json_t *v = NULL;
        int rc = 0, push = 0;
        switch (op) {
        case 0:
        case 1:
            rc = op == 0 ? canal_jw_object_begin(&w) : canal_jw_array_begin(&w);
            if (depth == CANAL_JW_MAX_DEPTH) {
                check(rc == CANAL_ELIMIT, "the 65th container is CANAL_ELIMIT");
                expected = CANAL_ELIMIT;
                break;
            }
            v = op == 0 ? json_object() : json_array();
            push = 1;
            break;
        case 3: {
            const char *str;
            size_t n = next_bytes(&g, 40, &str);
            rc = canal_jw_stringn(&w, str, n);
            if (!valid_utf8(str, n)) {
                check(rc == CANAL_EINVAL, "a string that is not UTF-8 is CANAL_EINVAL");
                expected = CANAL_EINVAL;
                break;
            }
            v = json_stringn(str, n);
            break;
        }
        case 4: {
            int64_t x = (int64_t)next_word(&g);
            rc = canal_jw_int(&w, x);
            v = json_integer((json_int_t)x);
            break;
        }
        case 5: {
            uint64_t bits = next_word(&g);
            double d;
            memcpy(&d, &bits, sizeof(d));
            rc = canal_jw_real(&w, d);
            if (d != d || d - d != 0) { /* NaN or an infinity */
                check(rc == CANAL_EINVAL, "a NaN or an infinity is CANAL_EINVAL");
                expected = CANAL_EINVAL;
                break;
            }
            v = json_real(d);
            break;
        }
        case 6: {
            int b = next_byte(&g) & 1;
            rc = canal_jw_bool(&w, b);
            v = json_boolean(b);
            break;
        }
        case 8: { /* an embedded json_t: a raw string and an integer in an array */
            const char *str;
            size_t n = next_bytes(&g, 12, &str);
            v = json_pack("[o,I]", json_stringn_nocheck(str, n), (json_int_t)n);
            rc = canal_jw_json(&w, v);
            if (!valid_utf8(str, n)) {
                check(rc == CANAL_EINVAL, "an embedded json_t that is not UTF-8 is CANAL_EINVAL");
                expected = CANAL_EINVAL;
                json_decref(v);
                v = NULL;
            }
            break;
        }
        default:
            rc = canal_jw_null(&w);
            v = json_null();
        }
        if (expected != 0)
            break;
        check(rc == 0, "a valid call succeeds");
        check(v != NULL, "jansson's side");
        if (depth == 0)
            root = json_incref(v);
        else if (is_obj[depth])
            json_object_setn_nocheck(stack[depth], key, klen, v);
        else
            json_array_append(stack[depth], v);
        if (push) {
            stack[++depth] = v;
            is_obj[depth] = op == 0;
        }
        json_decref(v);
    }
    if (expected != 0) {
        expect_failed(&w, expected);
    } else if (root != NULL) {
        /* close what is open, then both must give the same bytes */
        while (depth > 0) {
            check((is_obj[depth] ? canal_jw_object_end(&w) : canal_jw_array_end(&w)) == 0, "an end");
            depth--;
        }
        const char *body;
        size_t clen, jlen;
        check(canal_jw_finish(&w, &body, &clen) == 0, "a complete document finishes");
        char *theirs = jansson_dump(root, &jlen);
        check(theirs != NULL, "jansson writes what the writer accepted");
        if (clen != jlen || memcmp(body, theirs, jlen) != 0) {
            fprintf(stderr, "different bytes\njansson (%zu): %.*s\ncanal_jw (%zu): %.*s\n", jlen,
                    (int)(jlen > 2000 ? 2000 : jlen), theirs, clen, (int)(clen > 2000 ? 2000 : clen), body);
            abort();
        }
        free(theirs);
    } else {
        const char *body;
        size_t len;
        check(canal_jw_finish(&w, &body, &len) == CANAL_ESTATE, "an empty document is CANAL_ESTATE");
    }
    json_decref(root);
    exact_alloc = 0;
    release_memory();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    json_error_t err;
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (j != NULL) {
        check(depth_of(j) <= CANAL_MAX_DEPTH, "the parser's depth bound is within canal's");
        compare(j, 1, size & 127);
        /* one level deeper, in an array and in an object */
        json_t *wrap = json_pack("[O]", j);
        if (wrap != NULL && depth_of(wrap) <= CANAL_MAX_DEPTH) /* one more level may pass it */
            compare(wrap, 1, 0);
        json_decref(wrap);
        wrap = json_pack("{s:O,s:O}", "x\"\\\x01", j, "", j);
        if (wrap != NULL && depth_of(wrap) <= CANAL_MAX_DEPTH)
            compare(wrap, 1, 1);
        json_decref(wrap);
        json_decref(j);
    }
    built_documents(data, size);
    writer_program(data, size);
    return 0;
}
