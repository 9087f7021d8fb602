/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of canal's log (canal_config_t.log, lib/core/log.c): with a callback, the
 * messages of a bind failure and of failing handlers (on worker threads; a long one whole)
 * reach it and nothing reaches stderr; without one they go to stderr. canal_log() from a
 * handler carries the request's context (request ID, route, trace and span); the built-in
 * text and JSON sinks escape control characters, quotes and invalid UTF-8 into one line (the
 * JSON one parsed by jansson); a message over CANAL_LOG_MAX is cut on a UTF-8 boundary with
 * the cut mark.
 */
#include "test.h"
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <canal.h>
#include <canal/testing.h>
#include "client.h"

/* What a log callback received. */
static struct {
    pthread_mutex_t lock;
    size_t count;
    canal_log_level_t level;
    char *last;
    size_t len;
    void *data;
    char source[8], request_id[64], route[64], trace_id[40], span_id[20];
} got = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void copy(char *to, size_t size, canal_str_t s)
{
    snprintf(to, size, "%.*s", s.base ? (int)s.len : 1, s.base ? s.base : "-");
}

static void collect(const canal_log_record_t *rec, void *data)
{
    pthread_mutex_lock(&got.lock);
    got.count++;
    got.level = rec->level;
    got.data = data;
    free(got.last);
    got.last = strdup(rec->msg);
    got.len = rec->len;
    snprintf(got.source, sizeof(got.source), "%s", rec->source);
    copy(got.request_id, sizeof(got.request_id), rec->request_id);
    copy(got.route, sizeof(got.route), rec->route);
    copy(got.trace_id, sizeof(got.trace_id), rec->trace_id);
    copy(got.span_id, sizeof(got.span_id), rec->span_id);
    pthread_mutex_unlock(&got.lock);
}

static void forget(void)
{
    free(got.last);
    got.last = NULL;
    got.count = 0;
    got.data = NULL;
}

/* stderr into a file from begin_capture() to end_capture(), which returns what was written
 * (static). */
static int saved_stderr = -1;
static FILE *capture;

static void begin_capture(void)
{
    fflush(stderr);
    capture = tmpfile();
    assert_non_null(capture);
    saved_stderr = dup(2);
    assert_true(saved_stderr >= 0 && dup2(fileno(capture), 2) == 2);
}

static const char *end_capture(void)
{
    static char text[65536];
    fflush(stderr);
    assert_int_equal(dup2(saved_stderr, 2), 2);
    close(saved_stderr);
    rewind(capture);
    size_t n = fread(text, 1, sizeof(text) - 1, capture);
    text[n] = '\0';
    fclose(capture);
    return text;
}

/* canal_app_start() with a listener on an address that is not ours: CANAL_ESYS, logged. */
static void bind_fails(const canal_config_t *cfg)
{
    canal_app_t *a = canal_app_create(cfg);
    assert_non_null(a);
    assert_int_equal(canal_app_listen(a, "203.0.113.255", 0), 0);
    assert_int_equal(canal_app_start(a), CANAL_ESYS);
    canal_app_destroy(a);
}

static void bind_failure_to_callback(void **state)
{
    canal_config_t cfg;
    int tag;
    app_config(&cfg, 1);
    cfg.log = collect;
    cfg.log_data = &tag;
    forget();
    begin_capture();
    bind_fails(&cfg);
    assert_string_equal(end_capture(), "");
    assert_int_equal(got.count, 1);
    assert_int_equal(got.level, CANAL_LOG_ERROR);
    assert_ptr_equal(got.data, &tag);
    assert_non_null(strstr(got.last, "cannot listen on 203.0.113.255:0: "));
    assert_null(strchr(got.last, '\n'));
    forget();
}

/* --log-level: what matters less is dropped before the sink, canal's and the app's alike */
static void level_filters(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    cfg.log = collect;
    cfg.log_level = CANAL_LOG_WARN;
    forget();
    canal_app_t *a = canal_app_create(&cfg);
    assert_non_null(a);
    canal_app_log(a, CANAL_LOG_INFO, "not worth a line");
    assert_int_equal(got.count, 0);
    canal_app_log(a, CANAL_LOG_WARN, "worth one");
    assert_int_equal(got.count, 1);
    assert_string_equal(got.last, "worth one");
    canal_app_destroy(a);
    cfg.log_level = CANAL_LOG_ERROR; /* canal's own error still passes */
    bind_fails(&cfg);
    assert_int_equal(got.count, 2);
    assert_int_equal(got.level, CANAL_LOG_ERROR);
    forget();
}

