/* SPDX-License-Identifier: MIT */
/*
 * The JWT verifier (lib/security/jwt.c) on tokens made by an independent implementation,
 * and the signer's tokens read by that implementation and by canal's verifier;
 * Debian's python3-jwt (PyJWT), at a fixed "now"; keys made by openssl. (HS256 keyed with the
 * RS256 public key, which PyJWT refuses to make, is built by hand in test/e2e/auth.sh.) The HTTP side (the
 * Authorization field, challenges, 401/403/400, API key and Basic) is test/e2e/auth.sh.
 */
#include "test.h"
#include "security/security.h"

#define NOW 1700000000
static char dir[] = "/tmp/canal-auth-test.XXXXXX";
static struct canal__jwt hs, rs, es;

/* A token from PyJWT: alg, the key file, then JSON merged into the standard claims. */
static char *pyjwt(const char *alg, const char *keyfile, const char *extra)
{
    char cmd[4096], *out = calloc(1, 16384);
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 -c 'import jwt, json, sys\n"
             "c = {\"iss\": \"https://issuer.test\", \"aud\": \"canal-test\", \"sub\": \"u\", \"exp\": %d, \"iat\": %d}\n"
             "c.update(json.loads(sys.argv[3]))\n"
             "print(jwt.encode({k: v for k, v in c.items() if v is not None}, open(sys.argv[2], \"rb\").read(), sys.argv[1]))' %s %s/%s '%s'",
             NOW + 300, NOW, alg, dir, keyfile, extra);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(out, 16384, p));
    pclose(p);
    out[strcspn(out, "\n")] = '\0';
    return out;
}

static const char *verify(const struct canal__jwt *j, const char *tok)
{
    json_t *claims = NULL;
    const char *why = canal__jwt_verify(j, tok, strlen(tok), NOW, &claims);
    assert_true(why != NULL ? claims == NULL : json_is_object(claims));
    json_decref(claims);
    return why;
}

static int setup(void **state)
{
    char cmd[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof(cmd),
             "cd %s && printf 0123456789abcdef0123456789abcdef > hs && "
             "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa 2>/dev/null && "
             "openssl pkey -in rsa -pubout -out rsa.pub && "
             "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec 2>/dev/null && "
             "openssl pkey -in ec -pubout -out ec.pub", dir);
    assert_int_equal(system(cmd), 0);
    char rsp[256], esp[256];
    snprintf(rsp, sizeof(rsp), "%s/rsa.pub", dir);
    snprintf(esp, sizeof(esp), "%s/ec.pub", dir);
    canal_jwt_config_t c = {.issuer = "https://issuer.test", .audience = "canal-test", .leeway = 30};
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = "0123456789abcdef0123456789abcdef", .secret_len = 32};
    assert_int_equal(canal__jwt_init(&hs, &c, NULL), 0);
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_RS256, .pem_file = rsp};
    assert_int_equal(canal__jwt_init(&rs, &c, NULL), 0);
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_ES256, .pem_file = esp};
    assert_int_equal(canal__jwt_init(&es, &c, NULL), 0);
    return 0;
}

static int teardown(void **state)
{
    char cmd[256];
    canal__jwt_dispose(&hs);
    canal__jwt_dispose(&rs);
    canal__jwt_dispose(&es);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd);
}

/* Each algorithm verifies its own tokens, and only its own. */
static void test_algorithms(void **state)
{
    char *h = pyjwt("HS256", "hs", "{}"), *r = pyjwt("RS256", "rsa", "{}"), *e = pyjwt("ES256", "ec", "{}");
    assert_null(verify(&hs, h));
    assert_null(verify(&rs, r));
    assert_null(verify(&es, e));
    assert_non_null(verify(&hs, r));
    assert_non_null(verify(&rs, h));
    assert_non_null(verify(&rs, e));
    assert_non_null(verify(&es, r));
    free(h), free(r), free(e);
}

