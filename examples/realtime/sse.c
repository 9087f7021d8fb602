/* SPDX-License-Identifier: MIT */
/*
 * GET /sse/ticks?count=N&interval_ms=M: events i = S..N, one every M ms, as
 *
 *     id: i
 *     event: tick
 *     data: {"i":i}
 *
 * S is 1, or K+1 for a reconnecting client's "Last-Event-ID: K". A comment keeps the stream
 * alive whenever nothing was written for a second. Each stream paces itself with its own
 * timer on the loop of the request's thread; a client that stops reading pauses its stream
 * (the write is refused) until canal says it is writable again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "realtime.h"

#define MAX_COUNT 10000
#define MAX_INTERVAL_MS 60000

struct ticks {
    int64_t next, last; /* the next event's i, the last one's */
    unsigned interval_ms;
    int waiting;        /* a write was refused: the next tick comes from writable */
};

static void tick(canal_stream_t *s, void *data);

static void done(canal_stream_t *s, struct ticks *t)
{
    canal_stream_end(s);
    free(t);
}

/* Writes event t->next; 1 if the stream goes on. */
static int write_event(canal_stream_t *s, struct ticks *t)
{
    char id[24], json[40];
    snprintf(id, sizeof(id), "%lld", (long long)t->next);
    int n = snprintf(json, sizeof(json), "{\"i\":%lld}", (long long)t->next);
    int rc = canal_sse_event(s, id, "tick", json, (size_t)n);
    if (rc == CANAL_EAGAIN) {
        t->waiting = 1;
        return 1;
    }
    if (rc != 0 || t->next == t->last) {
        done(s, t); /* the last one, or the stream cannot be written (closed() ends it too) */
        return 0;
    }
    t->next++;
    return 1;
}

static void tick(canal_stream_t *s, void *data)
{
    struct ticks *t = data;
    if (write_event(s, t) && !t->waiting)
        canal_stream_timer(s, t->interval_ms, tick);
}

static void writable(canal_stream_t *s, void *data)
{
    struct ticks *t = data;
    t->waiting = 0;
    tick(s, t);
}

static void closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    done(s, data); /* the client left, the stream stalled, or the server stops */
}

static const canal_stream_cb_t callbacks = {.writable = writable, .closed = closed};

/* An optional integer query parameter in [0, max]; 0, or a 400 problem set. */
static int bounded(canal_req_t *req, const char *name, int64_t def, int64_t max, int64_t *out)
{
    *out = def;
    int rc = canal_req_query_int64(req, name, out);
    if (rc == CANAL_ENOTFOUND)
        return 0;
    if (rc != 0 || *out < 0 || *out > max) {
        canal_res_problem(req, 400, "%s must be an integer from 0 to %lld", name, (long long)max);
        return -1;
    }
    return 0;
}

/* The first event's i: K+1 for "Last-Event-ID: K" (decimal digits only), else 1. */
static int64_t first_event(const canal_req_t *req)
{
    canal_str_t id = canal_sse_last_event_id(req);
    int64_t k = 0;
    if (id.base == NULL || id.len == 0)
        return 1;
    for (size_t i = 0; i < id.len; i++) {
        if (id.base[i] < '0' || id.base[i] > '9')
            return 1; /* not a non-negative decimal integer: ignored */
        if (k <= MAX_COUNT) /* past the largest count every K means "no events left" */
            k = k * 10 + (id.base[i] - '0');
    }
    return k + 1;
}

static int ticks(canal_req_t *req, void *data)
{
    int64_t count, interval;
    if (bounded(req, "count", 10, MAX_COUNT, &count) != 0 ||
        bounded(req, "interval_ms", 1000, MAX_INTERVAL_MS, &interval) != 0)
        return 0; /* the 400 is the answer */
    struct ticks *t = malloc(sizeof(*t));
    if (t == NULL)
        return CANAL_ENOMEM;
    *t = (struct ticks){.next = first_event(req), .last = count, .interval_ms = (unsigned)interval};
    canal_stream_t *s = canal_sse_begin(req, &callbacks, t);
    if (s == NULL) {
        free(t);
        return canal_req_failure(req) ? 0 : CANAL_ENOMEM;
    }
    if (t->next > t->last || canal_stream_req(s) == NULL) { /* nothing to send, or HEAD */
        done(s, t);
        return 0;
    }
    canal_sse_keepalive(s, 1000);
    tick(s, t); /* the first event at once */
    return 0;
}

int realtime_sse_add(canal_app_t *app)
{
    canal_endpoint_spec_t spec = {.tmpl = "sse/ticks", .handler = ticks,
        .options = {CANAL_DOC(.responses = {{.status = 200, .content_type = "text/event-stream"}})}};
    return canal_app_route(app, &spec, NULL, NULL);
}
