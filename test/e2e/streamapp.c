/* SPDX-License-Identifier: MIT */
/*
 * canal-streamapp: every use of canal/stream.h that test/e2e/realtime-sse.sh checks beyond
 * the contract of examples/realtime: a writer that writes as fast as it is let (backpressure),
 * borrowed writes, NDJSON and a JSON array from the stream's JSON writer, writes posted from
 * another thread, a stream nothing is written to (the idle limit), and a stream from a
 * controller action (its after-filter runs at the commit). Compression is on (gzip, for the
 * clients that ask for it).
 *
 *   canal-streamapp [canal's flags]
 *
 *   GET /flood?bytes=N&chunk=C   N bytes of 'x' in writes of C bytes, as fast as taken
 *   GET /whole?bytes=N&chunk=C   the same N bytes as one whole answer (at most 64 KiB)
 *   GET /borrowed?n=N            N borrowed lines
 *   GET /ndjson?n=N              {"i":1} ... {"i":N}, one per line
 *   GET /array?n=N               [{"i":1},...,{"i":N}]
 *   GET /posted?n=N              N lines written by another thread
 *   GET /silent                  a stream with nothing written
 *   GET /mvc/count?n=N           lines 1..N from an action; X-After-Filter from its filter
 *   GET /mvc/events?n=N          N events of two data lines from an action
 *   GET /openapi.json            the controller's actions (the event stream: text/event-stream)
 *   GET /stats                   {"refused":...,"released":...,"closed":...,"open":...}
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>

static atomic_long refused, released, closed_count, open_count, flood_bytes;

struct flood {
    int64_t left, chunk;
};

static void flood_end(canal_stream_t *s, struct flood *f)
{
    canal_stream_end(s);
    free(f);
    atomic_fetch_sub(&open_count, 1);
}

/* Writes until the queue is full (then writable resumes it) or the body is complete. */
static void flood_run(canal_stream_t *s, void *data)
{
    static char xs[65536];
    struct flood *f = data;
    if (xs[0] != 'x')
        memset(xs, 'x', sizeof(xs));
    while (f->left > 0) {
        int64_t n = f->left < f->chunk ? f->left : f->chunk;
        int rc = canal_stream_write(s, xs, (size_t)n);
        if (rc == CANAL_EAGAIN) {
            atomic_fetch_add(&refused, 1);
            return;
        }
        if (rc != 0)
            break;
        f->left -= n;
        atomic_fetch_add(&flood_bytes, n);
    }
    flood_end(s, f);
}

static void on_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    atomic_fetch_add(&closed_count, 1);
}

static void flood_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    on_closed(s, why, data);
    flood_end(s, data);
}

static int query(canal_req_t *req, const char *name, int64_t def, int64_t max, int64_t *out)
{
    *out = def;
    int rc = canal_req_query_int64(req, name, out);
    if ((rc != 0 && rc != CANAL_ENOTFOUND) || *out < 0 || *out > max)
        return canal_res_problem(req, 400, "bad %s", name), -1;
    return 0;
}

/* The same bytes as /flood, as one whole answer, copied as canal_stream_write() copies
 * (bench/stream-ir compares the two). */
static int whole(canal_req_t *req, void *data)
{
    static char xs[65536];
    int64_t bytes, chunk; /* chunk is read and not used: the same request work as /flood's */
    if (query(req, "bytes", 16384, sizeof(xs), &bytes) != 0 || query(req, "chunk", 16384, 65536, &chunk) != 0)
        return 0;
    if (xs[0] != 'x')
        memset(xs, 'x', sizeof(xs));
    return canal_res_body(req, 200, "application/octet-stream", xs, (size_t)bytes);
}

static int flood(canal_req_t *req, void *data)
{
    static const canal_stream_cb_t cb = {.writable = flood_run, .closed = flood_closed};
    int64_t bytes, chunk;
    if (query(req, "bytes", 1 << 20, INT64_MAX / 2, &bytes) != 0 || query(req, "chunk", 16384, 65536, &chunk) != 0)
        return 0;
    struct flood *f = malloc(sizeof(*f));
    *f = (struct flood){bytes, chunk < 1 ? 1 : chunk};
    canal_stream_t *s = canal_res_stream_begin(req, "application/octet-stream", &cb, f);
    if (s == NULL) {
        free(f);
        return CANAL_ENOMEM;
    }
    atomic_fetch_add(&open_count, 1);
    flood_run(s, f);
    return 0;
}

