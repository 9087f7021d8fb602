/* SPDX-License-Identifier: MIT */
/*
 * An independent UTF-8 check for test/unit/ws_test.c and test/fuzz/fuzz_ws.c, written from
 * RFC 3629's definition rather than its table: decode each sequence by its lead byte, then
 * refuse overlong forms, surrogates and values past U+10FFFF. canal_utf8_valid()
 * (lib/realtime/ws_frame.c) must agree with it on every input.
 */
#ifndef CANAL_WS_ORACLE_H
#define CANAL_WS_ORACLE_H

#include <stddef.h>
#include <stdint.h>

static int oracle_utf8(const unsigned char *s, size_t n)
{
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000}; /* by sequence length */
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + len > n)
            return 0;
        uint32_t cp = len == 1 ? b : (uint32_t)(b & (0x7F >> len));
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] >> 6) != 2)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

#endif
