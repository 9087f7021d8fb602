/* SPDX-License-Identifier: MIT */
/*
 * The JWT verifier (RFC 7519 on RFC 7515's compact serialization) and strict base64.
 *
 * One token is checked in one pass, in this order, and the first fault refuses it: length;
 * three segments of unpadded base64url whose unused bits are zero (so a token has exactly one
 * spelling); the header, a JSON object (jansson, duplicate names refused); its "alg", which
 * must name a configured key (the key fixes the algorithm: the token only says which of the
 * configured keys to use; its kid picks among several keys of that algorithm only, and
 * jku/x5u/jwk/x5c are never looked at); no "crit", no "b64";
 * the signature over the first two segments as sent; then the payload's claims. The reason
 * given back is a short static text in the characters RFC 6750 3 allows in error_description.
 *
 * Keys are loaded once at start-up and only read afterwards: an HS256 key as an HMAC context
 * keyed then, which each verification copies (EVP_MAC_CTX_dup), an RS256 or ES256 key as an
 * EVP_PKEY with a verification context initialised once, which each verification copies
 * (EVP_MD_CTX_copy_ex); so worker threads verify at once without a lock.
 *
 * The signer is jwt_sign.c, with the same key checks.
 */
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "security/security.h"

/* ---- keys ---- */

static int is_der_key(const unsigned char *s, size_t n)
{
    const unsigned char *p = s;
    EVP_PKEY *k = n > 0 && s[0] == 0x30 ? d2i_PUBKEY(NULL, &p, (long)n) : NULL;
    EVP_PKEY_free(k);
    return k != NULL;
}

/* An HS256 key (a verifier's or a signer's, jwt_sign.c): the secret's rules, then an
 * HMAC-SHA-256 context keyed once (canal__hmac_key()), which each token's MAC copies. */
int canal__jwt_hmac_key(struct canal__jwt_key *k, const void *secret, size_t len, const char *what, canal_error_info_t *err)
{
    if (secret == NULL || len < 32)
        return canal_error_set(err, CANAL_EINVAL, 0, "HS256%s: the secret needs at least 32 bytes (RFC 7518 3.2)", what);
    if (memmem(secret, len, "-----BEGIN", 10) != NULL || is_der_key(secret, len))
        return canal_error_set(err, CANAL_EINVAL, 0, "HS256%s: the secret is a PEM or DER key, not a secret", what);
    if ((k->hmac = canal__hmac_key(secret, len)) == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "HS256: OpenSSL cannot key HMAC-SHA-256");
    return 0;
}

/* An RS256 or ES256 key in k->pkey: of the right type and size, with its digest fetched. */
int canal__jwt_pkey_checked(struct canal__jwt_key *k, const char *what, canal_error_info_t *err)
{
    const char *alg = k->alg == CANAL_JWT_RS256 ? "RS256" : "ES256";
    /* Initialised once (the key's context, SHA-256 fetched): 26k instructions a token when
     * done per call; a verification copies it. */
    if ((k->verify = EVP_MD_CTX_new()) == NULL || EVP_DigestVerifyInit(k->verify, NULL, EVP_sha256(), NULL, k->pkey) != 1)
        return canal_error_set(err, CANAL_ENOMEM, 0, "%s: OpenSSL cannot verify with this key", alg);
    if (k->alg == CANAL_JWT_RS256 && (EVP_PKEY_get_base_id(k->pkey) != EVP_PKEY_RSA || EVP_PKEY_get_bits(k->pkey) < 2048))
        return canal_error_set(err, CANAL_EINVAL, 0, "RS256: %s is not an RSA key of 2048 bits or more", what);
    if (k->alg == CANAL_JWT_ES256) {
        char group[32] = "";
        size_t glen;
        if (EVP_PKEY_get_base_id(k->pkey) != EVP_PKEY_EC ||
            EVP_PKEY_get_group_name(k->pkey, group, sizeof(group), &glen) != 1 || strcmp(group, "prime256v1") != 0)
            return canal_error_set(err, CANAL_EINVAL, 0, "ES256: %s is not a P-256 key", what);
    }
    return 0;
}

