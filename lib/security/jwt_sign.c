/* SPDX-License-Identifier: MIT */
/*
 * The JWT signer (canal_jwt_sign()), the verifier's mirror (jwt.c): the same key checks, a
 * signing context initialised once and copied per token (so worker threads sign at once
 * without a lock), the header encoded once. The claims canal vouches for (iss, aud, sub, iat,
 * exp...) are written first and never overwritten by the app's extra or model claims.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include "security/security.h"

struct canal_jwt_signer {
    struct canal__jwt_key key; /* hmac (HS256), or pkey with sign: EVP_DigestSignInit() done
                                  once, copied per token as the verifier does */
    EVP_MD_CTX *sign;
    char *header;              /* base64url of the header, the same for every token */
    char *issuer, *audience;
    unsigned ttl;
};

void canal_jwt_signer_destroy(canal_jwt_signer_t *s)
{
    if (s == NULL)
        return;
    EVP_MAC_CTX_free(s->key.hmac);
    EVP_PKEY_free(s->key.pkey);
    EVP_MD_CTX_free(s->key.verify);
    EVP_MD_CTX_free(s->sign);
    free(s->header);
    free(s->issuer);
    free(s->audience);
    free(s);
}

/* A private key of the signer's algorithm from a PEM file, checked as a verifier checks its
 * public key, with its signing context initialised once */
static int private_key(canal_jwt_signer_t *s, const char *path, canal_error_info_t *err)
{
    const char *alg = s->key.alg == CANAL_JWT_RS256 ? "RS256" : "ES256";
    FILE *f = path != NULL ? fopen(path, "r") : NULL;
    if (f == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "%s: cannot read the key file %s", alg, path ? path : "(none)");
    s->key.pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (s->key.pkey == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "%s: %s holds no private key", alg, path);
    int rc = canal__jwt_pkey_checked(&s->key, path, err);
    if (rc == 0 && ((s->sign = EVP_MD_CTX_new()) == NULL ||
                    EVP_DigestSignInit(s->sign, NULL, EVP_sha256(), NULL, s->key.pkey) != 1))
        rc = canal_error_set(err, CANAL_ENOMEM, 0, "%s: OpenSSL cannot sign with this key", alg);
    return rc;
}

static int kid_ok(const char *kid)
{
    for (const unsigned char *p = (const unsigned char *)kid; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
            return 0;
    return 1;
}

canal_jwt_signer_t *canal_jwt_signer_create(const canal_jwt_signer_config_t *cfg, canal_error_info_t *err)
{
    canal_jwt_signer_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        return NULL;
    }
    s->key.alg = cfg->alg;
    s->ttl = cfg->ttl ? cfg->ttl : 900;
    const char *alg = cfg->alg == CANAL_JWT_HS256 ? "HS256" : cfg->alg == CANAL_JWT_RS256 ? "RS256" : "ES256";
    int rc = 0;
    if (cfg->issuer == NULL || cfg->audience == NULL)
        rc = canal_error_set(err, CANAL_EINVAL, 0, "a JWT signer needs an issuer and an audience");
    else if (cfg->kid != NULL && !kid_ok(cfg->kid))
        rc = canal_error_set(err, CANAL_EINVAL, 0, "a JWT kid may not hold '\"', '\\\\' or control characters");
    else if (cfg->alg == CANAL_JWT_HS256)
        rc = canal__jwt_hmac_key(&s->key, cfg->secret, cfg->secret_len, "", err);
    else if (cfg->alg == CANAL_JWT_RS256 || cfg->alg == CANAL_JWT_ES256)
        rc = private_key(s, cfg->pem_file, err);
    else
        rc = canal_error_set(err, CANAL_EINVAL, 0, "unknown JWT algorithm %d", (int)cfg->alg);
    if (rc == 0) {
        char head[512];
        int n = snprintf(head, sizeof(head), "{\"alg\":\"%s\",\"typ\":\"JWT\"%s%s%s}", alg,
                         cfg->kid ? ",\"kid\":\"" : "", cfg->kid ? cfg->kid : "", cfg->kid ? "\"" : "");
        s->issuer = strdup(cfg->issuer);
        s->audience = strdup(cfg->audience);
        if (n < 0 || (size_t)n >= sizeof(head))
            rc = canal_error_set(err, CANAL_EINVAL, 0, "the JWT kid is too long");
        else if ((s->header = malloc(canal__b64url_len((size_t)n) + 1)) == NULL || s->issuer == NULL ||
                 s->audience == NULL)
            rc = canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        else
            s->header[canal__b64url_encode((const unsigned char *)head, (size_t)n, s->header)] = '\0';
    }
    if (rc != 0) {
        canal_jwt_signer_destroy(s);
        return NULL;
    }
    return s;
}

/* The claims canal writes itself: a member of extra or of the model by one of these names is
 * refused, so that what the signer vouches for is never overwritten by data */
static const char *const own_claims[] = {"iss", "aud", "sub", "iat", "exp", "nbf", "jti", "scope", NULL};

static int merge_claims(json_t *claims, const json_t *more, const char *what, canal_error_info_t *err)
{
    const char *key;
    json_t *v;
    if (!json_is_object(more))
        return canal_error_set(err, CANAL_EINVAL, 0, "JWT %s: not a JSON object", what);
    json_object_foreach((json_t *)more, key, v) {
        for (size_t i = 0; own_claims[i] != NULL; i++)
            if (strcmp(key, own_claims[i]) == 0)
                return canal_error_set(err, CANAL_EINVAL, 0, "JWT %s: \"%s\" is a claim the signer writes", what, key);
        if (json_object_set(claims, key, v) != 0)
            return canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    }
    return 0;
}

