/* SPDX-License-Identifier: MIT */
/**
 * @file canal/controller.h
 * The controller layer: MVC-style controllers and actions without attributes, on top of the
 * router and the server core (it uses only their public headers and registers ordinary
 * routes, so it costs at request time only what it does: binding, filters, the result).
 *
 * A controller ("Home") has an optional route prefix ("api/[controller]"), state, filters and
 * actions. An action has a name, methods (default GET), route templates (relative to the
 * prefix, or absolute with a leading '/'), declared parameters, a handler, filters and
 * metadata. Both can be declared as const tables with designated initializers:
 *
 *     static const canal_action_def_t home_actions[] = {
 *         {.name = "Plaintext", .handler = plaintext},
 *         {.name = "Employee", .routes = {"home/employee/{id:int}"}, .handler = employee,
 *          .params = {{.name = "id", .source = CANAL_FROM_ROUTE, .type = CANAL_TYPE_INT32}}},
 *         {.name = NULL}
 *     };
 *     static const canal_controller_def_t home = {.name = "Home", .actions = home_actions};
 *     canal_mvc_add_controller(mvc, &home, NULL, &err);
 *
 * or with plain calls (canal_mvc_controller(), canal_controller_add_action()). Actions
 * without a template of their own are reached through conventional routes such as
 * "{controller=Home}/{action=Index}/{id?}" (canal_mvc_map_route()), which expand into one
 * route per existing controller/action pair, so only those match and matching costs what a
 * literal route costs.
 *
 * Per request: the before-filters run (app, controller, action level, in that order; one may
 * answer and stop the chain), then every declared parameter is bound and validated (any
 * failure answers 400 with application/problem+json whose "errors" object names each
 * parameter and why, before any action code runs), then the action, which sets the answer
 * as any handler does (canal/response.h). The after-filters run in reverse order (action,
 * controller, app) when the answer is committed, at once or when a deferred answer completes
 * (canal/async.h), and may change it.
 */
#ifndef CANAL_CONTROLLER_H
#define CANAL_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>
#include "server.h"
#include "openapi.h"
#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most route templates one action declares. */
#define CANAL_ACTION_MAX_ROUTES 4
/** Most parameters one action declares. */
#define CANAL_ACTION_MAX_PARAMS 16
/** Most filters at one level (app, controller, action). */
#define CANAL_MAX_FILTERS 4
/** Most status codes an action's metadata lists. */
#define CANAL_ACTION_MAX_PRODUCES 8

/** An app's controller layer: its controllers, conventional routes and app-level filters.
 * Opaque; from canal_mvc_create(), freed by canal_mvc_destroy(). */
typedef struct canal_mvc canal_mvc_t;
/** A registered controller. Opaque; owned by its canal_mvc_t. */
typedef struct canal_controller canal_controller_t;
/** A registered action. Opaque; owned by its controller. */
typedef struct canal_action canal_action_t;
/** The context of one action call: the request, the bound values and the result. Opaque;
 * valid only during the call of the action or filter it is given to. */
typedef struct canal_ctx canal_ctx_t;

/** Where a parameter's value comes from. */
typedef enum canal_source {
    CANAL_FROM_ROUTE = 0, /**< a route value ({id}) */
    CANAL_FROM_QUERY,     /**< the query string (given more than once: 400) */
    CANAL_FROM_HEADER,    /**< a request header */
    CANAL_FROM_BODY,      /**< a member of a JSON object body */
    CANAL_FROM_BODY_WHOLE /**< the whole JSON body (type CANAL_TYPE_JSON) */
} canal_source_t;

/** A parameter's type. Text values are parsed strictly (canal_parse_int32() and friends);
 * CANAL_TYPE_STRING values must be well-formed UTF-8 (canal_utf8_valid(); else a 400 "must be
 * valid UTF-8"); JSON body members must have the matching JSON type. */
typedef enum canal_type {
    CANAL_TYPE_STRING = 0, /**< text as sent (percent-decoded); a JSON string in a body */
    CANAL_TYPE_INT32,      /**< a 32-bit integer (canal_parse_int32()) */
    CANAL_TYPE_INT64,      /**< a 64-bit integer (canal_parse_int64()) */
    CANAL_TYPE_DOUBLE,     /**< a number (canal_parse_double()); a JSON integer or real */
    CANAL_TYPE_BOOL,       /**< "true" or "false" (canal_parse_bool()); a JSON boolean */
    CANAL_TYPE_JSON        /**< any JSON value (body sources only); borrowed json_t */
} canal_type_t;

