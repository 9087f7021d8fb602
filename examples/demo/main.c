/* SPDX-License-Identifier: MIT */
/*
 * canal-demo: the benchmark app of the articles canal started from.
 *
 *   GET /home/plaintext                      Hello, World!
 *   GET /home/json                           {"message":"Hello, World!"}
 *   GET /home/employee/{id}                  an employee, or a 404 problem
 *   GET /home/orders/{id}?customerid=&index=&size=   a page of orders (id 0: everyone's)
 *   GET /api/woo                             {"id":1,"name":"Woo"}
 *
 *   build/bin/canal-demo [--mode router] [--data FILE] [canal's flags: --host --port ...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <canal.h>
#include "northwind.h"

static int plaintext(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "Hello, World!");
}

static int json(canal_req_t *req, void *data)
{
    return canal_res_json_new(req, 200, json_pack("{s:s}", "message", "Hello, World!"));
}

static int woo(canal_req_t *req, void *data)
{
    return canal_res_json_new(req, 200, json_pack("{s:i, s:s}", "id", 1, "name", "Woo"));
}

static int employee(canal_req_t *req, void *data)
{
    int32_t id;
    canal_req_param_int(req, "id", &id); /* the route's {id:int} constraint checked it */
    json_t *e = northwind_employee(id);
    if (e == NULL)
        return canal_res_problem(req, 404, "no employee with id %d", (int)id);
    return canal_res_json(req, 200, e);
}

/* Adds a validation error for a query parameter, in the shape of ASP.NET Core's
 * ValidationProblemDetails: "errors": {"name": ["message", ...]}. */
static void add_error(json_t **errors, const char *name, const char *message)
{
    if (*errors == NULL)
        *errors = json_object();
    json_t *list = json_object_get(*errors, name);
    if (list == NULL)
        json_object_set_new(*errors, name, list = json_array());
    json_array_append_new(list, json_string(message));
}

/* Reads an int32 query parameter in [min, max], or records why it cannot. */
static int32_t query_int(canal_req_t *req, const char *name, int32_t def, int32_t min, int32_t max,
                         json_t **errors)
{
    canal_str_t v;
    int32_t x = def;
    size_t n = canal_req_query(req, name, &v);
    if (n > 1)
        add_error(errors, name, "must be given once");
    else if (n == 1 && canal_parse_int32(v, &x) != 0)
        add_error(errors, name, "must be a 32-bit integer");
    else if (x < min || x > max)
        add_error(errors, name, canal_req_printf(req, "must be between %d and %d", (int)min, (int)max));
    return x;
}

static int orders(canal_req_t *req, void *data)
{
    int32_t id;
    json_t *errors = NULL;
    canal_str_t customer = {NULL, 0};
    canal_req_param_int(req, "id", &id);
    int32_t index = query_int(req, "index", 0, 0, INT32_MAX, &errors);
    int32_t size = query_int(req, "size", 10, 1, 100, &errors);
    if (canal_req_query(req, "customerid", &customer) > 1)
        add_error(&errors, "customerid", "must be given once");
    if (errors != NULL)
        return canal_res_problem_new(req, 400, json_pack("{s:s, s:o}", "title",
                                                         "One or more validation errors occurred.",
                                                         "errors", errors));
    return canal_res_json_new(req, 200, northwind_orders(id, customer.base, customer.len, index, size));
}

static void usage(void)
{
    fprintf(stderr, "usage: canal-demo [--mode router] [--data FILE] [options]\n%s",
            canal_config_usage());
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    const char *mode = "router", *data = NULL;

    canal_config_init(&cfg);
    cfg.access_log = "-";
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(stderr, "canal-demo: %s\n", err.message);
        usage();
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            data = argv[++i];
        } else {
            usage();
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (strcmp(mode, "router") != 0) {
        fprintf(stderr, "canal-demo: unknown --mode '%s'\n", mode);
        return 2;
    }
    if (northwind_load(data) != 0)
        return 1;

    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    static const struct {
        const char *tmpl;
        canal_handler_fn fn;
    } routes[] = {
        {"home/plaintext", plaintext},
        {"home/json", json},
        {"home/employee/{id:int}", employee},
        {"home/orders/{id:int}", orders},
        {"api/woo", woo},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (canal_app_route(app, "GET", routes[i].tmpl, NULL, routes[i].fn, NULL, NULL, &err) != 0) {
            fprintf(stderr, "canal-demo: %s: %s\n", routes[i].tmpl, err.message);
            return 1;
        }
    }
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    const char *host = canal_app_config(app)->host;
    unsigned port = canal_app_port(app, 0);
    fprintf(stderr, "canal-demo listening on http://%s:%u (%s mode, %u threads, %s); try:\n", host, port, mode,
            canal_app_config(app)->threads,
            canal_app_config(app)->env == CANAL_ENV_DEVELOPMENT ? "development" : "production");
    static const char *const urls[] = {"/home/plaintext", "/home/json", "/home/employee/3",
                                       "/home/orders/3?index=0&size=5", "/api/woo"};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
        fprintf(stderr, "  http://%s:%u%s\n", host, port, urls[i]);
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    northwind_free();
    return rc == 0 ? 0 : 1;
}
