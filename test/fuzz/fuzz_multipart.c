/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the multipart/form-data reader (canal_multipart_boundary(), _init(),
 * _next(), lib/models/form.c). Two modes, by the first byte:
 *   0     round trip: the rest, split at 0xFF bytes into at most 16 chunks, is encoded as a
 *         form (fields and, every other one, file parts) with a fixed boundary; unless a chunk
 *         holds the delimiter itself, the reader must give back exactly those parts, names,
 *         filenames and bytes, then the end;
 *   other the first line is the Content-Type, the rest the body, as any client may send.
 *         Checks: a boundary found is 1 to 70 bchars inside the field; every slice of a part
 *         lies inside the body (content_type may be the static "text/plain"); parts come in
 *         order without overlapping, at most CANAL_MULTIPART_MAX_PARTS; each part's data is
 *         followed by CRLF "--" boundary and holds no delimiter of its own; the end and every
 *         error stay (the next call says the same); errors are CANAL_EBADREQ or CANAL_ELIMIT
 *         with a position inside the body.
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

static int inside(canal_str_t s, const char *base, size_t len)
{
    return s.len == 0 || (s.base >= base && s.base + s.len <= base + len);
}

/* Whether what follows a delimiter's text at body[a] makes it one: "--", or padding and CRLF. */
static int delimiter_end(const char *b, size_t len, size_t a)
{
    if (len - a >= 2 && b[a] == '-' && b[a + 1] == '-')
        return 1;
    while (a < len && (b[a] == ' ' || b[a] == '\t'))
        a++;
    return len - a >= 2 && b[a] == '\r' && b[a + 1] == '\n';
}

static void raw(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t ctlen = nl ? (size_t)(nl - data) : size;
    canal_str_t ct = {(const char *)data, ctlen};
    canal_str_t body = {nl ? (const char *)nl + 1 : "", nl ? size - ctlen - 1 : 0};
    canal_str_t b = {NULL, 0};
    canal_error_info_t err;
    int brc = canal_multipart_boundary(ct, &b, NULL);
    if (brc == 0) {
        check(b.len >= 1 && b.len <= 70 && inside(b, ct.base, ct.len) && b.base[b.len - 1] != ' ', "a boundary of 1 to 70");
        for (size_t i = 0; i < b.len; i++)
            check(strchr("'()+_,-./:=? ", b.base[i]) != NULL || (b.base[i] >= '0' && b.base[i] <= '9') ||
                      ((b.base[i] | 32) >= 'a' && (b.base[i] | 32) <= 'z'),
                  "bchars");
    } else {
        check(brc == CANAL_ETYPE || brc == CANAL_EBADREQ, "a boundary error is ETYPE or EBADREQ");
    }
    canal_multipart_t mp;
    check(canal_multipart_init(&mp, ct, body, NULL) == brc, "init fails as the boundary does");
    if (brc != 0)
        return;
    char delim[80] = "\r\n--";
    memcpy(delim + 4, b.base, b.len);
    size_t dlen = 4 + b.len, nparts = 0;
    const char *prev_end = body.base;
    canal_part_t p;
    int rc;
    while ((rc = canal_multipart_next(&mp, &p, &err)) == 1) {
        check(++nparts <= CANAL_MULTIPART_MAX_PARTS, "at most MAX_PARTS parts");
        check(inside(p.name, body.base, body.len) && p.name.base != NULL, "the name inside the body");
        check(p.filename.base == NULL || inside(p.filename, body.base, body.len), "the filename inside the body");
        check(inside(p.content_type, body.base, body.len) ||
                  (p.content_type.len == 10 && memcmp(p.content_type.base, "text/plain", 10) == 0),
              "the content type inside the body, or text/plain");
        check(p.data.base >= prev_end && p.data.base + p.data.len <= body.base + body.len, "data in order, inside");
        size_t end = (size_t)(p.data.base - body.base) + p.data.len;
        check(body.len - end >= dlen && memcmp(body.base + end, delim, dlen) == 0, "data followed by the delimiter");
        for (const char *h = p.data.base; (h = memmem(h, p.data.len - (size_t)(h - p.data.base), delim, dlen)) != NULL; h++)
            check(!delimiter_end(body.base, body.len, (size_t)(h - body.base) + dlen), "no delimiter inside data");
        prev_end = p.data.base + p.data.len;
    }
    if (rc == 0) {
        check(canal_multipart_next(&mp, &p, NULL) == 0, "the end stays");
    } else {
        check((rc == CANAL_EBADREQ || rc == CANAL_ELIMIT) && err.code == rc && err.position <= body.len, "a defined error");
        canal_error_info_t again;
        check(canal_multipart_next(&mp, &p, &again) == rc && again.position == err.position &&
                  strcmp(again.message, err.message) == 0,
              "the error stays");
    }
}

#define BOUNDARY "fUzZ7b0uNd"

static void round_trip(const uint8_t *data, size_t size)
{
    const uint8_t *chunk[16];
    size_t len[16], n = 0, at = 0;
    while (n < 16) {
        const uint8_t *ff = memchr(data + at, 0xFF, size - at);
        size_t l = ff ? (size_t)(ff - data) - at : size - at;
        chunk[n] = data + at;
        len[n++] = l;
        if (ff == NULL)
            break;
        at += l + 1;
    }
    char *body = malloc(size + n * 200 + 64), *probe = malloc(size + 3);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(probe, "\r\n", 2);
        memcpy(probe + 2, chunk[i], len[i]);
        if (memmem(probe, len[i] + 2, "\r\n--" BOUNDARY, 4 + sizeof(BOUNDARY) - 1) != NULL) {
            free(body);
            free(probe);
            return; /* the one thing a form's bytes may not hold */
        }
        o += (size_t)sprintf(body + o, "--" BOUNDARY "\r\nContent-Disposition: form-data; name=\"p%zu\"", i);
        if (i % 2)
            o += (size_t)sprintf(body + o, "; filename=\"f%zu\"\r\nContent-Type: application/octet-stream", i);
        o += (size_t)sprintf(body + o, "\r\n\r\n");
        memcpy(body + o, chunk[i], len[i]);
        o += len[i];
        o += (size_t)sprintf(body + o, "\r\n");
    }
    o += (size_t)sprintf(body + o, "--" BOUNDARY "--");
    canal_multipart_t mp;
    canal_part_t p;
    canal_error_info_t err;
    check(canal_multipart_init(&mp, (canal_str_t){"multipart/form-data; boundary=" BOUNDARY, 40}, (canal_str_t){body, o},
                               NULL) == 0,
          "the fixed boundary");
    for (size_t i = 0; i < n; i++) {
        char name[16];
        int rc = canal_multipart_next(&mp, &p, &err);
        if (rc != 1)
            fprintf(stderr, "part %zu: %d %s\n", i, rc, err.message);
        check(rc == 1, "every part comes back");
        snprintf(name, sizeof(name), "p%zu", i);
        check(p.name.len == strlen(name) && memcmp(p.name.base, name, p.name.len) == 0, "its name");
        check(CANAL_PART_IS_FILE(&p) == (int)(i % 2), "files told from fields");
        check(p.data.len == len[i] && memcmp(p.data.base, chunk[i], len[i]) == 0, "its bytes");
    }
    check(canal_multipart_next(&mp, &p, NULL) == 0, "then the end");
    free(body);
    free(probe);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && data[0] == 0)
        round_trip(data + 1, size - 1);
    else
        raw(data, size);
    return 0;
}
