/* SPDX-License-Identifier: MIT */
/*
 * wsload: a small single-threaded epoll load generator for canal's real-time benchmarks.
 *
 *   wsload echo   --port P [--host H] [--path /ws/echo] --conns C --size S [--duration D] [--warmup W]
 *                 [--messages M]
 *   wsload fanout --port P [--port2 P2] [--host H] [--path /ws/chat/bench] --conns N [--rounds R] [--pid PID]
 *   wsload sse    --port P [--host H] [--path /sse/ticks?...] --conns N [--hold S] [--pid PID]
 *
 * echo:   C WebSocket connections, each in a closed loop: send one masked binary message of S
 *         bytes, wait for its whole echo, send the next. After W seconds of warm-up, counts the
 *         messages echoed in D seconds and every round trip. Prints one line:
 *           msgs_per_s=<n> p50_us=<n> p99_us=<n> errors=<n>
 *         With --messages M there is no warm-up and no clock: M messages are sent in all (the
 *         connections take turns as their echoes come back, still one in flight each), and once
 *         the M-th echo is in every connection sends a Close and waits for the server's Close
 *         and end of TCP, so the server has done all its work for the run when wsload exits
 *         (bench/ws-ir counts the server's instructions for M1 and M2 messages). Prints
 *           msgs=<n> secs=<s> errors=<n> conns_open=<n>
 * fanout: N connections join the path (a chat room) and stay idle; the server's RSS (from
 *         /proc/PID/status) is read before the first connects and once all are open. Then, R
 *         times, connection 0 sends one 32-byte text message and the time until the last of
 *         the N has received it (the sender too: the room echoes) is taken. Prints
 *           conns=<n> rss_before_kib=<n> rss_open_kib=<n> per_conn_bytes=<n> fanout_ms=<m1,m2,..>
 *         With --port2, every other connection goes to port P2 instead (a second instance that
 *         shares the room through Redis: bench/rooms-fanout); the sender, connection 0, is on P.
 * sse:    N GET requests held open on the path; RSS before, once every answer's header has
 *         arrived, and again S seconds later. Prints
 *           conns=<n> rss_before_kib=<n> rss_open_kib=<n> rss_later_kib=<n> per_conn_bytes=<n> bytes_in=<n>
 *
 * Handshakes run at most 256 at a time, so the listen backlog never overflows. The mask key is
 * fixed (a server cannot tell), so every message is masked once, at start-up.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum mode { ECHO, FANOUT, SSE };
enum state { CONNECTING, HANDSHAKE, OPEN, CLOSING, DEAD };

struct conn {
    int fd;
    enum state st;
    size_t sent;        /* bytes of the current request or message written */
    size_t hdr_seen;    /* handshake: bytes of "\r\n\r\n" matched */
    int req_done;       /* handshake: the request is written */
    int status_ok;      /* handshake: the status line was checked */
    uint8_t fh[10];     /* the incoming frame's header, as far as read */
    unsigned fh_len;
    uint64_t remaining; /* payload bytes of the incoming frame still to come */
    int in_frame;
    uint64_t t_sent;    /* echo: when the message went out (ns) */
    unsigned got_round; /* fanout: the last round this connection received */
};

