/* SPDX-License-Identifier: MIT */
/*
 * The models feature's calls shared by its files (schema.c, bind.c, form.c, cookie.c), and by
 * the features above it (openapi).
 */
#ifndef CANAL_MODELS_INTERNAL_H
#define CANAL_MODELS_INTERNAL_H

#include "core/core.h"
#include <openssl/evp.h>

/* schema.c and bind.c: a registered schema, checked and pre-parsed (canal/schema.h) */
union canal__val {
    int32_t i32;
    int64_t i64;
    double d;
    int b;
    int e;
    canal_str_t s;
    const char *cs;
};
struct canal__regex; /* router/regex_internal.h */
struct canal__mfield {
    const canal_field_t *f;
    const struct canal__model *nested; /* objects and arrays of objects: the field's schema */
    struct canal__regex *re;           /* the pattern, on the whole value, or NULL */
    int has_def;
    union canal__val defv;             /* the parsed default */
};
struct canal__model {
    const canal_schema_t *schema;
    struct canal__mfield *fields;      /* one per field, in table order */
    size_t nfields;
    int body;                          /* some field comes from the body */
};
/* registers s (and what it nests) with app once: 0, or a canal error with err set */
int canal__model_register(canal_app_t *app, const canal_schema_t *s, const struct canal__model **out,
                          canal_error_info_t *err);
const struct canal__model *canal__model_find(const canal_app_t *app, const canal_schema_t *s);
/* every schema registered (its count; *list borrowed) */
size_t canal__models_all(const canal_app_t *app, struct canal__model *const **list);
/* the size of a member of type t (objects: nested's size) */
size_t canal__type_size(canal_type_t t, const canal_schema_t *nested);
/* bind.c: checks that m's route fields are route values of r, of the type its constraints say */
int canal__model_check_route(const struct canal__model *m, const canal_route_t *r, canal_error_info_t *err);
/* bind.c: parses and checks a field's default and example at registration */
int canal__model_field_values(const canal_schema_t *s, const canal_field_t *f, struct canal__mfield *mf,
                              canal_error_info_t *err);


/* cookie.c: RFC 9110 5.6.2 tchar (cookie names, form part header names and parameters) */
int canal__is_tchar(unsigned char c);

/* signed.c: HMAC-SHA-256 with a key hashed once (canal__hmac_key(), NULL if OpenSSL cannot;
 * EVP_MAC_CTX_free() frees it), then the MAC of a then b (blen may be 0) into out: 0, or -1
 * when out of memory. The keyed context is only read, so every thread may use it at once. */
#define CANAL__HMAC_LEN 32
EVP_MAC_CTX *canal__hmac_key(const void *key, size_t len);
int canal__hmac(const EVP_MAC_CTX *keyed, const void *a, size_t alen, const void *b, size_t blen,
                unsigned char out[CANAL__HMAC_LEN]);

#endif
