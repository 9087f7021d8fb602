/* SPDX-License-Identifier: MIT */
/**
 * @file canal/password.h
 * Password hashing for logins: Argon2id (RFC 9106, Debian's libargon2), its parameters and a
 * random salt kept in the PHC string format, so a stored hash says how it was made:
 *
 *     $argon2id$v=19$m=19456,t=2,p=1$<salt, base64>$<hash, base64>
 *
 * Store what canal_password_hash() writes; at a login, canal_password_verify() compares in
 * constant time and says when a hash was made with other costs than today's, so the app can
 * store a new one while it has the password in hand (docs/security.md shows a whole login).
 *
 * Both calls take tens of milliseconds by design (the defaults: about 20 MiB and two passes),
 * which a worker's event loop must not wait for: call them from canal_offload()'s work.
 */
#ifndef CANAL_PASSWORD_H
#define CANAL_PASSWORD_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Argon2id's costs. A zero field takes its default: OWASP's first choice (2023), 19 MiB of
 * memory, two passes, one lane. */
typedef struct canal_password_cost {
    uint32_t memory_kib; /**< memory per hash, in KiB (8 * lanes to 4 GiB; default 19456) */
    uint32_t passes;     /**< passes over the memory (1 to 16; default 2) */
    uint32_t lanes;      /**< parallel lanes, each its own thread in libargon2 (1 to 16;
                              default 1) */
} canal_password_cost_t;

/** Room for any hash canal_password_hash() writes, with its NUL. */
#define CANAL_PASSWORD_HASH_MAX 128
/** The longest password taken, in bytes. */
#define CANAL_PASSWORD_MAX 4096

/**
 * Hashes password (len bytes, any bytes; the app decides about Unicode normalisation) with
 * cost (NULL: the defaults) and 16 random bytes of salt, into out as a PHC string. Returns 0,
 * or CANAL_EINVAL (a cost outside its range, len over CANAL_PASSWORD_MAX), CANAL_ELIMIT (size
 * below what the string needs), CANAL_ENOMEM, CANAL_ESYS (no random bytes); err (if given) says
 * which.
 */
CANAL_API int canal_password_hash(const char *password, size_t len, const canal_password_cost_t *cost, char *out,
                                  size_t size, canal_error_info_t *err);

/** What canal_password_verify() found. */
typedef enum canal_password_result {
    CANAL_PASSWORD_WRONG = 0, /**< not the password, or hash is not an Argon2id PHC string */
    CANAL_PASSWORD_OK,        /**< the password, hashed with today's costs */
    CANAL_PASSWORD_REHASH     /**< the password, but hashed with other costs than cost (or a
                                   shorter salt or hash than canal makes): hash it again and
                                   store the new string */
} canal_password_result_t;

/**
 * Checks password (len bytes) against hash, a PHC string from canal_password_hash() (or any
 * Argon2id string of version 19), in constant time for a given hash. cost is today's (NULL:
 * the defaults), to tell CANAL_PASSWORD_REHASH. A malformed hash, a hash of another algorithm,
 * costs over canal_password_cost_t's ranges and len over CANAL_PASSWORD_MAX are
 * CANAL_PASSWORD_WRONG, never a crash.
 */
CANAL_API canal_password_result_t canal_password_verify(const char *hash, const char *password, size_t len,
                                                        const canal_password_cost_t *cost);

#ifdef __cplusplus
}
#endif

#endif