static enum mode mode;
static const char *host = "127.0.0.1", *path;
static unsigned port, port2; /* port2: every other connection (two instances sharing a room) */
static int nconns = 100, epfd, pid = 0, rounds = 5;
static size_t msg_size = 64;
static double duration = 3, warmup = 1, hold = 5;
static struct conn *conns;
static char request[1024];
static size_t request_len;
static uint8_t *frame; /* the masked message, header included */
static size_t frame_len;
static int opening, opened, handshaking, errors;
static uint64_t *lat;
static size_t nlat, caplat;
static int measuring;
static uint64_t echoed;
static unsigned round_no;
static int round_got;
static uint64_t bytes_in;
static uint64_t budget, to_send; /* --messages: messages in all, and those not yet sent */
static int closed;               /* --messages: connections whose server closed after its Close */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long rss_kib(void)
{
    char p[64], line[256];
    long kib = -1;
    if (pid <= 0)
        return -1;
    snprintf(p, sizeof(p), "/proc/%d/status", pid);
    FILE *f = fopen(p, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static void make_frame(size_t len, uint8_t opcode)
{
    static const uint8_t mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    free(frame);
    frame = malloc(len + 14);
    if (frame == NULL)
        exit(1);
    size_t h = 0;
    frame[h++] = 0x80 | opcode;
    if (len < 126) {
        frame[h++] = 0x80 | (uint8_t)len;
    } else if (len < 65536) {
        frame[h++] = 0x80 | 126;
        frame[h++] = (uint8_t)(len >> 8);
        frame[h++] = (uint8_t)len;
    } else {
        frame[h++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--)
            frame[h++] = (uint8_t)((uint64_t)len >> (8 * i));
    }
    memcpy(frame + h, mask, 4);
    h += 4;
    for (size_t i = 0; i < len; i++)
        frame[h + i] = (uint8_t)('a' + i % 26) ^ mask[i % 4];
    frame_len = h + len;
}

static void kill_conn(struct conn *c)
{
    if (c->st == DEAD)
        return;
    if (c->st != OPEN && c->st != CLOSING)
        handshaking--;
    errors++;
    close(c->fd);
    c->st = DEAD;
}

static void want_write(struct conn *c, int on)
{
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what is left of buf; 1 when all is written, 0 when the socket is full, -1 on error. */
static int write_rest(struct conn *c, const void *buf, size_t len)
{
    while (c->sent < len) {
        ssize_t n = write(c->fd, (const char *)buf + c->sent, len - c->sent);
        if (n < 0) {
            if (errno == EAGAIN) {
                want_write(c, 1);
                return 0;
            }
            return -1;
        }
        c->sent += (size_t)n;
    }
    return 1;
}

static void send_msg(struct conn *c)
{
    if (budget > 0) {
        if (to_send == 0) {
            c->sent = frame_len; /* nothing pending */
            return;
        }
        to_send--;
    }
    c->sent = 0;
    c->t_sent = now_ns();
    int r = write_rest(c, frame, frame_len);
    if (r < 0)
        kill_conn(c);
}

static void start_conn(struct conn *c)
{
    unsigned p = port2 != 0 && (c - conns) % 2 == 1 ? port2 : port;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
    inet_pton(AF_INET, host, &sa.sin_addr);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        perror("wsload: socket");
        exit(1);
    }
    int on = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    c->st = CONNECTING;
    handshaking++;
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
        perror("wsload: connect");
        exit(1);
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

static void add_latency(uint64_t ns)
{
    if (nlat == caplat) {
        caplat = caplat ? caplat * 2 : 65536;
        lat = realloc(lat, caplat * sizeof(*lat));
        if (lat == NULL)
            exit(1);
    }
    lat[nlat++] = ns;
}

/* A whole frame has arrived on c. */
static void on_frame(struct conn *c, uint8_t opcode)
{
    if (opcode == 0x8) { /* close */
        kill_conn(c);
        return;
    }
    if (mode == ECHO) {
        if (measuring) {
            echoed++;
            add_latency(now_ns() - c->t_sent);
        }
        send_msg(c);
    } else if (mode == FANOUT && c->got_round != round_no) {
        c->got_round = round_no;
        round_got++;
    }
}

/* Feeds bytes of WebSocket frames through the header/payload state machine. */
static void feed_frames(struct conn *c, const uint8_t *p, size_t n)
{
    while (n > 0 && c->st == OPEN) {
        if (!c->in_frame) {
            c->fh[c->fh_len++] = *p++;
            n--;
            if (c->fh_len < 2)
                continue;
            unsigned l7 = c->fh[1] & 0x7f, need = 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0);
            if (c->fh_len < need)
                continue;
            uint64_t len = l7;
            if (l7 == 126)
                len = (uint64_t)c->fh[2] << 8 | c->fh[3];
            else if (l7 == 127)
                for (unsigned i = 0; i < 8; i++)
                    len = len << 8 | c->fh[2 + i];
            c->remaining = len;
            c->in_frame = 1;
        }
        size_t take = c->remaining < n ? (size_t)c->remaining : n;
        c->remaining -= take;
        p += take;
        n -= take;
        if (c->remaining == 0) {
            uint8_t opcode = c->fh[0] & 0x0f, fin = c->fh[0] & 0x80;
            c->in_frame = 0;
            c->fh_len = 0;
            if (fin)
                on_frame(c, opcode);
        }
    }
}

static void on_open(struct conn *c)
{
    c->st = OPEN;
    handshaking--;
    opened++;
    if (mode == ECHO)
        send_msg(c);
}

static void on_readable(struct conn *c)
{
    static uint8_t buf[65536];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n == 0 && c->st == CLOSING) { /* the server has answered our Close and closed */
            close(c->fd);
            c->st = DEAD;
            closed++;
            return;
        }
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            kill_conn(c);
            return;
        }
        if (n < 0)
            return;
        bytes_in += (uint64_t)n;
        if (c->st == CLOSING)
            continue; /* the server's Close: the end of TCP comes next */
        size_t off = 0;
        if (c->st == HANDSHAKE) {
            if (!c->status_ok) {
                /* the status line: 101 for a WebSocket, 200 for SSE */
                const char *want = mode == SSE ? "HTTP/1.1 200" : "HTTP/1.1 101";
                if (n < 12 || memcmp(buf, want, 12) != 0) {
                    kill_conn(c);
                    return;
                }
                c->status_ok = 1;
            }
            static const char end[] = "\r\n\r\n";
            while (off < (size_t)n && c->hdr_seen < 4) {
                c->hdr_seen = buf[off] == (uint8_t)end[c->hdr_seen] ? c->hdr_seen + 1 : (buf[off] == '\r' ? 1 : 0);
                off++;
            }
            if (c->hdr_seen < 4)
                continue;
            on_open(c);
        }
        if (mode != SSE && off < (size_t)n)
            feed_frames(c, buf + off, (size_t)n - off);
        if (c->st != OPEN)
            return;
    }
}

