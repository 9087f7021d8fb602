/* SPDX-License-Identifier: MIT */
/* A tiny blocking HTTP/1.1 client for in-process tests: one request per connection
 * (Connection: close), the status, the head and the body of the answer. */
#ifndef CANAL_TEST_CLIENT_H
#define CANAL_TEST_CLIENT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static uint16_t client_port;

struct reply {
    int status;
    char head[4096];
    char body[8192];
    size_t body_len;
};

static void request(const char *raw, struct reply *r)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(client_port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(write(fd, raw, strlen(raw)), (ssize_t)strlen(raw));
    static char buf[16384];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    memset(r, 0, sizeof(*r));
    assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &r->status), 1);
    char *end = strstr(buf, "\r\n\r\n");
    assert_non_null(end);
    snprintf(r->head, sizeof(r->head), "%.*s", (int)(end - buf), buf);
    r->body_len = len - (size_t)(end + 4 - buf);
    memcpy(r->body, end + 4, r->body_len);
}

static void get(const char *path, struct reply *r)
{
    char raw[1024];
    snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: t\r\nX-One: 1\r\nX-Two: two\r\nConnection: close\r\n\r\n", path);
    request(raw, r);
}

#endif
