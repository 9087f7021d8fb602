/* SPDX-License-Identifier: MIT */
/**
 * @file canal/schema.h
 * Typed models: one static table describes a C struct, and canal binds requests into it,
 * validates it, writes it as JSON and documents it in OpenAPI from that table alone.
 *
 *     typedef struct {
 *         int32_t id;              // from the route: home/orders/{id:int}
 *         canal_str_t customer;    // from the query; .base NULL when not given
 *         int32_t index, size;     // from the query, with defaults and bounds
 *     } orders_args_t;
 *
 *     static const canal_field_t orders_args_fields[] = {
 *         {.name = "id", CANAL_FIELD(orders_args_t, id), .type = CANAL_TYPE_INT32,
 *          .source = CANAL_FROM_ROUTE, .flags = CANAL_REQUIRED},
 *         {.name = "customerid", CANAL_FIELD(orders_args_t, customer), .type = CANAL_TYPE_STRING,
 *          .source = CANAL_FROM_QUERY},
 *         {.name = "index", CANAL_FIELD(orders_args_t, index), .type = CANAL_TYPE_INT32,
 *          .source = CANAL_FROM_QUERY, .def = "0", CANAL_MIN(0)},
 *         {.name = "size", CANAL_FIELD(orders_args_t, size), .type = CANAL_TYPE_INT32,
 *          .source = CANAL_FROM_QUERY, .def = "10", CANAL_MIN(1), CANAL_MAX(100)},
 *         {.name = NULL}};
 *     static const canal_schema_t orders_args = {.name = "OrdersArgs",
 *         .size = sizeof(orders_args_t), .fields = orders_args_fields};
 *
 * A schema is checked when it is registered (canal_app_schema(), or by the route or action
 * that names it): field sizes against types, overlapping members, unknown formats, defaults
 * and examples that break the field's own rules. A bad table is a registration error, never a
 * request-time surprise. Every schema a request-time call uses must have been registered with
 * the app (nested ones are registered with the schema that names them).
 *
 * Binding (canal_req_bind()) fills a struct from a request: route values, the query, headers,
 * cookies, form fields and files, and the members of a JSON body, each field from its
 * source. Every field is tried
 * and every failure collected, then the answer is one 400 validation problem (problem details
 * with an "errors" object: a field name, or a JSON pointer such as "/items/3/qty" for body
 * members, mapped to its messages), in the shape of ASP.NET Core's ValidationProblemDetails.
 * The struct's strings and arrays point into request memory.
 *
 * Writing (canal_jw_model(), canal_res_model()) turns a struct into JSON with canal's
 * streaming writer, into request memory, with no json_t: the same bytes json_dumpb() gives
 * with JSON_COMPACT for a jansson object built member by member in the table's order.
 */
#ifndef CANAL_SCHEMA_H
#define CANAL_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "export.h"
#include "error.h"
#include "router.h"
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where a field's value comes from when a request is bound. */
typedef enum canal_source {
    CANAL_FROM_BODY = 0,  /**< a member of the JSON object body (the only source of the fields of
                               nested schemas and of schemas that are only written) */
    CANAL_FROM_ROUTE,     /**< a route value ({id}) */
    CANAL_FROM_QUERY,     /**< the query string (more than once: 400, unless an array) */
    CANAL_FROM_HEADER,    /**< a request header */
    CANAL_FROM_COOKIE,    /**< a cookie (canal_req_cookie(), RFC 6265) */
    CANAL_FROM_BODY_WHOLE, /**< the whole JSON body (an object, an array or json) */
    CANAL_FROM_FORM       /**< a field of an urlencoded or multipart form body (canal_req_form(),
                               canal/form.h; more than once: 400, unless an array), or a file
                               part of a multipart one (CANAL_TYPE_FILE) */
} canal_source_t;

/** A field's type, and the C type of its struct member. Text values (route, query, header,
 * cookie) are parsed strictly (canal_parse_int32() and friends); JSON values must have the
 * matching JSON type. Strings must be well-formed UTF-8. */
