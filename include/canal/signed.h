/* SPDX-License-Identifier: MIT */
/**
 * @file canal/signed.h
 * Values signed with HMAC-SHA256, with key rotation (a part of the models feature): for
 * cookies (canal_req_cookie_signed()), sessions and anything else a client must hand back
 * unchanged. docs/security.md, "Cookies and sessions".
 */
#ifndef CANAL_SIGNED_H
#define CANAL_SIGNED_H

#include <stddef.h>
#include <stdint.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A set of HMAC-SHA256 keys: the first signs, every one verifies (key rotation: put the new
 * key first and keep the old ones until their values have expired). Opaque; immutable once
 * made, so it may be used from every thread at once.
 */
typedef struct canal_signer canal_signer_t;

/** The most keys a signer holds. */
#define CANAL_SIGNER_MAX_KEYS 8

/**
 * Makes a signer of nkeys keys (1 to CANAL_SIGNER_MAX_KEYS, each at least 16 bytes; 32
 * random bytes are right), which are copied. NULL with err (if given) filled: CANAL_EINVAL
 * for a bad count or a short key, CANAL_ENOMEM.
 */
CANAL_API canal_signer_t *canal_signer_create(const canal_str_t *keys, size_t nkeys, canal_error_info_t *err);

/** Wipes and frees the keys. NULL is a no-op. */
CANAL_API void canal_signer_destroy(canal_signer_t *s);

/** The length of the signed value of content_len bytes (canal_signer_sign()). */
CANAL_API size_t canal_signed_length(size_t content_len);

/**
 * Signs content for a purpose (a cookie's name: a value signed for one cookie does not verify
 * as another's). Writes base64url(content) "." base64url(HMAC-SHA256(key, purpose NUL
 * base64url(content))), unpadded, into out (at least canal_signed_length() + 1 bytes,
 * NUL-terminated): cookie-octets only. Returns the length, or CANAL_ELIMIT if size is short.
 */
CANAL_API int canal_signer_sign(const canal_signer_t *s, const char *purpose, canal_str_t content,
                                char *out, size_t size);

/**
 * Verifies a signed value for purpose with each key in turn (the MAC compared in constant
 * time, CRYPTO_memcmp) and decodes its content into out (size bytes; at least the value's
 * length is always enough). Returns the content's length, or CANAL_EINVAL when the value
 * does not verify with any key (changed, truncated, extended, another key or purpose, not
 * the format) and CANAL_ELIMIT when out is too small.
 */
CANAL_API int canal_signer_verify(const canal_signer_t *s, const char *purpose, canal_str_t value,
                                  char *out, size_t size);

/**
 * The content of the first cookie called name in the request that verifies with s (purpose:
 * the cookie's name), decoded into request memory. Returns 0 with *content set, or
 * CANAL_ENOTFOUND (no such cookie, or none verifies: a forged value is as good as none),
 * leaving *content as it was.
 */
CANAL_API int canal_req_cookie_signed(const canal_req_t *req, const canal_signer_t *s, const char *name,
                                      canal_str_t *content);

#ifdef __cplusplus
}
#endif

#endif
