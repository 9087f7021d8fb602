/* SPDX-License-Identifier: MIT */
/*
 * The demo's data: Northwind's 9 employees and 830 orders (examples/demo/data/northwind.json,
 * embedded in the binary at build time), loaded once with jansson and then only read, from
 * every worker thread at once.
 */
#ifndef DEMO_NORTHWIND_H
#define DEMO_NORTHWIND_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Loads the embedded data set, or the file at path if not NULL. Returns 0 or -1 (logged). */
int northwind_load(const char *path);
void northwind_free(void);

/* The employee with this id (a borrowed reference), or NULL. */
json_t *northwind_employee(int64_t id);

/* A new array with the orders of employee id (0: every employee), filtered by customer id if
 * not NULL, skipping index * size orders and taking at most size. */
json_t *northwind_orders(int64_t id, const char *customer, size_t clen, int64_t index, int64_t size);

/* Order i of the data set, in file order (a borrowed reference), or NULL past the last. */
const json_t *northwind_order_at(size_t i);

#endif
