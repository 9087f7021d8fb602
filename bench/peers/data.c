/* SPDX-License-Identifier: MIT */
/*
 * The benchmark servers' start-up: northwind.json loaded with jansson and its orders indexed by
 * employee, the same shape as examples/demo/northwind.c builds (see data.h). Also the one helper
 * that runs only on an error answer, so needs no inlining.
 */
#include "data.h"

json_t *bench_employees;
json_t *bench_by_employee[BENCH_MAX_ID + 1];

/* Owns everything above for the life of the process. */
static json_t *root;

int bench_data_load(const char *prog, const char *path)
{
    json_error_t err;
    root = json_load_file(path, 0, &err);
    if (root == NULL) {
        fprintf(stderr, "%s: %s:%d: %s\n", prog, path, err.line, err.text);
        return -1;
    }
    bench_employees = json_object_get(root, "employees");
    json_t *orders = json_object_get(root, "orders");
    if (!json_is_array(bench_employees) || !json_is_array(orders)) {
        fprintf(stderr, "%s: %s: expected \"employees\" and \"orders\" arrays\n", prog, path);
        return -1;
    }
    bench_by_employee[0] = orders;
    size_t i;
    json_t *o;
    json_array_foreach(orders, i, o)
    {
        json_int_t id = json_integer_value(json_object_get(o, "EmployeeID"));
        if (id < 1 || id > BENCH_MAX_ID)
            continue;
        if (bench_by_employee[id] == NULL)
            bench_by_employee[id] = json_array();
        json_array_append(bench_by_employee[id], o);
    }
    return 0;
}

void bench_add_error(json_t **errors, const char *name, const char *message)
{
    if (*errors == NULL)
        *errors = json_object();
    json_t *list = json_object_get(*errors, name);
    if (list == NULL)
        json_object_set_new(*errors, name, list = json_array());
    json_t *s = json_string(message);
    json_array_append_new(list, s ? s : json_string("The value is not valid."));
}
