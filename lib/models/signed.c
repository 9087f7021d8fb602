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
#include <openssl/hmac.h>
#include "models/models.h"
#include "canal/signed.h"

struct canal_signer {
    size_t nkeys;
    struct {
        unsigned char *bytes;
        size_t len;
    } keys[CANAL_SIGNER_MAX_KEYS];
};

#define MAC_LEN 32
#define MAC_B64_LEN 43 /* 32 bytes, unpadded */


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
        if ((s->keys[i].bytes = malloc(keys[i].len)) == NULL) {
            canal_signer_destroy(s);
            canal_error_set(err, CANAL_ENOMEM, 0, NULL);
            return NULL;
        }
        memcpy(s->keys[i].bytes, keys[i].base, keys[i].len);
        s->keys[i].len = keys[i].len;
        s->nkeys = i + 1;
    }
    return s;
}

void canal_signer_destroy(canal_signer_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nkeys; i++) {
        OPENSSL_cleanse(s->keys[i].bytes, s->keys[i].len);
        free(s->keys[i].bytes);
    }
    free(s);
}

size_t canal_signed_length(size_t content_len)
{
    return canal__b64url_len(content_len) + 1 + MAC_B64_LEN;
}

/* The MAC text of key k over purpose NUL b (the encoded content) into out (MAC_B64_LEN bytes) */
static void mac_text(const canal_signer_t *s, size_t k, const char *purpose, const char *b, size_t n, char *out)
{
    unsigned char mac[EVP_MAX_MD_SIZE], small[512];
    unsigned int len = 0;
    size_t plen = strlen(purpose) + 1;
    /* HMAC() is one-shot: the message in one buffer */
    unsigned char *msg = plen + n <= sizeof(small) ? small : malloc(plen + n);
    if (msg == NULL || (memcpy(msg, purpose, plen), memcpy(msg + plen, b, n),
                        HMAC(EVP_sha256(), s->keys[k].bytes, (int)s->keys[k].len, msg, plen + n, mac, &len)) == NULL ||
        len != MAC_LEN) {
        /* out of memory or no libcrypto: a text no base64 MAC can equal */
        memset(out, '*', MAC_B64_LEN);
    } else {
        canal__b64url_encode(mac, MAC_LEN, out);
    }
    OPENSSL_cleanse(mac, sizeof(mac));
    if (msg != small)
        free(msg);
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
