/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the Cookie field parser (canal_cookie_next()) and the signed-value
 * verifier (canal_signer_verify()), the code that reads what any client sends as a cookie.
 * Checks, besides the sanitizers:
 *   - every pair the parser gives lies inside the field, has a token name and a value of
 *     cookie-octets, and the parser always ends;
 *   - the input as a signed value never verifies unless it is exactly what the signer makes
 *     for its decoded content (no second text for one content, no forgery by mutation), and a
 *     value signed from the input always verifies back to it.
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static canal_signer_t *signer;
    if (signer == NULL) {
        canal_str_t key = {"fuzz key of thirty-two bytes....", 32};
        signer = canal_signer_create(&key, 1, NULL);
    }
    canal_str_t field = {(const char *)data, size};
    canal_cookie_t c;
    size_t at = 0, bad = 0, pairs = 0;
    while (canal_cookie_next(field, &at, &c, &bad)) {
        check(c.name.base >= field.base && c.name.base + c.name.len <= field.base + size, "name inside");
        check(c.value.base >= field.base && c.value.base + c.value.len <= field.base + size, "value inside");
        check(c.name.len > 0, "a name");
        for (size_t i = 0; i < c.value.len; i++) {
            unsigned char b = (unsigned char)c.value.base[i];
            check(b > 0x20 && b < 0x7f && b != '"' && b != ';' && b != ',' && b != '\\', "cookie-octets");
        }
        check(++pairs <= size, "the parser ends");
    }
    char *out = malloc(size + 1), *again = malloc(canal_signed_length(size) + 1);
    int n = canal_signer_verify(signer, "sid", field, out, size + 1);
    if (n >= 0) {
        int m = canal_signer_sign(signer, "sid", (canal_str_t){out, (size_t)n}, again, canal_signed_length(size) + 1);
        check(m == (int)size && memcmp(again, data, size) == 0, "only the signer's own text verifies");
    }
    int m = canal_signer_sign(signer, "sid", field, again, canal_signed_length(size) + 1);
    char *back = malloc((size_t)m + 1);
    check(canal_signer_verify(signer, "sid", (canal_str_t){again, (size_t)m}, back, (size_t)m + 1) == (int)size &&
              memcmp(back, data, size) == 0,
          "a signed value verifies back");
    free(back);
    free(out);
    free(again);
    return 0;
}
