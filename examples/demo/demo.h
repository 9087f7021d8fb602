/* SPDX-License-Identifier: MIT */
/*
 * The demo app in two modes that answer byte for byte the same: router mode (handlers on
 * routes) and controller mode (controllers and actions), with the same schemas for their
 * arguments and their answers.
 */
#ifndef DEMO_H
#define DEMO_H

#include <canal.h>

/* Both modes say "Hello, World!" with this content type. */
#define DEMO_TEXT_TYPE "text/plain; charset=utf-8"

/* The two small JSON answers, {"message":"Hello, World!"} and {"id":1,"name":"Woo"}, written
 * from their structs by their schemas (models.c) in both modes. */
typedef struct {
    const char *message;
} demo_message_t;

typedef struct {
    int32_t id;
    const char *name;
} demo_woo_t;

extern const canal_schema_t demo_message_schema, demo_woo_schema;
extern const demo_message_t demo_hello;
extern const demo_woo_t demo_woo;

/* The arguments of /home/employee/{id} and /home/orders/{id}, bound the same way in both
 * modes (args.c): the controller layer binds an action's args; a router-mode handler calls
 * canal_req_bind() with the same schema. */
typedef struct {
    int32_t id;
} employee_args_t;

typedef struct {
    int32_t id;           /* the employee, 0 for everyone */
    canal_str_t customer; /* ?customerid=, or .base NULL */
    int32_t index, size;  /* the page */
} orders_args_t;

extern const canal_schema_t employee_args, orders_args;

/* GET /home/secret in both modes: the policy of an API key (X-Api-Key), whose scheme main.c
 * makes before the routes are registered. */
extern canal_policy_t demo_key_policy;
extern const demo_message_t demo_secret;

/* GET /home/orders.ndjson in both modes (orders_stream.c): every order, streamed. */
int demo_orders_ndjson(canal_req_t *req);

/* GET /home/employees in both modes (pages.c): the page's data (in req's memory) for the
 * template "employees" of the folder that demo_views() compiles (examples/demo/views). */
canal_view_data_t demo_employees(canal_req_t *req);
/* GET /home/orders.html in both modes (pages.c): every order, a page streamed as it is
 * rendered (template "orders"). */
int demo_orders_page(canal_req_t *req);
/* The page's output cache option: CANAL_OUTPUT_CACHE() in production, none (a zero option,
 * which ends a list: put it last) in development */
canal_route_option_t demo_page_cache(canal_app_t *app);
int demo_views(canal_app_t *app, const char *dir, canal_error_info_t *err);

int demo_router_mode(canal_app_t *app, canal_error_info_t *err);
int demo_controller_mode(canal_app_t *app, canal_mvc_t *mvc, canal_error_info_t *err);

#endif
