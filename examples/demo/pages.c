/* SPDX-License-Identifier: MIT */
/*
 * The demo's HTML pages in both modes. GET /home/employees (canal_res_view() in router mode,
 * canal_ctx_view() in controller mode): the template
 * examples/demo/views/employees.mustache inside views/layouts/main.mustache, with the
 * employees as typed models (their schema is the one the JSON answers use) and the title from
 * a callback.
 *
 * In production the page is kept by the output cache (canal/cache.h) for 60 s, tagged
 * "employees": a request served from it runs no handler and renders nothing. Not in
 * development, where a changed template is compiled on the next request and must show.
 *
 * GET /home/orders.html: the 830 orders (about 136 KiB) through canal_res_view_stream(),
 * rendered and sent 16 KiB at a time as the client takes them; the orders are copied into
 * malloc'd memory that the page's done callback frees.
 */
#include <stdlib.h>
#include <string.h>
#include "demo.h"
#include "northwind.h"

struct page {
    const employee_t *employees;
    size_t n;
};

static int page_data(const char *name, size_t len, canal_view_data_t *out, void *arg)
{
    const struct page *p = arg;
    if (len == 5 && memcmp(name, "title", 5) == 0)
        *out = CANAL_VIEW_TEXT("Employees");
    else if (len == 9 && memcmp(name, "employees", 9) == 0)
        *out = CANAL_VIEW_MODELS(&employee_schema, p->employees, p->n);
    else
        return 0;
    return 1;
}

static const char *const page_tags[] = {"employees", NULL};
static const canal_output_policy_t page_cache = {.ttl_ms = 60000, .tags = page_tags};

canal_route_option_t demo_page_cache(canal_app_t *app)
{
    if (canal_app_config(app)->env == CANAL_ENV_DEVELOPMENT)
        return (canal_route_option_t){0};
    return (canal_route_option_t)CANAL_OUTPUT_CACHE(&page_cache);
}

canal_view_data_t demo_employees(canal_req_t *req)
{
    size_t n = 0;
    while (northwind_employee((int64_t)n + 1) != NULL)
        n++;
    struct page *p = canal_req_alloc(req, sizeof(*p));
    employee_t *all = canal_req_alloc(req, (n ? n : 1) * sizeof(*all));
    for (size_t i = 0; i < n; i++)
        all[i] = *northwind_employee((int64_t)i + 1);
    *p = (struct page){all, n};
    return CANAL_VIEW_FN(page_data, p);
}

int demo_views(canal_app_t *app, const char *dir, canal_error_info_t *err)
{
    int rc = canal_app_views(app, dir, err);
    return rc != 0 ? rc : canal_app_view_layout(app, "layouts/main", err);
}

/* ---- GET /home/orders.html ---- */

struct orders_page {
    size_t n;
    order_t orders[];
};

static int orders_data(const char *name, size_t len, canal_view_data_t *out, void *arg)
{
    const struct orders_page *p = arg;
    if (len == 5 && memcmp(name, "title", 5) == 0)
        *out = CANAL_VIEW_TEXT("Orders");
    else if (len == 6 && memcmp(name, "orders", 6) == 0)
        *out = CANAL_VIEW_MODELS(&order_schema, p->orders, p->n);
    else
        return 0;
    return 1;
}

static void orders_done(int rc, void *arg)
{
    free(arg);
}

int demo_orders_page(canal_req_t *req)
{
    size_t n = 0;
    while (northwind_order_at(n) != NULL)
        n++;
    struct orders_page *p = malloc(sizeof(*p) + (n ? n : 1) * sizeof(p->orders[0]));
    if (p == NULL)
        return CANAL_ENOMEM;
    p->n = n;
    for (size_t i = 0; i < n; i++)
        p->orders[i] = *northwind_order_at(i);
    canal_view_data_t d = CANAL_VIEW_FN(orders_data, p);
    int rc = canal_res_view_stream(req, 200, "orders", &d, orders_done, p);
    if (rc != 0)
        free(p); /* done is called only when the call returns 0 */
    return rc;
}