static void test_claims(void **state)
{
    static const struct {
        const char *extra, *why;
    } cases[] = {
        {"{\"exp\": 1699999970}", "the token has expired"},          /* exp = now - leeway */
        {"{\"exp\": 1699999971}", NULL},                             /* within the leeway */
        {"{\"exp\": null}", "exp missing or not a number"},
        {"{\"exp\": \"1800000000\"}", "exp missing or not a number"},
        {"{\"nbf\": 1700000031}", "the token is not valid yet (nbf)"},
        {"{\"nbf\": 1700000030}", NULL},
        {"{\"iat\": 1700000300}", "the token was issued in the future (iat)"},
        {"{\"iss\": \"https://issuer.test/\"}", "wrong issuer"},
        {"{\"iss\": \"https://issuer.tes\"}", "wrong issuer"},
        {"{\"iss\": \"HTTPS://issuer.test\"}", "wrong issuer"},
        {"{\"aud\": [\"a\", \"canal-test\"]}", NULL},
        {"{\"aud\": [\"a\", 1, \"canal-test\"]}", "aud holds something else than strings"},
        {"{\"aud\": \"canal-tes\"}", "wrong audience"},
        {"{\"aud\": null}", "wrong audience"},
        {"{\"sub\": null}", "sub missing or not a string"},
        {"{\"sub\": 7}", "sub missing or not a string"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *t = pyjwt("HS256", "hs", cases[i].extra);
        const char *why = verify(&hs, t);
        if (cases[i].why == NULL)
            assert_null(why);
        else
            assert_string_equal(why, cases[i].why);
        free(t);
    }
}

/* Hand-made variations of a good token: the signature stripped, changed, a DER ES256 one,
 * padding, a fourth segment, alg none, a huge token. */
static void test_malformed(void **state)
{
    char *t = pyjwt("HS256", "hs", "{}"), buf[16384];
    char *dot = strrchr(t, '.');
    snprintf(buf, sizeof(buf), "%.*s.", (int)(dot - t), t);
    assert_string_equal(verify(&hs, buf), "bad signature");
    snprintf(buf, sizeof(buf), "%s=", t);
    assert_non_null(verify(&hs, buf));
    snprintf(buf, sizeof(buf), "%s.", t);
    assert_non_null(verify(&hs, buf));
    snprintf(buf, sizeof(buf), "%s", t);
    buf[strlen(buf) - 2] ^= 1;
    assert_non_null(verify(&hs, buf));
    /* {"alg":"none"} and {"alg":"NONE"} with the good payload and no signature */
    snprintf(buf, sizeof(buf), "eyJhbGciOiJub25lIn0.%.*s.", (int)(dot - strchr(t, '.') - 1), strchr(t, '.') + 1);
    assert_string_equal(verify(&hs, buf), "the algorithm is not accepted here");
    snprintf(buf, sizeof(buf), "eyJhbGciOiJOT05FIn0.%.*s.", (int)(dot - strchr(t, '.') - 1), strchr(t, '.') + 1);
    assert_string_equal(verify(&hs, buf), "the algorithm is not accepted here");
    char *huge = malloc(CANAL_JWT_MAX_LENGTH + 2);
    memset(huge, 'a', CANAL_JWT_MAX_LENGTH + 1);
    huge[CANAL_JWT_MAX_LENGTH + 1] = '\0';
    assert_string_equal(verify(&hs, huge), "the token is too long");
    free(huge);
    free(t);
}

static void test_base64(void **state)
{
    unsigned char out[16];
    size_t n;
    assert_int_equal(canal__b64_decode("YWI", 3, 1, out, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(canal__b64_decode("YWJ", 3, 1, out, &n), -1);  /* unused bits set */
    assert_int_equal(canal__b64_decode("YWI=", 4, 1, out, &n), -1); /* padded base64url */
    assert_int_equal(canal__b64_decode("YWI=", 4, 0, out, &n), 0);
    assert_int_equal(canal__b64_decode("YWI", 3, 0, out, &n), -1);  /* Basic is padded */
    assert_int_equal(canal__b64_decode("Y", 1, 1, out, &n), -1);
    assert_int_equal(canal__b64_decode("+/8=", 4, 0, out, &n), 0);
    assert_int_equal(canal__b64_decode("-_8", 3, 1, out, &n), 0);
    assert_int_equal(canal__b64_decode("+/8", 3, 1, out, &n), -1);
}

static void test_config(void **state)
{
    struct canal__jwt j;
    canal_error_info_t err;
    canal_jwt_config_t c = {.issuer = "i", .audience = "a"};
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = "short", .secret_len = 5};
    assert_int_equal(canal__jwt_init(&j, &c, &err), CANAL_EINVAL);
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0B", .secret_len = 47};
    assert_int_equal(canal__jwt_init(&j, &c, &err), CANAL_EINVAL);
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_RS256, .pem_file = "/nonexistent"};
    assert_int_equal(canal__jwt_init(&j, &c, &err), CANAL_EINVAL);
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = "0123456789abcdef0123456789abcdef", .secret_len = 32};
    c.leeway = 61;
    assert_int_equal(canal__jwt_init(&j, &c, &err), CANAL_EINVAL);
}

