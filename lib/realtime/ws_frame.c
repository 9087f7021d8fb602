/* SPDX-License-Identifier: MIT */
/*
 * canal's own part of RFC 6455 (see ws_internal.h for why it exists): the scan of a client's
 * frame headers before wslay sees them, the check of a client's Close, the UTF-8 check of a
 * close reason (and of the text messages canal sends), the Sec-WebSocket-Key check.
 *
 * The scan never copies or unmasks a data payload: it reads each frame's header, decides, and
 * counts the payload bytes through. Only a Close payload (at most 125 bytes) is unmasked, into
 * the caller's struct. libc only: test/unit/ws_test.c and test/fuzz/fuzz_ws.c take this file
 * alone.
 */
#include <string.h>
#include "canal/router.h" /* canal_utf8_valid() */
#include "realtime/ws_internal.h"

int canal__ws_close_code_ok(int code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

static int b64_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int canal__ws_key_ok(const char *v, size_t len, const char **key, size_t *key_len)
{
    while (len > 0 && (v[0] == ' ' || v[0] == '\t'))
        v++, len--;
    while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    /* 16 bytes are 22 base64 characters and "==" */
    if (len != 24 || v[22] != '=' || v[23] != '=')
        return 0;
    for (size_t i = 0; i < 22; i++)
        if (!b64_char((unsigned char)v[i]))
            return 0;
    *key = v;
    *key_len = len;
    return 1;
}

/* The parts of a frame header. */
struct header {
    int fin, rsv, opcode, masked;
    uint64_t payload;
    size_t size;        /* of the header: 2 to 14 bytes */
    uint8_t mask[4];
};

/* Reads the header at buf: 1 done, 0 incomplete, or a close code for a length that breaks the
 * rules (not in its shortest form, or the top bit of a 64-bit one set). */
static int read_header(const uint8_t *buf, size_t len, struct header *h)
{
    if (len < 2)
        return 0;
    h->fin = buf[0] >> 7;
    h->rsv = (buf[0] >> 4) & 7;
    h->opcode = buf[0] & 15;
    h->masked = buf[1] >> 7;
    h->payload = buf[1] & 127;
    size_t ext = h->payload == 126 ? 2 : h->payload == 127 ? 8 : 0;
    h->size = 2 + ext + (h->masked ? 4 : 0);
    if (len < h->size)
        return 0;
    if (ext != 0) {
        uint64_t v = 0;
        for (size_t i = 0; i < ext; i++)
            v = v << 8 | buf[2 + i];
        if ((ext == 2 && v < 126) || (ext == 8 && (v >> 63) != 0))
            return CANAL__WS_PROTOCOL_ERROR;
        if (ext == 8 && v < 65536)
            return CANAL__WS_PROTOCOL_ERROR;
        h->payload = v;
    }
    if (h->masked)
        memcpy(h->mask, buf + 2 + ext, 4);
    return 1;
}

/* A whole Close frame (header h at buf): CANAL__WS_CLOSE with *close filled, or a code. */
static int read_close(const uint8_t *buf, const struct header *h, struct canal__ws_close *close)
{
    uint8_t p[125];
    size_t n = (size_t)h->payload;
    for (size_t i = 0; i < n; i++)
        p[i] = buf[h->size + i] ^ h->mask[i & 3];
    close->code = 0;
    close->reason_len = 0;
    if (n == 0)
        return CANAL__WS_CLOSE;
    if (n == 1)
        return CANAL__WS_PROTOCOL_ERROR;
    close->code = p[0] << 8 | p[1];
    if (!canal__ws_close_code_ok(close->code))
        return CANAL__WS_PROTOCOL_ERROR;
    if (!canal_utf8_valid((canal_str_t){(const char *)p + 2, n - 2}))
        return CANAL__WS_INVALID_DATA;
    close->reason_len = n - 2;
    memcpy(close->reason, p + 2, n - 2);
    return CANAL__WS_CLOSE;
}

int canal__ws_scan(struct canal__ws_scan *s, const uint8_t *buf, size_t len, size_t limit, size_t *n,
                   struct canal__ws_close *close)
{
    size_t at = 0;
    if (len > limit)
        len = limit;
    for (;;) {
        if (s->left > 0) { /* inside a data frame's payload: pass what there is */
            size_t take = len - at < s->left ? len - at : (size_t)s->left;
            s->left -= take;
            at += take;
            if (s->left > 0)
                break;
        }
        struct header h;
        int rc = read_header(buf + at, len - at, &h);
        if (rc == 0)
            break;
        if (rc != 1 || h.rsv != 0 || !h.masked || (h.opcode >= 3 && h.opcode <= 7) || h.opcode >= 11) {
            rc = rc != 1 ? rc : CANAL__WS_PROTOCOL_ERROR;
        } else if (h.opcode >= 8) { /* control: whole, unfragmented, at most 125 bytes */
            if (!h.fin || h.payload > 125) {
                rc = CANAL__WS_PROTOCOL_ERROR;
            } else if (len - at < h.size + h.payload) {
                break; /* not all here yet */
            } else if (h.opcode == 8) {
                if (at > 0)
                    break; /* the frames before it go first */
                *n = h.size + (size_t)h.payload;
                return read_close(buf, &h, close);
            } else {
                at += h.size + (size_t)h.payload; /* ping or pong: wslay answers pings */
                continue;
            }
        } else if ((h.opcode == 0) != (s->in_message != 0)) {
            rc = CANAL__WS_PROTOCOL_ERROR; /* a continuation out of a message, or a new one inside */
        } else if (h.payload > s->max_message - (h.opcode == 0 ? s->msg_len : 0)) {
            rc = CANAL__WS_TOO_BIG; /* known from the header: nothing of the payload is read */
        } else {
            s->msg_len = h.fin ? 0 : (h.opcode == 0 ? s->msg_len : 0) + h.payload;
            s->in_message = !h.fin;
            s->left = h.payload;
            at += h.size;
            continue;
        }
        if (at > 0)
            break; /* pass the good frames before the bad one first */
        *n = 0;
        return rc;
    }
    *n = at;
    return CANAL__WS_PASS;
}
