/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the parsers of credentials in lib/security/auth.c, on any bytes as an
 * Authorization (or X-Api-Key) field value. Oracles, each independent of the code it checks:
 * - canal__auth_split(): scheme is the bytes before the first SP, cred what follows the run
 *   of SPs after it, and nothing else is lost (scheme, spaces, cred rebuild the value);
 * - canal__b64token(): equals RFC 6750 2.1's grammar written again here from the RFC;
 * - canal__basic_decode(): when it accepts, user has no ':', both halves are UTF-8 (the
 *   router's canal_utf8_valid()) and OpenSSL's EVP_EncodeBlock of "user:pass" is exactly the
 *   credentials (one spelling); when the credentials are the padded base64 of bytes with a
 *   ':' that are UTF-8 on each side, it accepts;
 * - canal__trim_ows(): a slice of the value with no SP or HTAB at either end, and only SP or
 *   HTAB cut off.
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "security/security.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
static int b64token_oracle(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
                     s[i] == '-' || s[i] == '.' || s[i] == '_' || s[i] == '~' || s[i] == '+' || s[i] == '/'))
        i++;
    if (i == 0)
        return 0;
    while (i < n && s[i] == '=')
        i++;
    return i == n;
}

static void check_split(canal_str_t v)
{
    canal_str_t scheme, cred;
    canal__auth_split(v, &scheme, &cred);
    assert(scheme.base == v.base && scheme.len <= v.len && memchr(scheme.base, ' ', scheme.len) == NULL);
    if (scheme.len == v.len) {
        assert(cred.base == NULL && cred.len == 0);
        return;
    }
    assert(v.base[scheme.len] == ' ' && cred.base != NULL && cred.base + cred.len == v.base + v.len);
    for (const char *c = v.base + scheme.len; c < cred.base; c++)
        assert(*c == ' ');
    assert(cred.len == 0 || cred.base[0] != ' ');
}

static void check_basic(canal_str_t cred)
{
    unsigned char *raw = malloc(cred.len + 1), *enc = malloc(cred.len / 3 * 4 + 8);
    canal_str_t user, pass;
    if (canal__basic_decode(cred, raw, &user, &pass) == 0) {
        assert(memchr(user.base, ':', user.len) == NULL && canal_utf8_valid(user) && canal_utf8_valid(pass));
        assert(user.base == (const char *)raw && pass.base == user.base + user.len + 1);
        int m = EVP_EncodeBlock(enc, raw, (int)(user.len + 1 + pass.len));
        assert((size_t)m == cred.len && memcmp(enc, cred.base, cred.len) == 0);
    }
    /* the other way: the input's bytes as credentials, encoded; accepted exactly when the
     * bytes hold a ':' and are UTF-8 on each side of the first one */
    if (cred.len > 0) {
        unsigned char *e2 = malloc(cred.len / 3 * 4 + 8);
        int m = EVP_EncodeBlock(e2, (const unsigned char *)cred.base, (int)cred.len);
        const char *colon = memchr(cred.base, ':', cred.len);
        int want = colon != NULL && canal_utf8_valid((canal_str_t){cred.base, (size_t)(colon - cred.base)}) &&
                   canal_utf8_valid((canal_str_t){colon + 1, cred.len - (size_t)(colon - cred.base) - 1});
        unsigned char *raw2 = malloc((size_t)m + 1);
        int got = canal__basic_decode((canal_str_t){(const char *)e2, (size_t)m}, raw2, &user, &pass) == 0;
        assert(got == want);
        if (got)
            assert(user.len + 1 + pass.len == cred.len && memcmp(raw2, cred.base, cred.len) == 0);
        free(raw2);
        free(e2);
    }
    free(raw);
    free(enc);
}

static void check_trim(canal_str_t v)
{
    canal_str_t t = canal__trim_ows(v);
    assert(t.base >= v.base && t.base + t.len <= v.base + v.len);
    if (t.len > 0)
        assert(t.base[0] != ' ' && t.base[0] != '\t' && t.base[t.len - 1] != ' ' && t.base[t.len - 1] != '\t');
    for (const char *c = v.base; c < t.base; c++)
        assert(*c == ' ' || *c == '\t');
    for (const char *c = t.base + t.len; c < v.base + v.len; c++)
        assert(*c == ' ' || *c == '\t');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    canal_str_t v = {(const char *)data, size};
    check_split(v);
    canal_str_t scheme, cred;
    canal__auth_split(v, &scheme, &cred);
    if (cred.base != NULL) {
        assert(canal__b64token(cred) == b64token_oracle((const unsigned char *)cred.base, cred.len));
        check_basic(cred);
    }
    assert(canal__b64token(v) == b64token_oracle(data, size));
    check_basic(v);
    check_trim(v);
    return 0;
}
