/* SPDX-License-Identifier: MIT */
/*
 * Server-sent events and streams: the event format (canal_sse_format(): fields, data split at
 * CR, LF and CRLF so that a WHATWG parser gives the data back, the size bound, bad ids and
 * types), checked against a small parser written from the spec; then the stream calls'
 * contracts through a running app (canal/testing.h): the states (CANAL_ESTATE after begin and
 * after end, CANAL_ECLOSED on HEAD), the helpers' bytes, a JSON writer's sticky error, and the
 * queue bound (CANAL_EAGAIN, and a write to an empty queue always taken).
 */
#include "test.h"
#include <canal.h>
#include <canal/testing.h>
#include <stdatomic.h>
#include <unistd.h>

/* The data of the first event in text, per the WHATWG event stream interpretation. */
static char *parse_data(const char *text, size_t len, size_t *out_len)
{
    char *data = malloc(len + 1);
    size_t n = 0, i = 0;
    int any = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '\r' && text[j] != '\n')
            j++;
        if (j == i) /* a blank line dispatches */
            break;
        if (j - i >= 5 && memcmp(text + i, "data:", 5) == 0) {
            size_t v = i + 5 + (j > i + 5 && text[i + 5] == ' ');
            memcpy(data + n, text + v, j - v);
            n += j - v;
            data[n++] = '\n';
            any = 1;
        }
        i = j + (j < len && text[j] == '\r' && j + 1 < len && text[j + 1] == '\n' ? 2 : 1);
    }
    *out_len = any ? n - 1 : 0; /* the last LF is removed */
    return data;
}

static void format_fields(void **state)
{
    char out[256];
    long n = canal_sse_format(out, sizeof(out), "7", "tick", "{\"i\":7}", 7);
    assert_int_equal(n, (long)strlen("id: 7\nevent: tick\ndata: {\"i\":7}\n\n"));
    assert_memory_equal(out, "id: 7\nevent: tick\ndata: {\"i\":7}\n\n", (size_t)n);
    n = canal_sse_format(out, sizeof(out), NULL, NULL, "x", 1);
    assert_memory_equal(out, "data: x\n\n", (size_t)n);
    n = canal_sse_format(out, sizeof(out), "1", NULL, NULL, 0);
    assert_memory_equal(out, "id: 1\n\n", (size_t)n);
    n = canal_sse_format(out, sizeof(out), NULL, NULL, "", 0);
    assert_memory_equal(out, "data: \n\n", (size_t)n);
}