static void on_event(struct conn *c, uint32_t ev)
{
    if (c->st == DEAD)
        return;
    if (c->st == CONNECTING) {
        if (ev & (EPOLLERR | EPOLLHUP)) {
            kill_conn(c);
            return;
        }
        if (!(ev & EPOLLOUT))
            return;
        c->st = HANDSHAKE;
        c->sent = 0;
    }
    if (c->st == HANDSHAKE && !c->req_done) {
        int r = write_rest(c, request, request_len);
        if (r < 0) {
            kill_conn(c);
            return;
        }
        if (r == 0)
            return;
        want_write(c, 0);
        c->req_done = 1;
        c->sent = frame_len; /* nothing of a message pending */
    }
    if (ev & EPOLLIN)
        on_readable(c);
    if (c->st == OPEN && (ev & EPOLLOUT) && c->sent < frame_len) {
        int r = write_rest(c, frame, frame_len);
        if (r < 0)
            kill_conn(c);
        else if (r == 1)
            want_write(c, 0);
    }
}

/* Runs the loop for up to ms milliseconds, or until done() says so. */
static void run(double ms, int (*done)(void))
{
    struct epoll_event evs[512];
    uint64_t end = now_ns() + (uint64_t)(ms * 1e6);
    while (now_ns() < end && !(done && done())) {
        int n = epoll_wait(epfd, evs, 512, 10);
        for (int i = 0; i < n; i++)
            on_event(evs[i].data.ptr, evs[i].events);
    }
}

static int all_open(void)
{
    /* start more connections while fewer than 256 handshakes are under way */
    while (opening < nconns && handshaking < 256)
        start_conn(&conns[opening++]);
    return opening == nconns && handshaking == 0;
}

static int all_echoed(void)
{
    all_open(); /* connections still to open take their turn */
    return echoed == budget || errors > 0; /* a lost connection loses its message */
}

/* --messages: a Close (1000, masked) on every open connection, then until each server closes. */
static int all_closed(void)
{
    return closed + errors >= opened;
}

static void close_all(void)
{
    static const uint8_t close_frame[] = {0x88, 0x82, 0x37, 0xfa, 0x21, 0x3d, 0x03 ^ 0x37, 0xe8 ^ 0xfa};
    for (int i = 0; i < opening; i++) {
        struct conn *c = &conns[i];
        if (c->st != OPEN)
            continue;
        c->st = CLOSING;
        if (write(c->fd, close_frame, sizeof(close_frame)) != (ssize_t)sizeof(close_frame))
            kill_conn(c);
    }
}