static int load_key(struct canal__jwt_key *k, const canal_jwt_key_t *c, canal_error_info_t *err)
{
    k->alg = c->alg;
    if (c->alg == CANAL_JWT_HS256)
        return canal__jwt_hmac_key(k, c->secret, c->secret_len, "", err);
    if (c->alg != CANAL_JWT_RS256 && c->alg != CANAL_JWT_ES256)
        return canal_error_set(err, CANAL_EINVAL, 0, "unknown JWT algorithm %d", (int)c->alg);
    const char *alg = c->alg == CANAL_JWT_RS256 ? "RS256" : "ES256";
    FILE *f = c->pem_file ? fopen(c->pem_file, "r") : NULL;
    if (f == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "%s: cannot read the key file %s", alg, c->pem_file ? c->pem_file : "(none)");
    k->pkey = PEM_read_PUBKEY(f, NULL, NULL, NULL);
    fclose(f);
    if (k->pkey == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "%s: %s holds no \"BEGIN PUBLIC KEY\" block", alg, c->pem_file);
    return canal__jwt_pkey_checked(k, c->pem_file, err);
}

/* ---- JWKS files (RFC 7517, RFC 7518 6) ---- */

/* A base64url member of a JWK, decoded into out (at most max bytes): its length, or -1. */
static long jwk_bytes(const json_t *jwk, const char *name, unsigned char *out, size_t max)
{
    const json_t *v = json_object_get(jwk, name);
    size_t n = json_string_length(v), len;
    if (!json_is_string(v) || n == 0 || n / 4 * 3 + 2 > max ||
        canal__b64_decode(json_string_value(v), n, 1, out, &len) != 0)
        return -1;
    return (long)len;
}

/* An RSA or EC public key from its parameters (OpenSSL 3's EVP_PKEY_fromdata). */
static EVP_PKEY *pkey_from(const char *type, OSSL_PARAM *params)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (c == NULL || EVP_PKEY_fromdata_init(c) != 1 || EVP_PKEY_fromdata(c, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
        pkey = NULL;
    EVP_PKEY_CTX_free(c);
    /* the EC point must lie on the curve */
    EVP_PKEY_CTX *chk = pkey != NULL ? EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL) : NULL;
    if (pkey != NULL && (chk == NULL || EVP_PKEY_public_check(chk) != 1)) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    EVP_PKEY_CTX_free(chk);
    return pkey;
}

