/* SPDX-License-Identifier: MIT */
/* lib/common's internal calls (text.c), for the server's layers; libc only. */
#ifndef CANAL_COMMON_H
#define CANAL_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Decodes base64 (url: unpadded base64url; else padded standard base64), refusing other
 * spellings; out has room for n / 4 * 3 + 2 bytes. 0 or -1. */
int canal__b64_decode(const char *s, size_t n, int url, unsigned char *out, size_t *outlen);
/* Unpadded base64url (RFC 4648 5): the length of n bytes' text, and the text of in[0..n) into
 * out (room for canal__b64url_len(n) bytes, no NUL); returns its length */
size_t canal__b64url_len(size_t n);
size_t canal__b64url_encode(const unsigned char *in, size_t n, char *out);

/* SipHash-2-4 of p[0..n) under the key (k0, k1): keyed hashing where clients choose the keys
 * (rate limits, the data cache), so that they cannot aim collisions */
uint64_t canal__siphash(uint64_t k0, uint64_t k1, const unsigned char *p, size_t n);

/* The decimal text of v into out (room for 20 bytes, no NUL); returns its length */
size_t canal__i64_text(char *out, int64_t v);

/* "203.0.113.9" from 4 bytes in network order, as libh2o prints it, into out (room for 15
 * bytes, no NUL); returns the length */
size_t canal__ipv4_text(char *out, const uint8_t b[4]);

#endif
