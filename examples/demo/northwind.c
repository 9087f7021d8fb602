/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "northwind.h"

/* The data file, embedded by the assembler: no generator tool needed at build time. The path is
 * relative to the directory make runs in (the repository root). */
__asm__(".section .rodata\n"
        ".global demo_northwind_json\n"
        "demo_northwind_json:\n"
        ".incbin \"examples/demo/data/northwind.json\"\n"
        ".byte 0\n"
        ".previous\n");
extern const char demo_northwind_json[];

/* Dates are local times without an offset ("1996-07-04T00:00:00"), so not RFC 3339
 * date-times: plain strings. */
#define TEXT(T, m) {.name = #m, CANAL_FIELD(T, m), .type = CANAL_TYPE_CSTRING, .flags = CANAL_REQUIRED}
#define TEXT_OR_NULL(T, m)                                                                                             \
    {.name = #m, CANAL_FIELD(T, m), .type = CANAL_TYPE_CSTRING, .flags = CANAL_REQUIRED | CANAL_NULLABLE}
#define INT(T, m) {.name = #m, CANAL_FIELD(T, m), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED}

static const canal_field_t employee_fields[] = {
    INT(employee_t, EmployeeID), TEXT(employee_t, LastName), TEXT(employee_t, FirstName),
    TEXT(employee_t, Title), TEXT(employee_t, TitleOfCourtesy), TEXT(employee_t, BirthDate),
    TEXT(employee_t, HireDate), TEXT(employee_t, Address), TEXT(employee_t, City),
    TEXT_OR_NULL(employee_t, Region), TEXT(employee_t, PostalCode), TEXT(employee_t, Country),
    TEXT(employee_t, HomePhone), TEXT(employee_t, Extension), TEXT(employee_t, Notes),
    {.name = NULL}};
const canal_schema_t employee_schema = {.name = "Employee", .size = sizeof(employee_t), .fields = employee_fields,
                                        .description = "A Northwind employee."};

static const canal_field_t order_fields[] = {
    INT(order_t, OrderID), TEXT(order_t, CustomerID), INT(order_t, EmployeeID), TEXT(order_t, OrderDate),
    TEXT(order_t, RequiredDate), TEXT_OR_NULL(order_t, ShippedDate), INT(order_t, ShipVia),
    {.name = "Freight", CANAL_FIELD(order_t, Freight), .type = CANAL_TYPE_DOUBLE, .flags = CANAL_REQUIRED},
    TEXT(order_t, ShipName), TEXT(order_t, ShipAddress), TEXT(order_t, ShipCity), TEXT_OR_NULL(order_t, ShipRegion),
    TEXT(order_t, ShipPostalCode), TEXT(order_t, ShipCountry),
    {.name = NULL}};
const canal_schema_t order_schema = {.name = "Order", .size = sizeof(order_t), .fields = order_fields,
                                     .description = "A Northwind order."};

static json_t *root; /* owns the strings the structs point to */
static employee_t *employees;
static size_t nemployees;
static order_t *orders;
static size_t norders;

/* Fills obj from a JSON object member by member, as the schema's table says (this data has
 * only strings, nulls, integers and reals). */
static int load_struct(const canal_schema_t *s, const json_t *j, void *obj)
{
    for (const canal_field_t *f = s->fields; f->name != NULL; f++) {
        const json_t *v = json_object_get(j, f->name);
        char *at = (char *)obj + f->offset;
        if (f->type == CANAL_TYPE_CSTRING && (json_is_string(v) || (json_is_null(v) && (f->flags & CANAL_NULLABLE))))
            *(const char **)at = json_string_value(v);
        else if (f->type == CANAL_TYPE_INT32 && json_is_integer(v))
            *(int32_t *)at = (int32_t)json_integer_value(v);
        else if (f->type == CANAL_TYPE_DOUBLE && json_is_number(v))
            *(double *)at = json_number_value(v);
        else
            return -1;
    }
    return 0;
}

/* Loads a JSON array of objects into a new array of structs. */
static void *load_array(const canal_schema_t *s, const json_t *a, size_t *n)
{
    char *out = calloc(json_array_size(a) + 1, s->size);
    for (size_t i = 0; out != NULL && i < json_array_size(a); i++)
        if (load_struct(s, json_array_get(a, i), out + i * s->size) != 0) {
            fprintf(stderr, "northwind: %s %zu does not fit its schema\n", s->name, i);
            free(out);
            return NULL;
        }
    *n = json_array_size(a);
    return out;
}

int northwind_load(const char *path)
{
    json_error_t err;
    root = path ? json_load_file(path, 0, &err) : json_loads(demo_northwind_json, 0, &err);
    if (root == NULL) {
        fprintf(stderr, "northwind: %s:%d: %s\n", path ? path : "(embedded)", err.line, err.text);
        return -1;
    }
    const json_t *e = json_object_get(root, "employees"), *o = json_object_get(root, "orders");
    if (!json_is_array(e) || !json_is_array(o)) {
        fprintf(stderr, "northwind: expected \"employees\" and \"orders\" arrays\n");
        return -1;
    }
    employees = load_array(&employee_schema, e, &nemployees);
    orders = load_array(&order_schema, o, &norders);
    return employees != NULL && orders != NULL ? 0 : -1;
}

void northwind_free(void)
{
    free(employees);
    free(orders);
    employees = NULL, orders = NULL;
    nemployees = norders = 0;
    json_decref(root);
    root = NULL;
}

const employee_t *northwind_employee(int64_t id)
{
    for (size_t i = 0; i < nemployees; i++)
        if (employees[i].EmployeeID == id)
            return &employees[i];
    return NULL;
}

const order_t *northwind_order_at(size_t i)
{
    return i < norders ? &orders[i] : NULL;
}

size_t northwind_orders(int64_t id, canal_str_t customer, int64_t index, int64_t size, order_t *out)
{
    int64_t skip = index * size;
    size_t n = 0;
    for (size_t i = 0; i < norders && (int64_t)n < size; i++) {
        const order_t *o = &orders[i];
        if (id != 0 && o->EmployeeID != id)
            continue;
        if (customer.base != NULL &&
            (strlen(o->CustomerID) != customer.len || memcmp(o->CustomerID, customer.base, customer.len) != 0))
            continue;
        if (skip > 0) {
            skip--;
            continue;
        }
        out[n++] = *o;
    }
    return n;
}
