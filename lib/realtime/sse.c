/* SPDX-License-Identifier: MIT */
/*
 * Server-sent events: an event stream is a streamed answer (stream.c) of text/event-stream,
 * and an event is lines of "field: value" ended by a blank line (WHATWG HTML, "Server-sent
 * events"). Data is written as one "data:" line per line of it, split at CR, LF and CRLF as
 * the client's parser splits them, so what the client reassembles (the lines joined with LF)
 * is the data given, with its line breaks as LF. Every line ends with LF. The keep-alive
 * comments are stream.c's (canal_sse_keepalive()), on its timers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include "canal/stream.h"

canal_stream_t *canal_sse_begin(canal_req_t *req, const canal_stream_cb_t *cb, void *data)
{
    if (req->res.committed)
        return NULL;
    canal_res_header(req, "cache-control", "no-cache");
    /* each compressed stream would hold a deflate state (canal/stream.h) */
    if (req->h2o->compress_hint == H2O_COMPRESS_HINT_AUTO)
        req->h2o->compress_hint = H2O_COMPRESS_HINT_DISABLE;
    return canal_res_stream_begin(req, "text/event-stream", cb, data);
}

static int has_line_break(const char *s)
{
    return strpbrk(s, "\r\n") != NULL;
}

size_t canal_sse_event_size(const char *id, const char *event, size_t len)
{
    size_t n = 1; /* the blank line */
    if (id != NULL)
        n += 5 + strlen(id);
    if (event != NULL)
        n += 8 + strlen(event);
    /* at most len + 1 lines of data (every byte a line break), 7 bytes of "data: " and LF each */
    return n + len + 7 * (len + 1);
}

static char *field(char *o, const char *name, size_t nlen, const char *v, size_t vlen)
{
    memcpy(o, name, nlen);
    memcpy(o + nlen, v, vlen);
    o[nlen + vlen] = '\n';
    return o + nlen + vlen + 1;
}

long canal_sse_format(char *out, size_t size, const char *id, const char *event, const char *data, size_t len)
{
    if ((id != NULL && has_line_break(id)) || (event != NULL && has_line_break(event)) || (data == NULL && len > 0))
        return CANAL_EINVAL;
    /* the exact size first: lines and breaks counted as they will be written */
    size_t need = 1 + (id ? 5 + strlen(id) : 0) + (event ? 8 + strlen(event) : 0);
    size_t lines = data != NULL ? 1 : 0, breaks = 0;
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\r' || data[i] == '\n') {
            lines++;
            breaks += data[i] == '\r' && i + 1 < len && data[i + 1] == '\n' ? 2 : 1;
            i += data[i] == '\r' && i + 1 < len && data[i + 1] == '\n';
        }
    }
    need += (len - breaks) + 7 * lines;
    if (need > size)
        return CANAL_ELIMIT;
    char *o = out;
    if (id != NULL)
        o = field(o, "id: ", 4, id, strlen(id));
    if (event != NULL)
        o = field(o, "event: ", 7, event, strlen(event));
    if (data != NULL) {
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
            if (i < len && data[i] != '\r' && data[i] != '\n')
                continue;
            o = field(o, "data: ", 6, data + start, i - start);
            if (i < len && data[i] == '\r' && i + 1 < len && data[i + 1] == '\n')
                i++;
            start = i + 1;
        }
    }
    *o++ = '\n';
    return (long)(o - out);
}

int canal_sse_event(canal_stream_t *s, const char *id, const char *event, const char *data, size_t len)
{
    char small[512];
    size_t size = canal_sse_event_size(id, event, len);
    char *buf = size <= sizeof(small) ? small : malloc(size);
    if (buf == NULL)
        return CANAL_ENOMEM;
    long n = canal_sse_format(buf, size, id, event, data, len);
    int rc = n < 0 ? (int)n : canal_stream_write(s, buf, (size_t)n);
    if (buf != small)
        free(buf);
    return rc;
}

int canal_sse_retry(canal_stream_t *s, unsigned ms)
{
    char line[32];
    int n = snprintf(line, sizeof(line), "retry: %u\n", ms);
    return canal_stream_write(s, line, (size_t)n);
}

int canal_sse_comment(canal_stream_t *s, const char *text)
{
    char small[256];
    size_t len = strlen(text);
    if (has_line_break(text))
        return CANAL_EINVAL;
    char *buf = len + 3 <= sizeof(small) ? small : malloc(len + 3);
    if (buf == NULL)
        return CANAL_ENOMEM;
    char *end = field(buf, ": ", 2, text, len);
    int rc = canal_stream_write(s, buf, (size_t)(end - buf));
    if (buf != small)
        free(buf);
    return rc;
}

canal_str_t canal_sse_last_event_id(const canal_req_t *req)
{
    return canal_req_header(req, "last-event-id");
}
