/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the JWT verifier and the base64 decoders under it (lib/security/jwt.c), on
 * any bytes. Each input is checked as a Bearer token against an HS256 key, and decoded as
 * base64url and as padded base64 (what Basic credentials are). Oracles: a token accepted has an
 * object of claims with sub and exp (the seed is signed with the key), a refused one none; a successful base64
 * decode re-encodes (OpenSSL's EVP_EncodeBlock) to exactly the input, so each byte string has
 * one spelling only.
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <assert.h>
#include <string.h>
#include <openssl/evp.h>
#include "security/security.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct canal__jwt jwt;
static int ready;

static void check_b64(const uint8_t *data, size_t size, int url)
{
    static unsigned char out[CANAL_JWT_MAX_LENGTH + 3], enc[CANAL_JWT_MAX_LENGTH * 2 + 8];
    size_t n;
    if (size > CANAL_JWT_MAX_LENGTH || canal__b64_decode((const char *)data, size, url, out, &n) != 0)
        return;
    int m = EVP_EncodeBlock(enc, out, (int)n);
    if (url) {
        while (m > 0 && enc[m - 1] == '=')
            m--;
        for (int i = 0; i < m; i++)
            enc[i] = enc[i] == '+' ? '-' : enc[i] == '/' ? '_' : enc[i];
    }
    assert((size_t)m == size && memcmp(enc, data, size) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        canal_jwt_config_t cfg = {.keys = {{.alg = CANAL_JWT_HS256, .secret = "0123456789abcdef0123456789abcdef",
                                            .secret_len = 32}},
                                  .issuer = "https://issuer.test", .audience = "canal-test"};
        assert(canal__jwt_init(&jwt, &cfg, NULL) == 0);
        ready = 1;
    }
    json_t *claims = NULL;
    const char *why = canal__jwt_verify(&jwt, (const char *)data, size, 1700000000, &claims);
    /* accepted (the seed is signed with the key): then its claims are what was checked */
    assert(why != NULL ? claims == NULL
                       : json_is_object(claims) && json_is_string(json_object_get(claims, "sub")) &&
                             json_is_number(json_object_get(claims, "exp")));
    json_decref(claims);
    check_b64(data, size, 1);
    check_b64(data, size, 0);
    return 0;
}
