/* SPDX-License-Identifier: MIT */
/*
 * Password hashing (lib/security/password.c): hashes, verification, the rehash signal, what
 * is refused; and the hashes read by an independent reader, Debian's python3-argon2
 * (argon2-cffi), both ways. Costs are kept small here (the hashing itself is libargon2's).
 */
#include "test.h"
#include <canal.h>

static const canal_password_cost_t small = {.memory_kib = 64, .passes = 1, .lanes = 1};

static void test_hash_verify(void **state)
{
    char h[CANAL_PASSWORD_HASH_MAX], h2[CANAL_PASSWORD_HASH_MAX];
    canal_error_info_t err;
    assert_int_equal(canal_password_hash("correct horse", 13, &small, h, sizeof(h), &err), 0);
    assert_memory_equal(h, "$argon2id$v=19$m=64,t=1,p=1$", 28);
    assert_int_equal(canal_password_verify(h, "correct horse", 13, &small), CANAL_PASSWORD_OK);
    assert_int_equal(canal_password_verify(h, "correct horsE", 13, &small), CANAL_PASSWORD_WRONG);
    assert_int_equal(canal_password_verify(h, "correct hors", 12, &small), CANAL_PASSWORD_WRONG);
    assert_int_equal(canal_password_verify(h, "", 0, &small), CANAL_PASSWORD_WRONG);
    /* the same password twice: two salts, two strings, both verify */
    assert_int_equal(canal_password_hash("correct horse", 13, &small, h2, sizeof(h2), &err), 0);
    assert_string_not_equal(h, h2);
    assert_int_equal(canal_password_verify(h2, "correct horse", 13, &small), CANAL_PASSWORD_OK);
    /* any bytes: a NUL inside, UTF-8 */
    assert_int_equal(canal_password_hash("a\0b", 3, &small, h, sizeof(h), &err), 0);
    assert_int_equal(canal_password_verify(h, "a\0b", 3, &small), CANAL_PASSWORD_OK);
    assert_int_equal(canal_password_verify(h, "a", 1, &small), CANAL_PASSWORD_WRONG);
}

/* A hash made with other costs than today's verifies and asks to be made again */
static void test_rehash(void **state)
{
    char h[CANAL_PASSWORD_HASH_MAX];
    canal_password_cost_t more = {.memory_kib = 128, .passes = 2, .lanes = 1};
    assert_int_equal(canal_password_hash("pw", 2, &small, h, sizeof(h), NULL), 0);
    assert_int_equal(canal_password_verify(h, "pw", 2, &more), CANAL_PASSWORD_REHASH);
    assert_int_equal(canal_password_verify(h, "px", 2, &more), CANAL_PASSWORD_WRONG);
    assert_int_equal(canal_password_hash("pw", 2, &more, h, sizeof(h), NULL), 0);
    assert_int_equal(canal_password_verify(h, "pw", 2, &more), CANAL_PASSWORD_OK);
    /* the defaults */
    assert_int_equal(canal_password_hash("pw", 2, NULL, h, sizeof(h), NULL), 0);
    assert_memory_equal(h, "$argon2id$v=19$m=19456,t=2,p=1$", 31);
    assert_int_equal(canal_password_verify(h, "pw", 2, NULL), CANAL_PASSWORD_OK);
    assert_int_equal(canal_password_verify(h, "pw", 2, &small), CANAL_PASSWORD_REHASH);
}

static void test_refused(void **state)
{
    char h[CANAL_PASSWORD_HASH_MAX];
    canal_error_info_t err;
    assert_int_equal(canal_password_hash("pw", 2, &small, h, 20, &err), CANAL_ELIMIT);
    assert_int_equal(canal_password_hash("pw", 2, &(canal_password_cost_t){.lanes = 17}, h, sizeof(h), &err),
                     CANAL_EINVAL);
    assert_int_equal(canal_password_hash("pw", 2, &(canal_password_cost_t){.memory_kib = 4, .lanes = 1}, h, sizeof(h),
                                         &err),
                     CANAL_EINVAL);
    char *big = calloc(1, CANAL_PASSWORD_MAX + 1);
    assert_int_equal(canal_password_hash(big, CANAL_PASSWORD_MAX + 1, &small, h, sizeof(h), &err), CANAL_EINVAL);
    assert_int_equal(canal_password_hash(big, CANAL_PASSWORD_MAX, &small, h, sizeof(h), &err), 0);
    assert_int_equal(canal_password_verify(h, big, CANAL_PASSWORD_MAX, &small), CANAL_PASSWORD_OK);
    assert_int_equal(canal_password_verify(h, big, CANAL_PASSWORD_MAX + 1, &small), CANAL_PASSWORD_WRONG);
    free(big);
    /* hashes that are not canal's: wrong, never a crash or a minutes-long hash */
    static const char *const bad[] = {
        "",
        "$argon2i$v=19$m=64,t=1,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
        "$argon2id$v=16$m=64,t=1,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
        "$argon2id$v=19$m=4194305,t=1,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
        "$argon2id$v=19$m=64,t=1000,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
        "$argon2id$v=19$m=64,t=0,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
        "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ",
        "$argon2id$v=19$m=64,t=1,p=1$$",
        "$argon2id$v=19$m=-1,t=1,p=1$c29tZXNhbHQ$iekC",
        "$argon2id$v=19$m=99999999999,t=1,p=1$c29tZXNhbHQ$iekC",
        "$2b$12$abcdefghijklmnopqrstuv",
        "plain text",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(canal_password_verify(bad[i], "pw", 2, &small), CANAL_PASSWORD_WRONG);
    assert_int_equal(canal_password_verify(NULL, "pw", 2, &small), CANAL_PASSWORD_WRONG);
}

/* argon2-cffi verifies canal's hash, and canal verifies argon2-cffi's */
static void test_independent(void **state)
{
    if (system("/usr/bin/python3 -c 'import argon2' 2>/dev/null") != 0) {
        printf("SKIP python3-argon2 missing (apt-get install python3-argon2: .ci/install-deps)\n");
        skip();
    }
    char h[CANAL_PASSWORD_HASH_MAX], cmd[1024], out[256] = "";
    assert_int_equal(canal_password_hash("s3cret pässword", 16, &small, h, sizeof(h), NULL), 0);
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 -c 'import argon2, sys\n"
             "ph = argon2.PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)\n"
             "print(ph.verify(sys.argv[1], \"s3cret p\\u00e4ssword\"))\n"
             "print(ph.hash(\"from python\"))' '%s'",
             h);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(out, sizeof(out), p));
    assert_string_equal(out, "True\n");
    assert_non_null(fgets(out, sizeof(out), p));
    pclose(p);
    out[strcspn(out, "\n")] = '\0';
    assert_memory_equal(out, "$argon2id$v=19$m=64,t=1,p=1$", 28);
    /* argon2-cffi 21's tag is 16 bytes, canal's 32: the password, to be hashed again */
    assert_int_equal(canal_password_verify(out, "from python", 11, &small), CANAL_PASSWORD_REHASH);
    assert_int_equal(canal_password_verify(out, "from pythoN", 11, &small), CANAL_PASSWORD_WRONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_verify),
        cmocka_unit_test(test_rehash),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
