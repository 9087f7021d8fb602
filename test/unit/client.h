/* SPDX-License-Identifier: MIT */
/* Helpers shared by canal's in-process unit tests, header-only: a tiny blocking HTTP/1.1 client
 * (one request per connection, Connection: close; or raw sockets), apps on an ephemeral port,
 * and configuration checks. Every function is static inline: a test takes the ones it needs. */
#ifndef CANAL_TEST_CLIENT_H
#define CANAL_TEST_CLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <canal.h>

/* ---- the client ---- */

static uint16_t client_port;

struct reply {
    int status;
    char head[4096];
    char body[8192];
    size_t body_len;
};

/* Connects to 127.0.0.1:client_port; a read on it waits 10 s at most. */
static inline int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(client_port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

/* Sends all of s in one call, or fails. */
static inline void send_str(int fd, const char *s)
{
    assert_int_equal(send(fd, s, strlen(s), MSG_NOSIGNAL), (ssize_t)strlen(s));
}

/* Reads until the server closes (or 10 s pass: then fails); NUL-terminates. Returns the length. */
static inline size_t read_all(int fd, char *buf, size_t size)
{
    size_t len = 0;
    ssize_t n = 0;
    while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
        len += (size_t)n;
    if (len < size - 1 && n < 0)
        fail_msg("read: %s (the server neither answered nor closed)", strerror(errno));
    buf[len] = '\0';
    return len;
}

/* Sends raw on a new connection; the answer's status, head and body into r. */
static inline void request(const char *raw, struct reply *r)
{
    static char buf[16384];
    int fd = dial();
    send_str(fd, raw);
    size_t len = read_all(fd, buf, sizeof(buf));
    close(fd);
    memset(r, 0, sizeof(*r));
    assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &r->status), 1);
    char *end = strstr(buf, "\r\n\r\n");
    assert_non_null(end);
    snprintf(r->head, sizeof(r->head), "%.*s", (int)(end - buf), buf);
    r->body_len = len - (size_t)(end + 4 - buf);
    memcpy(r->body, end + 4, r->body_len);
}

/* GET path with Host: t, the header lines headers (each ending in \r\n) and Connection: close. */
static inline void get_with(const char *path, const char *headers, struct reply *r)
{
    char raw[2048];
    snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: t\r\n%sConnection: close\r\n\r\n", path, headers);
    request(raw, r);
}

/* GET path with the headers X-One: 1 and X-Two: two. */
static inline void get(const char *path, struct reply *r)
{
    get_with(path, "X-One: 1\r\nX-Two: two\r\n", r);
}

/* The value of the header name in r's head, found case-insensitively ("" if absent); a static
 * buffer, overwritten by the next call. */
static inline const char *header(const struct reply *r, const char *name)
{
    static char value[512];
    char needle[128];
    snprintf(needle, sizeof(needle), "\r\n%s: ", name);
    const char *at = strcasestr(r->head, needle);
    value[0] = '\0';
    if (at != NULL) {
        at += strlen(needle);
        size_t n = strcspn(at, "\r");
        snprintf(value, sizeof(value), "%.*s", (int)n, at);
    }
    return value;
}

/* ---- apps in this process ---- */

/* One row of add_routes()'s table: a method, a template and its handler (no data). */
struct test_route {
    const char *method, *tmpl;
    canal_handler_fn handler;
};

/* canal_config_init() for a test app: an ephemeral port, threads workers, no signal handlers. */
static inline void app_config(canal_config_t *cfg, unsigned threads)
{
    canal_config_init(cfg);
    cfg->port = 0;
    cfg->threads = threads;
    cfg->no_signals = 1;
}

/* Registers each route of a table ending in {NULL} (canal_app_route()), failing on an error. */
static inline void add_routes(canal_app_t *app, const struct test_route *routes)
{
    for (const struct test_route *t = routes; t->method != NULL; t++)
        if (canal_app_route(app, &(canal_endpoint_spec_t){.method = t->method, .tmpl = t->tmpl, .handler = t->handler}, NULL, NULL) != 0)
            fail_msg("route %s %s was refused", t->method, t->tmpl);
}

/* Starts app, failing if it does not start, and points the client at its first port. */
static inline void app_run(canal_app_t *app)
{
    assert_int_equal(canal_app_start(app), 0);
    client_port = canal_app_port(app, 0);
}

/* Stops a started app and asserts that canal_app_wait() returns 0. */
static inline void app_stop(canal_app_t *app)
{
    canal_app_stop(app);
    assert_int_equal(canal_app_wait(app), 0);
}

/* Stops *app if it was started (app_stop()), destroys it and *mvc (if any), clears both. */
static inline void app_finish(canal_app_t **app, canal_mvc_t **mvc)
{
    if (canal_app_port(*app, 0) != 0)
        app_stop(*app);
    canal_app_destroy(*app);
    canal_mvc_destroy(*mvc);
    *app = NULL;
    *mvc = NULL;
}

/* ---- configuration ---- */

/* Asserts that canal_config_from_args() takes all of argv (ending in NULL): 0, and no argument left. */
static inline void took_args(canal_config_t *cfg, char **argv)
{
    canal_error_info_t err;
    int argc = 0;
    while (argv[argc] != NULL)
        argc++;
    assert_int_equal(canal_config_from_args(cfg, &argc, argv, &err), 0);
    assert_int_equal(argc, 1);
}

/* Asserts that canal_config_from_args() refuses "prog flag value" with CANAL_EINVAL, and
 * returns its message (a static buffer). */
static inline const char *refused_arg(canal_config_t *cfg, const char *flag, const char *value)
{
    static canal_error_info_t err;
    char *argv[] = {"prog", (char *)flag, (char *)value, NULL};
    int argc = 3;
    assert_int_equal(canal_config_from_args(cfg, &argc, argv, &err), CANAL_EINVAL);
    return err.message;
}

/* Sets the environment variables of a list of name, value pairs ending in NULL. */
static inline void set_env(const char *const *pairs)
{
    for (; *pairs != NULL; pairs += 2)
        setenv(pairs[0], pairs[1], 1);
}

/* Unsets the environment variables of a list as set_env() takes it. */
static inline void unset_env(const char *const *pairs)
{
    for (; *pairs != NULL; pairs += 2)
        unsetenv(pairs[0]);
}

#endif
