/* SPDX-License-Identifier: MIT */
/*
 * Signed values (canal/signed.h): HMAC-SHA256 through OpenSSL, with key rotation.
 *
 * A signed value is B "." M: B is the content in unpadded base64url, M the unpadded base64url
 * of HMAC-SHA256(key, purpose NUL B). The MAC covers B as text, and verification compares the
 * whole text of M with the MAC computed over the B received (CRYPTO_memcmp, after a length
 * check): any change to a character of B or M, a cut or an extra byte changes what is
 * compared, including the spare low bits of a base64 character that a decoder would ignore.
 * Only then is B decoded, strictly (the alphabet, no padding, canonical last character).
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "models/models.h"
#include "canal/signed.h"

struct canal_signer {
    size_t nkeys;
    EVP_MAC_CTX *keys[CANAL_SIGNER_MAX_KEYS]; /* canal__hmac_key()'s */
};

#define MAC_B64_LEN 43 /* 32 bytes, unpadded */

/* OpenSSL 3's one-shot HMAC() fetches the MAC and the digest and hashes the key's pads on every
 * call (about 20k instructions); a context keyed once and copied for each MAC costs a tenth. */
EVP_MAC_CTX *canal__hmac_key(const void *key, size_t len)
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0), OSSL_PARAM_construct_end()};
    EVP_MAC_CTX *c = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
    EVP_MAC_free(mac); /* the context holds its own reference */
    if (c != NULL && EVP_MAC_init(c, key, len, params) != 1) {
        EVP_MAC_CTX_free(c);
        c = NULL;
    }
    return c;
}

int canal__hmac(const EVP_MAC_CTX *keyed, const void *a, size_t alen, const void *b, size_t blen,
                unsigned char out[CANAL__HMAC_LEN])
{
    /* the keyed context is shared by every worker thread and only read: each MAC gets a copy */
    EVP_MAC_CTX *c = EVP_MAC_CTX_dup(keyed);
    size_t len = 0;
    int ok = c != NULL && EVP_MAC_update(c, a, alen) == 1 && (blen == 0 || EVP_MAC_update(c, b, blen) == 1) &&
             EVP_MAC_final(c, out, &len, CANAL__HMAC_LEN) == 1 && len == CANAL__HMAC_LEN;
    EVP_MAC_CTX_free(c);
    return ok ? 0 : -1;
}

canal_signer_t *canal_signer_create(const canal_str_t *keys, size_t nkeys, canal_error_info_t *err)
{
    if (nkeys == 0 || nkeys > CANAL_SIGNER_MAX_KEYS || keys == NULL) {
        canal_error_set(err, CANAL_EINVAL, 0, "a signer takes 1 to %d keys", CANAL_SIGNER_MAX_KEYS);
        return NULL;
    }
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].base == NULL || keys[i].len < 16) {
            canal_error_set(err, CANAL_EINVAL, i, "signing key %zu is shorter than 16 bytes", i);
            return NULL;
        }
    canal_signer_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        return NULL;
    }
    for (size_t i = 0; i < nkeys; i++) {
        if ((s->keys[i] = canal__hmac_key(keys[i].base, keys[i].len)) == NULL) {
            canal_signer_destroy(s);
            canal_error_set(err, CANAL_ENOMEM, 0, "OpenSSL cannot key HMAC-SHA-256");
            return NULL;
        }
        s->nkeys = i + 1;
    }
    return s;
}

void canal_signer_destroy(canal_signer_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nkeys; i++)
        EVP_MAC_CTX_free(s->keys[i]); /* cleanses the key */
    free(s);
}

size_t canal_signed_length(size_t content_len)
{
    return canal__b64url_len(content_len) + 1 + MAC_B64_LEN;
}

/* The MAC text of key k over purpose NUL b (the encoded content) into out (MAC_B64_LEN bytes) */
static void mac_text(const canal_signer_t *s, size_t k, const char *purpose, const char *b, size_t n, char *out)
{
    unsigned char mac[CANAL__HMAC_LEN];
    if (canal__hmac(s->keys[k], purpose, strlen(purpose) + 1, b, n, mac) != 0)
        memset(out, '*', MAC_B64_LEN); /* out of memory: a text no base64 MAC can equal */
    else
        canal__b64url_encode(mac, CANAL__HMAC_LEN, out);
    OPENSSL_cleanse(mac, sizeof(mac));
}

int canal_signer_sign(const canal_signer_t *s, const char *purpose, canal_str_t content, char *out, size_t size)
{
    size_t b = canal__b64url_len(content.len), total = b + 1 + MAC_B64_LEN;
    if (size < total + 1)
        return CANAL_ELIMIT;
    canal__b64url_encode((const unsigned char *)content.base, content.len, out);
    out[b] = '.';
    mac_text(s, 0, purpose, out, b, out + b + 1);
    out[total] = '\0';
    return (int)total;
}

int canal_signer_verify(const canal_signer_t *s, const char *purpose, canal_str_t value, char *out, size_t size)
{
    if (value.len < MAC_B64_LEN + 1 || value.base[value.len - MAC_B64_LEN - 1] != '.')
        return CANAL_EINVAL;
    size_t b = value.len - MAC_B64_LEN - 1;
    const char *given = value.base + b + 1;
    int ok = 0;
    for (size_t k = 0; k < s->nkeys; k++) {
        char mac[MAC_B64_LEN];
        mac_text(s, k, purpose, value.base, b, mac);
        ok |= CRYPTO_memcmp(mac, given, MAC_B64_LEN) == 0;
    }
    if (!ok)
        return CANAL_EINVAL;
    if (size < b / 4 * 3 + 3)
        return CANAL_ELIMIT;
    size_t n; /* at most b / 4 * 3 + 2 bytes are written */
    return canal__b64_decode(value.base, b, 1, (unsigned char *)out, &n) != 0 ? CANAL_EINVAL : (int)n;
}
