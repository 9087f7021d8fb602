/* SPDX-License-Identifier: MIT */
/*
 * The demo in controller mode, BeetleX-style: a Home controller whose simple actions are
 * reached by the conventional route "{controller=Home}/{action=Index}" (/home/plaintext,
 * /home/json), actions with templates of their own, declared parameters that the controller
 * layer binds and validates, and a Woo controller under the prefix "api/[controller]".
 */
#include "demo.h"
#include "northwind.h"

static int plaintext(canal_ctx_t *ctx, canal_req_t *req)
{
    return canal_res_body_static(req, 200, DEMO_TEXT_TYPE, "Hello, World!", 13);
}

/* As in router mode, the small answers use the streaming JSON writer (no json_t). */
static int json(canal_ctx_t *ctx, canal_req_t *req)
{
    canal_jw_t *w = canal_req_jw(req);
    demo_write_message(w);
    return canal_res_jw(req, 200, w);
}

enum { EMPLOYEE_ID };
static int employee(canal_ctx_t *ctx, canal_req_t *req)
{
    int32_t id = canal_ctx_int32(ctx, EMPLOYEE_ID);
    json_t *e = northwind_employee(id);
    if (e == NULL)
        return canal_res_problem(req, 404, "no employee with id %d", (int)id);
    return canal_res_json(req, 200, e);
}

enum { ORDERS_ID, ORDERS_CUSTOMER, ORDERS_INDEX, ORDERS_SIZE };
static int orders(canal_ctx_t *ctx, canal_req_t *req)
{
    canal_str_t customer = canal_ctx_str(ctx, ORDERS_CUSTOMER);
    json_t *page = northwind_orders(canal_ctx_int32(ctx, ORDERS_ID),
                                    canal_ctx_has(ctx, ORDERS_CUSTOMER) ? customer.base : NULL, customer.len,
                                    canal_ctx_int32(ctx, ORDERS_INDEX), canal_ctx_int32(ctx, ORDERS_SIZE));
    return canal_res_json_new(req, 200, page);
}

static int woo(canal_ctx_t *ctx, canal_req_t *req)
{
    canal_jw_t *w = canal_req_jw(req);
    demo_write_woo(w);
    return canal_res_jw(req, 200, w);
}

static int orders_ndjson(canal_ctx_t *ctx, canal_req_t *req)
{
    return demo_orders_ndjson(req);
}

static const canal_action_def_t home_actions[] = {
    {.name = "Plaintext", .handler = plaintext, .summary = "Hello, World! as text", .produces = {200},
     .content_type = DEMO_TEXT_TYPE},
    {.name = "Json", .handler = json, .summary = "Hello, World! as JSON", .produces = {200}},
    {.name = "Employee",
     .routes = {"home/employee/{id:int}"},
     .handler = employee,
     .params = {{.name = "id", .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32, .required = 1}},
     .summary = "One employee",
     .produces = {200, 404}},
    {.name = "Orders",
     .routes = {"home/orders/{id:int}"},
     .handler = orders,
     .params = {{.name = "id", .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32, .required = 1,
                 .description = "employee id, 0 for everyone"},
                {.name = "customerid", .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_STRING},
                {.name = "index", .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT32, .def = "0", .min = "0",
                 .description = "page number, from 0"},
                {.name = "size", .source = CANAL_FROM_QUERY, .type = CANAL_TYPE_INT32, .def = "10", .min = "1",
                 .max = "100", .description = "page size"}},
     .summary = "A page of orders",
     .produces = {200, 400}},
    {.name = "OrdersNdjson",
     .routes = {"home/orders.ndjson"},
     .handler = orders_ndjson,
     .summary = "Every order, one JSON object per line, streamed",
     .content_type = "application/x-ndjson",
     .produces = {200}},
    {.name = NULL},
};

static const canal_action_def_t woo_actions[] = {
    {.name = "Get", .handler = woo, .summary = "The Woo object", .produces = {200}},
    {.name = NULL},
};

int demo_controller_mode(canal_app_t *app, canal_mvc_t *mvc, canal_error_info_t *err)
{
    static const canal_controller_def_t home = {.name = "Home", .actions = home_actions};
    static const canal_controller_def_t woo_controller = {.name = "Woo", .prefix = "api/[controller]",
                                                          .actions = woo_actions};
    int rc;
    if ((rc = canal_mvc_map_route(mvc, "{controller=Home}/{action=Index}", err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &home, NULL, err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &woo_controller, NULL, err)) != 0)
        return rc;
    return 0;
}
