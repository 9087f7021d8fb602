/* SPDX-License-Identifier: MIT */
/*
 * evhtp-server: canal-demo's five endpoints written with libevhtp 1.2.18 (Debian libevhtp-dev,
 * on libevent), a peer a C developer might pick instead of canal. Same data file, same JSON
 * library (jansson, dumped straight into libevhtp's output evbuffer), same bodies; bench/run
 * compares them with canal-demo's first. The data, its lookups and the query checks are
 * bench/peers/data.h's, shared with the other C servers.
 *
 * One libevent loop in one thread (--threads N uses evhtp's own thread pool, each thread with
 * its own event base, for the multi-core run), routes by evhtp_set_cb (exact paths) and
 * evhtp_set_glob_cb (paths with an id), query by evhtp's own parser.
 *
 *   build/bench/evhtp-server [--port N] [--threads N] [--data FILE]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <evhtp/evhtp.h>
#include <jansson.h>
#include "data.h"

/* ---- answers ---- */

static int to_evbuffer(const char *buffer, size_t size, void *data)
{
    return evbuffer_add(data, buffer, size);
}

static void send_json(evhtp_request_t *req, int status, const char *ctype, json_t *body)
{
    json_dump_callback(body, to_evbuffer, req->buffer_out, JSON_COMPACT);
    json_decref(body);
    evhtp_headers_add_header(req->headers_out, evhtp_header_new("Content-Type", ctype, 0, 0));
    evhtp_send_reply(req, status);
}

static void problem(evhtp_request_t *req, int status, const char *title, const char *detail)
{
    json_t *p = json_pack("{s:s, s:s, s:i}", "type", "about:blank", "title", title, "status", status);
    if (detail != NULL)
        json_object_set_new(p, "detail", json_string(detail));
    send_json(req, status, "application/problem+json", p);
}

static void plaintext(evhtp_request_t *req, void *arg)
{
    evbuffer_add_reference(req->buffer_out, "Hello, World!", 13, NULL, NULL);
    evhtp_headers_add_header(req->headers_out, evhtp_header_new("Content-Type", "text/plain; charset=utf-8", 0, 0));
    evhtp_send_reply(req, EVHTP_RES_OK);
}

static void json(evhtp_request_t *req, void *arg)
{
    send_json(req, 200, "application/json", json_pack("{s:s}", "message", "Hello, World!"));
}

static void woo(evhtp_request_t *req, void *arg)
{
    send_json(req, 200, "application/json", json_pack("{s:i, s:s}", "id", 1, "name", "Woo"));
}

static void employee(evhtp_request_t *req, void *arg)
{
    int32_t id;
    const char *seg = req->uri->path->full + strlen("/home/employee/");
    if (bench_parse_int32(seg, strlen(seg), &id) != 0) {
        problem(req, 404, "Not Found", NULL);
        return;
    }
    json_t *e = bench_employee(id);
    if (e == NULL) {
        char detail[64];
        snprintf(detail, sizeof(detail), "no employee with id %d", (int)id);
        problem(req, 404, "Not Found", detail);
        return;
    }
    send_json(req, 200, "application/json", json_incref(e));
}

/* The query's parameter name (its first value) checked as canal-demo does. */
static int32_t query_int(evhtp_request_t *req, const char *name, int32_t def, int32_t min, int32_t max,
                         json_t **errors)
{
    const char *v = req->uri->query ? evhtp_kv_find(req->uri->query, name) : NULL;
    return bench_query_int(v, v ? strlen(v) : 0, v != NULL, name, def, min, max, errors);
}

static void orders(evhtp_request_t *req, void *arg)
{
    int32_t id;
    json_t *errors = NULL;
    const char *seg = req->uri->path->full + strlen("/home/orders/");
    if (bench_parse_int32(seg, strlen(seg), &id) != 0) {
        problem(req, 404, "Not Found", NULL);
        return;
    }
    int32_t index = query_int(req, "index", 0, 0, INT32_MAX, &errors);
    int32_t size = query_int(req, "size", 10, 1, 100, &errors);
    if (errors != NULL) {
        send_json(req, 400, "application/problem+json",
                  json_pack("{s:s, s:s, s:i, s:o}", "type", "https://tools.ietf.org/html/rfc9110#section-15.5.1", "title",
                            "One or more validation errors occurred.", "status", 400, "errors", errors));
        return;
    }
    const char *customer = req->uri->query ? evhtp_kv_find(req->uri->query, "customerid") : NULL;
    send_json(req, 200, "application/json", bench_orders_page(id, customer, customer ? strlen(customer) : 0, index, size));
}

static void not_found(evhtp_request_t *req, void *arg)
{
    problem(req, 404, "Not Found", NULL);
}

int main(int argc, char **argv)
{
    unsigned port = 8080;
    int threads = 1;
    const char *data = BASELINE_DATA;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else {
            fprintf(stderr, "usage: evhtp-server [--port N] [--threads N] [--data FILE]\n");
            return 2;
        }
    }
    if (bench_data_load("evhtp-server", data) != 0)
        return 1;
    signal(SIGPIPE, SIG_IGN);

    struct event_base *base = event_base_new();
    evhtp_t *htp = evhtp_new(base, NULL);
    evhtp_enable_flag(htp, EVHTP_FLAG_ENABLE_NODELAY);
    evhtp_set_cb(htp, "/home/plaintext", plaintext, NULL);
    evhtp_set_cb(htp, "/home/json", json, NULL);
    evhtp_set_cb(htp, "/api/woo", woo, NULL);
    evhtp_set_glob_cb(htp, "/home/employee/*", employee, NULL);
    evhtp_set_glob_cb(htp, "/home/orders/*", orders, NULL);
    evhtp_set_gencb(htp, not_found, NULL);
    if (threads > 1)
        evhtp_use_threads_wexit(htp, NULL, NULL, threads, NULL);
    if (evhtp_bind_socket(htp, "ipv4:127.0.0.1", (uint16_t)port, 4096) != 0) {
        fprintf(stderr, "evhtp-server: cannot listen on 127.0.0.1:%u\n", port);
        return 1;
    }
    fprintf(stderr, "evhtp-server listening on http://127.0.0.1:%u\n", port);
    event_base_loop(base, 0);
    return 0;
}