/* One JWK into k: 0 (k->alg NONE: a key canal leaves out), or an error naming key number i. */
static int jwk_load(struct canal__jwt_key *k, const json_t *jwk, size_t i, canal_error_info_t *err)
{
    static const struct {
        const char *kty, *alg;
        canal_jwt_alg_t id;
    } kinds[] = {{"oct", "HS256", CANAL_JWT_HS256}, {"RSA", "RS256", CANAL_JWT_RS256}, {"EC", "ES256", CANAL_JWT_ES256}};
    const char *kty = json_string_value(json_object_get(jwk, "kty")), *alg = json_string_value(json_object_get(jwk, "alg")),
               *use = json_string_value(json_object_get(jwk, "use"));
    const json_t *kid = json_object_get(jwk, "kid");
    char what[48];
    snprintf(what, sizeof(what), " (JWKS key %zu)", i);
    size_t t = 0;
    while (t < 3 && (kty == NULL || strcmp(kty, kinds[t].kty) != 0))
        t++;
    if (!json_is_object(jwk) || t == 3 || (kid != NULL && !json_is_string(kid)) ||
        (json_object_get(jwk, "alg") != NULL && alg == NULL) || (json_object_get(jwk, "use") != NULL && use == NULL))
        return canal_error_set(err, CANAL_EINVAL, 0, "JWKS key %zu: kty must be oct, RSA or EC; alg, use, kid strings", i);
    for (size_t o = 0; alg != NULL && o < 3; o++)
        if (o != t && strcmp(alg, kinds[o].alg) == 0)
            return canal_error_set(err, CANAL_EINVAL, 0, "JWKS key %zu: alg %s on a kty %s key", i, alg, kty);
    if ((alg != NULL && strcmp(alg, kinds[t].alg) != 0) || (use != NULL && strcmp(use, "sig") != 0))
        return 0; /* an algorithm canal does not implement, or not a signing key: never used */
    k->alg = kinds[t].id;
    if (kid != NULL && (k->kid = strdup(json_string_value(kid))) == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    /* pt outlives the builder's use: OSSL_PARAM_BLD keeps pointers until _to_param() */
    unsigned char a[1026], b[1026], pt[65] = {0x04};
    long alen, blen;
    if (k->alg == CANAL_JWT_HS256) {
        alen = jwk_bytes(jwk, "k", a, sizeof(a));
        int rc = alen < 0 ? canal_error_set(err, CANAL_EINVAL, 0, "JWKS key %zu: k is not base64url", i)
                          : canal__jwt_hmac_key(k, a, (size_t)alen, what, err);
        OPENSSL_cleanse(a, sizeof(a));
        return rc;
    }
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    BIGNUM *n = NULL, *e = NULL;
    int ok = bld != NULL;
    if (k->alg == CANAL_JWT_RS256) {
        alen = jwk_bytes(jwk, "n", a, sizeof(a));
        blen = jwk_bytes(jwk, "e", b, 16);
        ok = ok && alen > 0 && blen > 0 && (n = BN_bin2bn(a, (int)alen, NULL)) != NULL &&
             (e = BN_bin2bn(b, (int)blen, NULL)) != NULL && OSSL_PARAM_BLD_push_BN(bld, "n", n) == 1 &&
             OSSL_PARAM_BLD_push_BN(bld, "e", e) == 1;
    } else {
        const char *crv = json_string_value(json_object_get(jwk, "crv"));
        ok = ok && crv != NULL && strcmp(crv, "P-256") == 0 && jwk_bytes(jwk, "x", a, 34) == 32 &&
             jwk_bytes(jwk, "y", b, 34) == 32;
        if (ok) {
            memcpy(pt + 1, a, 32);
            memcpy(pt + 33, b, 32);
        }
        ok = ok && OSSL_PARAM_BLD_push_utf8_string(bld, "group", "prime256v1", 0) == 1 &&
             OSSL_PARAM_BLD_push_octet_string(bld, "pub", pt, sizeof(pt)) == 1;
    }
    OSSL_PARAM *params = ok ? OSSL_PARAM_BLD_to_param(bld) : NULL;
    k->pkey = params != NULL ? pkey_from(k->alg == CANAL_JWT_RS256 ? "RSA" : "EC", params) : NULL;
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    if (k->pkey == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "JWKS key %zu: not a valid %s public key", i, kinds[t].alg);
    return canal__jwt_pkey_checked(k, what + 1, err);
}

/* The keys of a JWKS file, after the configured ones in j->keys. */
static int jwks_load(struct canal__jwt *j, const char *path, canal_error_info_t *err)
{
    json_error_t je;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "JWKS: cannot read %s", path);
    char *buf = malloc(CANAL_JWKS_MAX_LENGTH + 1);
    size_t n = buf ? fread(buf, 1, CANAL_JWKS_MAX_LENGTH + 1, f) : 0;
    fclose(f);
    if (buf == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    json_t *set = n <= CANAL_JWKS_MAX_LENGTH ? json_loadb(buf, n, JSON_REJECT_DUPLICATES, &je) : NULL;
    free(buf);
    const json_t *keys = json_object_get(set, "keys");
    int rc = 0;
    if (!json_is_array(keys))
        rc = canal_error_set(err, CANAL_EINVAL, 0, "JWKS: %s is not a JSON object with a \"keys\" array (at most %d bytes)",
                             path, CANAL_JWKS_MAX_LENGTH);
    for (size_t i = 0; rc == 0 && i < json_array_size(keys); i++) {
        if (j->nkeys == sizeof(j->keys) / sizeof(j->keys[0])) {
            rc = canal_error_set(err, CANAL_EINVAL, 0, "JWKS: more than %d usable keys", CANAL_JWKS_MAX_KEYS);
            break;
        }
        struct canal__jwt_key *k = &j->keys[j->nkeys];
        rc = jwk_load(k, json_array_get(keys, i), i, err);
        if (rc == 0 && k->alg != CANAL_JWT_NONE)
            j->nkeys++;
        else if (rc == 0)
            free(k->kid), k->kid = NULL;
    }
    json_decref(set);
    return rc;
}

/* Several keys of one algorithm need distinct kids, so that a token's kid picks one. */
static int kids_distinct(const struct canal__jwt *j, canal_error_info_t *err)
{
    for (size_t a = 0; a < j->nkeys; a++)
        for (size_t b = a + 1; b < j->nkeys; b++)
            if (j->keys[a].alg == j->keys[b].alg &&
                (j->keys[a].kid == NULL || j->keys[b].kid == NULL || strcmp(j->keys[a].kid, j->keys[b].kid) == 0))
                return canal_error_set(err, CANAL_EINVAL, 0, "two JWT keys for one algorithm without distinct kids");
    return 0;
}

void canal__jwt_dispose(struct canal__jwt *j)
{
    for (size_t i = 0; i < sizeof(j->keys) / sizeof(j->keys[0]); i++) {
        free(j->keys[i].kid);
        EVP_MAC_CTX_free(j->keys[i].hmac);
        EVP_PKEY_free(j->keys[i].pkey);
        EVP_MD_CTX_free(j->keys[i].verify);
    }
    free(j->issuer);
    free(j->audience);
    free(j->roles_claim);
    memset(j, 0, sizeof(*j));
}

int canal__jwt_init(struct canal__jwt *j, const canal_jwt_config_t *cfg, canal_error_info_t *err)
{
    *j = (struct canal__jwt){0};
    int rc = 0;
    if (cfg->issuer == NULL || cfg->audience == NULL)
        rc = canal_error_set(err, CANAL_EINVAL, 0, "a JWT scheme needs an issuer and an audience");
    else if (cfg->leeway > CANAL_JWT_MAX_LEEWAY)
        rc = canal_error_set(err, CANAL_EINVAL, 0, "the JWT leeway is at most %d s", CANAL_JWT_MAX_LEEWAY);
    for (size_t i = 0; rc == 0 && i < CANAL_JWT_MAX_KEYS && cfg->keys[i].alg != CANAL_JWT_NONE; i++) {
        for (size_t k = 0; k < i; k++)
            if (cfg->keys[k].alg == cfg->keys[i].alg)
                rc = canal_error_set(err, CANAL_EINVAL, 0, "two JWT keys for one algorithm");
        if (rc == 0 && (rc = load_key(&j->keys[i], &cfg->keys[i], err)) == 0)
            j->nkeys++;
    }
    if (rc == 0 && cfg->jwks_file != NULL)
        rc = jwks_load(j, cfg->jwks_file, err);
    if (rc == 0)
        rc = kids_distinct(j, err);
    if (rc == 0 && j->nkeys == 0)
        rc = canal_error_set(err, CANAL_EINVAL, 0, "a JWT scheme needs a key");
    if (rc == 0) {
        j->issuer = strdup(cfg->issuer);
        j->audience = strdup(cfg->audience);
        j->roles_claim = strdup(cfg->roles_claim ? cfg->roles_claim : "roles");
        j->leeway = cfg->leeway;
        if (j->issuer == NULL || j->audience == NULL || j->roles_claim == NULL)
            rc = canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    }
    if (rc != 0)
        canal__jwt_dispose(j);
    return rc;
}

/* ---- signatures ---- */

static int verify_hs256(const struct canal__jwt_key *k, const char *in, size_t n, const unsigned char *sig, size_t slen)
{
    unsigned char mac[CANAL__HMAC_LEN];
    return slen == CANAL__HMAC_LEN && canal__hmac(k->hmac, in, n, NULL, 0, mac) == 0 &&
           CRYPTO_memcmp(mac, sig, CANAL__HMAC_LEN) == 0;
}

static int verify_evp(const struct canal__jwt_key *k, const char *in, size_t n, const unsigned char *sig, size_t slen)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md != NULL && EVP_MD_CTX_copy_ex(md, k->verify) == 1 &&
             EVP_DigestVerify(md, sig, slen, (const unsigned char *)in, n) == 1;
    EVP_MD_CTX_free(md);
    return ok;
}

