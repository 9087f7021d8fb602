/* SPDX-License-Identifier: MIT */
/*
 * canal-probe: sends hostile raw HTTP/1.x requests to a running server, one table of cases,
 * and prints one TAP line per case ("ok - probe: NAME" / "not ok - probe: NAME: why").
 *
 *   canal-probe [--mode TAG] [--sync PATH BODY] PORT CASEFILE
 *
 * For each case it connects to 127.0.0.1:PORT, writes the raw bytes, reads the answers and
 * checks their status lines. Then it checks that the connection is in sync or closed as the
 * case says: "keep" sends a follow-up GET PATH on the same connection and requires exactly
 * one more answer, 200 with BODY, before the end of the stream (an answer to smuggled bytes
 * would be one too many); "close" requires the server to close the connection with nothing
 * more; "any" accepts either. Last, a fresh connection must still get GET PATH answered.
 * Every answer must also have a well-formed status line and head, a body that matches its
 * framing, no raw "<script" in the body and no header the request tried to inject
 * ("x-injected").
 *
 * The case file has one case a line, five fields separated by "||" (spaces and tabs around a
 * field are dropped; a '#' line is a comment):
 *
 *   NAME  EXPECT  AFTER  CHECKS  RAW
 *
 *   NAME    what the case is; "@router ..." or "@controller ..." runs only with that --mode
 *   EXPECT  the answers in order, separated by ','; each a '|'-list of status codes ("400|501"),
 *           "*" for any status, or "-" for none at all (the first answer may then be absent)
 *   AFTER   keep, close or any (see above)
 *   CHECKS  "-", or space-separated checks on the first answer: has:TEXT (in head or body),
 *           not:TEXT, hdr:NAME (a header of that name, case-insensitive), nohdr:NAME; TEXT
 *           takes the escapes of RAW (\x20 for a space)
 *   RAW     the bytes, with escapes \r \n \t \0 \\ \xHH (\x20 for a space at either end), and
 *           \{N|TEXT\} for TEXT N times;
 *           a final \. means: shut the writing half down after sending (premature close)
 *
 * Reads wait at most 20 s (longer than libh2o's 10-second request timeout), only so that a
 * wrong server cannot hang the test; no check depends on timing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_TIMEOUT_MS 20000
#define MAX_ANSWERS 8

static uint16_t port;
static const char *sync_path = "/home/plaintext", *sync_body = "Hello, World!";

/* ---- buffers ---- */

struct buf {
    char *p;
    size_t len, cap;
};

static void put(struct buf *b, const void *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL) {
            perror("canal-probe");
            exit(2);
        }
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
}

/* Unescapes s[0..n) into out. Returns 0, or -1 for a malformed escape. *shut is set by "\.". */
static int unescape(const char *s, size_t n, struct buf *out, int *shut)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c != '\\') {
            put(out, &c, 1);
            continue;
        }
        if (++i == n)
            return -1;
        switch (s[i]) {
        case 'r': put(out, "\r", 1); break;
        case 'n': put(out, "\n", 1); break;
        case 't': put(out, "\t", 1); break;
        case '0': put(out, "", 1); break;
        case '\\': put(out, "\\", 1); break;
        case '.':
            if (shut == NULL || i + 1 != n)
                return -1;
            *shut = 1;
            break;
        case 'x': {
            int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return -1;
            char ch = (char)(hi << 4 | lo);
            put(out, &ch, 1);
            i += 2;
            break;
        }
        case '{': { /* \{N|TEXT\} */
            char *end;
            unsigned long times = strtoul(s + i + 1, &end, 10);
            const char *close = memmem(s + i, n - i, "\\}", 2);
            if (*end != '|' || close == NULL || end > close)
                return -1;
            struct buf one = {0};
            if (unescape(end + 1, (size_t)(close - end - 1), &one, NULL) != 0)
                return -1;
            for (unsigned long k = 0; k < times; k++)
                put(out, one.p ? one.p : "", one.len);
            free(one.p);
            i = (size_t)(close - s) + 1;
            break;
        }
        default:
            return -1;
        }
    }
    return 0;
}

/* ---- the connection ---- */

struct conn {
    int fd;
    struct buf in;  /* bytes read and not yet consumed */
    size_t at;      /* start of the unconsumed part */
    int eof;        /* the server closed (EOF or reset) */
};

