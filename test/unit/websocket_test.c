/* SPDX-License-Identifier: MIT */
/*
 * WebSockets through the in-process server (lib/realtime/websocket.c), for what a client of
 * examples/realtime cannot see: canal_ws_post() and canal_ws_group_send() from a thread that
 * is not a worker (order kept, every member reached on two workers), references outliving the
 * socket and the app, the subprotocol picked from the route's list, the argument checks of
 * canal_ws_send() and canal_ws_close(), and the code on_close is given.
 */
#include "test.h"
#include <pthread.h>
#include "client.h"

#define NCLIENTS 3
#define NMSG 50

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static canal_ws_t *sockets[NCLIENTS];
static size_t nsockets;
static canal_ws_group_t *group;
static int bad_text_rc, bad_code_rc, early_close_rc, closed_code;
static const char *picked;

static int on_open(canal_ws_t *ws, canal_req_t *req, void *data)
{
    int text_rc = canal_ws_send(ws, CANAL_WS_TEXT, "\xff", 1);
    int code_rc = canal_ws_close(ws, 1005, NULL);
    int close_rc = canal_ws_close(ws, 1000, NULL); /* on_open refuses by its return instead */
    pthread_mutex_lock(&lock); /* the test's records: its main thread reads them */
    bad_text_rc = text_rc, bad_code_rc = code_rc, early_close_rc = close_rc;
    picked = canal_ws_subprotocol(ws);
    if (group != NULL)
        canal_ws_join(ws, group);
    if (nsockets < NCLIENTS)
        sockets[nsockets++] = canal_ws_retain(ws);
    pthread_mutex_unlock(&lock);
    return canal_ws_send(ws, CANAL_WS_TEXT, "welcome", 7); /* queued until the 101 is out */
}

static void on_close(canal_ws_t *ws, int code, canal_str_t reason, void *data)
{
    pthread_mutex_lock(&lock);
    closed_code = code;
    pthread_mutex_unlock(&lock);
}

static canal_app_t *start_app(void)
{
    static const char *const protocols[] = {"b.example", "a.example", NULL};
    canal_config_t cfg;
    app_config(&cfg, 2);
    canal_app_t *app = canal_app_create(&cfg);
    canal_ws_spec_t spec = {.tmpl = "ws/{name}", .on_open = on_open, .on_close = on_close,
                            .subprotocols = protocols};
    assert_int_equal(canal_app_ws(app, &spec, NULL, NULL), 0);
    app_run(app);
    return app;
}

/* Opens a WebSocket; asserts the 101 (and its subprotocol, if want is not NULL). */
static int ws_dial(const char *offer, const char *want)
{
    int fd = dial();
    char req[512], head[2048];
    snprintf(req, sizeof(req),
             "GET /ws/x HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n%s\r\n", offer);
    send_str(fd, req);
    size_t len = 0;
    while (len < sizeof(head) - 1 && (len == 0 || strstr(head, "\r\n\r\n") == NULL)) {
        assert_int_equal(read(fd, head + len, 1), 1); /* byte by byte: no frame is read here */
        head[++len] = '\0';
    }
    assert_non_null(strstr(head, "HTTP/1.1 101"));
    assert_non_null(strstr(head, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")); /* RFC 6455's example */
    if (want != NULL)
        assert_non_null(strstr(head, want));
    return fd;
}

/* Reads exactly n bytes (TCP may hand them over in pieces). */
static void read_exact(int fd, void *out, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)out + got, n - got);
        assert_true(r > 0);
        got += (size_t)r;
    }
}

/* The next text message from the server (short, unfragmented), NUL-terminated. */
static void ws_read(int fd, char *out, size_t size)
{
    unsigned char h[2];
    read_exact(fd, h, 2);
    assert_int_equal(h[0], 0x81);
    size_t n = h[1];
    assert_true(n < 126 && n < size);
    read_exact(fd, out, n);
    out[n] = '\0';
}

static void post_text(canal_ws_t *ws, void *data)
{
    if (ws != NULL)
        canal_ws_send(ws, CANAL_WS_TEXT, data, strlen(data));
}