/* ES256 signs R||S, 32 bytes each (RFC 7518 3.4); OpenSSL verifies DER: the pair is re-encoded.
 * A DER signature sent as such is 70-72 bytes and refused by its length. OpenSSL refuses r or
 * s of 0 or at least the group order. */
static int verify_es256(const struct canal__jwt_key *k, const char *in, size_t n, const unsigned char *sig, size_t slen)
{
    if (slen != 64)
        return 0;
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
    unsigned char *der = NULL;
    int ok = 0;
    if (es != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(es, r, s) == 1) {
        r = s = NULL; /* es owns them */
        int dlen = i2d_ECDSA_SIG(es, &der);
        ok = dlen > 0 && verify_evp(k, in, n, der, (size_t)dlen);
    }
    OPENSSL_free(der);
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(es);
    return ok;
}

/* ---- claims ---- */

static int str_is(const json_t *v, const char *want)
{
    size_t n = strlen(want);
    return json_is_string(v) && json_string_length(v) == n && memcmp(json_string_value(v), want, n) == 0;
}

static const char *check_claims(const struct canal__jwt *j, const json_t *c, int64_t now)
{
    const json_t *exp = json_object_get(c, "exp"), *nbf = json_object_get(c, "nbf"),
                 *iat = json_object_get(c, "iat"), *aud = json_object_get(c, "aud"),
                 *sub = json_object_get(c, "sub");
    double lee = (double)j->leeway, t = (double)now;
    if (!json_is_number(exp))
        return "exp missing or not a number";
    if (json_number_value(exp) <= t - lee)
        return "the token has expired";
    if (nbf != NULL && (!json_is_number(nbf) || json_number_value(nbf) > t + lee))
        return "the token is not valid yet (nbf)";
    if (iat != NULL && (!json_is_number(iat) || json_number_value(iat) > t + lee))
        return "the token was issued in the future (iat)";
    if (!str_is(json_object_get(c, "iss"), j->issuer))
        return "wrong issuer";
    int aud_ok = str_is(aud, j->audience);
    if (json_is_array(aud)) {
        size_t i;
        json_t *v;
        json_array_foreach(aud, i, v)
        {
            if (!json_is_string(v))
                return "aud holds something else than strings";
            aud_ok |= str_is(v, j->audience);
        }
    }
    if (!aud_ok)
        return "wrong audience";
    if (!json_is_string(sub) || json_string_length(sub) == 0)
        return "sub missing or not a string";
    return NULL;
}

