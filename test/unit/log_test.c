/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of canal's log (canal_config_t.log, lib/server/log.c): with a callback, the
 * messages of a bind failure and of failing handlers (on worker threads; a long one whole)
 * reach it and nothing reaches stderr; without one they go to stderr as they always did.
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
    void *data;
} got = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void collect(canal_log_level_t level, const char *msg, void *data)
{
    pthread_mutex_lock(&got.lock);
    got.count++;
    got.level = level;
    got.data = data;
    free(got.last);
    got.last = strdup(msg);
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
    static char text[4096];
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

static void bind_failure_to_stderr(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    begin_capture();
    bind_fails(&cfg);
    const char *text = end_capture();
    /* "2026-11-29T20:53:15Z canal: cannot listen on 203.0.113.255:0: ..." */
    int year, mon, day, h, m, s, used = 0;
    assert_int_equal(sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2dZ canal: %n", &year, &mon, &day, &h, &m, &s, &used), 6);
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
    pthread_mutex_unlock(&got.lock);

    /* a message longer than log.c's buffer arrives whole */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bind_failure_to_callback),
        cmocka_unit_test(bind_failure_to_stderr),
        cmocka_unit_test(handler_failure_to_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