static void release(void *data)
{
    atomic_fetch_add(&released, 1);
}

static const canal_stream_cb_t counting = {.closed = on_closed};

static int borrowed(canal_req_t *req, void *data)
{
    static const char line[] = "borrowed line\n";
    int64_t n;
    if (query(req, "n", 3, 1000, &n) != 0)
        return 0;
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", &counting, NULL);
    if (s == NULL)
        return CANAL_ENOMEM;
    for (int64_t i = 0; i < n; i++)
        if (canal_stream_write_borrowed(s, line, sizeof(line) - 1, release, NULL) != 0)
            break;
    canal_stream_end(s);
    return 0;
}

/* NDJSON (one document per flush) or one JSON array (the writer keeps its place). */
static int json_lines(canal_req_t *req, int array)
{
    int64_t n;
    if (query(req, "n", 3, 100000, &n) != 0)
        return 0;
    canal_stream_t *s = canal_res_stream_begin(req, array ? "application/json" : "application/x-ndjson",
                                               &(canal_stream_cb_t){.closed = on_closed, .max_queued = 1 << 24}, NULL);
    if (s == NULL)
        return CANAL_ENOMEM;
    canal_jw_t *w = canal_stream_jw(s);
    if (array)
        canal_jw_array_begin(w);
    for (int64_t i = 1; i <= n; i++) {
        canal_jw_object_begin(w);
        canal_jw_key(w, "i");
        canal_jw_int(w, i);
        canal_jw_object_end(w);
        if (canal_stream_jw_flush(s) != 0)
            break;
    }
    if (array) {
        canal_jw_array_end(w);
        canal_stream_jw_flush(s);
    }
    canal_stream_end(s);
    return 0;
}

static int ndjson(canal_req_t *req, void *data)
{
    return json_lines(req, 0);
}

static int array(canal_req_t *req, void *data)
{
    return json_lines(req, 1);
}

/* ---- writes from another thread ---- */

struct line {
    char text[32];
    int last;
};

static void write_line(canal_stream_t *s, void *data)
{
    struct line *l = data;
    canal_stream_write(s, l->text, strlen(l->text)); /* closed: CANAL_ECLOSED, nothing to do */
    if (l->last)
        canal_stream_end(s);
    free(l);
}

struct producer {
    canal_stream_t *s;
    int64_t n;
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (int64_t i = 1; i <= p->n; i++) {
        struct line *l = malloc(sizeof(*l));
        snprintf(l->text, sizeof(l->text), "posted %lld\n", (long long)i);
        l->last = i == p->n;
        if (canal_stream_post(p->s, write_line, l) != 0)
            free(l);
    }
    free(p);
    return NULL;
}

static int posted(canal_req_t *req, void *data)
{
    int64_t n;
    pthread_t t;
    if (query(req, "n", 3, 1000, &n) != 0 || n == 0)
        return n == 0 ? canal_res_problem(req, 400, "n must be 1 or more") : 0;
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", &counting, NULL);
    if (s == NULL)
        return CANAL_ENOMEM;
    struct producer *p = malloc(sizeof(*p));
    *p = (struct producer){s, n};
    if (pthread_create(&t, NULL, produce, p) != 0) {
        free(p);
        canal_stream_end(s);
        return 0;
    }
    pthread_detach(t);
    return 0;
}

static void silent_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    on_closed(s, why, data);
    canal_stream_end(s);
}

static int silent(canal_req_t *req, void *data)
{
    static const canal_stream_cb_t cb = {.closed = silent_closed};
    return canal_res_stream_begin(req, "text/plain", &cb, NULL) != NULL ? 0 : CANAL_ENOMEM;
}