static void post_after_stop(canal_ws_t *ws, void *data)
{
    *(int *)data = ws == NULL ? 1 : -1;
}

static void test_threads(void **state)
{
    canal_app_t *app = start_app();
    canal_ws_group_t *g = canal_ws_group_create(app);
    assert_non_null(g);
    pthread_mutex_lock(&lock); /* handed to the workers' on_open under the lock */
    group = g;
    pthread_mutex_unlock(&lock);
    int fds[NCLIENTS];
    char msg[128];
    for (int i = 0; i < NCLIENTS; i++) {
        fds[i] = ws_dial("Sec-WebSocket-Protocol: a.example, b.example\r\n", "sec-websocket-protocol: b.example");
        ws_read(fds[i], msg, sizeof(msg));
        assert_string_equal(msg, "welcome");
    }
    pthread_mutex_lock(&lock);
    assert_int_equal(bad_text_rc, CANAL_EINVAL);
    assert_int_equal(bad_code_rc, CANAL_EINVAL);
    assert_int_equal(early_close_rc, CANAL_ESTATE);
    assert_string_equal(picked, "b.example");
    assert_int_equal(nsockets, NCLIENTS);
    pthread_mutex_unlock(&lock);
    assert_int_equal(canal_ws_group_size(group), NCLIENTS);
    /* from this thread, which is no worker: posts, then a group's messages, in order */
    for (int i = 0; i < NCLIENTS; i++)
        canal_ws_post(sockets[i], post_text, "posted");
    for (int k = 0; k < NMSG; k++) {
        snprintf(msg, sizeof(msg), "m%d", k);
        assert_int_equal(canal_ws_group_send(group, CANAL_WS_TEXT, msg, strlen(msg)), 0);
    }
    assert_int_equal(canal_ws_group_send(group, CANAL_WS_TEXT, "\xc0\x80", 2), CANAL_EINVAL);
    for (int i = 0; i < NCLIENTS; i++) {
        ws_read(fds[i], msg, sizeof(msg));
        assert_string_equal(msg, "posted");
        for (int k = 0; k < NMSG; k++) {
            char want[16];
            snprintf(want, sizeof(want), "m%d", k);
            ws_read(fds[i], msg, sizeof(msg));
            assert_string_equal(msg, want);
        }
    }
    /* a Close 4001 from a client: on_close is told 4001 */
    const unsigned char close4001[] = {0x88, 0x82, 0, 0, 0, 0, 0x0f, 0xa1};
    assert_int_equal(send(fds[0], close4001, sizeof(close4001), MSG_NOSIGNAL), (ssize_t)sizeof(close4001));
    unsigned char reply[4];
    read_exact(fds[0], reply, 4);
    assert_memory_equal(reply, "\x88\x02\x0f\xa1", 4);
    int code = 0;
    for (int i = 0; i < 500 && code != 4001; i++) {
        usleep(10000);
        pthread_mutex_lock(&lock);
        code = closed_code;
        pthread_mutex_unlock(&lock);
    }
    assert_int_equal(code, 4001);
    /* the others get 1001 when the app stops; the references outlive the sockets and the app */
    app_stop(app);
    for (int i = 1; i < NCLIENTS; i++) {
        read_exact(fds[i], reply, 4);
        assert_memory_equal(reply, "\x88\x16\x03\xe9", 4); /* 1001, "server shutting down" */
    }
    int ran = 0;
    canal_ws_post(sockets[0], post_after_stop, &ran);
    assert_int_equal(ran, 1);
    for (int i = 0; i < NCLIENTS; i++) {
        canal_ws_release(sockets[i]);
        close(fds[i]);
    }
    canal_ws_group_release(group);
    group = NULL;
    nsockets = 0;
    canal_app_destroy(app);
}

/* Before the app starts there are no workers: no group; a route needs a spec. */
static void test_before_start(void **state)
{
    canal_config_t cfg;
    app_config(&cfg, 1);
    canal_app_t *app = canal_app_create(&cfg);
    assert_null(canal_ws_group_create(app));
    canal_error_info_t err;
    assert_int_equal(canal_app_ws(app, NULL, NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_error(app, NULL), CANAL_EINVAL);
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_before_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