/* JWKS files made by PyJWT's to_jwk (test/unit/jwks_make.py): each key bound to one
 * algorithm, kid choosing among keys of the token's algorithm only, the attack cases, and
 * the sets a scheme must refuse to be made of. */
static void test_jwks(void **state)
{
    char cmd[512], path[256], line[8192];
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/test/unit/jwks_make.py %s", CANAL_SRCDIR, dir);
    assert_int_equal(system(cmd), 0);
    canal_jwt_config_t c = {.issuer = "https://issuer.test", .audience = "canal-test", .jwks_file = path};
    struct canal__jwt j;
    canal_error_info_t err;
    snprintf(path, sizeof(path), "%s/jwks.json", dir);
    assert_int_equal(canal__jwt_init(&j, &c, &err), 0);
    assert_int_equal(j.nkeys, 4); /* the "use": "enc" and the RS512 keys are left out */
    snprintf(path, sizeof(path), "%s/tokens", dir);
    FILE *f = fopen(path, "r");
    size_t n = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        char *tok = strchr(line, ' ');
        *tok++ = '\0';
        tok[strcspn(tok, "\n")] = '\0';
        if (strncmp(line, "ok-one-rs", 9) == 0)
            continue; /* for the one-key set below */
        const char *why = verify(&j, tok);
        if ((strncmp(line, "ok-", 3) == 0) != (why == NULL))
            fail_msg("%s: %s", line, why ? why : "accepted");
        n++;
    }
    fclose(f);
    assert_int_equal(n, 15);
    canal__jwt_dispose(&j);
    /* one RS256 key with a kid: it verifies whatever kid a token names */
    snprintf(path, sizeof(path), "%s/one-kid.json", dir);
    assert_int_equal(canal__jwt_init(&j, &c, &err), 0);
    snprintf(cmd, sizeof(cmd), "grep '^ok-one-rs-any-kid ' %s/tokens | cut -d' ' -f2", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(fgets(line, sizeof(line), p));
    pclose(p);
    line[strcspn(line, "\n")] = '\0';
    assert_null(verify(&j, line));
    canal__jwt_dispose(&j);
    /* a configured PEM RS256 key (no kid) beside a JWKS RS256 key: ambiguous, refused */
    char rsp[256];
    snprintf(rsp, sizeof(rsp), "%s/rsa.pub", dir);
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_RS256, .pem_file = rsp};
    assert_int_equal(canal__jwt_init(&j, &c, &err), CANAL_EINVAL);
    c.keys[0] = (canal_jwt_key_t){0};
    static const char *const bad[] = {"alg-of-another-kty", "two-without-kid", "same-kid", "short-oct", "ec-off-curve",
                                      "ec-p384", "rsa-1024", "padded-n", "no-keys", "not-json"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(path, sizeof(path), "%s/bad-%s.json", dir, bad[i]);
        if (canal__jwt_init(&j, &c, &err) != CANAL_EINVAL)
            fail_msg("bad-%s.json was accepted", bad[i]);
    }
    snprintf(path, sizeof(path), "%s/none.json", dir);
    assert_int_equal(canal__jwt_init(&j, &c, &err), CANAL_EINVAL);
}

/* canal_secret_read(): the bytes less one trailing \n or \r\n; empty, missing, too long refused */
static void test_secret_file(void **state)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *want;
        size_t want_len;
        int rc;
    } cases[] = {
        {"secret\n", 7, "secret", 6, 0},       {"secret\r\n", 8, "secret", 6, 0},
        {"secret", 6, "secret", 6, 0},          {"secret\n\n", 8, "secret\n", 7, 0},
        {"sec\0ret\n", 8, "sec\0ret", 7, 0},   {"secret\r", 7, "secret\r", 7, 0},
        {"\n", 1, NULL, 0, CANAL_EINVAL},      {"", 0, NULL, 0, CANAL_EINVAL},
    };
    char path[256];
    snprintf(path, sizeof(path), "%s/secret", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        FILE *f = fopen(path, "wb");
        fwrite(cases[i].bytes, 1, cases[i].len, f);
        fclose(f);
        canal_str_t s = {NULL, 0};
        canal_error_info_t err;
        assert_int_equal(canal_secret_read(path, &s, &err), cases[i].rc);
        if (cases[i].rc == 0) {
            assert_int_equal(s.len, cases[i].want_len);
            assert_memory_equal(s.base, cases[i].want, s.len);
            assert_int_equal(s.base[s.len], '\0');
        } else {
            assert_null(s.base);
        }
        canal_secret_free(&s);
        assert_null(s.base);
    }
    /* exactly the limit (with its newline) is read; one byte more is CANAL_ELIMIT */
    for (int extra = 0; extra < 2; extra++) {
        FILE *f = fopen(path, "wb");
        for (int i = 0; i < CANAL_SECRET_MAX_LENGTH + extra; i++)
            fputc('k', f);
        fputs("\r\n", f);
        fclose(f);
        canal_str_t s = {NULL, 0};
        assert_int_equal(canal_secret_read(path, &s, NULL), extra ? CANAL_ELIMIT : 0);
        assert_int_equal(s.len, extra ? 0 : CANAL_SECRET_MAX_LENGTH);
        canal_secret_free(&s);
    }
    canal_str_t s = {NULL, 0};
    assert_int_equal(canal_secret_read("/nonexistent/secret", &s, NULL), CANAL_ESYS);
}