static int stats(canal_req_t *req, void *data)
{
    return canal_res_json_new(req, 200, json_pack("{s:I, s:I, s:I, s:I, s:I}", "refused", (json_int_t)refused,
                                                  "released", (json_int_t)released, "closed",
                                                  (json_int_t)closed_count, "open", (json_int_t)open_count,
                                                  "flooded", (json_int_t)flood_bytes));
}

/* ---- controller mode ---- */

typedef struct {
    int32_t n;
} n_args_t;
static const canal_field_t count_fields[] = {
    {.name = "n", CANAL_FIELD(n_args_t, n), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_QUERY, .def = "3",
     CANAL_MIN(0), CANAL_MAX(1000)},
    {.name = NULL}};
static const canal_schema_t count_args = {.name = "CountArgs", .size = sizeof(n_args_t), .fields = count_fields};
static const canal_field_t events_fields[] = {
    {.name = "n", CANAL_FIELD(n_args_t, n), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_QUERY, .def = "2",
     CANAL_MIN(0), CANAL_MAX(100)},
    {.name = NULL}};
static const canal_schema_t events_args = {.name = "EventsArgs", .size = sizeof(n_args_t), .fields = events_fields};

static int count_action(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    int32_t n = ((const n_args_t *)args)->n;
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", &counting, NULL);
    if (s == NULL)
        return CANAL_ENOMEM;
    for (int32_t i = 1; i <= n; i++) {
        char line[16];
        int len = snprintf(line, sizeof(line), "%d\n", (int)i);
        canal_stream_write(s, line, (size_t)len);
    }
    canal_stream_end(s);
    return 0;
}

static int after_filter(canal_ctx_t *ctx, void *data)
{
    return canal_res_header(canal_ctx_req(ctx), "x-after-filter", "ran");
}

/* An event stream from an action: one event per line of n, then the end. */
static int events_action(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_stream_t *s = canal_sse_begin(req, &counting, NULL);
    if (s == NULL)
        return CANAL_ENOMEM;
    for (int32_t i = 1; i <= ((const n_args_t *)args)->n; i++) {
        char id[16];
        snprintf(id, sizeof(id), "%d", (int)i);
        canal_sse_event(s, id, "n", "line one\nline two", 17);
    }
    canal_stream_end(s);
    return 0;
}

static const canal_action_def_t live_actions[] = {
    {.name = "Count", .handler = count_action, .routes = {"mvc/count"},
     .args = &count_args,
     .filters = {{.after = after_filter}}},
    {.name = "Events", .handler = events_action, .routes = {"mvc/events"}, .args = &events_args,
     .options = {CANAL_DOC(.summary = "An event stream",
                           .responses = {{.status = 200, .content_type = "text/event-stream"}, {.status = 400}})}},
    {.name = NULL},
};

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-streamapp: %s\n", err.message);
        return 2;
    }
    canal_app_t *app = canal_app_create(&cfg);
    canal_mvc_t *mvc = app != NULL ? canal_mvc_create(app) : NULL;
    if (mvc == NULL)
        return 1;
    static const canal_controller_def_t live = {.name = "Live", .actions = live_actions};
    canal_app_compress(app, NULL); /* gzip for clients that ask: streams flush it per send */
    canal_app_get(app, "flood", flood, NULL);
    canal_app_get(app, "whole", whole, NULL);
    canal_app_get(app, "borrowed", borrowed, NULL);
    canal_app_get(app, "ndjson", ndjson, NULL);
    canal_app_get(app, "array", array, NULL);
    canal_app_get(app, "posted", posted, NULL);
    canal_app_get(app, "silent", silent, NULL);
    canal_app_get(app, "stats", stats, NULL);
    if (canal_mvc_add_controller(mvc, &live, NULL, &err) != 0 ||
        canal_app_openapi(app, "/openapi.json", canal_mvc_openapi(mvc, NULL), &err) != 0 ||
        canal_app_error(app, &err) != 0) {
        fprintf(stderr, "canal-streamapp: %s\n", err.message);
        return 1;
    }
    if (canal_app_start(app) != 0)
        return 1;
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    return rc == 0 ? 0 : 1;
}
