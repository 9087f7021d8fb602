/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the W3C Trace Context parsers (lib/core/trace.c), which read the
 * traceparent and tracestate any client can send. The first byte chooses the parser (even:
 * traceparent, odd: tracestate); the rest is the field value. Checks, besides the sanitizers:
 *   - a traceparent accepted is at least 55 bytes, exactly 55 for version 00, not version ff,
 *     its IDs are the input's bytes 3-34 and 36-51, lower-case hex and not all zeros, its
 *     flags at most the sampled bit, and the output strings are NUL-terminated;
 *   - one refused leaves the output alone;
 *   - a tracestate accepted is at most 512 bytes of printable ASCII with at most 32 '='
 *     members (an independent count of the commas' pieces).
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

static int lchex_nonzero(const char *s, size_t n)
{
    int nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
        nonzero |= s[i] != '0';
    }
    return nonzero;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    char *copy = malloc(n + 1); /* exactly n bytes readable, for ASan */
    memcpy(copy, s, n);
    if (data[0] % 2 == 0) {
        canal_trace_t t, untouched;
        memset(&t, 0x5a, sizeof(t));
        untouched = t;
        if (canal__traceparent_parse(copy, n, &t) == 0) {
            check(n >= 55 && (memcmp(copy, "00", 2) != 0 || n == 55) && memcmp(copy, "ff", 2) != 0, "length, version");
            check(memcmp(t.trace_id, copy + 3, 32) == 0 && t.trace_id[32] == '\0', "trace ID from bytes 3-34");
            check(memcmp(t.parent_id, copy + 36, 16) == 0 && t.parent_id[16] == '\0', "parent ID from bytes 36-51");
            check(lchex_nonzero(t.trace_id, 32) && lchex_nonzero(t.parent_id, 16), "lower-case hex, not all zeros");
            check((t.flags & ~CANAL_TRACE_SAMPLED) == 0, "flags");
            check(n == 55 || copy[55] == '-', "a later version goes on after a '-'");
        } else {
            check(memcmp(&t, &untouched, sizeof(t)) == 0, "a refused traceparent leaves the output alone");
        }
    } else if (canal__tracestate_ok(copy, n)) {
        size_t members = 0, piece_has_eq = 0, piece_nonblank = 0;
        check(n <= 512, "at most 512 bytes");
        for (size_t i = 0; i <= n; i++) {
            if (i == n || copy[i] == ',') {
                check(!piece_nonblank || piece_has_eq, "every member has a '='");
                members += piece_nonblank != 0;
                piece_has_eq = piece_nonblank = 0;
                continue;
            }
            check(copy[i] >= 0x20 && copy[i] < 0x7f ? 1 : copy[i] == '\t', "printable ASCII");
            piece_has_eq |= copy[i] == '=';
            piece_nonblank |= copy[i] != ' ' && copy[i] != '\t';
        }
        check(members <= 32, "at most 32 members");
    }
    free(copy);
    return 0;
}