static void bind_failure_to_stderr(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    begin_capture();
    bind_fails(&cfg);
    const char *text = end_capture();
    /* "2026-11-29T20:53:15.123Z canal error: cannot listen on 203.0.113.255:0: ..." */
    int year, mon, day, h, m, s, ms, used = 0;
    assert_int_equal(sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ canal error: %n", &year, &mon, &day, &h, &m, &s,
                            &ms, &used), 7);
    assert_true(used > 0);
    assert_non_null(strstr(text + used, "cannot listen on 203.0.113.255:0: "));
    assert_int_equal(text[strlen(text) - 1], '\n');
    assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1); /* one line */
}

static int h_fail(canal_req_t *req, void *data)
{
    return canal_req_fail(req, "the database said <%s>", "no");
}

static void handler_failure_to_callback(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 2);
    cfg.log = collect;
    forget();
    canal_app_t *a = canal_app_create(&cfg);
    assert_int_equal(canal_app_get(a, "fail/{rest}", h_fail, NULL), 0);
    begin_capture();
    canal_test_t *t = canal_test_start(a, NULL);
    assert_non_null(t);
    canal_test_response_t *r = canal_test_get(t, "/fail/x");
    assert_non_null(r);
    assert_int_equal(r->status, 500);
    canal_test_response_free(r);
    pthread_mutex_lock(&got.lock);
    assert_int_equal(got.count, 1); /* logged before the answer was sent */
    assert_int_equal(got.level, CANAL_LOG_ERROR);
    assert_string_equal(got.last, "GET /fail/x: the database said <no>");
    assert_string_equal(got.source, "canal");
    assert_string_equal(got.route, "fail/{rest}"); /* canal's own message about a request: its context */
    assert_string_equal(got.request_id, "-");
    pthread_mutex_unlock(&got.lock);

    /* a message of up to CANAL_LOG_MAX bytes arrives whole */
    static char target[2100];
    strcpy(target, "/fail/");
    memset(target + 6, 'y', 2000);
    r = canal_test_get(t, target);
    assert_non_null(r);
    assert_int_equal(r->status, 500);
    canal_test_response_free(r);
    pthread_mutex_lock(&got.lock);
    assert_int_equal(got.count, 2);
    assert_int_equal(strlen(got.last), strlen("GET : the database said <no>") + strlen(target));
    pthread_mutex_unlock(&got.lock);

    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(a);
    assert_string_equal(end_capture(), "");
    forget();
}

/* ---- canal_log() and the built-in sinks ---- */

static int h_log(canal_req_t *req, void *data)
{
    canal_log(req, CANAL_LOG_WARN, "user %s: \"%s\"", "ann", (const char *)data);
    return canal_res_text(req, 200, "logged");
}

#define TRACE "4bf92f3577b34da6a3ce929d0e0e4736"

static canal_app_t *log_app(canal_log_fn fn, canal_log_format_t format, const char *what)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    cfg.log = fn;
    cfg.log_format = format;
    cfg.request_id = 1;
    cfg.trace = 1;
    canal_app_t *a = canal_app_create(&cfg);
    assert_non_null(a);
    assert_int_equal(canal_app_get(a, "users/{name}", h_log, (void *)what), 0);
    return a;
}