typedef enum canal_type {
    CANAL_TYPE_STRING = 0, /**< canal_str_t: a slice (in request memory when bound; base NULL
                                is "absent") */
    CANAL_TYPE_CSTRING,    /**< const char *: NUL-terminated (a bound value holding a NUL is a
                                400; NULL is "absent") */
    CANAL_TYPE_INT32,      /**< int32_t */
    CANAL_TYPE_INT64,      /**< int64_t */
    CANAL_TYPE_DOUBLE,     /**< double (a JSON integer or real) */
    CANAL_TYPE_BOOL,       /**< bool (or int): "true" or "false" as text */
    CANAL_TYPE_ENUM,       /**< int (a C enum): the string allowed[v] of the field */
    CANAL_TYPE_OBJECT,     /**< a nested struct, described by the field's schema */
    CANAL_TYPE_ARRAY,      /**< a pointer to the first of count elements of type items (count:
                                a size_t member named by CANAL_COUNT()); NULL is "absent" */
    CANAL_TYPE_JSON,       /**< json_t *: any JSON value, borrowed (body sources only) */
    CANAL_TYPE_FILE        /**< canal_part_t (canal/form.h): a multipart file part, its name,
                                filename, content type and bytes in the body (form source
                                only; data.base NULL is "absent") */
} canal_type_t;

/** Field flags. */
enum {
    CANAL_REQUIRED = 1, /**< absent is a 400 when bound (a default makes no sense with it) */
    CANAL_NULLABLE = 2  /**< null is a value: bound as "absent", written as null when absent
                             (else an absent optional field is left out) */
};

/** Fills a field's offset and size from the struct type and member. */
#define CANAL_FIELD(type, member) .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
/** Names the bool member set to 1 when an optional field is present (0 when absent). */
#define CANAL_PRESENT(type, member) .present = offsetof(type, member) + 1
/** Names the size_t member that holds an array field's element count. */
#define CANAL_COUNT(type, member) .count = offsetof(type, member) + 1
/** An inclusive lower bound (numbers). */
#define CANAL_MIN(v) .min = (v), .has_min = 1
/** An inclusive upper bound (numbers). */
#define CANAL_MAX(v) .max = (v), .has_max = 1

/** A struct's description (struct canal_schema below). */
typedef struct canal_schema canal_schema_t;
/* the same typedefs as canal/app.h's and canal/json.h's (C11 allows them twice): app.h
 * includes this header for its route specs */
/** The app (canal/app.h). */
typedef struct canal_app canal_app_t;
/** A request (canal/app.h). */
typedef struct canal_req canal_req_t;
/** The streaming JSON writer (canal/json.h). */
typedef struct canal_jw canal_jw_t;

/** A field: one struct member. Unused members are 0/NULL (designated initializers). */
typedef struct canal_field {
    const char *name;       /**< the JSON member, parameter, header or cookie name; NULL ends */
    canal_type_t type;      /**< the member's type */
    size_t offset;          /**< the member's offset: CANAL_FIELD(type, member) */
    size_t size;            /**< the member's size: CANAL_FIELD(type, member) */
    canal_source_t source;  /**< binding: where the value comes from */
    unsigned flags;         /**< CANAL_REQUIRED, CANAL_NULLABLE */
    size_t present;         /**< CANAL_PRESENT(), or 0; optional numbers, bools and enums that
                                 have no default need one when bound (else absent would be 0) */
    const char *def;        /**< the default when absent, as text ("10", "true", "asc"), or
                                 NULL; not for objects, arrays and json */
    double min;             /**< CANAL_MIN(): the inclusive lower bound of numbers (an array's too) */
    double max;             /**< CANAL_MAX(): the inclusive upper bound */
    int has_min;            /**< set by CANAL_MIN() */
    int has_max;            /**< set by CANAL_MAX() */
    size_t min_length;      /**< strings: fewest characters (code points) */
    size_t max_length;      /**< strings: most characters; 0: no bound */
    size_t min_items;       /**< arrays: fewest elements */
    size_t max_items;       /**< arrays: most elements; 0: no bound */
    const char *pattern;    /**< strings: a regex the whole value must match (PCRE2, case-sensitive;
                                 the router's dialect, docs/models.md), or NULL */
    const char *const *allowed; /**< strings: the NULL-terminated values allowed; enums: the
                                     names of the C values 0, 1, 2, ... (required for enums) */
    const char *format;     /**< strings: "date-time" (RFC 3339), "date", "uuid", "email",
                                 checked when bound; NULL: none */
    const canal_schema_t *schema; /**< objects, and arrays of objects: the nested struct */
    canal_type_t items;     /**< arrays: the element type (not an array, not json) */
    size_t count;           /**< arrays: CANAL_COUNT() */
    const char *description; /**< for OpenAPI */
    const char *example;    /**< for OpenAPI: a JSON text, checked against the field's type */
    const char *message;    /**< what a client reads when a bound value breaks one of the
                                 rules above (bounds, lengths, items, pattern, format, allowed
                                 values): "must be a lower-case slug" instead of canal's text
                                 with the regular expression; NULL: canal's. A value of the
                                 wrong type, or a missing required one, keeps canal's text */
} canal_field_t;