/* ---- a token ---- */

static json_t *load_object(const unsigned char *s, size_t n)
{
    json_t *v = json_loadb((const char *)s, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    if (v != NULL && !json_is_object(v)) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

const char *canal__jwt_verify(const struct canal__jwt *j, const char *tok, size_t len, int64_t now, json_t **claims)
{
    *claims = NULL;
    if (len > CANAL_JWT_MAX_LENGTH)
        return "the token is too long";
    const char *d1 = memchr(tok, '.', len);
    const char *d2 = d1 ? memchr(d1 + 1, '.', (size_t)(tok + len - d1 - 1)) : NULL;
    if (d2 == NULL || memchr(d2 + 1, '.', (size_t)(tok + len - d2 - 1)) != NULL)
        return "not a JWS compact serialization (three segments)";
    unsigned char buf[CANAL_JWT_MAX_LENGTH];
    size_t hlen, plen, slen;
    unsigned char *h = buf, *p, *s;
    if (canal__b64_decode(tok, (size_t)(d1 - tok), 1, h, &hlen) != 0)
        return "the header is not unpadded base64url";
    p = h + hlen;
    if (canal__b64_decode(d1 + 1, (size_t)(d2 - d1 - 1), 1, p, &plen) != 0)
        return "the payload is not unpadded base64url";
    s = p + plen;
    if (canal__b64_decode(d2 + 1, (size_t)(tok + len - d2 - 1), 1, s, &slen) != 0)
        return "the signature is not unpadded base64url";

    json_t *hdr = load_object(h, hlen);
    if (hdr == NULL)
        return "the header is not a JSON object";
    const json_t *alg = json_object_get(hdr, "alg");
    canal_jwt_alg_t a = str_is(alg, "HS256") ? CANAL_JWT_HS256
                        : str_is(alg, "RS256") ? CANAL_JWT_RS256
                        : str_is(alg, "ES256") ? CANAL_JWT_ES256
                                               : CANAL_JWT_NONE;
    int crit = json_object_get(hdr, "crit") != NULL || json_object_get(hdr, "b64") != NULL;
    /* The keys of the token's algorithm only: the one there is, whatever the kid; of several,
     * the one the kid names. */
    const json_t *kid = json_object_get(hdr, "kid");
    const struct canal__jwt_key *k = NULL, *named = NULL;
    size_t same = 0;
    for (size_t i = 0; a != CANAL_JWT_NONE && i < j->nkeys; i++)
        if (j->keys[i].alg == a) {
            same++;
            k = &j->keys[i];
            if (k->kid != NULL && str_is(kid, k->kid)) /* whole, as bytes: a \u0000 is a character */
                named = k;
        }
    if (same > 1)
        k = named;
    json_decref(hdr);
    if (same == 0)
        return "the algorithm is not accepted here";
    if (k == NULL)
        return "no key of the algorithm has the kid";
    if (crit)
        return "crit and b64 are not understood";
    size_t signed_len = (size_t)(d2 - tok);
    int ok = a == CANAL_JWT_HS256   ? verify_hs256(k, tok, signed_len, s, slen)
             : a == CANAL_JWT_RS256 ? verify_evp(k, tok, signed_len, s, slen)
                                    : verify_es256(k, tok, signed_len, s, slen);
    if (!ok)
        return "bad signature";
    json_t *c = load_object(p, plen);
    if (c == NULL)
        return "the payload is not a JSON object";
    const char *why = check_claims(j, c, now);
    if (why != NULL) {
        json_decref(c);
        return why;
    }
    *claims = c;
    return NULL;
}
