/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the deployment plumbing, through apps running in this process: a TCP port
 * another app listens on is refused unless reuse_port; unix socket listeners (their mode, a
 * stale file replaced, a live one or a plain file refused, the file removed at the end, the
 * client address and trusted proxies); sockets inherited by socket activation (LISTEN_FDS);
 * and timers (canal_app_every(): counted calls, none after canal_app_stop()).
 */
#include "test.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <canal.h>
#include "core/core.h"
#include "client.h"

static int h_who(canal_req_t *req, void *data)
{
    canal_str_t c = canal_req_client_addr(req);
    return canal_res_text(req, 200, canal_req_printf(req, "%.*s", (int)c.len, c.base));
}

/* The last message the apps logged, for the tests that look for a reason. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_log[512];

static void keep_log(const canal_log_record_t *rec, void *data)
{
    pthread_mutex_lock(&log_lock);
    snprintf(last_log, sizeof(last_log), "%s", rec->msg);
    pthread_mutex_unlock(&log_lock);
}

static canal_app_t *make_app(unsigned threads, const char *proxies, int reuse_port)
{
    canal_config_t cfg;
    app_config(&cfg, threads);
    cfg.trusted_proxies = proxies;
    cfg.reuse_port = reuse_port;
    cfg.log = keep_log;
    canal_app_t *a = canal_app_create(&cfg);
    assert_non_null(a);
    assert_int_equal(canal_app_get(a, "who", h_who, NULL), 0);
    return a;
}

/* ---- a port another process (here: another app) listens on ---- */

static void port_taken(void **state)
{
    struct reply r;
    canal_app_t *first = make_app(2, NULL, 0);
    app_run(first); /* port 0: its two workers share the port the first bind picked */
    uint16_t port = canal_app_port(first, 0);
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
    assert_string_equal(canal_app_listener_addr(first, 0), addr);
    assert_null(canal_app_listener_addr(first, 1));

    canal_app_t *second = make_app(2, NULL, 0);
    assert_int_equal(canal_app_listen(second, "127.0.0.1", port), 0);
    assert_int_equal(canal_app_start(second), CANAL_ESYS);
    assert_non_null(strstr(last_log, "another process listens there"));
    assert_non_null(strstr(last_log, addr));
    canal_app_destroy(second);
    get("/who", &r); /* the first one is untouched */
    assert_int_equal(r.status, 200);

    /* told to share: both listen, and the kernel gives connections to both */
    second = make_app(2, NULL, 1);
    assert_int_equal(canal_app_listen(second, "127.0.0.1", port), 0);
    assert_int_equal(canal_app_start(second), 0);
    uint64_t before = canal_app_worker_requests(second, 0) + canal_app_worker_requests(second, 1);
    for (int i = 0; i < 64; i++) {
        get("/who", &r);
        assert_int_equal(r.status, 200);
    }
    uint64_t taken = canal_app_worker_requests(second, 0) + canal_app_worker_requests(second, 1) - before;
    assert_true(taken > 0 && taken < 64);
    canal_app_destroy(second);
    canal_app_destroy(first);
}

/* ---- unix sockets ---- */

static char sock_path[108];

static int dial_unix(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

/* GET /who over the unix socket with the header lines headers; the body into body. */
static int get_unix(const char *path, const char *headers, char *body, size_t size)
{
    static char buf[8192];
    int fd = dial_unix(path);
    assert_true(fd >= 0);
    char raw[512];
    snprintf(raw, sizeof(raw), "GET /who HTTP/1.1\r\nHost: t\r\n%sConnection: close\r\n\r\n", headers);
    send_str(fd, raw);
    read_all(fd, buf, sizeof(buf));
    close(fd);
    int status = 0;
    assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &status), 1);
    const char *end = strstr(buf, "\r\n\r\n");
    assert_non_null(end);
    snprintf(body, size, "%s", end + 4);
    return status;
}

static canal_app_t *unix_app(unsigned threads, const char *proxies, int reuse_port, unsigned mode)
{
    canal_app_t *a = make_app(threads, proxies, reuse_port);
    canal_error_info_t err;
    assert_int_equal(canal_app_listen_unix(a, sock_path, mode, NULL, &err), 0);
    return a;
}