/** A struct's description. All strings and tables are borrowed: static, typically. */
struct canal_schema {
    const char *name;       /**< the name in OpenAPI's components.schemas ("Employee"): letters,
                                 digits, '.', '-', '_' */
    size_t size;            /**< sizeof the struct */
    const canal_field_t *fields; /**< ended by .name == NULL */
    const char *description; /**< for OpenAPI, or NULL */
    int strict;             /**< 1: a JSON object bound by this schema (the body, or a member
                                 whose field nests it) with a member no body field names is
                                 refused: 400, one error per unknown member, keyed by its
                                 JSON pointer; OpenAPI says "additionalProperties": false.
                                 0: unknown members are ignored */
    /** Cross-field rules, run when obj is bound (a nested object: after its own fields) and
     * nothing failed so far: adds errors with canal_req_invalid() (field: the key to report,
     * a JSON pointer for body members) and returns 0, or fails (negative: a 500). NULL: none. */
    int (*validate)(canal_req_t *req, void *obj);
};

/** The kind of CANAL_ARGS() (canal_route_option_t, canal/app.h). */
CANAL_API extern const canal_option_kind_t canal_args_option;
/**
 * A route's typed arguments, among its options: `.options = {CANAL_ARGS(&employee_args)}`
 * (a const canal_schema_t *, borrowed: it must outlive the app). At registration the schema
 * is registered (canal_app_schema()) and checked against the template: a field bound from
 * the route names one of its values, and every value of the template has a field of a type
 * it can hold, else CANAL_EINVAL. The handler binds it with canal_req_bind(); OpenAPI
 * documents it as the operation's parameters and request body. An action's arguments are its
 * .args (canal/controller.h), which the controller layer hands to its routes this way.
 */
#define CANAL_ARGS(schema) {&canal_args_option, (schema)}


/**
 * Registers a schema (and the schemas it nests) with an app, checking its table. Routes and
 * actions that name a schema register it themselves; this call is for schemas used only by
 * handler code (canal_req_bind(), or documentation). Registering one twice is a no-op. Before
 * canal_app_start() only.
 * Returns 0, or CANAL_EINVAL with err saying which field is wrong and why, CANAL_ENOMEM,
 * CANAL_ESTATE.
 */
CANAL_API int canal_app_schema(canal_app_t *app, const canal_schema_t *schema, canal_error_info_t *err);

/**
 * Binds the request into *out (a struct of schema->size bytes, which this call zeroes first)
 * and validates it. Returns 0; or CANAL_EINVAL when the request is not valid, with the 400
 * validation problem (every field's errors) set as the answer: the handler returns 0 then;
 * or CANAL_ESTATE when schema was never registered with the app (a 500, with canal_req_fail()).
 * A JSON body that is not application/json (415) or cannot be parsed is reported the same way.
 */
CANAL_API int canal_req_bind(canal_req_t *req, const canal_schema_t *schema, void *out);

/**
 * Adds a validation error to the request's 400 problem: field is a field name or a JSON
 * pointer ("/items/3/qty"); the message is printf-style. During binding (a schema's validate
 * callback) it joins canal's own errors; in handler code, answer with canal_res_invalid().
 * Returns 0 or CANAL_ENOMEM.
 */
CANAL_API int canal_req_invalid(canal_req_t *req, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Answers the 400 validation problem with the errors added so far (canal_req_invalid()).
 * Returns 0, or CANAL_ESTATE when none was added. */
CANAL_API int canal_res_invalid(canal_req_t *req);

/** Writes obj, a struct described by schema, as a JSON object. Returns 0 or the writer's
 * error (CANAL_EINVAL: a string that is not UTF-8, an enum out of range, a NaN). */
CANAL_API int canal_jw_model(canal_jw_t *w, const canal_schema_t *schema, const void *obj);

/** Writes n structs from objs (an array of them) as a JSON array of objects. */
CANAL_API int canal_jw_model_array(canal_jw_t *w, const canal_schema_t *schema, const void *objs, size_t n);

/** The answer status with obj written as JSON (canal_jw_model() then canal_res_jw()). */
CANAL_API int canal_res_model(canal_req_t *req, int status, const canal_schema_t *schema, const void *obj);

/** The answer status with an array of n structs (canal_jw_model_array()). */
CANAL_API int canal_res_model_array(canal_req_t *req, int status, const canal_schema_t *schema, const void *objs,
                                    size_t n);

#ifdef __cplusplus
}
#endif

#endif