static int dial(struct conn *c)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    memset(c, 0, sizeof(*c));
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

static void hangup(struct conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->in.p);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

/* Writes everything it can; a server that closed early (EPIPE, reset) is not an error here:
 * what it answered before is what counts. */
static void send_all(struct conn *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Reads more bytes. Returns 1 with more data, 0 at EOF or reset, -1 on timeout. */
static int fill(struct conn *c)
{
    char tmp[65536];
    if (c->eof)
        return 0;
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    int r = poll(&pfd, 1, READ_TIMEOUT_MS);
    if (r == 0)
        return -1;
    ssize_t n = recv(c->fd, tmp, sizeof(tmp), 0);
    if (n <= 0) {
        c->eof = 1;
        return 0;
    }
    put(&c->in, tmp, (size_t)n);
    return 1;
}

struct answer {
    int status;
    int version_minor;
    char head[8192];   /* status line and header fields, lower-cased names kept as sent */
    struct buf body;
    int close;         /* "connection: close", or HTTP/1.0 without keep-alive */
};

static const char *find_header(const char *head, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = strstr(head, "\r\n"); l != NULL; l = strstr(l + 2, "\r\n")) {
        if (strncasecmp(l + 2, name, n) == 0 && l[2 + n] == ':') {
            const char *v = l + 3 + n;
            while (*v == ' ')
                v++;
            return v;
        }
    }
    return NULL;
}

/* Reads one answer. head_request: the request was HEAD (no body). Returns 0; 1 when the
 * stream ended before any byte of an answer; -1 with why set for a malformed or cut answer. */
static int read_answer(struct conn *c, int head_request, struct answer *a, char *why, size_t whylen)
{
    memset(a, 0, sizeof(*a));
    char *end;
    while ((end = c->in.p ? memmem(c->in.p + c->at, c->in.len - c->at, "\r\n\r\n", 4) : NULL) == NULL) {
        int r = fill(c);
        if (r < 0) {
            snprintf(why, whylen, "no answer within %d ms", READ_TIMEOUT_MS);
            return -1;
        }
        if (r == 0) {
            if (c->in.len == c->at)
                return 1;
            snprintf(why, whylen, "the stream ended inside a head: [%.60s]", c->in.p + c->at);
            return -1;
        }
    }
    const char *start = c->in.p + c->at;
    size_t hlen = (size_t)(end - start);
    if (hlen >= sizeof(a->head)) {
        snprintf(why, whylen, "a head of %zu bytes", hlen);
        return -1;
    }
    memcpy(a->head, start, hlen);
    a->head[hlen] = '\0';
    c->at += hlen + 4;
    char reason[2];
    if (sscanf(a->head, "HTTP/1.%1d %3d%1[ \r]", &a->version_minor, &a->status, reason) != 3 ||
        a->status < 100 || a->status > 599) {
        snprintf(why, whylen, "malformed status line [%.60s]", a->head);
        return -1;
    }
    /* every header line: "name: value", a token for a name, no bare CR or LF inside */
    for (const char *l = strstr(a->head, "\r\n"); l != NULL;) {
        const char *e = strstr(l + 2, "\r\n");
        size_t n = e ? (size_t)(e - l - 2) : strlen(l + 2);
        const char *colon = memchr(l + 2, ':', n);
        if (colon == NULL || colon == l + 2 || memchr(l + 2, '\r', n) || memchr(l + 2, '\n', n)) {
            snprintf(why, whylen, "malformed header line [%.*s]", (int)(n > 60 ? 60 : n), l + 2);
            return -1;
        }
        for (const char *p = l + 2; p < colon; p++)
            if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p)) {
                snprintf(why, whylen, "a header name with [%c]", *p);
                return -1;
            }
        l = e;
    }
    const char *conn = find_header(a->head, "connection");
    a->close = (conn && strncasecmp(conn, "close", 5) == 0) ||
               (a->version_minor == 0 && !(conn && strncasecmp(conn, "keep-alive", 10) == 0));
    if (head_request || a->status < 200 || a->status == 204 || a->status == 304)
        return 0;
    const char *cl = find_header(a->head, "content-length");
    const char *te = find_header(a->head, "transfer-encoding");
    if (cl != NULL) {
        char *e;
        unsigned long long n = strtoull(cl, &e, 10);
        while (c->in.len - c->at < n) {
            int r = fill(c);
            if (r <= 0) {
                snprintf(why, whylen, "the body ended after %zu of %llu bytes", c->in.len - c->at, n);
                return -1;
            }
        }
        put(&a->body, c->in.p + c->at, (size_t)n);
        c->at += (size_t)n;
    } else if (te != NULL && strncasecmp(te, "chunked", 7) == 0) {
        for (;;) {
            char *eol;
            while ((eol = memmem(c->in.p + c->at, c->in.len - c->at, "\r\n", 2)) == NULL)
                if (fill(c) <= 0) {
                    snprintf(why, whylen, "a chunked body cut short");
                    goto fail;
                }
            unsigned long size = strtoul(c->in.p + c->at, NULL, 16);
            c->at = (size_t)(eol - c->in.p) + 2;
            while (c->in.len - c->at < size + 2)
                if (fill(c) <= 0) {
                    snprintf(why, whylen, "a chunk cut short");
                    goto fail;
                }
            put(&a->body, c->in.p + c->at, size);
            c->at += size + 2;
            if (size == 0)
                break;
        }
    } else {
        while (fill(c) > 0) /* the body runs to the end of the stream */
            ;
        put(&a->body, c->in.p + c->at, c->in.len - c->at);
        c->at = c->in.len;
        a->close = 1;
    }
    if (a->body.p != NULL && strcasestr(a->body.p, "<script") != NULL) {
        snprintf(why, whylen, "the body reflects a raw <script");
        goto fail;
    }
    return 0;