static void format_multiline(void **state)
{
    static const struct {
        const char *in, *lines, *back;
    } cases[] = {
        {"a\nb", "data: a\ndata: b\n\n", "a\nb"},
        {"a\rb", "data: a\ndata: b\n\n", "a\nb"},
        {"a\r\nb", "data: a\ndata: b\n\n", "a\nb"},
        {"a\n\rb", "data: a\ndata: \ndata: b\n\n", "a\n\nb"},
        {"a\n", "data: a\ndata: \n\n", "a\n"},
        {"\r\n", "data: \ndata: \n\n", "\n"},
        {"a\r", "data: a\ndata: \n\n", "a\n"},
        {"\n\n\n", "data: \ndata: \ndata: \ndata: \n\n", "\n\n\n"},
        {"x\r\n\r\ny", "data: x\ndata: \ndata: y\n\n", "x\n\ny"},
        {": not a comment", "data: : not a comment\n\n", ": not a comment"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char out[256];
        size_t len = strlen(cases[k].in), back_len;
        long n = canal_sse_format(out, sizeof(out), NULL, NULL, cases[k].in, len);
        assert_true(n > 0);
        assert_true((size_t)n <= canal_sse_event_size(NULL, NULL, len));
        assert_int_equal((size_t)n, strlen(cases[k].lines));
        assert_memory_equal(out, cases[k].lines, (size_t)n);
        char *back = parse_data(out, (size_t)n, &back_len);
        assert_int_equal(back_len, strlen(cases[k].back));
        assert_memory_equal(back, cases[k].back, back_len);
        free(back);
    }
}

/* Random data of CR, LF and letters: the parser gives it back with every break as LF. */
static void format_random(void **state)
{
    srand(16);
    for (int round = 0; round < 2000; round++) {
        char in[64], want[64], out[1024];
        size_t len = (size_t)(rand() % 40), w = 0;
        for (size_t i = 0; i < len; i++)
            in[i] = "ab\r\n"[rand() % 4];
        for (size_t i = 0; i < len; i++) {
            if (in[i] == '\r' && i + 1 < len && in[i + 1] == '\n')
                i++;
            want[w++] = in[i] == '\r' ? '\n' : in[i];
        }
        long n = canal_sse_format(out, sizeof(out), "9", "e", in, len);
        assert_true(n > 0 && (size_t)n <= canal_sse_event_size("9", "e", len));
        size_t back_len;
        char *back = parse_data(out, (size_t)n, &back_len);
        assert_int_equal(back_len, w);
        assert_memory_equal(back, want, w);
        free(back);
    }
}

static void format_errors(void **state)
{
    char out[64];
    assert_int_equal(canal_sse_format(out, sizeof(out), "1\n", NULL, "x", 1), CANAL_EINVAL);
    assert_int_equal(canal_sse_format(out, sizeof(out), "1\r", NULL, "x", 1), CANAL_EINVAL);
    assert_int_equal(canal_sse_format(out, sizeof(out), NULL, "a\nb", "x", 1), CANAL_EINVAL);
    assert_int_equal(canal_sse_format(out, sizeof(out), NULL, NULL, NULL, 3), CANAL_EINVAL);
    assert_int_equal(canal_sse_format(out, 8, NULL, NULL, "0123456789", 10), CANAL_ELIMIT);
    /* exactly the size it needs */
    assert_int_equal(canal_sse_format(out, 11, NULL, NULL, "abc", 3), 11); /* "data: abc\n\n" */
    assert_int_equal(canal_sse_format(out, 10, NULL, NULL, "abc", 3), CANAL_ELIMIT);
}

/* ---- through an app ---- */

/* Handlers run on the app's worker thread, where cmocka cannot fail a test: they count what
 * went wrong, and the test asserts on the count. */
static atomic_int bad, bad_line;
#define EXPECT_TRUE(c)                                                                      \
    do {                                                                                    \
        if (!(c)) {                                                                         \
            atomic_store(&bad_line, __LINE__);                                              \
            atomic_fetch_add(&bad, 1);                                                      \
        }                                                                                   \
    } while (0)
#define EXPECT_EQ(a, b) EXPECT_TRUE((a) == (b))

static int handler_states(canal_req_t *req, void *data)
{
    canal_res_header(req, "x-before", "1");
    canal_stream_t *s = canal_sse_begin(req, NULL, NULL);
    EXPECT_TRUE(s != NULL);
    EXPECT_EQ(canal_res_committed(req), 1);
    EXPECT_TRUE(canal_sse_begin(req, NULL, NULL) == NULL); /* committed already */
    EXPECT_EQ(canal_res_text(req, 200, "late"), CANAL_ESTATE);
    EXPECT_EQ(canal_res_header(req, "x-late", "1"), CANAL_ESTATE);
    EXPECT_EQ(canal_sse_event(s, "a\nb", NULL, "x", 1), CANAL_EINVAL);
    EXPECT_EQ(canal_sse_comment(s, "two\nlines"), CANAL_EINVAL);
    EXPECT_EQ(canal_sse_retry(s, 1500), 0);
    EXPECT_EQ(canal_sse_comment(s, "hello"), 0);
    EXPECT_EQ(canal_sse_event(s, "1", "tick", "a\r\nb", 4), 0);
    EXPECT_EQ(canal_stream_end(s), 0);
    return 0;
}

static int handler_head(canal_req_t *req, void *data)
{
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", NULL, NULL);
    EXPECT_TRUE(s != NULL);
    EXPECT_EQ(canal_stream_write(s, "x", 1), CANAL_ECLOSED); /* the head was the whole answer */
    canal_stream_end(s);
    return 0;
}

/* The pattern of docs/realtime.md on HEAD: the owner keeps the handle (a retained one, as a
 * subscriber list would) until the closed callback says the stream is over. */
static atomic_int head_closed, head_in_begin;
static canal_stream_t *head_kept;

static void head_on_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    atomic_store(&head_closed, why);
    canal_stream_release(head_kept); /* the "subscriber list"'s reference */
    canal_stream_end(s);
}

static int handler_head_sub(canal_req_t *req, void *data)
{
    static const canal_stream_cb_t cb = {.closed = head_on_closed};
    atomic_store(&head_in_begin, 1);
    canal_stream_t *s = canal_sse_begin(req, &cb, NULL);
    atomic_store(&head_in_begin, atomic_load(&head_closed) != 0 ? 2 : 0); /* 2: told too early */
    EXPECT_TRUE(s != NULL);
    head_kept = canal_stream_retain(s);
    EXPECT_EQ(canal_sse_event(s, NULL, NULL, "x", 1), CANAL_ECLOSED);
    return 0; /* not ended here: the closed callback ends it */
}

/* A post after the owner's end, through a retained handle: the stream is ended, not freed. */
static atomic_int retained_ran;

