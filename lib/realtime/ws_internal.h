/* SPDX-License-Identifier: MIT */
/*
 * canal's own part of the WebSocket protocol (ws_frame.c): what wslay leaves to it. libc only,
 * so that the unit test and the fuzzer (test/fuzz/fuzz_ws.c) take it alone.
 *
 * wslay (libh2o's WebSocket engine) parses frames, reassembles messages, answers pings and
 * checks the UTF-8 of text messages. It does not hold a client to every rule of RFC 6455 in a
 * way a client can see: a control frame over 125 bytes, a fragmented control frame, a 64-bit
 * length with its top bit set or a length not in its shortest form end the connection without
 * a Close; a one-byte Close payload is answered with an empty Close; codes 1012-1014 are
 * refused; and the UTF-8 check of a close reason goes wrong when TCP splits the Close frame.
 * So every byte a client sends goes through canal__ws_scan() first, which looks at frame
 * headers (never at data payloads) and hands wslay whole control frames only, and canal
 * answers a client's Close itself (wslay never sees it).
 */
#ifndef CANAL_WS_INTERNAL_H
#define CANAL_WS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Close codes (RFC 6455 7.4.1). */
enum {
    CANAL__WS_NORMAL = 1000,
    CANAL__WS_GOING_AWAY = 1001,
    CANAL__WS_PROTOCOL_ERROR = 1002,
    CANAL__WS_NO_STATUS = 1005,
    CANAL__WS_ABNORMAL = 1006,
    CANAL__WS_INVALID_DATA = 1007,
    CANAL__WS_POLICY = 1008,
    CANAL__WS_TOO_BIG = 1009
};

/* Where the scan of a client's byte stream is; zero is the start of a connection. */
struct canal__ws_scan {
    uint64_t left;       /* payload bytes of the current data frame not yet passed on */
    uint64_t msg_len;    /* payload of the fragmented message so far */
    uint64_t max_message; /* the largest message accepted, over all its fragments */
    int in_message;      /* a fragmented text or binary message is in progress */
};

/* A client's Close frame, as canal__ws_scan() found it. */
struct canal__ws_close {
    int code;            /* 0: the Close had no payload */
    size_t reason_len;
    char reason[124];    /* not NUL-terminated; valid UTF-8 */
};

/* What canal__ws_scan() says. */
enum { CANAL__WS_PASS = 0, CANAL__WS_CLOSE = 1 };

/*
 * Looks at buf[0..len), the client's bytes that follow the ones passed on so far, and says
 * what to do with them:
 *   CANAL__WS_PASS   hand the first *n bytes (at most limit; 0: wait for more) to wslay: data
 *                    frames, their headers checked, and whole control frames but Close;
 *   CANAL__WS_CLOSE  a valid Close frame of *n bytes starts buf: *close says what it holds;
 *   a close code     the frame starting buf breaks a rule: fail the connection with that code
 *                    (1002: a bad header or Close payload, 1007: a close reason that is not
 *                    UTF-8, 1009: a message over max_message).
 * A verdict is only ever about the frame at buf[0]: the frames before a bad one or a Close are
 * passed on first. limit is at least 139 (the largest control frame), so a control frame is
 * never split.
 */
int canal__ws_scan(struct canal__ws_scan *s, const uint8_t *buf, size_t len, size_t limit, size_t *n,
                   struct canal__ws_close *close);

/* 1 if a Close may carry this code (RFC 6455 7.4: 1000-1003, 1007-1014, 3000-4999). */
int canal__ws_close_code_ok(int code);

/* 1 if a Sec-WebSocket-Key value (surrounding spaces and tabs ignored) is base64 of 16 bytes;
 * *key and *key_len are then the 24 characters. */
int canal__ws_key_ok(const char *value, size_t len, const char **key, size_t *key_len);

#endif
