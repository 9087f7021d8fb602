/* SPDX-License-Identifier: MIT */
/*
 * otlp: an OpenTelemetry exporter attached to canal's request hooks (canal/trace.h). Every
 * request becomes a server span, written to a file as OTLP JSON: one ExportTraceServiceRequest
 * object a line ({"resourceSpans":[...]}), the form an OpenTelemetry Collector's file
 * receiver (otlpjsonfile) reads. The span carries the request's W3C trace (the caller's
 * traceparent, or a new trace), its parent, its tracestate, the HTTP semantic conventions'
 * attributes (method, route, path, status) and an error status for a 5xx answer.
 *
 *   build/bin/canal-otlp --spans spans.jsonl --trace-echo on --log-format json --port 8080
 *   curl -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \
 *        localhost:8080/users/7
 *
 * The end hook runs on the worker thread: it formats the span with canal's JSON writer in
 * the request's memory and appends it under a lock. A production exporter would batch spans
 * and send them (OTLP over HTTP) from a thread of its own instead of writing on the worker.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <canal.h>

static struct {
    pthread_mutex_t lock;
    FILE *f;
} spans = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void attr_str(canal_jw_t *w, const char *key, const char *v, size_t len)
{
    canal_jw_object_begin(w);
    canal_jw_key(w, "key");
    canal_jw_string(w, key);
    canal_jw_key(w, "value");
    canal_jw_object_begin(w);
    canal_jw_key(w, "stringValue");
    canal_jw_stringn(w, v, len);
    canal_jw_object_end(w);
    canal_jw_object_end(w);
}

/* OTLP JSON writes 64-bit integers as decimal strings */
static void int_string(canal_jw_t *w, int64_t v)
{
    char buf[24];
    canal_jw_string(w, (snprintf(buf, sizeof(buf), "%lld", (long long)v), buf));
}

static void attr_int(canal_jw_t *w, const char *key, int64_t v)
{
    canal_jw_object_begin(w);
    canal_jw_key(w, "key");
    canal_jw_string(w, key);
    canal_jw_key(w, "value");
    canal_jw_object_begin(w);
    canal_jw_key(w, "intValue");
    int_string(w, v);
    canal_jw_object_end(w);
    canal_jw_object_end(w);
}

