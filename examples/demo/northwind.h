/* SPDX-License-Identifier: MIT */
/*
 * The demo's data: Northwind's 9 employees and 830 orders (examples/demo/data/northwind.json,
 * embedded in the binary at build time), loaded once into C structs and then only read, from
 * every worker thread at once. Their schemas (canal/schema.h) say how both modes write them
 * as JSON and how OpenAPI documents them.
 */
#ifndef DEMO_NORTHWIND_H
#define DEMO_NORTHWIND_H

#include <canal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t EmployeeID;
    const char *LastName, *FirstName, *Title, *TitleOfCourtesy, *BirthDate, *HireDate, *Address, *City,
        *Region, *PostalCode, *Country, *HomePhone, *Extension, *Notes;
} employee_t;

typedef struct {
    int32_t OrderID;
    const char *CustomerID;
    int32_t EmployeeID;
    const char *OrderDate, *RequiredDate, *ShippedDate;
    int32_t ShipVia;
    double Freight;
    const char *ShipName, *ShipAddress, *ShipCity, *ShipRegion, *ShipPostalCode, *ShipCountry;
} order_t;

extern const canal_schema_t employee_schema, order_schema;

/* Loads the embedded data set, or the file at path if not NULL. Returns 0 or -1 (logged). */
int northwind_load(const char *path);
void northwind_free(void);

/* The employee with this id, or NULL. */
const employee_t *northwind_employee(int64_t id);

/* The orders of employee id (0: every employee), filtered by customer id if customer.base is
 * not NULL, skipping index * size of them: copies at most size into out, returns how many. */
size_t northwind_orders(int64_t id, canal_str_t customer, int64_t index, int64_t size, order_t *out);

/* Order i of the data set, in file order, or NULL past the last. */
const order_t *northwind_order_at(size_t i);

#endif