static void retained_post(canal_stream_t *s, void *data)
{
    atomic_store(&retained_ran, canal_stream_write(s, "x", 1) == CANAL_ESTATE ? 1 : 2);
    canal_stream_release(s);
}

static int handler_retained(canal_req_t *req, void *data)
{
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", NULL, NULL);
    EXPECT_TRUE(s != NULL);
    canal_stream_t *kept_ref = canal_stream_retain(s);
    EXPECT_TRUE(kept_ref == s);
    EXPECT_EQ(canal_stream_write(s, "body", 4), 0);
    EXPECT_EQ(canal_stream_end(s), 0);
    EXPECT_EQ(canal_stream_post(kept_ref, retained_post, NULL), 0); /* runs after the end */
    return 0;
}

/* SSE groups (canal/sse_group.h), in process: the calls' codes, an event delivered through the
 * worker's queue, and the member gone when its stream ends. */
static canal_sse_group_t *grp;

static void group_end(canal_stream_t *s, void *data)
{
    canal_stream_end(s); /* leaves the group */
}

static int handler_group(canal_req_t *req, void *data)
{
    canal_stream_t *s = canal_sse_begin(req, NULL, NULL);
    EXPECT_TRUE(s != NULL);
    EXPECT_EQ(canal_sse_join(s, grp), 0);
    EXPECT_EQ(canal_sse_join(s, grp), CANAL_EEXIST);
    EXPECT_EQ(canal_sse_group_size(grp), 1);
    EXPECT_EQ(canal_sse_group_send(grp, "bad\nevent", "x", 1), CANAL_EINVAL);
    EXPECT_EQ(canal_sse_group_send(grp, "chat", "hello\nworld", 11), 0); /* after the return */
    EXPECT_EQ(canal_stream_timer(s, 100, group_end), 0);
    return 0;
}

static int handler_group_left(canal_req_t *req, void *data)
{
    canal_stream_t *s = canal_sse_begin(req, NULL, NULL);
    EXPECT_TRUE(s != NULL);
    if (canal_req_method(req).len == 4 && memcmp(canal_req_method(req).base, "HEAD", 4) == 0) { /* no member */
        EXPECT_EQ(canal_sse_join(s, grp), CANAL_ESTATE);
        canal_stream_end(s);
        return 0;
    }
    EXPECT_EQ(canal_sse_join(s, grp), 0);
    EXPECT_EQ(canal_sse_leave(s, grp), 0);
    EXPECT_EQ(canal_sse_leave(s, grp), CANAL_ENOTFOUND);
    EXPECT_EQ(canal_sse_group_size(grp), 0);
    EXPECT_EQ(canal_sse_group_send(grp, NULL, "missed", 6), 0);
    EXPECT_EQ(canal_stream_timer(s, 100, group_end), 0);
    return 0;
}

/* A small queue: the writes that do not fit are refused until the queue is handed on. */
static int handler_bound(canal_req_t *req, void *data)
{
    static char big[4096];
    canal_stream_t *s = canal_res_stream_begin(req, "text/plain", &(canal_stream_cb_t){.max_queued = 1000}, NULL);
    EXPECT_TRUE(s != NULL);
    memset(big, 'b', sizeof(big));
    /* the head is in flight: writes queue; the first is taken whatever its size */
    EXPECT_EQ(canal_stream_write(s, big, sizeof(big)), 0);
    EXPECT_EQ(canal_stream_write(s, "x", 1), CANAL_EAGAIN);
    canal_jw_t *w = canal_stream_jw(s);
    canal_jw_key(w, "outside an object"); /* a sticky error: nothing is written */
    EXPECT_EQ(canal_stream_jw_flush(s), CANAL_ESTATE);
    EXPECT_EQ(canal_stream_end(s), 0);
    return 0;
}

/* A stream whose owner keeps the handle past the app's stop (it does not end it when told of
 * the shutdown): a post then runs at once on the posting thread, with the stream closed. */
static canal_stream_t *kept;
static atomic_int shutdown_told;

static void kept_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    atomic_store(&shutdown_told, why);
}

static int handler_kept(canal_req_t *req, void *data)
{
    static const canal_stream_cb_t cb = {.closed = kept_closed};
    kept = canal_res_stream_begin(req, "text/plain", &cb, NULL);
    EXPECT_TRUE(kept != NULL);
    EXPECT_EQ(canal_stream_write(kept, "open\n", 5), 0);
    return 0;
}

static void late_post(canal_stream_t *s, void *data)
{
    int *ran = data;
    *ran = (s == kept) + (canal_stream_write(s, "late", 4) == CANAL_ECLOSED) + (canal_stream_req(s) == NULL);
    canal_stream_end(s);
}