fail:
    free(a->body.p);
    a->body.p = NULL;
    return -1;
}

/* ---- one case ---- */

struct pcase {
    char name[256];
    char expect[128];
    char after[16];
    char checks[512];
    struct buf raw;
    int shut;
};

static int status_in(const char *alts, int status)
{
    if (strcmp(alts, "*") == 0)
        return 1;
    for (const char *p = alts; *p;) {
        if (atoi(p) == status && *p != '-')
            return 1;
        p += strcspn(p, "|");
        if (*p == '|')
            p++;
    }
    return 0;
}

static int check_one(const char *chk, const struct answer *a, char *why, size_t whylen)
{
    struct buf text = {0};
    const char *arg = strchr(chk, ':');
    int rc = 0;
    if (arg == NULL || unescape(arg + 1, strlen(arg + 1), &text, NULL) != 0) {
        snprintf(why, whylen, "bad check [%s]", chk);
        return -1;
    }
    const char *t = text.p ? text.p : "";
    int in_head = strstr(a->head, t) != NULL, in_body = a->body.p && strstr(a->body.p, t) != NULL;
    if (strncmp(chk, "has:", 4) == 0 && !in_head && !in_body)
        rc = snprintf(why, whylen, "the answer lacks [%s]", t);
    else if (strncmp(chk, "not:", 4) == 0 && (in_head || in_body))
        rc = snprintf(why, whylen, "the answer has [%s]", t);
    else if (strncmp(chk, "hdr:", 4) == 0 && find_header(a->head, t) == NULL)
        rc = snprintf(why, whylen, "no %s header", t);
    else if (strncmp(chk, "nohdr:", 6) == 0 && find_header(a->head, t) != NULL)
        rc = snprintf(why, whylen, "a %s header", t);
    else if (strncmp(chk, "has:", 4) && strncmp(chk, "not:", 4) && strncmp(chk, "hdr:", 4) &&
             strncmp(chk, "nohdr:", 6))
        rc = snprintf(why, whylen, "unknown check [%s]", chk);
    free(text.p);
    return rc > 0 ? -1 : 0;
}

static void sync_request(struct buf *b, int last)
{
    char req[512];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: probe\r\n%s\r\n", sync_path,
                     last ? "Connection: close\r\n" : "");
    put(b, req, (size_t)n);
}

