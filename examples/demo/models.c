/* SPDX-License-Identifier: MIT */
/* The schemas of the demo's small answers and of its arguments (demo.h), shared by both modes. */
#include "demo.h"

static const canal_field_t employee_args_fields[] = {
    {.name = "id", CANAL_FIELD(employee_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED, .description = "the employee's id"},
    {.name = NULL}};
const canal_schema_t employee_args = {.name = "EmployeeArgs", .size = sizeof(employee_args_t),
                                      .fields = employee_args_fields};

static const canal_field_t orders_args_fields[] = {
    {.name = "id", CANAL_FIELD(orders_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED, .description = "employee id, 0 for everyone"},
    {.name = "customerid", CANAL_FIELD(orders_args_t, customer), .type = CANAL_TYPE_STRING,
     .source = CANAL_FROM_QUERY, .description = "only this customer's orders", .example = "\"VINET\""},
    {.name = "index", CANAL_FIELD(orders_args_t, index), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_QUERY,
     .def = "0", CANAL_MIN(0), .description = "page number, from 0"},
    {.name = "size", CANAL_FIELD(orders_args_t, size), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_QUERY,
     .def = "10", CANAL_MIN(1), CANAL_MAX(100), .description = "page size"},
    {.name = NULL}};
const canal_schema_t orders_args = {.name = "OrdersArgs", .size = sizeof(orders_args_t), .fields = orders_args_fields};

static const canal_field_t message_fields[] = {
    {.name = "message", CANAL_FIELD(demo_message_t, message), .type = CANAL_TYPE_CSTRING, .flags = CANAL_REQUIRED},
    {.name = NULL}};
const canal_schema_t demo_message_schema = {.name = "Message", .size = sizeof(demo_message_t), .fields = message_fields};
const demo_message_t demo_hello = {"Hello, World!"};

static const canal_field_t woo_fields[] = {
    {.name = "id", CANAL_FIELD(demo_woo_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "name", CANAL_FIELD(demo_woo_t, name), .type = CANAL_TYPE_CSTRING, .flags = CANAL_REQUIRED},
    {.name = NULL}};
const canal_schema_t demo_woo_schema = {.name = "Woo", .size = sizeof(demo_woo_t), .fields = woo_fields};
const demo_woo_t demo_woo = {1, "Woo"};

canal_policy_t demo_key_policy; /* its scheme: main.c */
const demo_message_t demo_secret = {"Only with the key."};
