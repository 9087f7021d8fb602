/* SPDX-License-Identifier: MIT */
/*
 * canal-loadclient: a keep-alive HTTP/1.1 load client that accounts for every request, for the
 * shutdown test. Each of C threads keeps one connection and sends GET PATH, waits for the whole
 * answer (Content-Length framing), and sends the next; an answer with "Connection: close"
 * makes it reconnect, and a refused connection ends the thread (the server has stopped
 * listening). A request that was written but whose answer did not arrive whole is "lost":
 * a server that drains correctly loses none, because it announces the close on the last
 * answer of each connection instead of cutting a connection under a request.
 *
 * One case is not the server's to prevent: a connection the kernel completed into a listening
 * socket's backlog in the instant between the server's last accept() and its close() of that
 * socket is reset by the close, although connect() succeeded. Its first request gets a reset and
 * not a byte; it is counted apart as "unaccepted" (the server never saw it: compare the
 * server's count of requests with "complete").
 *
 *   canal-loadclient PORT PATH CONNECTIONS SECONDS
 * prints "complete N lost N refused N non200 N unaccepted N" and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint16_t port;
static const char *path;
static time_t end_at;
static atomic_ulong complete, lost, refused, non200, unaccepted;

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    struct timeval tv = {30, 0}; /* a server that neither answers nor closes: counted lost */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads one answer. Returns 1 if whole (and *close_after if the server ends the connection),
 * 0 if the connection ended before it was whole. */
static int read_answer(int fd, char *buf, size_t size, size_t *have, int *status, int *close_after)
{
    char *end;
    for (;;) {
        buf[*have] = '\0';
        if ((end = strstr(buf, "\r\n\r\n")) != NULL)
            break;
        ssize_t n = read(fd, buf + *have, size - 1 - *have);
        if (n <= 0)
            return 0;
        *have += (size_t)n;
    }
    size_t head = (size_t)(end + 4 - buf), body = 0;
    *status = 0;
    sscanf(buf, "HTTP/1.%*d %d", status);
    *end = '\0';
    const char *cl = strcasestr(buf, "\ncontent-length:");
    if (cl != NULL)
        body = strtoul(cl + 16, NULL, 10);
    *close_after = strcasestr(buf, "\nconnection: close") != NULL;
    while (*have < head + body) {
        ssize_t n = read(fd, buf + *have, size - 1 - *have);
        if (n <= 0)
            return 0;
        *have += (size_t)n;
    }
    /* keep what follows (nothing, as this client does not pipeline) */
    memmove(buf, buf + head + body, *have - head - body);
    *have -= head + body;
    return 1;
}

static void *client(void *arg)
{
    char req[512], buf[65536];
    int len = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    int fd = -1, fresh = 0;
    size_t have = 0;
    while (time(NULL) < end_at) {
        if (fd < 0) {
            if ((fd = dial()) < 0) {
                atomic_fetch_add(&refused, 1);
                return NULL;
            }
            have = 0;
            fresh = 1; /* no answer on it yet */
        }
        if (send(fd, req, (size_t)len, MSG_NOSIGNAL) != len) {
            /* the server closed while idle, before taking this request: not a loss, but it
             * must have said so on the last answer, and it did not (else we had reconnected) */
            atomic_fetch_add(fresh ? &unaccepted : &lost, 1);
            close(fd);
            fd = -1;
            continue;
        }
        int status, close_after;
        errno = 0;
        if (!read_answer(fd, buf, sizeof(buf), &have, &status, &close_after)) {
            /* a reset with not a byte on a new connection: the kernel's, at the listener's close
             * (an end of file or a timeout would be the server's doing: lost) */
            atomic_fetch_add(fresh && have == 0 && errno == ECONNRESET ? &unaccepted : &lost, 1);
            close(fd);
            fd = -1;
            continue;
        }
        fresh = 0;
        atomic_fetch_add(&complete, 1);
        if (status != 200)
            atomic_fetch_add(&non200, 1);
        if (close_after) {
            close(fd);
            fd = -1;
        }
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: canal-loadclient PORT PATH CONNECTIONS SECONDS\n");
        return 2;
    }
    port = (uint16_t)atoi(argv[1]);
    path = argv[2];
    int n = atoi(argv[3]);
    end_at = time(NULL) + atoi(argv[4]);
    if (n < 1 || n > 1024) {
        fprintf(stderr, "canal-loadclient: 1 to 1024 connections\n");
        return 2;
    }
    pthread_t *t = calloc((size_t)n, sizeof(*t));
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, client, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    free(t);
    printf("complete %lu lost %lu refused %lu non200 %lu unaccepted %lu\n", atomic_load(&complete),
           atomic_load(&lost), atomic_load(&refused), atomic_load(&non200), atomic_load(&unaccepted));
    return 0;
}
