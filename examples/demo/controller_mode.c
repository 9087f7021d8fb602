/* SPDX-License-Identifier: MIT */
/*
 * The demo in controller mode, BeetleX-style: a Home controller whose simple actions are
 * reached by the conventional route "{controller=Home}/{action=Index}" (/home/plaintext,
 * /home/json), actions with templates of their own and args schemas that the controller layer
 * binds and validates, and a Woo controller under the prefix "api/[controller]".
 */
#include <string.h>
#include "demo.h"
#include "northwind.h"

static int plaintext(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_body_static(req, 200, DEMO_TEXT_TYPE, "Hello, World!", 13);
}

static int json(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_model(req, 200, &demo_message_schema, &demo_hello);
}

static int employee(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const employee_args_t *a = args;
    const employee_t *e = northwind_employee(a->id);
    if (e == NULL)
        return canal_res_problem(req, 404, "no employee with id %d", (int)a->id);
    return canal_res_model(req, 200, &employee_schema, e);
}

static int orders(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const orders_args_t *a = args;
    order_t *page = canal_req_alloc(req, (size_t)a->size * sizeof(*page));
    size_t n = northwind_orders(a->id, a->customer, a->index, a->size, page);
    return canal_res_model_array(req, 200, &order_schema, page, n);
}

static int woo(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_model(req, 200, &demo_woo_schema, &demo_woo);
}

static int secret(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return canal_res_model(req, 200, &demo_message_schema, &demo_secret);
}

/* the page through the controller's view result */
static int employees_page(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_view_data_t d = demo_employees(req);
    return canal_ctx_view(ctx, 200, "employees", &d);
}

static int orders_ndjson(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return demo_orders_ndjson(req);
}

static int orders_page(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return demo_orders_page(req);
}

static canal_action_def_t home_actions[] = {
    {.name = "Plaintext", .handler = plaintext,
     .options = {CANAL_DOC(.summary = "Hello, World! as text",
                           .responses = {{.status = 200, .content_type = DEMO_TEXT_TYPE}})}},
    {.name = "Json", .handler = json,
     .options = {CANAL_DOC(.summary = "Hello, World! as JSON",
                           .responses = {{.status = 200, .schema = &demo_message_schema}})}},
    {.name = "Employee", .routes = {"home/employee/{id:int}"}, .handler = employee, .args = &employee_args,
     .options = {CANAL_DOC(.summary = "One employee",
                           .responses = {{.status = 200, .schema = &employee_schema}, {.status = 404}})}},
    {.name = "Orders", .routes = {"home/orders/{id:int}"}, .handler = orders, .args = &orders_args,
     .options = {CANAL_DOC(.summary = "A page of orders",
                           .responses = {{.status = 200, .schema = &order_schema, .array = 1}})}},
    {.name = "OrdersNdjson", .routes = {"home/orders.ndjson"}, .handler = orders_ndjson,
     .options = {CANAL_DOC(.summary = "Every order, one JSON object per line, streamed",
                           .responses = {{.status = 200, .content_type = "application/x-ndjson",
                                          .description = "One Order object per line."}})}},
    {.name = "Employees", .routes = {"home/employees"}, .handler = employees_page,
     .options = {CANAL_ETAG(1),
                 CANAL_DOC(.summary = "The employees as an HTML page",
                           .responses = {{.status = 200, .content_type = "text/html; charset=utf-8"}})}},
    /* its third option, the output cache, is set at registration (demo_page_cache()) */
    {.name = "OrdersPage", .routes = {"home/orders.html"}, .handler = orders_page,
     .options = {CANAL_DOC(.summary = "Every order as an HTML page, streamed as it is rendered",
                           .responses = {{.status = 200, .content_type = "text/html; charset=utf-8"}})}},
    {.name = "Secret", .handler = secret,
     .options = {CANAL_POLICY(&demo_key_policy),
                 CANAL_DOC(.summary = "Only with the API key",
                           .responses = {{.status = 200, .schema = &demo_message_schema}})}},
    {.name = NULL},
};

static const canal_action_def_t woo_actions[] = {
    {.name = "Get", .handler = woo,
     .options = {CANAL_DOC(.summary = "The Woo object",
                           .responses = {{.status = 200, .schema = &demo_woo_schema}})}},
    {.name = NULL},
};

int demo_controller_mode(canal_app_t *app, canal_mvc_t *mvc, canal_error_info_t *err)
{
    static const canal_controller_def_t home = {.name = "Home", .actions = home_actions};
    static const canal_controller_def_t woo_controller = {.name = "Woo", .prefix = "api/[controller]",
                                                          .actions = woo_actions};
    for (canal_action_def_t *a = home_actions; a->name != NULL; a++)
        if (strcmp(a->name, "Employees") == 0)
            a->options[2] = demo_page_cache(app);
    int rc;
    if ((rc = canal_mvc_map_route(mvc, "{controller=Home}/{action=Index}", err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &home, NULL, err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &woo_controller, NULL, err)) != 0)
        return rc;
    return 0;
}