/* ---- issuing: canal_jwt_sign() ---- */

/* PyJWT's reading of a token canal signed: the claims as JSON text, or "" when it refuses */
static char *pyjwt_decode(const char *alg, const char *keyfile, const char *tok)
{
    char cmd[8192], *out = calloc(1, 16384);
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 -c 'import jwt, json, sys\n"
             "print(json.dumps(jwt.decode(sys.argv[3], open(sys.argv[2], \"rb\").read(), algorithms=[sys.argv[1]],"
             " audience=\"canal-test\", issuer=\"https://issuer.test\"), sort_keys=True))' %s %s/%s '%s' 2>/dev/null",
             alg, dir, keyfile, tok);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    if (fgets(out, 16384, p) == NULL)
        out[0] = '\0';
    pclose(p);
    out[strcspn(out, "\n")] = '\0';
    return out;
}

static canal_jwt_signer_t *signer(canal_jwt_alg_t alg, const char *keyfile, const char *kid)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, keyfile);
    canal_jwt_signer_config_t c = {.alg = alg, .pem_file = path, .kid = kid, .issuer = "https://issuer.test",
                                   .audience = "canal-test", .ttl = 60};
    if (alg == CANAL_JWT_HS256)
        c.secret = "0123456789abcdef0123456789abcdef", c.secret_len = 32;
    canal_error_info_t err;
    canal_jwt_signer_t *s = canal_jwt_signer_create(&c, &err);
    if (s == NULL)
        fail_msg("%s", err.message);
    return s;
}

typedef struct {
    int32_t level;
    const char *team;
} grant_t;
static const canal_field_t grant_fields[] = {
    {.name = "level", CANAL_FIELD(grant_t, level), .type = CANAL_TYPE_INT32},
    {.name = "team", CANAL_FIELD(grant_t, team), .type = CANAL_TYPE_CSTRING},
    {.name = NULL}};
static const canal_schema_t grant_schema = {.name = "Grant", .size = sizeof(grant_t), .fields = grant_fields};

/* Tokens canal signs verify with canal's own verifier and with PyJWT, for each algorithm, and
 * carry what the claims said; a token of one key never verifies with another */
