/* SPDX-License-Identifier: MIT */
/*
 * The data and the checks that the benchmark's own servers (h2o-baseline, ulfius-server,
 * evhtp-server) share: examples/demo/data/northwind.json, loaded once at start-up with jansson,
 * the lookups canal-demo makes on it (examples/demo/northwind.c, which examples/ keeps for itself),
 * and the words of canal-demo's query checks.
 *
 * Only the loading is a call into data.c. What runs per request is static inline here, so that
 * each server compiles it into its own handlers as before and the baseline's request path gains
 * no call. After bench_data_load() the data is only read, from any thread.
 */
#ifndef BENCH_DATA_H
#define BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#ifndef BASELINE_DATA
#define BASELINE_DATA "examples/demo/data/northwind.json"
#endif

/* The highest employee id with its own order list. */
#define BENCH_MAX_ID 64

/* Set by bench_data_load(), then read-only. The array "employees" of the file (borrowed). */
extern json_t *bench_employees;
/* [0]: the array "orders" of the file; [id]: that employee's orders in file order, or NULL. */
extern json_t *bench_by_employee[BENCH_MAX_ID + 1];

/**
 * Loads the data file at path and indexes its orders by employee. On error, writes
 * "prog: path: why" to stderr and returns -1; returns 0 otherwise. Called once, before any thread.
 */
int bench_data_load(const char *prog, const char *path);

/**
 * Adds message to the list errors[name], creating errors (a new object) and the list as needed,
 * in the shape of canal-demo's validation problem. A message that is not valid UTF-8 is replaced.
 */
void bench_add_error(json_t **errors, const char *name, const char *message);

/** The employee with this id (a borrowed reference), or NULL. */
static inline json_t *bench_employee(int64_t id)
{
    size_t i;
    json_t *e;
    json_array_foreach(bench_employees, i, e)
    {
        if (json_integer_value(json_object_get(e, "EmployeeID")) == id)
            return e;
    }
    return NULL;
}

/**
 * A new array with the orders of employee id (0: every employee), only those of the customer
 * (customer, clen) if customer is not NULL, skipping index * size orders and taking at most size.
 */
static inline json_t *bench_orders_page(int64_t id, const char *customer, size_t clen, int64_t index, int64_t size)
{
    json_t *out = json_array();
    json_t *list = (id >= 0 && id <= BENCH_MAX_ID) ? bench_by_employee[id] : NULL;
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

/**
 * Parses an optional '-' and decimal digits (s, len), canal's {id:int}. Returns 0 and sets *out,
 * -1 if it is not such a number, -2 if it does not fit in int32 (*out is then unchanged).
 */
static inline int bench_parse_int32(const char *s, size_t len, int32_t *out)
{
    size_t i = 0;
    int neg = 0, overflow = 0;
    uint64_t v = 0;
    if (len > 0 && s[0] == '-')
        neg = 1, i = 1;
    if (i == len)
        return -1;
    for (; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9)
            return -1;
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            overflow = 1;
        else
            v = v * 10 + d;
    }
    if (overflow || v > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX))
        return -2;
    *out = neg ? (int32_t)(0 - v) : (int32_t)v;
    return 0;
}

/**
 * canal-demo's query_int(): the query parameter name, given count times (its first value is
 * (value, len)), as an int32 in [min, max] (max INT32_MAX: no upper bound), or def when absent.
 * A problem is added to *errors with bench_add_error() in canal-demo's words; the value returned
 * then does not matter.
 */
static inline int32_t bench_query_int(const char *value, size_t len, unsigned count, const char *name, int32_t def,
                                      int32_t min, int32_t max, json_t **errors)
{
    int32_t x = def;
    char msg[160];
    if (count > 1) {
        snprintf(msg, sizeof(msg), "The %s field must be given once.", name);
        bench_add_error(errors, name, msg);
    } else if (count == 1 && bench_parse_int32(value, len, &x) != 0) {
        snprintf(msg, sizeof(msg), "The value '%.*s' is not valid for %s.", (int)(len > 64 ? 64 : len), value, name);
        bench_add_error(errors, name, msg);
    } else if (x < min || x > max) {
        if (max != INT32_MAX)
            snprintf(msg, sizeof(msg), "The field %s must be between %d and %d.", name, (int)min, (int)max);
        else
            snprintf(msg, sizeof(msg), "The field %s must be at least %d.", name, (int)min);
        bench_add_error(errors, name, msg);
    }
    return x;
}

#endif