static void app_streams(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.port = 0;
    cfg.threads = 1;
    cfg.no_signals = 1;
    canal_app_t *app = canal_app_create(&cfg);
    assert_int_equal(canal_app_get(app, "states", handler_states, NULL), 0);
    assert_int_equal(canal_app_get(app, "head", handler_head, NULL), 0);
    assert_int_equal(canal_app_get(app, "bound", handler_bound, NULL), 0);
    assert_int_equal(canal_app_get(app, "headsub", handler_head_sub, NULL), 0);
    assert_int_equal(canal_app_get(app, "retained", handler_retained, NULL), 0);
    assert_int_equal(canal_app_get(app, "group", handler_group, NULL), 0);
    assert_int_equal(canal_app_get(app, "group-left", handler_group_left, NULL), 0);
    assert_null(canal_sse_group_create(app)); /* not started: no worker count yet */
    assert_int_equal(canal_app_get(app, "kept", handler_kept, NULL), 0);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);

    canal_test_response_t *r = canal_test_get(t, "/states");
    assert_non_null(r);
    assert_int_equal(r->status, 200);
    assert_string_equal(canal_test_header(r, "content-type"), "text/event-stream");
    assert_string_equal(canal_test_header(r, "cache-control"), "no-cache");
    assert_string_equal(canal_test_header(r, "x-before"), "1");
    assert_null(canal_test_header(r, "x-late"));
    assert_null(canal_test_header(r, "content-length"));
    static const char want[] = "retry: 1500\n: hello\nid: 1\nevent: tick\ndata: a\ndata: b\n\n";
    assert_int_equal(r->body_len, sizeof(want) - 1);
    assert_memory_equal(r->body, want, sizeof(want) - 1);
    canal_test_response_free(r);

    r = canal_test_request(t, "HEAD", "/head", NULL, 0, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->status, 200);
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);

    /* HEAD on an event stream: the closed callback comes, after the begin */
    r = canal_test_request(t, "HEAD", "/headsub", NULL, 0, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->status, 200);
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);
    for (int i = 0; i < 200 && atomic_load(&head_closed) == 0; i++)
        usleep(5000);
    assert_int_equal(atomic_load(&head_closed), CANAL_STREAM_GONE);
    assert_int_equal(atomic_load(&head_in_begin), 0);

    r = canal_test_get(t, "/retained");
    assert_non_null(r);
    assert_int_equal(r->body_len, 4);
    canal_test_response_free(r);
    for (int i = 0; i < 200 && atomic_load(&retained_ran) == 0; i++)
        usleep(5000);
    assert_int_equal(atomic_load(&retained_ran), 1);

    grp = canal_sse_group_create(app);
    assert_non_null(grp);
    assert_int_equal(canal_sse_group_share(grp, "g", 1), CANAL_ENOTFOUND); /* no --store */
    r = canal_test_get(t, "/group");
    assert_non_null(r);
    static const char ev[] = "event: chat\ndata: hello\ndata: world\n\n";
    assert_int_equal(r->body_len, sizeof(ev) - 1);
    assert_memory_equal(r->body, ev, sizeof(ev) - 1);
    canal_test_response_free(r);
    assert_int_equal(canal_sse_group_size(grp), 0); /* ended: left */
    r = canal_test_get(t, "/group-left");
    assert_non_null(r);
    assert_int_equal(r->body_len, 0);
    canal_test_response_free(r);
    r = canal_test_request(t, "HEAD", "/group-left", NULL, 0, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->status, 200);
    canal_test_response_free(r);
    assert_int_equal(canal_sse_group_size(grp), 0);
    canal_sse_group_release(grp);

    r = canal_test_get(t, "/bound");
    assert_non_null(r);
    assert_int_equal(r->body_len, 4096);
    canal_test_response_free(r);

    /* a stream still open when the app stops: ended within the drain, the owner told */
    canal_test_set_timeout(t, 500);
    r = canal_test_get(t, "/kept");
    canal_test_response_free(r); /* the body never ends while the app runs: a timeout */
    assert_int_equal(canal_test_stop(t), 0);
    assert_int_equal(atomic_load(&shutdown_told), CANAL_STREAM_SHUTDOWN);
    int ran = 0;
    assert_int_equal(canal_stream_post(kept, late_post, &ran), 0);
    assert_int_equal(ran, 3); /* at once, here, closed */
    canal_app_destroy(app);
    if (atomic_load(&bad) != 0)
        fail_msg("%d check(s) failed in handlers, the last at line %d", atomic_load(&bad), atomic_load(&bad_line));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format_fields),
        cmocka_unit_test(format_multiline),
        cmocka_unit_test(format_random),
        cmocka_unit_test(format_errors),
        cmocka_unit_test(app_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