static int round_done(void)
{
    return round_got >= opened;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fprintf(stderr, "usage: wsload echo|fanout|sse --port P [--host H] [--path PATH] [--conns N] [--size S]\n"
                    "       [--duration S] [--warmup S] [--messages M] [--rounds R] [--hold S] [--pid PID]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    if (strcmp(argv[1], "echo") == 0)
        mode = ECHO, path = "/ws/echo";
    else if (strcmp(argv[1], "fanout") == 0)
        mode = FANOUT, path = "/ws/chat/bench";
    else if (strcmp(argv[1], "sse") == 0)
        mode = SSE, path = "/sse/ticks?count=10000&interval_ms=60000";
    else
        usage();
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--host") == 0) host = v;
        else if (strcmp(k, "--port") == 0) port = (unsigned)atoi(v);
        else if (strcmp(k, "--port2") == 0) port2 = (unsigned)atoi(v);
        else if (strcmp(k, "--path") == 0) path = v;
        else if (strcmp(k, "--conns") == 0) nconns = atoi(v);
        else if (strcmp(k, "--size") == 0) msg_size = (size_t)atol(v);
        else if (strcmp(k, "--duration") == 0) duration = atof(v);
        else if (strcmp(k, "--warmup") == 0) warmup = atof(v);
        else if (strcmp(k, "--rounds") == 0) rounds = atoi(v);
        else if (strcmp(k, "--hold") == 0) hold = atof(v);
        else if (strcmp(k, "--messages") == 0) budget = to_send = (uint64_t)atoll(v);
        else if (strcmp(k, "--pid") == 0) pid = atoi(v);
        else usage();
    }
    if (port == 0 || nconns < 1)
        usage();
    signal(SIGPIPE, SIG_IGN);
    if (mode == SSE)
        request_len = (size_t)snprintf(request, sizeof(request),
                                       "GET %s HTTP/1.1\r\nHost: %s:%u\r\nAccept: text/event-stream\r\n\r\n", path, host, port);
    else
        request_len = (size_t)snprintf(request, sizeof(request),
                                       "GET %s HTTP/1.1\r\nHost: %s:%u\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                                       path, host, port);
    conns = calloc((size_t)nconns, sizeof(*conns));
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (conns == NULL || epfd < 0)
        return 1;

    if (mode == ECHO && budget > 0) {
        make_frame(msg_size, 0x2);
        measuring = 1;
        uint64_t t0 = now_ns();
        run(3600e3, all_echoed);
        close_all();
        run(60e3, all_closed);
        printf("msgs=%llu secs=%.2f errors=%d conns_open=%d\n", (unsigned long long)echoed,
               (double)(now_ns() - t0) / 1e9, errors, opened);
        return echoed == budget && errors == 0 ? 0 : 1;
    }
    if (mode == ECHO) {
        make_frame(msg_size, 0x2);
        run(60000, all_open);
        run(warmup * 1000, NULL);
        measuring = 1;
        uint64_t t0 = now_ns();
        run(duration * 1000, NULL);
        double secs = (double)(now_ns() - t0) / 1e9;
        measuring = 0;
        qsort(lat, nlat, sizeof(*lat), cmp_u64);
        printf("msgs_per_s=%.0f p50_us=%.1f p99_us=%.1f errors=%d conns_open=%d\n", (double)echoed / secs,
               nlat ? (double)lat[nlat / 2] / 1e3 : 0.0, nlat ? (double)lat[nlat * 99 / 100] / 1e3 : 0.0, errors, opened);
        return 0;
    }

    if (mode == FANOUT)
        make_frame(32, 0x1);
    long before = rss_kib();
    run(120000, all_open);
    run(1000, NULL); /* settle */
    long open_rss = rss_kib();
    if (mode == FANOUT) {
        printf("conns=%d rss_before_kib=%ld rss_open_kib=%ld per_conn_bytes=%.0f fanout_ms=", opened, before, open_rss,
               opened ? (double)(open_rss - before) * 1024 / opened : 0.0);
        for (int r = 1; r <= rounds; r++) {
            round_no = (unsigned)r;
            round_got = 0;
            struct conn *s = &conns[0];
            uint64_t t0 = now_ns();
            send_msg(s);
            run(30000, round_done);
            printf("%s%.2f", r > 1 ? "," : "", (double)(now_ns() - t0) / 1e6);
            if (round_got < opened)
                printf("(%d/%d)", round_got, opened);
            run(200, NULL);
        }
        printf(" errors=%d\n", errors);
        return 0;
    }
    run(hold * 1000, NULL);
    long later = rss_kib();
    printf("conns=%d rss_before_kib=%ld rss_open_kib=%ld rss_later_kib=%ld per_conn_bytes=%.0f bytes_in=%llu errors=%d\n",
           opened, before, open_rss, later, opened ? (double)(open_rss - before) * 1024 / opened : 0.0,
           (unsigned long long)bytes_in, errors);
    return 0;
}
