/* SPDX-License-Identifier: MIT */
/*
 * The demo in router mode: one handler per route, parameters read and checked by hand. The
 * 400 answers use the same shape and words as the controller layer's binding, so both modes
 * answer the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include "demo.h"
#include "northwind.h"

static int plaintext(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, DEMO_TEXT_TYPE, "Hello, World!", 13);
}

/* The small answers are written with the streaming JSON writer: no json_t is built. */
static int json(canal_req_t *req, void *data)
{
    canal_jw_t *w = canal_req_jw(req);
    demo_write_message(w);
    return canal_res_jw(req, 200, w);
}

static int woo(canal_req_t *req, void *data)
{
    canal_jw_t *w = canal_req_jw(req);
    demo_write_woo(w);
    return canal_res_jw(req, 200, w);
}

static int employee(canal_req_t *req, void *data)
{
    int32_t id;
    canal_req_param_int32(req, "id", &id); /* the route's {id:int} constraint checked it */
    json_t *e = northwind_employee(id);
    if (e == NULL)
        return canal_res_problem(req, 404, "no employee with id %d", (int)id);
    return canal_res_json(req, 200, e);
}

static void add_error(json_t **errors, const char *name, const char *message)
{
    if (*errors == NULL)
        *errors = json_object();
    json_t *list = json_object_get(*errors, name);
    if (list == NULL)
        json_object_set_new(*errors, name, list = json_array());
    json_t *s = json_string(message);
    json_array_append_new(list, s ? s : json_string("The value is not valid."));
}

/* Reads an optional int32 query parameter with bounds, or records why it cannot. */
static int32_t query_int(canal_req_t *req, const char *name, int32_t def, const char *min, const char *max,
                         json_t **errors)
{
    canal_str_t v;
    int32_t x = def;
    char msg[160];
    size_t n = canal_req_query(req, name, &v);
    if (n > 1) {
        snprintf(msg, sizeof(msg), "The %s field must be given once.", name);
        add_error(errors, name, msg);
    } else if (n == 1 && canal_parse_int32(v, &x) != 0) {
        snprintf(msg, sizeof(msg), "The value '%.*s' is not valid for %s.", (int)(v.len > 64 ? 64 : v.len), v.base,
                 name);
        add_error(errors, name, msg);
    } else if (x < atoi(min) || (max && x > atoi(max))) {
        if (max)
            snprintf(msg, sizeof(msg), "The field %s must be between %s and %s.", name, min, max);
        else
            snprintf(msg, sizeof(msg), "The field %s must be at least %s.", name, min);
        add_error(errors, name, msg);
    }
    return x;
}

static int orders(canal_req_t *req, void *data)
{
    int32_t id;
    json_t *errors = NULL;
    canal_str_t customer = {NULL, 0};
    canal_req_param_int32(req, "id", &id);
    size_t ncustomer = canal_req_query(req, "customerid", &customer);
    if (ncustomer > 1)
        add_error(&errors, "customerid", "The customerid field must be given once.");
    else if (ncustomer == 1 && !canal_utf8_valid(customer)) /* as the controller layer's strings */
        add_error(&errors, "customerid", "The field customerid must be valid UTF-8.");
    int32_t index = query_int(req, "index", 0, "0", NULL, &errors);
    int32_t size = query_int(req, "size", 10, "1", "100", &errors);
    if (errors != NULL)
        return canal_res_problem_new(req, 400,
                                     json_pack("{s:s, s:s, s:o}", "type",
                                               "https://tools.ietf.org/html/rfc9110#section-15.5.1", "title",
                                               "One or more validation errors occurred.", "errors", errors));
    return canal_res_json_new(req, 200, northwind_orders(id, customer.base, customer.len, index, size));
}

static int orders_ndjson(canal_req_t *req, void *data)
{
    return demo_orders_ndjson(req);
}

int demo_router_mode(canal_app_t *app, canal_error_info_t *err)
{
    static const struct {
        const char *tmpl;
        canal_handler_fn fn;
        const char *content_type; /* for OpenAPI when it is not JSON */
    } routes[] = {
        {"home/plaintext", plaintext, NULL},
        {"home/json", json, NULL},
        {"home/employee/{id:int}", employee, NULL},
        {"home/orders/{id:int}", orders, NULL},
        {"home/orders.ndjson", orders_ndjson, "application/x-ndjson"},
        {"api/woo", woo, NULL},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        int rc = canal_app_route(app,
                                 &(canal_endpoint_spec_t){.tmpl = routes[i].tmpl, .handler = routes[i].fn,
                                                          .content_type = routes[i].content_type},
                                 NULL, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}