static void on_end(canal_req_t *req, const canal_request_info_t *info, void *data)
{
    const canal_trace_t *t = info->trace;
    if (t == NULL)
        return; /* tracing is off (--trace off): no span */
    canal_jw_t *w = canal_req_jw(req);
    canal_jw_object_begin(w);
    canal_jw_key(w, "resourceSpans");
    canal_jw_array_begin(w);
    canal_jw_object_begin(w);
    canal_jw_key(w, "resource");
    canal_jw_object_begin(w);
    canal_jw_key(w, "attributes");
    canal_jw_array_begin(w);
    attr_str(w, "service.name", "canal-otlp", 10);
    canal_jw_array_end(w);
    canal_jw_object_end(w);
    canal_jw_key(w, "scopeSpans");
    canal_jw_array_begin(w);
    canal_jw_object_begin(w);
    canal_jw_key(w, "scope");
    canal_jw_object_begin(w);
    canal_jw_key(w, "name");
    canal_jw_string(w, "canal");
    canal_jw_key(w, "version");
    canal_jw_string(w, canal_version());
    canal_jw_object_end(w);
    canal_jw_key(w, "spans");
    canal_jw_array_begin(w);

    canal_jw_object_begin(w);
    canal_jw_key(w, "traceId");
    canal_jw_string(w, t->trace_id);
    canal_jw_key(w, "spanId");
    canal_jw_string(w, t->span_id);
    if (t->parent_id[0] != '\0') {
        canal_jw_key(w, "parentSpanId");
        canal_jw_string(w, t->parent_id);
    }
    if (t->tracestate.base != NULL) {
        canal_jw_key(w, "traceState");
        canal_jw_stringn(w, t->tracestate.base, t->tracestate.len);
    }
    canal_jw_key(w, "flags");
    canal_jw_int(w, t->flags);
    /* the semantic conventions' span name: "GET /users/{id:int}", or the method alone */
    char name[256];
    snprintf(name, sizeof(name), "%.*s%s%s", (int)info->method.len, info->method.base, info->route ? " /" : "",
             info->route ? info->route : "");
    canal_jw_key(w, "name");
    canal_jw_string(w, name);
    canal_jw_key(w, "kind");
    canal_jw_int(w, 2); /* SPAN_KIND_SERVER */
    canal_jw_key(w, "startTimeUnixNano");
    int_string(w, info->start_unix_ns);
    canal_jw_key(w, "endTimeUnixNano");
    int_string(w, info->start_unix_ns + info->duration_ns);
    canal_jw_key(w, "attributes");
    canal_jw_array_begin(w);
    attr_str(w, "http.request.method", info->method.base, info->method.len);
    if (info->route != NULL) {
        char route[256];
        int n = snprintf(route, sizeof(route), "/%s", info->route);
        attr_str(w, "http.route", route, (size_t)n < sizeof(route) ? (size_t)n : sizeof(route) - 1);
    }
    canal_str_t path = canal_req_path(req);
    attr_str(w, "url.path", path.base, path.len);
    canal_str_t id = canal_req_id(req);
    if (id.base != NULL)
        attr_str(w, "canal.request_id", id.base, id.len);
    attr_int(w, "http.response.status_code", info->status);
    attr_int(w, "http.response.body.size", (int64_t)info->bytes);
    canal_jw_array_end(w);
    canal_jw_key(w, "status");
    canal_jw_object_begin(w);
    if (info->status >= 500) {
        canal_jw_key(w, "code");
        canal_jw_int(w, 2); /* STATUS_CODE_ERROR */
    }
    canal_jw_object_end(w);
    canal_jw_object_end(w);

    canal_jw_array_end(w);  /* spans */
    canal_jw_object_end(w); /* the scope's */
    canal_jw_array_end(w);  /* scopeSpans */
    canal_jw_object_end(w); /* the resource's */
    canal_jw_array_end(w);  /* resourceSpans */
    canal_jw_object_end(w);
    const char *line;
    size_t len;
    if (canal_jw_finish(w, &line, &len) != 0) {
        /* a method or path that is not UTF-8, say */
        canal_log(req, CANAL_LOG_WARN, "no span: %s", canal_jw_error_text(w));
        return;
    }
    pthread_mutex_lock(&spans.lock);
    fwrite(line, 1, len, spans.f);
    fputc('\n', spans.f);
    fflush(spans.f); /* one line at a time: a reader never sees half a span */
    pthread_mutex_unlock(&spans.lock);
}

static int user(canal_req_t *req, void *data)
{
    int32_t id;
    if (canal_req_param_int32(req, "id", &id) != 0)
        return canal_res_problem(req, 400, "bad id");
    canal_log(req, CANAL_LOG_INFO, "looking up user %d", (int)id);
    return canal_res_json_new(req, 200, json_pack("{s:i}", "id", (int)id));
}

static int unavailable(canal_req_t *req, void *data)
{
    canal_log(req, CANAL_LOG_ERROR, "the database is down");
    return canal_res_problem(req, 503, "the database is down");
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    cfg.trace = 1; /* spans need the trace: on unless --trace off */
    const char *path;
    const canal_option_t options[] = {{"spans", CANAL_OPTION_STRING, &path, "spans.jsonl", .meta = "FILE",
                                       .help = "OTLP JSON spans, one request a line"}};
    canal_config_options(&cfg, options, 1, &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err); /* --config FILE, CANAL_*, flags */
    if (rc != 0 || argc > 1 || path == NULL) {
        FILE *f = rc == CANAL_EHELP ? stdout : stderr;
        fprintf(f, "%s\n", rc != 0 ? err.message : "canal-otlp: no arguments but flags, and --spans a file");
        canal_config_help(&cfg, 0, f);
        return rc == CANAL_EHELP ? 0 : 2;
    }
    if ((spans.f = fopen(path, "a")) == NULL) {
        perror(path);
        return 1;
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_app_get(app, "users/{id:int}", user, NULL);
    canal_app_get(app, "unavailable", unavailable, NULL);
    canal_app_on_request(app, NULL, on_end, NULL);
    if (canal_app_start(app) != 0) /* also fails on any registration error above */
        return 1;
    printf("listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    fflush(stdout);
    rc = canal_app_wait(app);
    canal_app_destroy(app);
    fclose(spans.f);
    return rc == 0 ? 0 : 1;
}
