/* SPDX-License-Identifier: MIT */
/*
 * The test client (canal/testing.h): an app started on an extra 127.0.0.1:0 listener and a
 * small blocking HTTP/1.1 client over a plain socket.
 *
 * It is built into libcanal-testing, apart from libcanal, and sees only canal's public
 * headers, as any test of an app would.
 *
 * The client keeps one connection alive. When the server has closed it in the meantime (it
 * said "Connection: close", or an idle timeout went by), the write may still succeed and the
 * read then sees the end of the stream with no byte of an answer: the request is then sent
 * once more on a new connection, as browsers do. Every wait goes through poll() with the
 * client's timeout, so a server that never answers fails the request instead of hanging the
 * test.
 *
 * An answer is parsed into a growable buffer, then packed into one allocation (the struct,
 * the header array, the strings and the body) so that canal_test_response_free() is free().
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <canal/testing.h>

/* Guards against a runaway answer: the head and the body of one answer. */
#define MAX_HEAD (64 * 1024)
#define MAX_BODY ((size_t)256 * 1024 * 1024)

/* A cookie of the jar (RFC 6265 5.3, for one host: Domain is not looked at) */
struct cookie {
    char *name, *value, *path;
    long long expires_ms; /* when it goes (CLOCK_REALTIME), or -1: at the client's end */
};

struct canal_test {
    canal_app_t *app;
    uint16_t port;
    int fd;              /* the kept-alive connection, or -1 */
    size_t connections;  /* connections opened so far */
    unsigned timeout_ms;
    char error[200];
    char *buf;           /* bytes read and not consumed yet */
    size_t len, cap;
    int no_jar;          /* canal_test_set_cookies(t, 0) */
    struct cookie *jar;
    size_t njar;
};

/* Records why a request failed; returns NULL so callers can `return set_error(...)`. */
static void *set_error(canal_test_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void *set_error(canal_test_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->error, sizeof(t->error), fmt, ap);
    va_end(ap);
    return NULL;
}

static void set_err(canal_error_info_t *err, int code, const char *msg)
{
    if (err != NULL) {
        err->code = code;
        err->position = 0;
        snprintf(err->message, sizeof(err->message), "%s", msg);
    }
}

/*
 * The port of the listener canal_test_start() added. The listeners are numbered in the order
 * added: the app's own, then ours, then the configuration's TLS port (tls_port), which
 * canal_app_start() adds. Ours is thus the last TCP one without TLS (a unix socket listener
 * of the app's has port 0 and is passed over).
 */
static uint16_t test_listener_port(const canal_app_t *app)
{
    uint16_t port = 0;
    for (size_t i = 0; canal_app_listener_addr(app, i) != NULL; i++) /* unix ones: port 0 */
        if (!canal_app_listener_tls(app, i) && canal_app_port(app, i) != 0)
            port = canal_app_port(app, i);
    return port;
}

canal_test_t *canal_test_start(canal_app_t *app, canal_error_info_t *err)
{
    if (app == NULL) {
        set_err(err, CANAL_EINVAL, "canal_test_start: no app");
        return NULL;
    }
    canal_test_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        set_err(err, CANAL_ENOMEM, "canal_test_start: out of memory");
        return NULL;
    }
    t->app = app;
    t->fd = -1;
    t->timeout_ms = 30000;
    int rc = canal_app_listen(app, "127.0.0.1", 0);
    if (rc == 0)
        rc = canal_app_start(app);
    if (rc != 0) {
        set_err(err, rc,
                rc == CANAL_ESTATE   ? "canal_test_start: the app was started already"
                : rc == CANAL_ENOMEM ? "canal_test_start: out of memory"
                                     : "canal_test_start: the app could not start (see the log)");
        free(t);
        return NULL;
    }
    t->port = test_listener_port(app);
    return t;
}

static void disconnect(canal_test_t *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    t->len = 0;
}

int canal_test_stop(canal_test_t *t)
{
    if (t == NULL)
        return 0;
    disconnect(t);
    canal_test_clear_cookies(t);
    canal_app_stop(t->app);
    int rc = canal_app_wait(t->app);
    free(t->buf);
    free(t);
    return rc;
}

uint16_t canal_test_port(const canal_test_t *t)
{
    return t->port;
}

void canal_test_set_timeout(canal_test_t *t, unsigned timeout_ms)
{
    t->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
}

size_t canal_test_connection_count(const canal_test_t *t)
{
    return t->connections;
}

const char *canal_test_error(const canal_test_t *t)
{
    return t->error;
}

/* ---- the connection ---- */

static int open_connection(canal_test_t *t)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        set_error(t, "socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(t->port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc;
    while ((rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa))) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        set_error(t, "connect to 127.0.0.1:%u: %s", t->port, strerror(errno));
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    t->connections++;
    return fd;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Writes n bytes to fd. A server may answer before it has read the whole request (a 413 for a
 * body over the limit) and close: writing on would then fail with EPIPE or ECONNRESET and
 * lose that answer. So whenever the socket is not writable at once, the write waits for
 * either direction, and stops as soon as an answer is there to read. Returns 0 when all was
 * written, 1 when it stopped early (an answer is waiting, or the server closed or reset the
 * connection: the caller reads what is there), -1 on another failure or the timeout
 * (recorded).
 */
