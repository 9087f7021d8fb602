/* SPDX-License-Identifier: MIT */
/*
 * The demo in router mode: one handler per route. The routes carry the same args and answer
 * schemas as the controller actions, and the handlers bind with canal_req_bind(), so both
 * modes answer the same bytes, 400s included, and document the same operations.
 */
#include "demo.h"
#include "northwind.h"

static int plaintext(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, DEMO_TEXT_TYPE, "Hello, World!", 13);
}

static int json(canal_req_t *req, void *data)
{
    return canal_res_model(req, 200, &demo_message_schema, &demo_hello);
}

static int woo(canal_req_t *req, void *data)
{
    return canal_res_model(req, 200, &demo_woo_schema, &demo_woo);
}

static int employee(canal_req_t *req, void *data)
{
    employee_args_t a;
    int rc = canal_req_bind(req, &employee_args, &a);
    if (rc != 0)
        return rc == CANAL_EINVAL ? 0 : rc; /* the 400 is the answer */
    const employee_t *e = northwind_employee(a.id);
    if (e == NULL)
        return canal_res_problem(req, 404, "no employee with id %d", (int)a.id);
    return canal_res_model(req, 200, &employee_schema, e);
}

static int orders(canal_req_t *req, void *data)
{
    orders_args_t a;
    int rc = canal_req_bind(req, &orders_args, &a);
    if (rc != 0)
        return rc == CANAL_EINVAL ? 0 : rc;
    order_t *page = canal_req_alloc(req, (size_t)a.size * sizeof(*page));
    size_t n = northwind_orders(a.id, a.customer, a.index, a.size, page);
    return canal_res_model_array(req, 200, &order_schema, page, n);
}

static int secret(canal_req_t *req, void *data)
{
    return canal_res_model(req, 200, &demo_message_schema, &demo_secret);
}

static int employees_page(canal_req_t *req, void *data)
{
    canal_view_data_t d = demo_employees(req);
    return canal_res_view(req, 200, "employees", &d);
}

static int orders_ndjson(canal_req_t *req, void *data)
{
    return demo_orders_ndjson(req);
}

static int orders_page(canal_req_t *req, void *data)
{
    return demo_orders_page(req);
}

int demo_router_mode(canal_app_t *app, canal_error_info_t *err)
{
    const canal_endpoint_spec_t routes[] = {
        {.tmpl = "home/plaintext", .handler = plaintext,
         .options = {CANAL_DOC(.summary = "Hello, World! as text",
                               .responses = {{.status = 200, .content_type = DEMO_TEXT_TYPE}})}},
        {.tmpl = "home/json", .handler = json,
         .options = {CANAL_DOC(.summary = "Hello, World! as JSON",
                               .responses = {{.status = 200, .schema = &demo_message_schema}})}},
        {.tmpl = "home/employee/{id:int}", .handler = employee,
         .options = {CANAL_ARGS(&employee_args),
                     CANAL_DOC(.summary = "One employee",
                               .responses = {{.status = 200, .schema = &employee_schema}, {.status = 404}})}},
        {.tmpl = "home/orders/{id:int}", .handler = orders,
         .options = {CANAL_ARGS(&orders_args),
                     CANAL_DOC(.summary = "A page of orders",
                               .responses = {{.status = 200, .schema = &order_schema, .array = 1}})}},
        {.tmpl = "home/orders.ndjson", .handler = orders_ndjson,
         .options = {CANAL_DOC(.summary = "Every order, one JSON object per line, streamed",
                               .responses = {{.status = 200, .content_type = "application/x-ndjson",
                                              .description = "One Order object per line."}})}},
        {.tmpl = "home/employees", .handler = employees_page,
         .options = {CANAL_ETAG(1),
                     CANAL_DOC(.summary = "The employees as an HTML page",
                               .responses = {{.status = 200, .content_type = "text/html; charset=utf-8"}}),
                     demo_page_cache(app)}},
        {.tmpl = "home/orders.html", .handler = orders_page,
         .options = {CANAL_DOC(.summary = "Every order as an HTML page, streamed as it is rendered",
                               .responses = {{.status = 200, .content_type = "text/html; charset=utf-8"}})}},
        {.tmpl = "api/woo", .handler = woo,
         .options = {CANAL_DOC(.summary = "The Woo object",
                               .responses = {{.status = 200, .schema = &demo_woo_schema}})}},
        {.tmpl = "home/secret", .handler = secret,
         .options = {CANAL_POLICY(&demo_key_policy),
                     CANAL_DOC(.summary = "Only with the API key",
                               .responses = {{.status = 200, .schema = &demo_message_schema}})}},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        int rc = canal_app_route(app, &routes[i], NULL, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}