/* The server answers a plain request on a fresh connection. */
static int still_alive(char *why, size_t whylen)
{
    struct conn c;
    struct answer a;
    struct buf req = {0};
    int rc = -1;
    if (dial(&c) != 0) {
        snprintf(why, whylen, "the server no longer accepts connections");
        return -1;
    }
    sync_request(&req, 1);
    send_all(&c, req.p, req.len);
    int r = read_answer(&c, 0, &a, why, whylen);
    if (r == 1)
        snprintf(why, whylen, "a fresh connection got no answer");
    else if (r == 0 && (a.status != 200 || a.body.p == NULL || strcmp(a.body.p, sync_body) != 0))
        snprintf(why, whylen, "a fresh connection got %d [%.40s]", a.status, a.body.p ? a.body.p : "");
    else if (r == 0)
        rc = 0;
    if (r != -1)
        free(a.body.p);
    free(req.p);
    hangup(&c);
    return rc;
}

/* What the server did, for the TAP line: "400 405 close", "200 keep". */
static char seen[128];

static void saw(const char *fmt, ...)
{
    size_t n = strlen(seen);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(seen + n, sizeof(seen) - n, fmt, ap);
    va_end(ap);
}

static int run_case(const struct pcase *pc, char *why, size_t whylen)
{
    struct conn c;
    struct answer a = {0}, first = {0};
    int nanswers = 0, closed = 0, rc = -1;
    char expect[128];
    if (dial(&c) != 0) {
        snprintf(why, whylen, "cannot connect");
        return -1;
    }
    send_all(&c, pc->raw.p, pc->raw.len);
    if (pc->shut)
        shutdown(c.fd, SHUT_WR);
    int head = strncmp(pc->raw.p, "HEAD ", 5) == 0;

    /* the expected answers, in order */
    snprintf(expect, sizeof(expect), "%s", pc->expect);
    char *save = NULL;
    for (char *alts = strtok_r(expect, ",", &save); alts != NULL; alts = strtok_r(NULL, ",", &save)) {
        int r = read_answer(&c, head, &a, why, whylen);
        if (r < 0)
            goto out;
        if (r == 1) {
            if (strchr(alts, '-') == NULL) {
                snprintf(why, whylen, "answer %d: the connection closed, expected %s", nanswers + 1, alts);
                goto out;
            }
            closed = 1;
            break;
        }
        saw("%s%d", nanswers ? " " : "", a.status);
        if (!status_in(alts, a.status)) {
            snprintf(why, whylen, "answer %d: status %d, expected %s", nanswers + 1, a.status, alts);
            free(a.body.p);
            goto out;
        }
        if (find_header(a.head, "x-injected") != NULL) {
            snprintf(why, whylen, "answer %d carries the injected header", nanswers + 1);
            free(a.body.p);
            goto out;
        }
        if (nanswers++ == 0)
            first = a;
        else
            free(a.body.p);
        if (a.close) {
            closed = 1;
            break;
        }
    }
    if (nanswers > 0 && strcmp(pc->checks, "-") != 0) {
        char checks[512];
        snprintf(checks, sizeof(checks), "%s", pc->checks);
        for (char *chk = strtok_r(checks, " ", &save); chk != NULL; chk = strtok_r(NULL, " ", &save))
            if (check_one(chk, &first, why, whylen) != 0)
                goto out;
    } else if (nanswers == 0 && strcmp(pc->checks, "-") != 0) {
        snprintf(why, whylen, "no answer to check");
        goto out;
    }
    /* a server that announced close may not answer more; one that did not must stay in sync */
    if (strcmp(pc->after, "keep") == 0 && closed) {
        snprintf(why, whylen, "the connection was closed, expected it kept alive");
        goto out;
    }
    if (closed || strcmp(pc->after, "close") == 0) {
        /* nothing more may come, and the server must close */
        int r = read_answer(&c, 0, &a, why, whylen);
        if (r == 0) {
            snprintf(why, whylen, "an extra answer %d after the expected ones", a.status);
            free(a.body.p);
            goto out;
        }
        if (r < 0)
            goto out;
    } else {
        struct buf req = {0};
        sync_request(&req, 1);
        send_all(&c, req.p, req.len);
        free(req.p);
        int r = read_answer(&c, 0, &a, why, whylen);
        if (r < 0)
            goto out;
        closed = r == 1;
        if (r == 1 && strcmp(pc->after, "keep") == 0) {
            snprintf(why, whylen, "closed instead of answering the follow-up request");
            goto out;
        }
        if (r == 0) {
            int good = a.status == 200 && a.body.p && strcmp(a.body.p, sync_body) == 0;
            if (!good)
                snprintf(why, whylen, "out of sync: the follow-up got %d [%.40s]", a.status,
                         a.body.p ? a.body.p : "");
            free(a.body.p);
            if (!good)
                goto out;
            r = read_answer(&c, 0, &a, why, whylen);
            if (r == 0) {
                snprintf(why, whylen, "out of sync: one answer too many (%d)", a.status);
                free(a.body.p);
                goto out;
            }
            if (r < 0)
                goto out;
        }
    }
    saw("%s%s", seen[0] ? " " : "", closed || strcmp(pc->after, "close") == 0 ? "then closed" : "in sync");
    rc = 0;
out:
    free(first.body.p);
    hangup(&c);
    return rc;
}