/**
 * A declared parameter. Absent values take def (parsed with the type's rules at
 * registration), else are a 400 when required, else are simply not present
 * (canal_ctx_has()).
 */
typedef struct canal_param_def {
    const char *name;         /**< the name in its source; NULL ends a table */
    canal_source_t source;    /**< where the value comes from */
    canal_type_t type;        /**< how the value is parsed and checked */
    int required;             /**< 1: absent is a 400 */
    const char *def;          /**< default value as text, or NULL */
    const char *min;          /**< numbers: the inclusive lower bound as text, or NULL */
    const char *max;          /**< numbers: the inclusive upper bound as text, or NULL */
    size_t min_length;        /**< strings: fewest characters (UTF-8 code points) */
    size_t max_length;        /**< strings: most characters; 0 means no bound */
    const char *pattern;      /**< strings: POSIX ERE the whole value must match, or NULL */
    const char *const *allowed; /**< strings and numbers: NULL-terminated list, or NULL */
    const char *description;  /**< for documentation (OpenAPI) */
} canal_param_def_t;

/**
 * A filter. before runs before binding and the action: return 0 to go on, 1 after setting an
 * answer (canal_res_*(canal_ctx_req(ctx), ...)) to answer with it and skip the rest, negative
 * to fail (500). after runs when the answer of the action (or of a before-filter, or the 400
 * of a failed binding) is committed, and may add headers or replace it; it returns 0, or
 * negative to fail. It does not run for a request that failed. Either may be NULL.
 */
typedef struct canal_filter {
    int (*before)(canal_ctx_t *ctx, void *data); /**< runs before binding, or NULL */
    int (*after)(canal_ctx_t *ctx, void *data);  /**< runs after the result is set, or NULL */
    void *data;               /**< passed to both; borrowed */
    const canal_cors_t *cors; /**< a CORS policy the server applies to the routes of the
                                   actions the filter covers (canal_cors_filter()), or NULL;
                                   borrowed: it must outlive the mvc object */
} canal_filter_t;

/**
 * An action handler: a canal_handler_fn with its context. It sets the answer on req (the
 * canal_res_* calls of canal/response.h, or canal_ctx_created()) and returns 0, or fails with
 * canal_req_fail() (500, or the developer error page). An action that answers later defers
 * the request (canal_req_defer() or canal_offload()) and returns CANAL_PENDING; its answer is
 * set the same way when it completes, and the after-filters run then. (Before-filters cannot
 * defer: their 1 means "answer with what was set".)
 */
typedef int (*canal_action_fn)(canal_ctx_t *ctx, canal_req_t *req);

/** An action. All strings must outlive the mvc object (string literals, typically). */
typedef struct canal_action_def {
    const char *name;            /**< "Employee"; NULL ends a table */
    const char *methods;         /**< "GET" (default when NULL), or several: "GET,POST" */
    const char *routes[CANAL_ACTION_MAX_ROUTES]; /**< templates; none: conventional routes */
    const char *route_name;      /**< a name for link generation (first template), or NULL */
    canal_action_fn handler;     /**< the code of the action; required */
    canal_param_def_t params[CANAL_ACTION_MAX_PARAMS]; /**< ended by .name == NULL */
    canal_filter_t filters[CANAL_MAX_FILTERS];         /**< unused entries are all NULL */
    const char *summary;         /**< OpenAPI: a one-line summary, or NULL */
    int produces[CANAL_ACTION_MAX_PRODUCES];           /**< OpenAPI: status codes; 0 ends */
    const char *content_type;    /**< OpenAPI: the media type of its 2xx bodies; NULL: JSON */
    const char *description;     /**< OpenAPI: a longer description (CommonMark), or NULL */
    const canal_policy_t *policy; /**< who may call it (canal/auth.h), checked before the
                                       filters and the binding; NULL: the controller's */
    const canal_rate_limit_t *rate_limit; /**< its routes' rate limit (canal/ratelimit.h),
                                       checked before the filters and the binding; NULL:
                                       the controller's, else the group's or the app's */
    const canal_security_headers_t *security_headers; /**< the preset on every answer of
                                       its routes (canal/headers.h), copied; NULL: the
                                       controller's, else the group's or the app's */
} canal_action_def_t;