/* The model's members as a JSON object, written by the models' writer on a pool of its own */
static json_t *model_claims(const canal_schema_t *schema, const void *obj, canal_error_info_t *err)
{
    h2o_mem_pool_t pool;
    struct canal_jw w;
    const char *body;
    size_t len;
    h2o_mem_init_pool(&pool);
    canal__jw_init(&w, &pool, 256);
    json_t *j = NULL;
    if (canal_jw_model(&w, schema, obj) != 0 || canal_jw_finish(&w, &body, &len) != 0)
        canal_error_set(err, canal_jw_error(&w) ? canal_jw_error(&w) : CANAL_EINVAL, 0, "JWT claims: %s",
                        canal_jw_error_text(&w));
    else if ((j = json_loadb(body, len, 0, NULL)) == NULL)
        canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    h2o_mem_clear_pool(&pool);
    return j;
}

/* The signature of in[0..n) into sig (room for 512 bytes): its length, or 0 */
static size_t sign_bytes(const canal_jwt_signer_t *s, const char *in, size_t n, unsigned char *sig)
{
    if (s->key.alg == CANAL_JWT_HS256)
        return canal__hmac(s->key.hmac, in, n, NULL, 0, sig) == 0 ? CANAL__HMAC_LEN : 0;
    unsigned char der[512];
    size_t dlen = sizeof(der);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md != NULL && EVP_MD_CTX_copy_ex(md, s->sign) == 1 &&
             EVP_DigestSign(md, s->key.alg == CANAL_JWT_RS256 ? sig : der, &dlen, (const unsigned char *)in, n) == 1;
    EVP_MD_CTX_free(md);
    if (!ok)
        return 0;
    if (s->key.alg == CANAL_JWT_RS256)
        return dlen;
    /* ES256: OpenSSL signs DER; JWS wants R||S, 32 bytes each (RFC 7518 3.4) */
    const unsigned char *p = der;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)dlen);
    const BIGNUM *r, *sv;
    if (es == NULL)
        return 0;
    ECDSA_SIG_get0(es, &r, &sv);
    ok = BN_bn2binpad(r, sig, 32) == 32 && BN_bn2binpad(sv, sig + 32, 32) == 32;
    ECDSA_SIG_free(es);
    return ok ? 64 : 0;
}

char *canal_jwt_sign(const canal_jwt_signer_t *s, const canal_jwt_claims_t *c, canal_error_info_t *err)
{
    if (c == NULL || c->subject == NULL || c->subject[0] == '\0') {
        canal_error_set(err, CANAL_EINVAL, 0, "a JWT needs a subject");
        return NULL;
    }
    if (c->schema != NULL && c->obj == NULL) {
        canal_error_set(err, CANAL_EINVAL, 0, "JWT claims: a schema without its struct");
        return NULL;
    }
    json_int_t now = (json_int_t)time(NULL);
    json_t *claims = json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", s->issuer, "aud", s->audience, "sub", c->subject,
                               "iat", now, "exp", now + (json_int_t)(c->ttl ? c->ttl : s->ttl));
    int rc = claims == NULL ? canal_error_set(err, CANAL_EINVAL, 0, "JWT claims: the subject is not UTF-8") : 0;
    if (rc == 0 && c->not_before)
        rc = json_object_set_new(claims, "nbf", json_integer(now + (json_int_t)c->not_before)) ? CANAL_ENOMEM : 0;
    if (rc == 0 && c->jti) {
        unsigned char id[16];
        char text[32];
        if (RAND_bytes(id, sizeof(id)) != 1)
            rc = canal_error_set(err, CANAL_ESYS, 0, "JWT jti: no random bytes");
        else if (json_object_set_new(claims, "jti", json_stringn(text, canal__b64url_encode(id, sizeof(id), text))))
            rc = canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    }
    if (rc == 0 && c->scope != NULL && json_object_set_new(claims, "scope", json_string(c->scope)) != 0)
        rc = canal_error_set(err, CANAL_EINVAL, 0, "JWT scope: not UTF-8");
    if (rc == 0 && c->extra != NULL)
        rc = merge_claims(claims, c->extra, "extra claims", err);
    if (rc == 0 && c->schema != NULL) {
        json_t *m = model_claims(c->schema, c->obj, err);
        rc = m != NULL ? merge_claims(claims, m, "model claims", err) : err->code;
        json_decref(m);
    }
    char *payload = rc == 0 ? json_dumps(claims, JSON_COMPACT) : NULL;
    json_decref(claims);
    if (rc == 0 && payload == NULL)
        rc = canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    if (rc != 0) {
        free(payload);
        return NULL;
    }
    /* header.payload.signature, each base64url */
    size_t hlen = strlen(s->header), plen = strlen(payload), blen = canal__b64url_len(plen);
    char *tok = malloc(hlen + 1 + blen + 1 + canal__b64url_len(512) + 1);
    unsigned char sig[512];
    size_t slen = 0;
    if (tok != NULL) {
        memcpy(tok, s->header, hlen);
        tok[hlen] = '.';
        canal__b64url_encode((const unsigned char *)payload, plen, tok + hlen + 1);
        slen = sign_bytes(s, tok, hlen + 1 + blen, sig);
    }
    free(payload);
    if (tok == NULL || slen == 0) {
        canal_error_set(err, tok == NULL ? CANAL_ENOMEM : CANAL_ESYS, 0, tok == NULL ? NULL : "OpenSSL failed to sign");
        free(tok);
        return NULL;
    }
    size_t at = hlen + 1 + blen;
    tok[at++] = '.';
    at += canal__b64url_encode(sig, slen, tok + at);
    tok[at] = '\0';
    return tok;
}