static void unix_socket(void **state)
{
    char body[256], addr[128];
    snprintf(sock_path, sizeof(sock_path), "/tmp/canal-listen-test-%d.sock", (int)getpid());
    unlink(sock_path);
    canal_app_t *a = unix_app(2, NULL, 0, 0600);
    assert_int_equal(canal_app_start(a), 0);
    snprintf(addr, sizeof(addr), "unix:%s", sock_path);
    assert_string_equal(canal_app_listener_addr(a, 0), addr);
    assert_int_equal(canal_app_port(a, 0), 0);
    struct stat st;
    assert_int_equal(stat(sock_path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    /* both workers answer on the one socket; no peer address, whatever the headers say */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(get_unix(sock_path, "X-Forwarded-For: 203.0.113.9\r\n", body, sizeof(body)), 200);
        assert_string_equal(body, "-");
    }
    assert_true(canal_app_worker_requests(a, 0) + canal_app_worker_requests(a, 1) == 20);

    /* a live socket is not taken over */
    canal_app_t *b = make_app(1, NULL, 0);
    assert_int_equal(canal_app_listen_unix(b, sock_path, 0660, NULL, NULL), 0);
    assert_int_equal(canal_app_start(b), CANAL_ESYS);
    assert_non_null(strstr(last_log, "another process listens there"));
    canal_app_destroy(b);
    assert_int_equal(get_unix(sock_path, "", body, sizeof(body)), 200); /* still a's */

    /* with reuse_port it is: the new app takes the path, and the old one, stopping, leaves
     * the new file in place */
    b = unix_app(1, NULL, 1, 0660);
    assert_int_equal(canal_app_start(b), 0);
    uint64_t before = canal_app_worker_requests(b, 0);
    assert_int_equal(get_unix(sock_path, "", body, sizeof(body)), 200);
    assert_int_equal(canal_app_worker_requests(b, 0), before + 1);
    canal_app_destroy(a);
    assert_int_equal(stat(sock_path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660);
    assert_int_equal(get_unix(sock_path, "", body, sizeof(body)), 200);
    canal_app_destroy(b);
    assert_int_equal(stat(sock_path, &st), -1); /* removed at the end */
    assert_int_equal(errno, ENOENT);

    /* a stale socket file (nobody accepts on it) is replaced */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd); /* the file stays, as after a crash */
    assert_int_equal(stat(sock_path, &st), 0);
    a = unix_app(1, "unix", 0, 0666);
    assert_int_equal(canal_app_start(a), 0);
    /* "unix" among the trusted proxies: the peer is the proxy, X-Forwarded-For names the
     * client, and a hop that is not an address leaves the proxy's own "-" */
    assert_int_equal(get_unix(sock_path, "X-Forwarded-For: 198.51.100.1, 203.0.113.9\r\n", body, sizeof(body)), 200);
    assert_string_equal(body, "203.0.113.9");
    assert_int_equal(get_unix(sock_path, "X-Forwarded-For: unknown\r\n", body, sizeof(body)), 200);
    assert_string_equal(body, "-");
    assert_int_equal(get_unix(sock_path, "", body, sizeof(body)), 200);
    assert_string_equal(body, "-");
    canal_app_destroy(a);

    /* a file that is not a socket is left alone */
    fd = open(sock_path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    a = make_app(1, NULL, 1);
    assert_int_equal(canal_app_listen_unix(a, sock_path, 0660, NULL, NULL), 0);
    assert_int_equal(canal_app_start(a), CANAL_ESYS);
    assert_non_null(strstr(last_log, "exists and is not a socket"));
    canal_app_destroy(a);
    assert_int_equal(stat(sock_path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    unlink(sock_path);
}

static void unix_socket_errors(void **state)
{
    canal_error_info_t err;
    char longest[200];
    memset(longest, 'a', sizeof(longest));
    longest[108] = '\0';
    canal_app_t *a = make_app(1, NULL, 0);
    assert_int_equal(canal_app_listen_unix(a, longest, 0660, NULL, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "longer than 107 bytes"));
    assert_int_equal(canal_app_listen_unix(a, "", 0660, NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_listen_unix(a, "/tmp/x.sock", 01777, NULL, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "more than 0777"));
    assert_int_equal(canal_app_listen_unix(a, "/tmp/x.sock", 0660, "no-such-user-here", &err), CANAL_EINVAL);
    assert_string_equal(err.message, "unix socket owner: no user 'no-such-user-here'");
    assert_int_equal(canal_app_listen_unix(a, "/tmp/x.sock", 0660, ":no-such-group-here", &err), CANAL_EINVAL);
    assert_string_equal(err.message, "unix socket owner: no group 'no-such-group-here'");
    assert_int_equal(canal_app_listen_unix(a, "/tmp/x.sock", 0660, "root:", &err), CANAL_EINVAL);
    assert_int_equal(canal_app_listen_unix(a, "/tmp/x.sock", 0660, "0:0", &err), 0); /* numbers */
    canal_app_destroy(a);

    /* the owner is given to the file: our own user and group always work */
    snprintf(sock_path, sizeof(sock_path), "/tmp/canal-listen-own-%d.sock", (int)getpid());
    char owner[64];
    snprintf(owner, sizeof(owner), "%u:%u", (unsigned)getuid(), (unsigned)getgid());
    a = make_app(1, NULL, 0);
    assert_int_equal(canal_app_listen_unix(a, sock_path, 0640, owner, &err), 0);
    assert_int_equal(canal_app_start(a), 0);
    struct stat st;
    assert_int_equal(stat(sock_path, &st), 0);
    assert_int_equal(st.st_uid, getuid());
    assert_int_equal(st.st_gid, getgid());
    assert_int_equal(st.st_mode & 0777, 0640);
    canal_app_destroy(a);

    /* an owner without a unix socket to give it to is a mistake, said at start */
    canal_config_t cfg;
    app_config(&cfg, 1);
    cfg.unix_owner = ":0";
    cfg.log = keep_log;
    a = canal_app_create(&cfg);
    assert_int_equal(canal_app_start(a), CANAL_ESYS);
    assert_non_null(strstr(last_log, "a unix socket owner was given without a unix socket"));
    canal_app_destroy(a);
    cfg.unix_owner = NULL;

    /* the configuration's listen must be unix:PATH */
    cfg.listen = "127.0.0.1:80";
    assert_null(canal_app_create(&cfg));
    /* and is the default listener */
    cfg.listen = "unix:/tmp/canal-listen-cfg.sock";
    cfg.unix_mode = 0604;
    a = canal_app_create(&cfg);
    assert_non_null(a);
    assert_int_equal(canal_app_start(a), 0);
    assert_string_equal(canal_app_listener_addr(a, 0), "unix:/tmp/canal-listen-cfg.sock");
    assert_int_equal(stat("/tmp/canal-listen-cfg.sock", &st), 0);
    assert_int_equal(st.st_mode & 0777, 0604);
    assert_int_equal(canal_app_listen_unix(a, "/tmp/y.sock", 0660, NULL, &err), CANAL_ESTATE);
    canal_app_destroy(a);
}

/* ---- socket activation ---- */

static void socket_activation(void **state)
{
    /* a listening TCP socket and a unix one at descriptors 3 and 4, as systemd passes them */
    int saved3 = fcntl(3, F_DUPFD, 30), saved4 = fcntl(4, F_DUPFD, 30); /* whatever was there */
    int tcp = socket(AF_INET, SOCK_STREAM, 0), on = 1;
    setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    struct sockaddr_in sin = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    assert_int_equal(bind(tcp, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(listen(tcp, 16), 0);
    snprintf(sock_path, sizeof(sock_path), "/tmp/canal-listen-act-%d.sock", (int)getpid());
    unlink(sock_path);
    int ux = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
    assert_int_equal(bind(ux, (struct sockaddr *)&sun, sizeof(sun)), 0);
    assert_int_equal(listen(ux, 16), 0);
    int t = fcntl(tcp, F_DUPFD, 20), u = fcntl(ux, F_DUPFD, 20); /* away from 3 and 4 */
    close(tcp);
    close(ux);
    assert_int_equal(dup2(t, 3), 3);
    assert_int_equal(dup2(u, 4), 4);
    close(t);
    close(u);
    char pid[16];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());

    /* meant for another process: ignored */
    setenv("LISTEN_PID", "1", 1);
    setenv("LISTEN_FDS", "2", 1);
    canal_app_t *a = make_app(2, NULL, 0);
    assert_int_equal(canal_app_start(a), 0);
    assert_string_not_equal(canal_app_listener_addr(a, 0), "unix:");
    assert_null(canal_app_listener_addr(a, 1));
    canal_app_destroy(a);

    setenv("LISTEN_PID", pid, 1);
    setenv("LISTEN_FDNAMES", "web:local", 1);
    a = make_app(2, NULL, 0);
    assert_int_equal(canal_app_start(a), 0);
    /* they take the default listener's place, in order */
    char addr[128];
    snprintf(addr, sizeof(addr), "unix:%s", sock_path);
    assert_true(canal_app_port(a, 0) != 0);
    assert_string_equal(canal_app_listener_addr(a, 1), addr);
    assert_null(canal_app_listener_addr(a, 2));
    client_port = canal_app_port(a, 0);
    struct reply r;
    for (int i = 0; i < 8; i++) {
        get("/who", &r);
        assert_int_equal(r.status, 200);
        char body[64];
        assert_int_equal(get_unix(sock_path, "", body, sizeof(body)), 200);
    }
    /* only the first app of a process takes them */
    canal_app_t *b = make_app(1, NULL, 0);
    assert_int_equal(canal_app_start(b), 0);
    assert_null(canal_app_listener_addr(b, 1));
    canal_app_destroy(b);
    canal_app_destroy(a);
    /* closed by canal at the end; the unix file is systemd's, not removed */
    assert_int_equal(fcntl(3, F_GETFD), -1);
    struct stat st;
    assert_int_equal(stat(sock_path, &st), 0);
    unlink(sock_path);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (saved3 >= 0)
        dup2(saved3, 3), close(saved3);
    if (saved4 >= 0)
        dup2(saved4, 4), close(saved4);
}

/* ---- timers ---- */

struct counter {
    atomic_int calls;
    pthread_t thread;
    atomic_int same_thread;
};

static void count(canal_app_t *app, void *data)
{
    struct counter *c = data;
    if (atomic_fetch_add(&c->calls, 1) == 0)
        c->thread = pthread_self();
    else if (!pthread_equal(c->thread, pthread_self()))
        atomic_store(&c->same_thread, 0);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void timers(void **state)
{
    static struct counter fast = {.same_thread = 1}, slow = {.same_thread = 1};
    canal_app_t *a = make_app(2, NULL, 0);
    assert_int_equal(canal_app_every(a, 10, count, &fast), 0);
    assert_int_equal(canal_app_every(a, 100, count, &slow), 0);
    canal_error_info_t err;
    assert_int_equal(canal_app_every(a, 0, count, &fast), CANAL_EINVAL);
    assert_int_equal(canal_app_error(a, &err), CANAL_EINVAL); /* kept: start would fail */
    canal_app_destroy(a);

    a = make_app(2, NULL, 0);
    assert_int_equal(canal_app_every(a, 10, count, &fast), 0);
    assert_int_equal(canal_app_every(a, 100, count, &slow), 0);
    assert_int_equal(canal_app_every(a, 10, NULL, NULL), CANAL_EINVAL);
    a->reg_err.code = 0; /* the refused one above is what the next lines check, not start */
    app_run(a);
    assert_int_equal(canal_app_every(a, 10, count, &fast), CANAL_ESTATE);
    sleep_ms(550);
    int f = atomic_load(&fast.calls), s = atomic_load(&slow.calls);
    /* 10 ms for 550 ms: about 50 (fewer when the machine is busy); 100 ms: about 5 */
    assert_true(f >= 10 && f <= 56);
    assert_true(s >= 2 && s <= 6);
    assert_true(atomic_load(&fast.same_thread) && atomic_load(&slow.same_thread));
    canal_app_stop(a);
    int at_stop = atomic_load(&fast.calls);
    sleep_ms(100); /* ten more periods: no call begins */
    assert_int_equal(canal_app_wait(a), 0);
    assert_true(atomic_load(&fast.calls) <= at_stop + 1); /* one running at the stop may end */
    canal_app_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(port_taken),        cmocka_unit_test(unix_socket), cmocka_unit_test(unix_socket_errors),
        cmocka_unit_test(socket_activation), cmocka_unit_test(timers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