/* ---- the table ---- */

/* Trims spaces and tabs around s[0..n) in place; returns the start. */
static char *trim(char *s, char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = '\0';
    *end = '\0';
    return s;
}

static int parse_line(char *line, struct pcase *pc, char *why, size_t whylen)
{
    char *f[5];
    memset(pc, 0, sizeof(*pc));
    for (int i = 0; i < 5; i++) {
        char *sep = i < 4 ? strstr(line, "||") : NULL;
        if (i < 4 && sep == NULL) {
            snprintf(why, whylen, "expected 5 fields separated by ||");
            return -1;
        }
        char *end = sep ? sep : line + strlen(line);
        f[i] = trim(line, end);
        if (sep)
            line = sep + 2;
    }
    snprintf(pc->name, sizeof(pc->name), "%s", f[0]);
    snprintf(pc->expect, sizeof(pc->expect), "%s", f[1]);
    snprintf(pc->after, sizeof(pc->after), "%s", f[2]);
    snprintf(pc->checks, sizeof(pc->checks), "%s", f[3]);
    if (strcmp(pc->after, "keep") && strcmp(pc->after, "close") && strcmp(pc->after, "any")) {
        snprintf(why, whylen, "AFTER must be keep, close or any, not [%s]", pc->after);
        return -1;
    }
    if (unescape(f[4], strlen(f[4]), &pc->raw, &pc->shut) != 0 || pc->raw.len == 0) {
        snprintf(why, whylen, "bad escape in RAW");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = NULL;
    int i = 1;
    signal(SIGPIPE, SIG_IGN);
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strcmp(argv[i], "--sync") == 0 && i + 2 < argc) {
            sync_path = argv[++i];
            sync_body = argv[++i];
        } else {
            break;
        }
    }
    if (argc - i != 2 || atoi(argv[i]) <= 0 || atoi(argv[i]) > 65535) {
        fprintf(stderr, "usage: canal-probe [--mode TAG] [--sync PATH BODY] PORT CASEFILE\n");
        return 2;
    }
    port = (uint16_t)atoi(argv[i]);
    FILE *f = fopen(argv[i + 1], "r");
    if (f == NULL) {
        perror(argv[i + 1]);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, failed = 0, ran = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        struct pcase pc;
        char why[512] = "";
        if (parse_line(line, &pc, why, sizeof(why)) != 0) {
            printf("not ok - probe: %s line %d: %s\n", argv[i + 1], lineno, why);
            failed++;
            free(pc.raw.p);
            continue;
        }
        const char *name = pc.name;
        if (name[0] == '@') { /* "@router name": only in that mode */
            size_t t = strcspn(name, " ");
            if (mode == NULL || strlen(mode) != t - 1 || strncmp(name + 1, mode, t - 1) != 0) {
                free(pc.raw.p);
                continue;
            }
            name += t + (name[t] == ' ');
        }
        ran++;
        seen[0] = '\0';
        if (run_case(&pc, why, sizeof(why)) == 0 && still_alive(why, sizeof(why)) == 0) {
            printf("ok - probe: %s [%s]\n", name, seen);
        } else {
            printf("not ok - probe: %s: %s\n", name, why);
            failed++;
        }
        fflush(stdout);
        free(pc.raw.p);
    }
    free(line);
    fclose(f);
    printf("# canal-probe: %d cases, %d failed\n", ran, failed);
    return 0;
}