/** A controller. */
typedef struct canal_controller_def {
    const char *name;            /**< "Home" */
    const char *prefix;          /**< "api/[controller]", or NULL */
    void *state;                 /**< borrowed unless dispose is set */
    void (*dispose)(void *state);/**< called on state when the mvc object is destroyed */
    canal_filter_t filters[CANAL_MAX_FILTERS]; /**< controller-level filters; unused all NULL */
    const canal_action_def_t *actions; /**< a table ended by .name == NULL, or NULL */
    const canal_policy_t *policy; /**< the policy of its actions without one of their own;
                                       NULL: the route group's or the app's default */
    const canal_rate_limit_t *rate_limit; /**< the rate limit of its actions without one of
                                       their own; NULL: the group's or the app's */
    const canal_security_headers_t *security_headers; /**< the preset of its actions without
                                       one of their own, copied into each action's routes as
                                       they are registered (borrowed until the controller's
                                       last action is added); NULL: the group's or the app's */
} canal_controller_def_t;

/**
 * Creates the controller layer of an app. The app must not be started yet; the mvc object
 * must outlive it (destroy the app first). NULL when out of memory.
 */
CANAL_API canal_mvc_t *canal_mvc_create(canal_app_t *app);

/** Destroys the controller layer (disposes controller states). NULL is a no-op. */
CANAL_API void canal_mvc_destroy(canal_mvc_t *mvc);

/** Adds an app-level filter (runs for every action). Before canal_app_start() only.
 * Returns 0, CANAL_ELIMIT. */
CANAL_API int canal_mvc_filter(canal_mvc_t *mvc, const canal_filter_t *filter);

/**
 * Registers a conventional route template for actions without templates of their own, e.g.
 * "{controller=Home}/{action=Index}/{id?}". It must contain {controller} and {action}
 * (defaults let them be left out; they take no constraints). Applies to the controllers
 * registered before and after.
 * Returns 0 or a registration error (err says which template and why).
 */
CANAL_API int canal_mvc_map_route(canal_mvc_t *mvc, const char *tmpl, canal_error_info_t *err);

/**
 * Registers a controller and its table of actions. *out (if not NULL) receives the
 * controller, to add more actions. Every route of every action is registered here: a
 * conflict, a bad template, an unknown [token], a bad default or bound is reported in err
 * with the action named. On error the controller and the actions registered before the
 * failing one stay (the router cannot remove routes): treat an error as fatal at start-up.
 */
CANAL_API int canal_mvc_add_controller(canal_mvc_t *mvc, const canal_controller_def_t *def,
                                       canal_controller_t **out, canal_error_info_t *err);

/** Plain-call registration: a controller with no actions yet. NULL on error (err says). */
CANAL_API canal_controller_t *canal_mvc_controller(canal_mvc_t *mvc, const char *name,
                                                   const char *prefix, void *state,
                                                   void (*dispose)(void *),
                                                   canal_error_info_t *err);

/** Adds an action to a controller (def is copied). Returns 0 or an error as above. */
CANAL_API int canal_controller_add_action(canal_controller_t *c, const canal_action_def_t *def,
                                          canal_error_info_t *err);

/** Adds a controller-level filter. Returns 0, CANAL_ELIMIT. */
CANAL_API int canal_controller_filter(canal_controller_t *c, const canal_filter_t *filter);

/**
 * Builds the URL of an action's first route from route values (see canal_route_link()):
 * controller and action names compare ASCII case-insensitively. Returns the length, or
 * CANAL_ENOTFOUND, CANAL_EINVAL.
 */
CANAL_API int canal_mvc_link(const canal_mvc_t *mvc, const char *controller, const char *action,
                             const canal_kv_t *values, size_t nvalues, char *buf, size_t size);

/** The number of controllers registered. */
CANAL_API size_t canal_mvc_controller_count(const canal_mvc_t *mvc);
/** Controller i in registration order, or NULL past the end. Borrowed. */
CANAL_API const canal_controller_t *canal_mvc_controller_at(const canal_mvc_t *mvc, size_t i);
/** The controller's name as registered ("Home"). Borrowed. */
CANAL_API const char *canal_controller_name(const canal_controller_t *c);
/** The number of actions of the controller. */
CANAL_API size_t canal_controller_action_count(const canal_controller_t *c);
/** Action j of the controller in registration order, or NULL past the end. Borrowed. */
CANAL_API const canal_action_t *canal_controller_action_at(const canal_controller_t *c, size_t j);
/** An action's definition as registered (names and templates as given). Borrowed. */
CANAL_API const canal_action_def_t *canal_action_def(const canal_action_t *a);
/** The number of routes an action was registered under (conventional ones included). */
CANAL_API size_t canal_action_route_count(const canal_action_t *a);
/** Route i of the action, or NULL past the end. Borrowed from the app's router. */
CANAL_API const canal_route_t *canal_action_route_at(const canal_action_t *a, size_t i);

