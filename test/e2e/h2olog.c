/* SPDX-License-Identifier: MIT */
/*
 * canal-h2olog: the reference for test/e2e/accesslog.sh's byte-for-byte check. A bare libh2o
 * 2.2.5 server with libh2o's own access logger and the format canal gave it before it had its
 * own writer; it answers every request "200 Hello, World!" as canal's /home/plaintext does,
 * with the request's X-Request-Id echoed in the answer (as canal keeps a trusted proxy's).
 *
 *   canal-h2olog --port N --access-log FILE   (prints "listening on http://127.0.0.1:N")
 */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <h2o.h>

static h2o_accept_ctx_t accept_ctx;

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    ssize_t i = h2o_find_header_by_str(&req->headers, H2O_STRLIT("x-request-id"), -1);
    req->res.status = 200;
    req->res.reason = "OK";
    if (i != -1)
        h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("x-request-id"), 0, NULL,
                              req->headers.entries[i].value.base, req->headers.entries[i].value.len);
    h2o_send_inline(req, H2O_STRLIT("Hello, World!"));
    return 0;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    h2o_socket_t *sock;
    if (err != NULL)
        return;
    while ((sock = h2o_evloop_socket_accept(listener)) != NULL)
        h2o_accept(&accept_ctx, sock);
}

int main(int argc, char **argv)
{
    const char *log = NULL;
    int port = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0)
            port = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--access-log") == 0)
            log = argv[i + 1];
    }
    if (log == NULL) {
        fprintf(stderr, "usage: canal-h2olog --port N --access-log FILE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    static h2o_globalconf_t config;
    static h2o_context_t ctx;
    h2o_config_init(&config);
    h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    h2o_create_handler(path, sizeof(h2o_handler_t))->on_req = on_req;
    h2o_access_log_filehandle_t *fh = h2o_access_log_open_handle(
        log, "%h %l %u %t \"%r\" %s %b \"%{Referer}i\" \"%{User-agent}i\" \"%{x-request-id}o\"", H2O_LOGCONF_ESCAPE_APACHE);
    if (fh == NULL)
        return 1;
    h2o_access_log_register(path, fh);

    h2o_evloop_t *loop = h2o_evloop_create();
    h2o_context_init(&ctx, loop, &config);
    accept_ctx.ctx = &ctx;
    accept_ctx.hosts = config.hosts;
    int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t len = sizeof(sa);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        perror("canal-h2olog: bind");
        return 1;
    }
    h2o_socket_read_start(h2o_evloop_socket_create(loop, fd, H2O_SOCKET_FLAG_DONT_READ), on_accept);
    fprintf(stderr, "listening on http://127.0.0.1:%d\n", ntohs(sa.sin_port));
    while (h2o_evloop_run(loop, INT32_MAX) == 0)
        ;
    return 0;
}
