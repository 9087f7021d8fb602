/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: canal's own part of RFC 6455 (lib/realtime/ws_frame.c), alone.
 *
 * The input's first two bytes choose a message limit and a chunking; the rest is a client's
 * byte stream. It is scanned twice, as the server does it (websocket.c's ws_recv(): what is
 * not passed on waits and is scanned again with the bytes that follow): once whole, with
 * wslay's largest request (4096), and once in chunks of 1 to 64 bytes with varying limits.
 * Both must pass on exactly the same bytes and end with the same verdict; every answer is
 * held to canal__ws_scan()'s contract (no more than given or than the limit, a whole control
 * frame, a Close whose code may be sent and whose reason is UTF-8, progress whenever 139
 * bytes wait); and canal_utf8_valid() must agree with an independent decoder
 * (ws_oracle.h) on the input. Build and run: test/fuzz/build.sh (see there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/router.h"
#include "realtime/ws_internal.h"
#include "ws_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define invariant(c)                                                                     \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            fprintf(stderr, "invariant failed: %s (line %d)\n", #c, __LINE__);           \
            abort();                                                                     \
        }                                                                                \
    } while (0)

struct run {
    uint8_t passed[1 << 16]; /* the bytes handed on, in order */
    size_t npassed;
    int verdict;             /* 0: none yet; CANAL__WS_CLOSE or a close code */
    int close_code;
};

/* Scans stream in chunks (chunk 0: all at once), as ws_recv() does. */
static void scan_stream(const uint8_t *stream, size_t len, uint64_t max, unsigned chunk, struct run *r)
{
    struct canal__ws_scan s = {.max_message = max};
    uint8_t *wait = malloc(len + 1);
    size_t nwait = 0, at = 0, step = 0;
    r->npassed = 0;
    r->verdict = 0;
    while (r->verdict == 0) {
        size_t add = chunk == 0 ? len - at : 1 + (chunk * 7 + step * 13) % 64;
        if (add > len - at)
            add = len - at;
        memcpy(wait + nwait, stream + at, add);
        nwait += add;
        at += add;
        step++;
        for (;;) { /* wslay asks again as long as it is given bytes */
            size_t limit = chunk == 0 ? 4096 : 139 + (step * 31) % 4000, n = 12345;
            struct canal__ws_close c;
            int rc = canal__ws_scan(&s, wait, nwait, limit, &n, &c);
            if (rc == CANAL__WS_PASS) {
                invariant(n <= nwait && n <= limit);
                invariant(n > 0 || nwait < 139 || limit < 139); /* 139 bytes always decide */
                if (n == 0)
                    break;
                memcpy(r->passed + r->npassed, wait, n);
                r->npassed += n;
                memmove(wait, wait + n, nwait - n);
                nwait -= n;
                continue;
            }
            r->verdict = rc;
            if (rc == CANAL__WS_CLOSE) {
                invariant(n >= 2 && n <= 131 && n <= nwait);
                invariant(c.code == 0 || canal__ws_close_code_ok(c.code));
                invariant(c.reason_len <= 123 && canal_utf8_valid((canal_str_t){(const char *)(c.reason), c.reason_len}));
                r->close_code = c.code;
            } else {
                invariant(rc == CANAL__WS_PROTOCOL_ERROR || rc == CANAL__WS_INVALID_DATA || rc == CANAL__WS_TOO_BIG);
            }
            break;
        }
        if (at == len && r->verdict == 0)
            break;
    }
    free(wait);
}

static struct run whole, chunked;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    invariant(canal_utf8_valid((canal_str_t){(const char *)(data), size}) == oracle_utf8(data, size));
    if (size < 2 || size > sizeof(whole.passed))
        return 0;
    uint64_t max = data[0] < 200 ? data[0] : (uint64_t)1 << (data[0] - 200 > 63 ? 63 : data[0] - 200);
    scan_stream(data + 2, size - 2, max, 0, &whole);
    scan_stream(data + 2, size - 2, max, 1 + data[1], &chunked);
    invariant(whole.verdict == chunked.verdict);
    invariant(whole.npassed == chunked.npassed);
    invariant(memcmp(whole.passed, chunked.passed, whole.npassed) == 0);
    if (whole.verdict == CANAL__WS_CLOSE)
        invariant(whole.close_code == chunked.close_code);
    return 0;
}
