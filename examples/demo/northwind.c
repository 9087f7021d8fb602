/* SPDX-License-Identifier: MIT */
#include <stdio.h>
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

static json_t *root, *employees, *orders;
/* per employee id 1..MAX_ID: its orders (borrowed from `orders`), in file order */
#define MAX_ID 64
static json_t *by_employee[MAX_ID + 1];

int northwind_load(const char *path)
{
    json_error_t err;
    root = path ? json_load_file(path, 0, &err) : json_loads(demo_northwind_json, 0, &err);
    if (root == NULL) {
        fprintf(stderr, "northwind: %s:%d: %s\n", path ? path : "(embedded)", err.line, err.text);
        return -1;
    }
    employees = json_object_get(root, "employees");
    orders = json_object_get(root, "orders");
    if (!json_is_array(employees) || !json_is_array(orders)) {
        fprintf(stderr, "northwind: expected \"employees\" and \"orders\" arrays\n");
        return -1;
    }
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

void northwind_free(void)
{
    for (int i = 1; i <= MAX_ID; i++)
        json_decref(by_employee[i]);
    memset(by_employee, 0, sizeof(by_employee));
    json_decref(root);
    root = NULL;
}

json_t *northwind_employee(int64_t id)
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

const json_t *northwind_order_at(size_t i)
{
    return json_array_get(orders, i);
}

json_t *northwind_orders(int64_t id, const char *customer, size_t clen, int64_t index, int64_t size)
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
            if (c == NULL || strlen(c) != clen || memcmp(c, customer, clen) != 0)
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
