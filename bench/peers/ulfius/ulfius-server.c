/* SPDX-License-Identifier: MIT */
/*
 * ulfius-server: canal-demo's five endpoints written with ulfius 2.7 (Debian libulfius-dev), a
 * peer a C developer might pick instead of canal. Same data file, same JSON library (jansson,
 * which ulfius uses itself), same bodies; bench/run compares them with canal-demo's first. The
 * data, its lookups and the query checks are bench/peers/data.h's, shared with the other C servers.
 *
 * ulfius runs on GNU libmicrohttpd. Its ulfius_start_framework() starts MHD with one thread per
 * connection, which at 10,000 connections means 10,000 threads on one core. The benchmark runs
 * it the way a user tuning for throughput would: one MHD thread polling with epoll
 * (MHD_USE_EPOLL_INTERNAL_THREAD), like the single event loop of the other servers, and a
 * connection limit above 10,000 (MHD's default is FD_SETSIZE - 4). --mhd-threads restores
 * ulfius's default.
 *
 *   build/bench/ulfius-server [--port N] [--data FILE] [--mhd-threads]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ulfius.h>
#include "data.h"

/* ---- answers ---- */

/* The route's {id}, as canal's {id:int}: 0, or -1 if absent or not an int32. */
static int url_id(const struct _u_request *req, int32_t *id)
{
    const char *s = u_map_get(req->map_url, "id");
    return s != NULL && bench_parse_int32(s, strlen(s), id) == 0 ? 0 : -1;
}

static int send_json(struct _u_response *res, unsigned status, const char *ctype, json_t *body)
{
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    ulfius_set_string_body_response(res, status, text);
    u_map_put(res->map_header, "Content-Type", ctype);
    free(text);
    return U_CALLBACK_COMPLETE;
}

static int problem(struct _u_response *res, unsigned status, const char *title, const char *detail)
{
    json_t *p = json_pack("{s:s, s:s, s:i}", "type", "about:blank", "title", title, "status", (int)status);
    if (detail != NULL)
        json_object_set_new(p, "detail", json_string(detail));
    return send_json(res, status, "application/problem+json", p);
}

static int plaintext(const struct _u_request *req, struct _u_response *res, void *data)
{
    ulfius_set_string_body_response(res, 200, "Hello, World!");
    u_map_put(res->map_header, "Content-Type", "text/plain; charset=utf-8");
    return U_CALLBACK_COMPLETE;
}

static int json(const struct _u_request *req, struct _u_response *res, void *data)
{
    return send_json(res, 200, "application/json", json_pack("{s:s}", "message", "Hello, World!"));
}

static int woo(const struct _u_request *req, struct _u_response *res, void *data)
{
    return send_json(res, 200, "application/json", json_pack("{s:i, s:s}", "id", 1, "name", "Woo"));
}

static int employee(const struct _u_request *req, struct _u_response *res, void *data)
{
    int32_t id;
    if (url_id(req, &id) != 0)
        return problem(res, 404, "Not Found", NULL);
    json_t *e = bench_employee(id);
    if (e == NULL) {
        char detail[64];
        snprintf(detail, sizeof(detail), "no employee with id %d", (int)id);
        return problem(res, 404, "Not Found", detail);
    }
    return send_json(res, 200, "application/json", json_incref(e));
}

/* The query's parameter name checked as canal-demo does. */
static int32_t query_int(const struct _u_request *req, const char *name, int32_t def, int32_t min, int32_t max,
                         json_t **errors)
{
    const char *v = u_map_get(req->map_url, name);
    return bench_query_int(v, v ? strlen(v) : 0, v != NULL, name, def, min, max, errors);
}

static int orders(const struct _u_request *req, struct _u_response *res, void *data)
{
    int32_t id;
    json_t *errors = NULL;
    if (url_id(req, &id) != 0)
        return problem(res, 404, "Not Found", NULL);
    int32_t index = query_int(req, "index", 0, 0, INT32_MAX, &errors);
    int32_t size = query_int(req, "size", 10, 1, 100, &errors);
    if (errors != NULL)
        return send_json(res, 400, "application/problem+json",
                         json_pack("{s:s, s:s, s:i, s:o}", "type", "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                                   "title", "One or more validation errors occurred.", "status", 400, "errors", errors));
    const char *customer = u_map_get(req->map_url, "customerid");
    return send_json(res, 200, "application/json",
                     bench_orders_page(id, customer, customer ? strlen(customer) : 0, index, size));
}

static int not_found(const struct _u_request *req, struct _u_response *res, void *data)
{
    return problem(res, 404, "Not Found", NULL);
}

int main(int argc, char **argv)
{
    unsigned port = 8080;
    const char *data = BASELINE_DATA;
    int mhd_threads = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--mhd-threads") == 0)
            mhd_threads = 1;
        else {
            fprintf(stderr, "usage: ulfius-server [--port N] [--data FILE] [--mhd-threads]\n");
            return 2;
        }
    }
    if (bench_data_load("ulfius-server", data) != 0)
        return 1;

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    struct _u_instance inst;
    if (ulfius_init_instance(&inst, port, &addr, NULL) != U_OK)
        return 1;
    ulfius_add_endpoint_by_val(&inst, "GET", NULL, "/home/plaintext", 0, plaintext, NULL);
    ulfius_add_endpoint_by_val(&inst, "GET", NULL, "/home/json", 0, json, NULL);
    ulfius_add_endpoint_by_val(&inst, "GET", NULL, "/home/employee/:id", 0, employee, NULL);
    ulfius_add_endpoint_by_val(&inst, "GET", NULL, "/home/orders/:id", 0, orders, NULL);
    ulfius_add_endpoint_by_val(&inst, "GET", NULL, "/api/woo", 0, woo, NULL);
    ulfius_set_default_endpoint(&inst, not_found, NULL);

    /* Every thread, MHD's too, has SIGTERM/SIGINT blocked: main waits for them. */
    sigset_t set;
    int sig;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    int rc;
    if (mhd_threads) {
        rc = ulfius_start_framework(&inst);
    } else {
        struct MHD_OptionItem ops[] = {
            {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)mhd_request_completed, NULL},
            {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)ulfius_uri_logger, NULL},
            {MHD_OPTION_SOCK_ADDR, 0, &addr},
            {MHD_OPTION_CONNECTION_LIMIT, 30000, NULL},
            {MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, NULL},
            {MHD_OPTION_END, 0, NULL},
        };
        rc = ulfius_start_framework_with_mhd_options(&inst, MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, ops);
    }
    if (rc != U_OK) {
        fprintf(stderr, "ulfius-server: cannot start on 127.0.0.1:%u\n", port);
        return 1;
    }
    fprintf(stderr, "ulfius-server listening on http://127.0.0.1:%u\n", port);
    sigwait(&set, &sig);
    ulfius_stop_framework(&inst);
    ulfius_clean_instance(&inst);
    return 0;
}
