/* SPDX-License-Identifier: MIT */
/*
 * The security feature's calls shared by its files (auth.c, jwt.c, headers.c, ...), and by the
 * features above it (openapi).
 */
#ifndef CANAL_SECURITY_INTERNAL_H
#define CANAL_SECURITY_INTERNAL_H

#include "core/core.h"
#include "models/models.h"
#include <openssl/evp.h>
#include "canal/auth.h"
#include "canal/headers.h"

/* jwt.c: the JWT verifier (a canal_auth_jwt() scheme's) and strict base64 */
struct canal__jwt_key {
    canal_jwt_alg_t alg;
    EVP_MAC_CTX *hmac;     /* HS256: HMAC-SHA-256 keyed once; a verification works on a dup */
    EVP_PKEY *pkey;        /* RS256, ES256 */
    EVP_MD_CTX *verify;    /* RS256, ES256: EVP_DigestVerifyInit() done once; a verification
                              works on a copy */
    char *kid;             /* a JWKS key's "kid", or NULL */
};
struct canal__jwt {
    struct canal__jwt_key keys[CANAL_JWT_MAX_KEYS + CANAL_JWKS_MAX_KEYS];
    size_t nkeys;
    char *issuer, *audience, *roles_claim;
    unsigned leeway;
};
int canal__jwt_init(struct canal__jwt *j, const canal_jwt_config_t *cfg, canal_error_info_t *err);
/* jwt.c's key checks, shared with the signer (jwt_sign.c): an HS256 secret keyed into k->hmac;
 * k->pkey of k->alg's type and size, with its verification context. 0 or a canal error. */
int canal__jwt_hmac_key(struct canal__jwt_key *k, const void *secret, size_t len, const char *what,
                        canal_error_info_t *err);
int canal__jwt_pkey_checked(struct canal__jwt_key *k, const char *what, canal_error_info_t *err);
void canal__jwt_dispose(struct canal__jwt *j);
/* NULL and *claims (a new reference) when tok is valid at now; else why not (static text in
 * RFC 6750 error_description characters) */
const char *canal__jwt_verify(const struct canal__jwt *j, const char *tok, size_t len, int64_t now, json_t **claims);
/* auth.c: the scheme and credentials of an Authorization field value ("Bearer abc"): the
 * scheme's name and what follows 1*SP (cred.base NULL: no space after the name) */
void canal__auth_split(canal_str_t value, canal_str_t *scheme, canal_str_t *cred);
/* auth.c, the other parsers of credentials (pure, for fuzz_authz): 1 if s is one RFC 6750
 * b64token; an API key field's value less surrounding SP and HTAB; Basic credentials
 * (padded base64 of UTF-8 "user:password", split at the first ':') decoded into raw (room
 * for cred.len + 1 bytes), 0 with *user and *pass pointing into raw, or -1 */
int canal__b64token(canal_str_t s);
canal_str_t canal__trim_ows(canal_str_t v);
int canal__basic_decode(canal_str_t cred, unsigned char *raw, canal_str_t *user, canal_str_t *pass);

/* auth.c, for openapi.c: a scheme's name and its securitySchemes entry (a new reference) */
const char *canal__auth_name(const canal_auth_t *a);
json_t *canal__auth_openapi_scheme(const canal_auth_t *a);
/* session.c: the name of the sessions' cookie ("sid"), for a session scheme's OpenAPI entry */
const char *canal__sessions_cookie(const canal_sessions_t *s);

#endif
