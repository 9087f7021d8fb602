/* SPDX-License-Identifier: MIT */
/*
 * Password hashing: Argon2id through libargon2, in the PHC string format libargon2 writes.
 *
 * A hash is made with 16 random bytes of salt (OpenSSL's RAND_bytes) and a 32-byte tag.
 * Verification reads the string's costs before libargon2 does, so that a hash from a database
 * cannot ask for more than canal_password_cost_t allows (m=4194304 and t=1000 would hold a
 * worker for minutes); libargon2 then recomputes the tag and compares it in constant time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <argon2.h>
#include <openssl/rand.h>
#include "canal/password.h"

#define SALT_LEN 16
#define TAG_LEN 32

static canal_password_cost_t effective(const canal_password_cost_t *c)
{
    canal_password_cost_t e = c != NULL ? *c : (canal_password_cost_t){0};
    if (e.memory_kib == 0)
        e.memory_kib = 19456;
    if (e.passes == 0)
        e.passes = 2;
    if (e.lanes == 0)
        e.lanes = 1;
    return e;
}

static int cost_ok(const canal_password_cost_t *c)
{
    return c->lanes <= 16 && c->passes <= 16 && c->memory_kib >= 8 * c->lanes && c->memory_kib <= 4u * 1024 * 1024;
}

int canal_password_hash(const char *password, size_t len, const canal_password_cost_t *cost, char *out, size_t size,
                        canal_error_info_t *err)
{
    canal_password_cost_t c = effective(cost);
    unsigned char salt[SALT_LEN];
    if (!cost_ok(&c))
        return canal_error_set(err, CANAL_EINVAL, 0, "Argon2id costs out of range: m=%u KiB, t=%u, p=%u", c.memory_kib,
                               c.passes, c.lanes);
    if (password == NULL || len > CANAL_PASSWORD_MAX)
        return canal_error_set(err, CANAL_EINVAL, 0, "a password of at most %d bytes", CANAL_PASSWORD_MAX);
    size_t need = argon2_encodedlen(c.passes, c.memory_kib, c.lanes, SALT_LEN, TAG_LEN, Argon2_id);
    if (out == NULL || size < need)
        return canal_error_set(err, CANAL_ELIMIT, 0, "the hash needs %zu bytes", need);
    if (RAND_bytes(salt, sizeof(salt)) != 1)
        return canal_error_set(err, CANAL_ESYS, 0, "no random bytes for the salt");
    int rc = argon2id_hash_encoded(c.passes, c.memory_kib, c.lanes, password, len, salt, SALT_LEN, TAG_LEN, out, size);
    if (rc != ARGON2_OK)
        return canal_error_set(err, rc == ARGON2_MEMORY_ALLOCATION_ERROR ? CANAL_ENOMEM : CANAL_EINVAL, 0, "Argon2id: %s",
                               argon2_error_message(rc));
    return 0;
}

/* The costs and the lengths of salt and tag of an Argon2id PHC string of version 19, read
 * strictly: 0, or -1 for anything else */
static int parse(const char *hash, canal_password_cost_t *c, size_t *salt, size_t *tag)
{
    int at = 0;
    unsigned m, t, p;
    if (strncmp(hash, "$argon2id$v=19$", 15) != 0 ||
        sscanf(hash + 15, "m=%10u,t=%10u,p=%10u$%n", &m, &t, &p, &at) != 3 || at == 0)
        return -1;
    const char *s = hash + 15 + at, *dollar = strchr(s, '$');
    if (dollar == NULL)
        return -1;
    *c = (canal_password_cost_t){m, t, p};
    *salt = (size_t)(dollar - s) * 3 / 4; /* unpadded base64 */
    *tag = strlen(dollar + 1) * 3 / 4;
    return 0;
}

canal_password_result_t canal_password_verify(const char *hash, const char *password, size_t len,
                                              const canal_password_cost_t *cost)
{
    canal_password_cost_t h, now = effective(cost);
    size_t salt, tag;
    if (hash == NULL || password == NULL || len > CANAL_PASSWORD_MAX || strlen(hash) >= CANAL_PASSWORD_HASH_MAX ||
        parse(hash, &h, &salt, &tag) != 0 || h.passes == 0 || h.lanes == 0 || !cost_ok(&h))
        return CANAL_PASSWORD_WRONG;
    if (argon2id_verify(hash, password, len) != ARGON2_OK)
        return CANAL_PASSWORD_WRONG;
    int same = h.memory_kib == now.memory_kib && h.passes == now.passes && h.lanes == now.lanes && salt >= SALT_LEN &&
               tag >= TAG_LEN;
    return same ? CANAL_PASSWORD_OK : CANAL_PASSWORD_REHASH;
}