static int send_all(canal_test_t *t, int fd, const char *p, size_t n)
{
    long long deadline = now_ms() + t->timeout_ms;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EPIPE || errno == ECONNRESET)
            return 1;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            set_error(t, "send: %s", strerror(errno));
            return -1;
        }
        long long left = deadline - now_ms();
        if (left <= 0) {
            set_error(t, "timed out after %u ms writing the request", t->timeout_ms);
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLOUT};
        int rc = poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left);
        if (rc < 0 && errno != EINTR) {
            set_error(t, "poll: %s", strerror(errno));
            return -1;
        }
        if (rc > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
            return 1;
    }
    return 0;
}

/* Reads more bytes into t->buf. Returns the count, 0 at the end of the stream, -1 on error or
 * timeout (recorded). */
static ssize_t fill(canal_test_t *t, int fd, long long deadline)
{
    if (t->cap - t->len < 16384) {
        size_t cap = t->cap ? t->cap * 2 : 65536;
        char *b = realloc(t->buf, cap);
        if (b == NULL) {
            set_error(t, "out of memory");
            return -1;
        }
        t->buf = b;
        t->cap = cap;
    }
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            set_error(t, "timed out after %u ms waiting for the answer", t->timeout_ms);
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int rc = poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0) {
            set_error(t, "poll: %s", strerror(errno));
            return -1;
        }
        if (rc == 0)
            continue;
        ssize_t n = recv(fd, t->buf + t->len, t->cap - t->len - 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == ECONNRESET)
            n = 0; /* a reset is the end of the stream too: a stale connection, or a cut answer */
        if (n < 0) {
            set_error(t, "recv: %s", strerror(errno));
            return -1;
        }
        t->len += (size_t)n;
        t->buf[t->len] = '\0'; /* so that sscanf() and strtoull() stop at the data's end */
        return n;
    }
}

/* ---- reading an answer ---- */

/* A growable byte buffer for the parsed answer's strings and body. */
struct bytes {
    char *p;
    size_t len, cap;
};

