/* SPDX-License-Identifier: MIT */
/*
 * The router's regex dialect (PCRE2, lib/router/regex.c) for the library's other folders: a
 * compiled pattern that matches a value with no allocation from any thread, and its ECMA-262
 * form for OpenAPI documents. The models (schema patterns, lib/models/) use it, so that a
 * route's regex(...) and a field's pattern are one dialect, refused or translated the same
 * way (docs/routing.md, "Constraints"; docs/models.md).
 */
#ifndef CANAL_ROUTER_REGEX_INTERNAL_H
#define CANAL_ROUTER_REGEX_INTERNAL_H

#include <stddef.h>
#include "canal/router.h"

struct canal__regex; /* opaque */

enum {
    CANAL__REGEX_CASELESS = 1, /* letters in either case (the router's default) */
    CANAL__REGEX_WHOLE = 2     /* the whole value must match (schema patterns): ^(...)$ */
};

/* Compiles pattern (NUL-terminated) with the CANAL__REGEX_* flags. NULL on failure, with err
 * (if not NULL) filled: CANAL_EINVAL and the reason (PCRE2's, or the construct that has no
 * ECMA-262 form, with its offset in the pattern), or CANAL_ENOMEM. */
struct canal__regex *canal__regex_create(const char *pattern, int flags, canal_error_info_t *err);
/* 1 if v matches (0 when v is not valid UTF-8). Allocates nothing with the JIT; thread-safe. */
int canal__regex_test(const struct canal__regex *re, canal_str_t v);
/* The ECMA-262 form (for `new RegExp(form, "u")`, OpenAPI's pattern), anchored as ^(...)$ under
 * CANAL__REGEX_WHOLE. Borrowed: it lives as long as re. */
const char *canal__regex_ecma_form(const struct canal__regex *re);
/* NULL: no-op. */
void canal__regex_destroy(struct canal__regex *re);

#endif
