/* SPDX-License-Identifier: MIT */
/*
 * ulfius-server: canal-demo's five endpoints written with ulfius 2.7 (Debian libulfius-dev), a
 * peer a C developer might pick instead of canal. Same data file, same JSON library (jansson,
 * which ulfius uses itself), same bodies; bench/run compares them with canal-demo's first.
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
        fprintf(stderr, "ulfius-server: %s:%d: %s\n", path, err.line, err.text);
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

/* An optional '-' and digits that fit in int32. */
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
    if (parse_int32(u_map_get(req->map_url, "id"), &id) != 0)
        return problem(res, 404, "Not Found", NULL);
    json_t *e = find_employee(id);
    if (e == NULL) {
        char detail[64];
        snprintf(detail, sizeof(detail), "no employee with id %d", (int)id);
        return problem(res, 404, "Not Found", detail);
    }
    return send_json(res, 200, "application/json", json_incref(e));
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

static int32_t query_int(const struct _u_request *req, const char *name, int32_t def, int32_t min, int32_t max,
                         json_t **errors)
{
    const char *v = u_map_get(req->map_url, name);
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

static int orders(const struct _u_request *req, struct _u_response *res, void *data)
{
    int32_t id;
    json_t *errors = NULL;
    if (parse_int32(u_map_get(req->map_url, "id"), &id) != 0)
        return problem(res, 404, "Not Found", NULL);
    int32_t index = query_int(req, "index", 0, 0, INT32_MAX, &errors);
    int32_t size = query_int(req, "size", 10, 1, 100, &errors);
    if (errors != NULL)
        return send_json(res, 400, "application/problem+json",
                         json_pack("{s:s, s:s, s:i, s:o}", "type", "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                                   "title", "One or more validation errors occurred.", "status", 400, "errors", errors));
    return send_json(res, 200, "application/json",
                     orders_page(id, u_map_get(req->map_url, "customerid"), index, size));
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
    if (load_data(data) != 0)
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