static int put(struct bytes *b, const void *data, size_t n)
{
    if (n == 0)
        return 0; /* data may be NULL then */
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

static void consume(canal_test_t *t, size_t n)
{
    memmove(t->buf, t->buf + n, t->len - n);
    t->len -= n;
    t->buf[t->len] = '\0';
}

/* Finds "\r\n" in t->buf from offset from; returns its offset or -1. */
static long find_crlf(const canal_test_t *t, size_t from)
{
    for (size_t i = from; i + 1 < t->len; i++)
        if (t->buf[i] == '\r' && t->buf[i + 1] == '\n')
            return (long)i;
    return -1;
}

/* Reads a line (without CRLF) at the start of t->buf, waiting for it. Returns its length, and
 * leaves it in place (the caller consumes length + 2); -1 on failure or the end of the stream. */
static long read_line(canal_test_t *t, int fd, long long deadline, size_t max)
{
    long at;
    while ((at = find_crlf(t, 0)) < 0) {
        if (t->len > max) {
            set_error(t, "a line of the answer is longer than %zu bytes", max);
            return -1;
        }
        ssize_t n = fill(t, fd, deadline);
        if (n == 0)
            set_error(t, "the connection was closed in the middle of the answer");
        if (n <= 0)
            return -1;
    }
    return at;
}

static int token_char(unsigned char c)
{
    return c > 32 && c < 127 && strchr("\"(),/:;<=>?@[\\]{}", c) == NULL;
}

struct parsed {
    int status;
    int close;                  /* the server will close the connection after this answer */
    struct bytes strings;       /* reason, then name NUL value NUL pairs */
    size_t nheaders;
    struct bytes body;
};

static int ieq(const char *a, size_t alen, const char *b)
{
    return alen == strlen(b) && strncasecmp(a, b, alen) == 0;
}

/* Reads the body of a chunked answer into p->body, then the trailers. */
static int read_chunked(canal_test_t *t, int fd, long long deadline, struct parsed *p)
{
    for (;;) {
        long n = read_line(t, fd, deadline, 1024);
        if (n < 0)
            return -1;
        char *end;
        errno = 0;
        unsigned long long size = strtoull(t->buf, &end, 16);
        if (end == t->buf || errno != 0 || (*end != ';' && *end != '\r' && *end != ' ') ||
            size > MAX_BODY - p->body.len) {
            set_error(t, "a bad chunk size in the answer");
            return -1;
        }
        consume(t, (size_t)n + 2);
        if (size == 0)
            break;
        while (t->len < size + 2) {
            ssize_t r = fill(t, fd, deadline);
            if (r == 0)
                set_error(t, "the connection was closed in the middle of a chunk");
            if (r <= 0)
                return -1;
        }
        if (t->buf[size] != '\r' || t->buf[size + 1] != '\n') {
            set_error(t, "a chunk of the answer does not end with CRLF");
            return -1;
        }
        if (put(&p->body, t->buf, (size_t)size) != 0) {
            set_error(t, "out of memory");
            return -1;
        }
        consume(t, (size_t)size + 2);
    }
    for (;;) { /* trailers, up to the empty line */
        long n = read_line(t, fd, deadline, MAX_HEAD);
        if (n < 0)
            return -1;
        consume(t, (size_t)n + 2);
        if (n == 0)
            return 0;
    }
}

/*
 * Reads one answer from fd into p. head_request: the answer has no body. Returns 0, -1 on
 * failure (recorded), or 1 when the stream ended before any byte of it (a stale connection).
 */
/* The framing of an answer's body, from its head */
struct framing {
    int chunked, has_length;
    size_t length;
};

/* Reads an answer's head (1xx interim answers skipped) into p and its body's framing into f:
 * 0; 1 if the connection was closed before a byte; -1 on failure (t's error says why). */
static int read_head(canal_test_t *t, int fd, long long deadline, struct parsed *p, struct framing *f)
{
    int chunked = 0, has_length = 0;
    size_t length = 0;
    memset(p, 0, sizeof(*p));
    for (;;) { /* skip 1xx interim answers */
        if (t->len == 0) {
            ssize_t n = fill(t, fd, deadline);
            if (n == 0)
                return 1;
            if (n < 0)
                return -1;
        }
        long n = read_line(t, fd, deadline, MAX_HEAD);
        if (n < 0)
            return -1;
        int minor = 0, status = 0, used = 0;
        if (sscanf(t->buf, "HTTP/1.%1d %3d%n", &minor, &status, &used) != 2 || status < 100 ||
            (used < n && t->buf[used] != ' ')) {
            set_error(t, "the answer does not start with an HTTP/1.x status line: \"%.*s\"",
                      (int)(n < 40 ? n : 40), t->buf);
            return -1;
        }
        const char *reason = t->buf + (used < n ? used + 1 : used);
        p->strings.len = 0;
        p->nheaders = 0;
        p->close = minor == 0;
        if (put(&p->strings, reason, (size_t)(t->buf + n - reason)) != 0 ||
            put(&p->strings, "", 1) != 0)
            return set_error(t, "out of memory"), -1;
        consume(t, (size_t)n + 2);
        p->status = status;

        size_t head = 0;
        chunked = has_length = 0;
        length = 0;
        for (;;) {
            long ln = read_line(t, fd, deadline, MAX_HEAD);
            if (ln < 0)
                return -1;
            head += (size_t)ln + 2;
            if (head > MAX_HEAD) {
                set_error(t, "the answer's head is longer than %d bytes", MAX_HEAD);
                return -1;
            }
            if (ln == 0) {
                consume(t, 2);
                break;
            }
            char *line = t->buf, *colon = memchr(line, ':', (size_t)ln);
            if (colon == NULL || colon == line) {
                set_error(t, "a malformed header line in the answer: \"%.*s\"",
                          (int)(ln < 40 ? ln : 40), line);
                return -1;
            }
            size_t nlen = (size_t)(colon - line);
            const char *v = colon + 1, *vend = line + ln;
            while (v < vend && (*v == ' ' || *v == '\t'))
                v++;
            while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
                vend--;
            size_t vlen = (size_t)(vend - v);
            if (ieq(line, nlen, "content-length")) {
                char *end;
                errno = 0;
                unsigned long long cl = strtoull(v, &end, 10);
                if (vlen == 0 || end != vend || errno != 0 || cl > MAX_BODY) {
                    set_error(t, "a bad Content-Length in the answer");
                    return -1;
                }
                has_length = 1;
                length = (size_t)cl;
            } else if (ieq(line, nlen, "transfer-encoding")) {
                chunked = vlen >= 7 && strncasecmp(vend - 7, "chunked", 7) == 0;
            } else if (ieq(line, nlen, "connection")) {
                if (ieq(v, vlen, "close"))
                    p->close = 1;
                else if (ieq(v, vlen, "keep-alive"))
                    p->close = 0;
            }
            if (put(&p->strings, line, nlen) != 0 || put(&p->strings, "", 1) != 0 ||
                put(&p->strings, v, vlen) != 0 || put(&p->strings, "", 1) != 0)
                return set_error(t, "out of memory"), -1;
            p->nheaders++;
            consume(t, (size_t)ln + 2);
        }
        if (status >= 200 || status == 101)
            break;
        /* a 1xx interim answer: the real one follows */
    }
    *f = (struct framing){chunked, has_length, length};
    return 0;
}

/* 1 if an answer of this status (to a HEAD or not) has no body */
static int bodiless(int head_request, int status)
{
    return head_request || status == 204 || status == 304 || status < 200;
}

static int read_answer(canal_test_t *t, int fd, int head_request, struct parsed *p)
{
    long long deadline = now_ms() + t->timeout_ms;
    struct framing f;
    int rc = read_head(t, fd, deadline, p, &f);
    if (rc != 0 || bodiless(head_request, p->status))
        return rc;
    int chunked = f.chunked, has_length = f.has_length;
    size_t length = f.length;
    if (chunked)
        return read_chunked(t, fd, deadline, p);
    if (has_length) {
        while (t->len < length) {
            ssize_t n = fill(t, fd, deadline);
            if (n == 0)
                set_error(t, "the connection was closed after %zu of %zu body bytes", t->len,
                          length);
            if (n <= 0)
                return -1;
        }
        if (put(&p->body, t->buf, length) != 0)
            return set_error(t, "out of memory"), -1;
        consume(t, length);
        return 0;
    }
    /* no framing: the body runs to the end of the stream */
    p->close = 1;
    for (;;) {
        if (t->len > 0) {
            if (p->body.len + t->len > MAX_BODY)
                return set_error(t, "the answer's body is larger than %zu bytes", MAX_BODY), -1;
            if (put(&p->body, t->buf, t->len) != 0)
                return set_error(t, "out of memory"), -1;
            t->len = 0;
        }
        ssize_t n = fill(t, fd, deadline);
        if (n == 0)
            return 0;
        if (n < 0)
            return -1;
    }
}

/* Packs a parsed answer into one allocation. */
static canal_test_response_t *pack(canal_test_t *t, struct parsed *p)
{
    size_t need = sizeof(canal_test_response_t) + p->nheaders * sizeof(canal_kv_t) +
                  p->strings.len + p->body.len + 1;
    canal_test_response_t *r = malloc(need);
    if (r == NULL)
        return set_error(t, "out of memory");
    canal_kv_t *h = (canal_kv_t *)(r + 1);
    char *strings = (char *)(h + p->nheaders), *body = strings + p->strings.len;
    if (p->strings.len > 0)
        memcpy(strings, p->strings.p, p->strings.len);
    if (p->body.len > 0)
        memcpy(body, p->body.p, p->body.len);
    body[p->body.len] = '\0';
    r->status = p->status;
    r->reason = strings;
    const char *s = strings + strlen(strings) + 1;
    for (size_t i = 0; i < p->nheaders; i++) {
        h[i].key = s;
        h[i].value = s + strlen(s) + 1;
        s = h[i].value + strlen(h[i].value) + 1;
    }
    r->nheaders = p->nheaders;
    r->headers = h;
    r->body = body;
    r->body_len = p->body.len;
    return r;
}

static void parsed_free(struct parsed *p)
{
    free(p->strings.p);
    free(p->body.p);
}

/* ---- the cookie jar ---- */

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void cookie_free(struct cookie *c)
{
    free(c->name);
    free(c->value);
    free(c->path);
}

void canal_test_clear_cookies(canal_test_t *t)
{
    for (size_t i = 0; t != NULL && i < t->njar; i++)
        cookie_free(&t->jar[i]);
    if (t != NULL) {
        free(t->jar);
        t->jar = NULL;
        t->njar = 0;
    }
}

void canal_test_set_cookies(canal_test_t *t, int on)
{
    t->no_jar = !on;
    if (!on)
        canal_test_clear_cookies(t);
}

const char *canal_test_cookie(const canal_test_t *t, const char *name)
{
    long long now = wall_ms();
    for (size_t i = 0; t != NULL && name != NULL && i < t->njar; i++)
        if (strcmp(t->jar[i].name, name) == 0 && (t->jar[i].expires_ms < 0 || t->jar[i].expires_ms > now))
            return t->jar[i].value;
    return NULL;
}

static char *dup_trimmed(const char *s, size_t n)
{
    while (n > 0 && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return strndup(s, n);
}

/* RFC 6265 5.1.4: the default path of a request target ("/a/b?x" -> "/a", "/a" -> "/") */
static char *default_path(const char *target)
{
    size_t n = strcspn(target, "?#");
    const char *slash = memrchr(target, '/', n);
    return slash == NULL || slash == target ? strdup("/") : strndup(target, (size_t)(slash - target));
}

/* Takes one Set-Cookie value into the jar: a new cookie, one replaced (same name and path),
 * or one removed (an expiry in the past). A value it cannot read is left out, as a browser
 * does. */
static void jar_take(canal_test_t *t, const char *set, const char *target)
{
    size_t n = strcspn(set, ";");
    const char *eq = memchr(set, '=', n);
    if (eq == NULL)
        return;
    struct cookie c = {dup_trimmed(set, (size_t)(eq - set)), dup_trimmed(eq + 1, n - (size_t)(eq + 1 - set)), NULL, -1};
    long long now = wall_ms(), expires = -1, max_age = 0;
    int has_max_age = 0;
    for (const char *a = set + n; *a == ';';) {
        a++;
        size_t len = strcspn(a, ";");
        char *attr = dup_trimmed(a, len);
        if (attr != NULL && strncasecmp(attr, "path=", 5) == 0 && attr[5] == '/') {
            free(c.path);
            c.path = strdup(attr + 5);
        } else if (attr != NULL && strncasecmp(attr, "max-age=", 8) == 0) {
            has_max_age = 1;
            max_age = strtoll(attr + 8, NULL, 10);
        } else if (attr != NULL && strncasecmp(attr, "expires=", 8) == 0) {
            struct tm tm = {0};
            const char *end = strptime(attr + 8, "%a, %d %b %Y %H:%M:%S GMT", &tm);
            if (end != NULL)
                expires = (long long)timegm(&tm) * 1000;
        }
        free(attr);
        a += len;
    }
    if (has_max_age) /* Max-Age wins over Expires (5.3 step 3) */
        expires = max_age <= 0 ? 0 : now + max_age * 1000;
    c.expires_ms = expires;
    if (c.path == NULL)
        c.path = default_path(target);
    if (c.name == NULL || c.value == NULL || c.path == NULL || c.name[0] == '\0') {
        cookie_free(&c);
        return;
    }
    size_t i = 0;
    while (i < t->njar && (strcmp(t->jar[i].name, c.name) != 0 || strcmp(t->jar[i].path, c.path) != 0))
        i++;
    if (i < t->njar) { /* replaced, or removed */
        cookie_free(&t->jar[i]);
        t->jar[i] = t->jar[--t->njar];
    }
    if (c.expires_ms >= 0 && c.expires_ms <= now) {
        cookie_free(&c);
        return;
    }
    struct cookie *grown = realloc(t->jar, (t->njar + 1) * sizeof(*grown));
    if (grown == NULL) {
        cookie_free(&c);
        return;
    }
    t->jar = grown;
    t->jar[t->njar++] = c;
}

/* RFC 6265 5.1.4 path-match of a request target */
static int path_matches(const char *cookie_path, const char *target)
{
    size_t n = strlen(cookie_path), tn = strcspn(target, "?#");
    return tn >= n && memcmp(cookie_path, target, n) == 0 &&
           (tn == n || cookie_path[n - 1] == '/' || target[n] == '/');
}

/* The Cookie field's value for target, the longest paths first (5.4), into b; 1 if any */
static int jar_header(canal_test_t *t, const char *target, struct bytes *b)
{
    long long now = wall_ms();
    int any = 0;
    /* by descending path length: a pass per length is enough for a test's few cookies */
    size_t longest = 0;
    for (size_t i = 0; i < t->njar; i++)
        if (strlen(t->jar[i].path) > longest)
            longest = strlen(t->jar[i].path);
    for (size_t len = longest + 1; len-- > 0;)
        for (size_t i = 0; i < t->njar; i++) {
            const struct cookie *c = &t->jar[i];
            if (strlen(c->path) != len || (c->expires_ms >= 0 && c->expires_ms <= now) || !path_matches(c->path, target))
                continue;
            if ((any && put(b, "; ", 2) != 0) || put(b, c->name, strlen(c->name)) != 0 || put(b, "=", 1) != 0 ||
                put(b, c->value, strlen(c->value)) != 0)
                return -1;
            any = 1;
        }
    return any;
}

/* ---- requests ---- */

static int valid_field(const char *s, int allow_space)
{
    for (; *s; s++)
        if (*s == '\r' || *s == '\n' || (!allow_space && *s == ' ') || *s == '\0')
            return 0;
    return 1;
}

static int has_header(const canal_kv_t *headers, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (headers[i].key != NULL && strcasecmp(headers[i].key, name) == 0)
            return 1;
    return 0;
}

/* The bytes of a request into req (malloc'd): 0, or -1 with t's error set */
static int build_request(canal_test_t *t, const char *method, const char *target, const canal_kv_t *headers,
                         size_t nheaders, const void *body, size_t body_len, struct bytes *req)
{
    if (method == NULL || method[0] == '\0')
        return set_error(t, "no method"), -1;
    for (const char *m = method; *m; m++)
        if (!token_char((unsigned char)*m))
            return set_error(t, "the method \"%.40s\" is not an HTTP token", method), -1;
    if (target == NULL || target[0] == '\0' || !valid_field(target, 0))
        return set_error(t, "the target must be non-empty, without spaces, CR or LF"), -1;
    if (nheaders > 0 && headers == NULL)
        return set_error(t, "nheaders is %zu but headers is NULL", nheaders), -1;
    for (size_t i = 0; i < nheaders; i++) {
        const char *k = headers[i].key, *v = headers[i].value;
        if (k == NULL || k[0] == '\0' || v == NULL)
            return set_error(t, "header %zu has no name or no value", i), -1;
        for (const char *c = k; *c; c++)
            if (!token_char((unsigned char)*c))
                return set_error(t, "the header name \"%.40s\" is not an HTTP token", k), -1;
        if (!valid_field(v, 1))
            return set_error(t, "the value of header %s has a CR or LF", k), -1;
    }

    char line[64];
    *req = (struct bytes){0};
    int ok = put(req, method, strlen(method)) == 0 && put(req, " ", 1) == 0 &&
             put(req, target, strlen(target)) == 0 && put(req, " HTTP/1.1\r\n", 11) == 0;
    if (ok && !has_header(headers, nheaders, "host")) {
        int n = snprintf(line, sizeof(line), "Host: 127.0.0.1:%u\r\n", t->port);
        ok = put(req, line, (size_t)n) == 0;
    }
    for (size_t i = 0; ok && i < nheaders; i++)
        ok = put(req, headers[i].key, strlen(headers[i].key)) == 0 && put(req, ": ", 2) == 0 &&
             put(req, headers[i].value, strlen(headers[i].value)) == 0 &&
             put(req, "\r\n", 2) == 0;
    if (ok && !t->no_jar && t->njar > 0 && !has_header(headers, nheaders, "cookie")) {
        struct bytes cookies = {0};
        int any = jar_header(t, target, &cookies);
        ok = any >= 0 && (any == 0 || (put(req, "Cookie: ", 8) == 0 && put(req, cookies.p, cookies.len) == 0 &&
                                       put(req, "\r\n", 2) == 0));
        free(cookies.p);
    }
    int wants_length = body != NULL || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
                       strcmp(method, "PATCH") == 0;
    if (ok && wants_length && !has_header(headers, nheaders, "content-length")) {
        int n = snprintf(line, sizeof(line), "Content-Length: %zu\r\n",
                         body != NULL ? body_len : 0);
        ok = put(req, line, (size_t)n) == 0;
    }
    ok = ok && put(req, "\r\n", 2) == 0 &&
         (body == NULL || body_len == 0 || put(req, body, body_len) == 0);
    if (!ok) {
        free(req->p);
        return set_error(t, "out of memory"), -1;
    }
    return 0;
}

canal_test_response_t *canal_test_request(canal_test_t *t, const char *method, const char *target,
                                          const canal_kv_t *headers, size_t nheaders,
                                          const void *body, size_t body_len)
{
    if (t == NULL)
        return NULL;
    t->error[0] = '\0';
    struct bytes req;
    if (build_request(t, method, target, headers, nheaders, body, body_len, &req) != 0)
        return NULL;

    int head_request = strcmp(method, "HEAD") == 0;
    struct parsed p;
    canal_test_response_t *r = NULL;
    /* a reused connection may turn out closed: then once more on a new one */
    for (int attempt = 0; attempt < 2; attempt++) {
        int reused = t->fd >= 0;
        if (!reused && (t->fd = open_connection(t)) < 0)
            break;
        t->len = 0;
        int sent = send_all(t, t->fd, req.p, req.len);
        if (sent < 0) {
            disconnect(t);
            break;
        }
        /* also when the write stopped early: the answer that is there is the request's */
        int rc = read_answer(t, t->fd, head_request, &p);
        if (rc == 0) {
            r = pack(t, &p);
            if (p.close || sent == 1) /* a request cut short leaves the connection unusable */
                disconnect(t);
            parsed_free(&p);
            break;
        }
        parsed_free(&p);
        disconnect(t);
        if (rc == 1) {
            set_error(t, "the server closed the connection without answering");
            if (reused)
                continue;
        }
        break;
    }
    free(req.p);
    if (r != NULL)
        t->error[0] = '\0';
    for (size_t i = 0; r != NULL && !t->no_jar && i < r->nheaders; i++)
        if (strcasecmp(r->headers[i].key, "set-cookie") == 0)
            jar_take(t, r->headers[i].value, target);
    return r;
}

/* Sends json, serialized compactly, with the headers as given. */
static canal_test_response_t *json_request(canal_test_t *t, const char *method, const char *target,
                                           const canal_kv_t *headers, size_t nheaders,
                                           const json_t *json)
{
    char *text = json_dumps(json, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text == NULL)
        return set_error(t, "the JSON body cannot be serialized");
    canal_test_response_t *r = canal_test_request(t, method, target, headers, nheaders, text,
                                                  strlen(text));
    free(text);
    return r;
}

canal_test_response_t *canal_test_get(canal_test_t *t, const char *target)
{
    return canal_test_request(t, "GET", target, NULL, 0, NULL, 0);
}

canal_test_response_t *canal_test_json(canal_test_t *t, const char *method, const char *target,
                                       const canal_kv_t *headers, size_t nheaders,
                                       const json_t *json)
{
    if (t == NULL)
        return NULL;
    if (json == NULL || (nheaders > 0 && headers == NULL) ||
        has_header(headers, nheaders, "content-type"))
        return json == NULL ? canal_test_request(t, method, target, headers, nheaders, NULL, 0)
                            : json_request(t, method, target, headers, nheaders, json);
    /* the caller's headers, then Content-Type */
    canal_kv_t *all = malloc((nheaders + 1) * sizeof(*all));
    if (all == NULL)
        return set_error(t, "out of memory");
    if (nheaders > 0)
        memcpy(all, headers, nheaders * sizeof(*all));
    all[nheaders] = (canal_kv_t){"Content-Type", "application/json"};
    canal_test_response_t *r = json_request(t, method, target, all, nheaders + 1, json);
    free(all);
    return r;
}

canal_test_response_t *canal_test_raw(canal_test_t *t, const void *bytes, size_t len)
{
    if (t == NULL)
        return NULL;
    t->error[0] = '\0';
    if (bytes == NULL || len == 0)
        return set_error(t, "no bytes to send");
    /* a connection of its own: the kept-alive one and its buffer are left alone */
    int saved_fd = t->fd;
    char *saved_buf = t->buf;
    size_t saved_len = t->len, saved_cap = t->cap;
    t->buf = NULL;
    t->len = t->cap = 0;
    canal_test_response_t *r = NULL;
    int fd = open_connection(t);
    if (fd >= 0 && send_all(t, fd, bytes, len) >= 0) {
        struct parsed p;
        int head = len >= 5 && memcmp(bytes, "HEAD ", 5) == 0;
        int rc = read_answer(t, fd, head, &p);
        if (rc == 0)
            r = pack(t, &p);
        else if (rc == 1)
            set_error(t, "the server closed the connection without answering");
        parsed_free(&p);
    }
    if (fd >= 0)
        close(fd);
    free(t->buf);
    t->fd = saved_fd;
    t->buf = saved_buf;
    t->len = saved_len;
    t->cap = saved_cap;
    return r;
}

/* ---- answers read as they come ---- */

struct canal_test_stream {
    canal_test_t *client;           /* for the jar and the error */
    canal_test_t conn;              /* its own connection and buffer (conn.fd, conn.buf) */
    canal_test_response_t *head;    /* status and headers; body "" */
    enum { BODY_NONE, BODY_CHUNKED, BODY_LENGTH, BODY_CLOSE } mode;
    size_t left;                    /* BODY_LENGTH: bytes to come; BODY_CHUNKED: of this chunk */
    int crlf_due;                   /* BODY_CHUNKED: the CRLF after a chunk's data is to come */
    int ended;
    struct bytes text;              /* events: body bytes not made into lines yet */
    struct bytes field[3];          /* events: the event being read: its event, data and id,
                                       each NUL-terminated; len 0: the field did not come */
};

enum { F_EVENT, F_DATA, F_ID };

canal_test_stream_t *canal_test_stream_open(canal_test_t *t, const char *method, const char *target,
                                           const canal_kv_t *headers, size_t nheaders)
{
    if (t == NULL)
        return NULL;
    t->error[0] = '\0';
    canal_test_stream_t *s = calloc(1, sizeof(*s));
    struct bytes req = {0};
    if (s == NULL)
        return set_error(t, "out of memory");
    s->client = t;
    s->conn = (canal_test_t){.app = t->app, .port = t->port, .fd = -1, .timeout_ms = t->timeout_ms};
    struct parsed p = {0};
    struct framing f;
    int ok = build_request(t, method, target, headers, nheaders, NULL, 0, &req) == 0 &&
             (s->conn.fd = open_connection(&s->conn)) >= 0 && send_all(&s->conn, s->conn.fd, req.p, req.len) == 0 &&
             read_head(&s->conn, s->conn.fd, now_ms() + t->timeout_ms, &p, &f) == 0 &&
             (s->head = pack(&s->conn, &p)) != NULL;
    free(req.p);
    parsed_free(&p);
    if (!ok) {
        if (t->error[0] == '\0')
            snprintf(t->error, sizeof(t->error), "%s", s->conn.error[0] ? s->conn.error : "no answer");
        canal_test_stream_close(s);
        return NULL;
    }
    t->connections++;
    for (size_t i = 0; !t->no_jar && i < s->head->nheaders; i++)
        if (strcasecmp(s->head->headers[i].key, "set-cookie") == 0)
            jar_take(t, s->head->headers[i].value, target);
    s->mode = bodiless(strcmp(method, "HEAD") == 0, s->head->status) ? BODY_NONE
              : f.chunked                                             ? BODY_CHUNKED
              : f.has_length                                          ? BODY_LENGTH
                                                                      : BODY_CLOSE;
    s->left = f.length;
    s->ended = s->mode == BODY_NONE || (s->mode == BODY_LENGTH && s->left == 0);
    return s;
}

const canal_test_response_t *canal_test_stream_head(const canal_test_stream_t *s)
{
    return s != NULL ? s->head : NULL;
}

/* Waits up to timeout_ms for more bytes on the stream's connection: 1, 0 (the peer closed),
 * CANAL_EAGAIN (nothing came), or -1 */
static int more(canal_test_stream_t *s, unsigned timeout_ms)
{
    struct pollfd pfd = {.fd = s->conn.fd, .events = POLLIN};
    int rc;
    while ((rc = poll(&pfd, 1, (int)timeout_ms)) < 0 && errno == EINTR)
        ;
    if (rc == 0)
        return CANAL_EAGAIN;
    ssize_t n = rc < 0 ? -1 : fill(&s->conn, s->conn.fd, now_ms() + s->conn.timeout_ms);
    return n > 0 ? 1 : (int)n;
}

long canal_test_stream_read(canal_test_stream_t *s, char *buf, size_t size, unsigned timeout_ms)
{
    canal_test_t *c = &s->conn;
    for (;;) {
        if (s->ended)
            return 0;
        if (s->mode == BODY_CHUNKED && (s->crlf_due || s->left == 0)) {
            /* the CRLF after a chunk, then the next chunk's size line */
            long at = find_crlf(c, 0);
            if (s->crlf_due && c->len >= 2) {
                if (c->buf[0] != '\r' || c->buf[1] != '\n')
                    return set_error(s->client, "a chunk of the answer does not end with CRLF"), -1;
                consume(c, 2);
                s->crlf_due = 0;
                continue;
            }
            if (!s->crlf_due && at >= 0) {
                char *end;
                errno = 0;
                unsigned long long n = strtoull(c->buf, &end, 16);
                if (end == c->buf || errno != 0 || n > MAX_BODY)
                    return set_error(s->client, "a bad chunk size in the answer"), -1;
                consume(c, (size_t)at + 2);
                s->left = (size_t)n;
                s->ended = n == 0; /* trailers, if any, are left unread */
                continue;
            }
        } else if (c->len > 0) {
            size_t n = c->len < size ? c->len : size;
            if (s->mode != BODY_CLOSE && n > s->left)
                n = s->left;
            memcpy(buf, c->buf, n);
            consume(c, n);
            if (s->mode != BODY_CLOSE) {
                s->left -= n;
                s->crlf_due = s->mode == BODY_CHUNKED && s->left == 0;
                s->ended = s->mode == BODY_LENGTH && s->left == 0;
            }
            return (long)n;
        }
        int rc = more(s, timeout_ms);
        if (rc == CANAL_EAGAIN)
            return CANAL_EAGAIN;
        if (rc == 0 && s->mode == BODY_CLOSE) {
            s->ended = 1;
            return 0;
        }
        if (rc <= 0)
            return set_error(s->client, "%s", rc == 0 ? "the connection was closed in the middle of the answer"
                                                       : c->error),
                   -1;
    }
}

/* One line of the text/event-stream format into the event being read */
static int event_line(canal_test_stream_t *s, const char *line, size_t n)
{
    const char *colon = memchr(line, ':', n);
    size_t nlen = colon ? (size_t)(colon - line) : n;
    const char *v = colon ? colon + 1 : line + n;
    if (v < line + n && *v == ' ')
        v++;
    size_t vlen = (size_t)(line + n - v);
    int k = ieq(line, nlen, "data") ? F_DATA : ieq(line, nlen, "event") ? F_EVENT : ieq(line, nlen, "id") ? F_ID : -1;
    if (nlen == 0 || k < 0) /* a comment, or a field it does not keep (retry) */
        return 0;
    struct bytes *f = &s->field[k];
    if (k == F_DATA && f->len > 0) /* data lines join with LF: the NUL becomes one */
        f->p[f->len - 1] = '\n';
    else
        f->len = 0;
    return put(f, v, vlen) == 0 && put(f, "", 1) == 0 ? 0 : -1;
}

int canal_test_stream_event(canal_test_stream_t *s, canal_test_event_t *ev, unsigned timeout_ms)
{
    for (;;) {
        char *nl;
        while ((nl = s->text.len ? memchr(s->text.p, '\n', s->text.len) : NULL) != NULL) {
            size_t n = (size_t)(nl - s->text.p), line = n > 0 && s->text.p[n - 1] == '\r' ? n - 1 : n;
            if (line == 0 && s->field[F_DATA].len == 0) /* a blank line ends an event without data: */
                s->field[F_EVENT].len = 0;                      /* nothing to dispatch */
            if (line == 0 && s->field[F_DATA].len > 0) {
                /* dispatched: the fields stay valid until the next call */
                *ev = (canal_test_event_t){.event = s->field[F_EVENT].len ? s->field[F_EVENT].p : "message",
                                           .data = s->field[F_DATA].p,
                                           .id = s->field[F_ID].len ? s->field[F_ID].p : NULL};
                memmove(s->text.p, nl + 1, s->text.len - n - 1);
                s->text.len -= n + 1;
                s->field[F_DATA].len = 0; /* the next event starts empty, once this one is read */
                s->field[F_EVENT].len = 0;
                return 1;
            }
            if (line > 0 && event_line(s, s->text.p, line) != 0)
                return set_error(s->client, "out of memory"), -1;
            memmove(s->text.p, nl + 1, s->text.len - n - 1);
            s->text.len -= n + 1;
        }
        char buf[4096];
        long n = canal_test_stream_read(s, buf, sizeof(buf), timeout_ms);
        if (n <= 0)
            return (int)n; /* 0: the end (a last event without its blank line is dropped) */
        if (s->text.len + (size_t)n > MAX_HEAD)
            return set_error(s->client, "an event longer than %d bytes", MAX_HEAD), -1;
        if (put(&s->text, buf, (size_t)n) != 0)
            return set_error(s->client, "out of memory"), -1;
    }
}

void canal_test_stream_close(canal_test_stream_t *s)
{
    if (s == NULL)
        return;
    disconnect(&s->conn);
    free(s->conn.buf);
    free(s->head);
    free(s->text.p);
    for (int k = 0; k < 3; k++)
        free(s->field[k].p);
    free(s);
}

const char *canal_test_header(const canal_test_response_t *r, const char *name)
{
    if (r == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < r->nheaders; i++)
        if (strcasecmp(r->headers[i].key, name) == 0)
            return r->headers[i].value;
    return NULL;
}

json_t *canal_test_response_json(const canal_test_response_t *r, json_error_t *err)
{
    if (r == NULL)
        return NULL;
    return json_loadb(r->body, r->body_len, JSON_DECODE_ANY, err);
}

void canal_test_response_free(canal_test_response_t *r)
{
    free(r);
}