static void test_sign(void **state)
{
    static const struct {
        canal_jwt_alg_t alg;
        const char *name, *priv, *pub;
        struct canal__jwt *verifier;
    } algs[] = {{CANAL_JWT_HS256, "HS256", "hs", "hs", &hs},
                {CANAL_JWT_RS256, "RS256", "rsa", "rsa.pub", &rs},
                {CANAL_JWT_ES256, "ES256", "ec", "ec.pub", &es}};
    json_t *extra = json_pack("{s:[s,s]}", "roles", "admin", "ops");
    grant_t g = {.level = 3, .team = "blue"};
    for (size_t i = 0; i < 3; i++) {
        canal_jwt_signer_t *s = signer(algs[i].alg, algs[i].priv, "k1");
        canal_error_info_t err;
        char *tok = canal_jwt_sign(s, &(canal_jwt_claims_t){.subject = "user-9", .scope = "read write", .jti = 1,
                                                             .extra = extra, .schema = &grant_schema, .obj = &g},
                                   &err);
        if (tok == NULL)
            fail_msg("%s: %s", algs[i].name, err.message);
        json_t *claims = NULL;
        const char *why = canal__jwt_verify(algs[i].verifier, tok, strlen(tok), (int64_t)time(NULL), &claims);
        if (why != NULL)
            fail_msg("%s: canal refuses its own token: %s", algs[i].name, why);
        assert_string_equal(json_string_value(json_object_get(claims, "sub")), "user-9");
        assert_string_equal(json_string_value(json_object_get(claims, "scope")), "read write");
        assert_int_equal(json_integer_value(json_object_get(claims, "exp")) - json_integer_value(json_object_get(claims, "iat")), 60);
        assert_int_equal(strlen(json_string_value(json_object_get(claims, "jti"))), 22);
        assert_int_equal(json_integer_value(json_object_get(claims, "level")), 3);
        assert_string_equal(json_string_value(json_object_get(claims, "team")), "blue");
        json_decref(claims);
        char *py = pyjwt_decode(algs[i].name, algs[i].pub, tok);
        assert_non_null(strstr(py, "\"sub\": \"user-9\""));
        assert_non_null(strstr(py, "\"roles\": [\"admin\", \"ops\"]"));
        assert_non_null(strstr(py, "\"team\": \"blue\""));
        free(py);
        /* another key of the algorithm family never verifies it */
        assert_non_null(canal__jwt_verify(algs[(i + 1) % 3].verifier, tok, strlen(tok), (int64_t)time(NULL), &claims));
        /* two tokens of the same claims differ by their jti */
        char *again = canal_jwt_sign(s, &(canal_jwt_claims_t){.subject = "user-9", .jti = 1}, &err);
        assert_non_null(again);
        assert_string_not_equal(tok, again);
        free(again);
        free(tok);
        canal_jwt_signer_destroy(s);
    }
    json_decref(extra);
}

/* What canal_jwt_signer_create() and canal_jwt_sign() refuse */
static void test_sign_refused(void **state)
{
    canal_error_info_t err;
    char path[256];
    snprintf(path, sizeof(path), "%s/rsa.pub", dir);
    canal_jwt_signer_config_t c = {.alg = CANAL_JWT_RS256, .pem_file = path, .issuer = "i", .audience = "a"};
    assert_null(canal_jwt_signer_create(&c, &err)); /* a public key cannot sign */
    assert_int_equal(err.code, CANAL_EINVAL);
    snprintf(path, sizeof(path), "%s/ec", dir);
    assert_null(canal_jwt_signer_create(&c, &err)); /* an EC key for RS256 */
    assert_int_equal(err.code, CANAL_EINVAL);
    c = (canal_jwt_signer_config_t){.alg = CANAL_JWT_HS256, .secret = "short", .secret_len = 5, .issuer = "i", .audience = "a"};
    assert_null(canal_jwt_signer_create(&c, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    c.secret = "0123456789abcdef0123456789abcdef", c.secret_len = 32, c.audience = NULL;
    assert_null(canal_jwt_signer_create(&c, &err));
    c.audience = "a", c.kid = "a\"b";
    assert_null(canal_jwt_signer_create(&c, &err));
    c.kid = NULL, c.alg = CANAL_JWT_NONE;
    assert_null(canal_jwt_signer_create(&c, &err));
    c.alg = CANAL_JWT_HS256;
    canal_jwt_signer_t *s = canal_jwt_signer_create(&c, &err);
    assert_non_null(s);
    assert_null(canal_jwt_sign(s, &(canal_jwt_claims_t){.subject = ""}, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    json_t *bad = json_pack("{s:s}", "sub", "admin"); /* the signer's claims are never overwritten */
    assert_null(canal_jwt_sign(s, &(canal_jwt_claims_t){.subject = "u", .extra = bad}, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    assert_non_null(strstr(err.message, "\"sub\""));
    json_decref(bad);
    bad = json_array();
    assert_null(canal_jwt_sign(s, &(canal_jwt_claims_t){.subject = "u", .extra = bad}, &err));
    json_decref(bad);
    assert_null(canal_jwt_sign(s, &(canal_jwt_claims_t){.subject = "u", .schema = &grant_schema}, &err));
    assert_null(canal_jwt_sign(s, &(canal_jwt_claims_t){.subject = "u\xff"}, &err)); /* not UTF-8 */
    canal_jwt_signer_destroy(s);
    canal_jwt_signer_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_algorithms), cmocka_unit_test(test_claims),
        cmocka_unit_test(test_malformed),  cmocka_unit_test(test_base64),    cmocka_unit_test(test_config),
        cmocka_unit_test(test_secret_file), cmocka_unit_test(test_jwks),
        cmocka_unit_test(test_sign),        cmocka_unit_test(test_sign_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