/**
 * Builds the app's OpenAPI 3.1 document (canal_openapi_build()) with what the actions declare:
 * each operation of an action's route gets the controller as its tag, "Controller_Action" as
 * its operationId, the action's summary and description, its declared parameters (route
 * values with their declared types and rules merged into the path parameters; query and
 * header parameters; body members as an application/json request body object), a 400
 * validation problem when it declares parameters, and one response per status in produces
 * (2xx ones with content_type, 400 and 404 as problem details). Routes that are not actions
 * are described as canal_openapi_build() does. info may be NULL.
 * @return a new reference, or NULL when out of memory.
 */
CANAL_API json_t *canal_mvc_openapi(const canal_mvc_t *mvc, const canal_openapi_info_t *info);

/**
 * A controller filter (canal_mvc_filter(), canal_controller_filter(), or an action's
 * filters) that applies policy to the routes of the actions it covers, as
 * canal_app_cors_route() does: the server answers preflights and adds the headers, so the
 * filter itself does nothing per request. policy is borrowed: it must outlive the mvc object.
 */
CANAL_API canal_filter_t canal_cors_filter(const canal_cors_t *policy);

/* ---- inside an action or a filter ---- */

/** The request (for headers, query, canal_req_alloc(), ...). */
CANAL_API canal_req_t *canal_ctx_req(const canal_ctx_t *ctx);
/** The controller's state. */
CANAL_API void *canal_ctx_state(const canal_ctx_t *ctx);
/** The running action. Borrowed. */
CANAL_API const canal_action_t *canal_ctx_action(const canal_ctx_t *ctx);
/** The running action's controller. Borrowed. */
CANAL_API const canal_controller_t *canal_ctx_controller(const canal_ctx_t *ctx);

/** The index of the declared parameter name, or -1. */
CANAL_API int canal_ctx_index(const canal_ctx_t *ctx, const char *name);
/** 1 if parameter i has a value (given or default). Before binding (in a before-filter): 0. */
CANAL_API int canal_ctx_has(const canal_ctx_t *ctx, int i);
/**
 * The bound value of parameter i (a CANAL_TYPE_INT32). The canal_ctx_* readers cannot fail:
 * an index out of range, a parameter of another type or one without a value gives 0, 0.0,
 * false, an empty string or NULL.
 */
CANAL_API int32_t canal_ctx_int32(const canal_ctx_t *ctx, int i);
/** The bound value of parameter i (a CANAL_TYPE_INT64), or 0 (see canal_ctx_int32()). */
CANAL_API int64_t canal_ctx_int64(const canal_ctx_t *ctx, int i);
/** The bound value of parameter i (a CANAL_TYPE_DOUBLE), or 0.0 (see canal_ctx_int32()). */
CANAL_API double canal_ctx_double(const canal_ctx_t *ctx, int i);
/** The bound value of parameter i (a CANAL_TYPE_BOOL): 1 or 0 (see canal_ctx_int32()). */
CANAL_API int canal_ctx_bool(const canal_ctx_t *ctx, int i);
/** The bound value of parameter i (a CANAL_TYPE_STRING), pointing into request memory; an
 * empty string otherwise (see canal_ctx_int32()). */
CANAL_API canal_str_t canal_ctx_str(const canal_ctx_t *ctx, int i);
/** The bound value of parameter i (a CANAL_TYPE_JSON), borrowed until the request ends; NULL
 * otherwise (see canal_ctx_int32()). */
CANAL_API json_t *canal_ctx_json(const canal_ctx_t *ctx, int i);

/**
 * 201 Created with body (stolen; NULL: no body) and a Location built by link generation to
 * action of controller (NULL: the current controller) with values, as the answer of the
 * request. CANAL_ENOTFOUND or CANAL_EINVAL when the link cannot be built (nothing is set
 * then).
 */
CANAL_API int canal_ctx_created(canal_ctx_t *ctx, const char *controller, const char *action,
                                const canal_kv_t *values, size_t nvalues, json_t *body);

#ifdef __cplusplus
}
#endif

#endif
