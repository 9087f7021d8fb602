/* SPDX-License-Identifier: MIT */
/*
 * evhtp-server: canal-demo's five endpoints written with libevhtp 1.2.18 (Debian libevhtp-dev,
 * on libevent), a peer a C developer might pick instead of canal. Same data file, same JSON
 * library (jansson, dumped straight into libevhtp's output evbuffer), same bodies; bench/run
 * compares them with canal-demo's first.
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

#ifndef BASELINE_DATA
#define BASELINE_DATA "examples/demo/data/northwind.json"
#endif

/* ---- data: the same lookups as examples/demo/northwind.c ---- */

static json_t *root, *employees;
#define MAX_ID 64
static json_t *by_employee[MAX_ID + 1];

static int load_data(const char *path)
{
    json_error_t err;
    root = json_load_file(path, 0, &err);
    if (root == NULL) {
        fprintf(stderr, "evhtp-server: %s:%d: %s\n", path, err.line, err.text);
        return -1;
    }
    employees = json_object_get(root, "employees");
    json_t *orders = json_object_get(root, "orders");
    if (!json_is_array(employees) || !json_is_array(orders))
        return -1;
    by_employee[0] = orders;
    size_t i;
    json_t *o;
    json_array_foreach(orders, i, o)
    {
        json_int_t id = json_integer_value(json_object_get(o, "EmployeeID"));
        if (id < 1 || id > MAX_ID)
            continue;
        if (by_employee[id] == NULL)
            by_employee[id] = json_array();
        json_array_append(by_employee[id], o);
    }
    return 0;
}

static json_t *find_employee(int64_t id)
{
    size_t i;
    json_t *e;
    json_array_foreach(employees, i, e)
    {
        if (json_integer_value(json_object_get(e, "EmployeeID")) == id)
            return e;
    }
    return NULL;
}

static json_t *orders_page(int64_t id, const char *customer, int64_t index, int64_t size)
{
    json_t *out = json_array();
    json_t *list = (id >= 0 && id <= MAX_ID) ? by_employee[id] : NULL;
    int64_t skip = index * size;
    size_t i;
    json_t *o;
    if (list == NULL)
        return out;
    json_array_foreach(list, i, o)
    {
        if (customer != NULL) {
            const char *c = json_string_value(json_object_get(o, "CustomerID"));
            if (c == NULL || strcmp(c, customer) != 0)
                continue;
        }
        if (skip > 0) {
            skip--;
            continue;
        }
        if ((int64_t)json_array_size(out) == size)
            break;
        json_array_append(out, o);
    }
    return out;
}

/* ---- answers ---- */

static int parse_int32(const char *s, int32_t *out)
{
    if (s == NULL)
        return -1;
    const char *p = s + (*s == '-');
    if (*p == '\0')
        return -1;
    int64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > INT32_MAX)
            return -1;
        v = v * 10 + (*p - '0');
    }
    v = *s == '-' ? -v : v;
    if (v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

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
    if (parse_int32(req->uri->path->full + strlen("/home/employee/"), &id) != 0) {
        problem(req, 404, "Not Found", NULL);
        return;
    }
    json_t *e = find_employee(id);
    if (e == NULL) {
        char detail[64];
        snprintf(detail, sizeof(detail), "no employee with id %d", (int)id);
        problem(req, 404, "Not Found", detail);
        return;
    }
    send_json(req, 200, "application/json", json_incref(e));
}

static void add_error(json_t **errors, const char *name, const char *message)
{
    if (*errors == NULL)
        *errors = json_object();
    json_t *list = json_object_get(*errors, name);
    if (list == NULL)
        json_object_set_new(*errors, name, list = json_array());
    json_array_append_new(list, json_string(message));
}

static int32_t query_int(evhtp_request_t *req, const char *name, int32_t def, int32_t min, int32_t max,
                         json_t **errors)
{
    const char *v = req->uri->query ? evhtp_kv_find(req->uri->query, name) : NULL;
    int32_t x = def;
    char msg[160];
    if (v != NULL && parse_int32(v, &x) != 0) {
        snprintf(msg, sizeof(msg), "The value '%.64s' is not valid for %s.", v, name);
        add_error(errors, name, msg);
    } else if (x < min || x > max) {
        if (max != INT32_MAX)
            snprintf(msg, sizeof(msg), "The field %s must be between %d and %d.", name, (int)min, (int)max);
        else
            snprintf(msg, sizeof(msg), "The field %s must be at least %d.", name, (int)min);
        add_error(errors, name, msg);
    }
    return x;
}

static void orders(evhtp_request_t *req, void *arg)
{
    int32_t id;
    json_t *errors = NULL;
    if (parse_int32(req->uri->path->full + strlen("/home/orders/"), &id) != 0) {
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
    send_json(req, 200, "application/json", orders_page(id, customer, index, size));
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
    if (load_data(data) != 0)
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