static void get_logged(canal_app_t *a)
{
    canal_test_t *t = canal_test_start(a, NULL);
    assert_non_null(t);
    const canal_kv_t h[] = {{"traceparent", "00-" TRACE "-00f067aa0ba902b7-01"}};
    canal_test_response_t *r = canal_test_request(t, "GET", "/users/ann", h, 1, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_int_equal(canal_test_stop(t), 0);
}

static void handler_log_with_context(void **state)
{
    forget();
    canal_app_t *a = log_app(collect, CANAL_LOG_TEXT, "hi");
    get_logged(a);
    pthread_mutex_lock(&got.lock);
    assert_int_equal(got.count, 1);
    assert_int_equal(got.level, CANAL_LOG_WARN);
    assert_string_equal(got.last, "user ann: \"hi\"");
    assert_int_equal(got.len, strlen(got.last));
    assert_string_equal(got.source, "app");
    assert_string_equal(got.route, "users/{name}");
    assert_string_equal(got.trace_id, TRACE);
    assert_int_equal(strlen(got.span_id), 16);
    assert_non_null(strstr(got.request_id, "-0-")); /* "prefix-worker-counter" */
    pthread_mutex_unlock(&got.lock);
    canal_app_destroy(a);
    /* without a request: no context */
    canal_config_t cfg;
    app_config(&cfg, 1);
    cfg.log = collect;
    a = canal_app_create(&cfg);
    canal_app_log(a, CANAL_LOG_INFO, "cache refreshed: %d entries", 12);
    assert_string_equal(got.last, "cache refreshed: 12 entries");
    assert_string_equal(got.source, "app");
    assert_string_equal(got.route, "-");
    assert_string_equal(got.trace_id, "-");
    canal_app_destroy(a);
    forget();
}

/* control characters, a newline, a backslash, a quote, invalid UTF-8 and valid UTF-8 */
static const char hostile[] = "a\nb\r\x1b[31m\\ \x7f \xff\xc3\x28 caf\xc3\xa9 \xe2\x82";

static void text_sink_escapes(void **state)
{
    canal_app_t *a = log_app(NULL, CANAL_LOG_TEXT, hostile);
    begin_capture();
    get_logged(a);
    canal_app_destroy(a);
    const char *text = end_capture();
    const char *line = strstr(text, " app warn: ");
    assert_non_null(line);
    const char *eol = strchr(line, '\n');
    assert_non_null(eol);
    assert_int_equal(eol[1], '\0'); /* one line */
    assert_non_null(strstr(line, "user ann: \"a\\x0ab\\x0d\\x1b[31m\\\\ \\x7f \\xff\\xc3( caf\xc3\xa9 \\xe2\\x82\""));
    assert_non_null(strstr(line, " request_id="));
    assert_non_null(strstr(line, " route=users/{name} trace_id=" TRACE " span_id="));
}

static void json_sink_escapes(void **state)
{
    canal_app_t *a = log_app(NULL, CANAL_LOG_JSON, hostile);
    begin_capture();
    get_logged(a);
    canal_app_destroy(a);
    const char *text = end_capture();
    const char *line = strstr(text, "{\"time\":");
    assert_non_null(line);
    assert_int_equal(strchr(line, '\n')[1], '\0');
    json_error_t err;
    json_t *j = json_loads(line, 0, &err); /* valid JSON and valid UTF-8, or jansson refuses */
    if (j == NULL)
        fail_msg("not JSON: %s: %s", err.text, line);
    assert_string_equal(json_string_value(json_object_get(j, "level")), "warn");
    assert_string_equal(json_string_value(json_object_get(j, "source")), "app");
    assert_string_equal(json_string_value(json_object_get(j, "msg")),
                        "user ann: \"a\nb\r\x1b[31m\\ \x7f \xef\xbf\xbd\xef\xbf\xbd( caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\"");
    assert_string_equal(json_string_value(json_object_get(j, "route")), "users/{name}");
    assert_string_equal(json_string_value(json_object_get(j, "trace_id")), TRACE);
    assert_int_equal(strlen(json_string_value(json_object_get(j, "span_id"))), 16);
    assert_non_null(json_object_get(j, "request_id"));
    int year, mon, day, h, m, s, ms;
    assert_int_equal(sscanf(json_string_value(json_object_get(j, "time")), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &year,
                            &mon, &day, &h, &m, &s, &ms), 7);
    json_decref(j);
}

static void long_message_cut(void **state)
{
    forget();
    canal_config_t cfg;
    app_config(&cfg, 1);
    cfg.log = collect;
    canal_app_t *a = canal_app_create(&cfg);
    /* 'x' then two-byte characters, so that the bound falls inside one */
    static char big[CANAL_LOG_MAX * 2];
    big[0] = 'x';
    for (size_t i = 1; i + 2 < sizeof(big); i += 2)
        memcpy(big + i, "\xc3\xa9", 2);
    big[sizeof(big) - 1] = '\0';
    size_t len = strlen(big);
    canal_app_log(a, CANAL_LOG_ERROR, "%s", big);
    /* cut at CANAL_LOG_MAX - 1 (the character at 8191..8192 straddles the bound) */
    char want[64];
    snprintf(want, sizeof(want), CANAL_LOG_CUT_MARK "%zu bytes]", len - (CANAL_LOG_MAX - 1));
    assert_int_equal(got.len, CANAL_LOG_MAX - 1 + strlen(want));
    assert_int_equal(memcmp(got.last, big, CANAL_LOG_MAX - 1), 0);
    assert_string_equal(got.last + CANAL_LOG_MAX - 1, want);
    assert_true(canal_utf8_valid((canal_str_t){got.last, got.len}));
    /* exactly CANAL_LOG_MAX bytes: whole */
    memset(big, 'y', CANAL_LOG_MAX);
    big[CANAL_LOG_MAX] = '\0';
    canal_app_log(a, CANAL_LOG_ERROR, "%s", big);
    assert_int_equal(got.len, CANAL_LOG_MAX);
    canal_app_destroy(a);
    forget();
    /* the built-in sink with no app at all: text on stderr */
    begin_capture();
    canal_app_log(NULL, CANAL_LOG_INFO, "no app %d", 1);
    assert_non_null(strstr(end_capture(), "Z app info: no app 1\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bind_failure_to_callback),
        cmocka_unit_test(bind_failure_to_stderr),
        cmocka_unit_test(level_filters),
        cmocka_unit_test(handler_failure_to_callback),
        cmocka_unit_test(handler_log_with_context),
        cmocka_unit_test(text_sink_escapes),
        cmocka_unit_test(json_sink_escapes),
        cmocka_unit_test(long_message_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
