/* SPDX-License-Identifier: MIT */
/**
 * @file canal/controller.h
 * The controller layer: MVC-style controllers and actions without attributes, on top of the
 * router and the server core (it uses only their public headers and registers ordinary
 * routes, so it costs at request time only what it does: binding, filters, the result).
 *
 * A controller ("Home") has an optional route prefix ("api/[controller]"), state, filters and
 * actions. An action has a name, methods (default GET), route templates (relative to the
 * prefix, or absolute with a leading '/'), an args schema (canal/schema.h: the struct its
 * route values, query, headers, cookies and body bind into), a handler, filters and metadata.
 * Both can be declared as const tables with designated initializers:
 *
 *     typedef struct { int32_t id; } employee_args_t;
 *     static const canal_field_t employee_args_fields[] = {
 *         {.name = "id", CANAL_FIELD(employee_args_t, id), .type = CANAL_TYPE_INT32,
 *          .source = CANAL_FROM_ROUTE, .flags = CANAL_REQUIRED},
 *         {.name = NULL}};
 *     static const canal_schema_t employee_args = {.name = "EmployeeArgs",
 *         .size = sizeof(employee_args_t), .fields = employee_args_fields};
 *
 *     static int employee(canal_ctx_t *ctx, canal_req_t *req, const void *args)
 *     {
 *         const employee_args_t *a = args;   // bound and valid
 *         ...
 *     }
 *     static const canal_action_def_t home_actions[] = {
 *         {.name = "Plaintext", .handler = plaintext},
 *         {.name = "Employee", .routes = {"home/employee/{id:int}"}, .handler = employee,
 *          .args = &employee_args,
 *          .options = {CANAL_DOC(.responses = {{.status = 200, .schema = &employee_schema}, {.status = 404}})}},
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
 * answer and stop the chain), then the args schema is bound and validated (canal_req_bind(): any
 * failure answers 400 with application/problem+json whose "errors" object names each
 * field and why, before any action code runs), then the action, which sets the answer
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
#include "cors.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most route templates one action declares. */
#define CANAL_ACTION_MAX_ROUTES 4
/** Most filters at one level (app, controller, action). */
#define CANAL_MAX_FILTERS 4

/** An app's controller layer: its controllers, conventional routes and app-level filters.
 * Opaque; from canal_mvc_create(), freed by canal_mvc_destroy(). */
typedef struct canal_mvc canal_mvc_t;
/** A registered controller. Opaque; owned by its canal_mvc_t. */
typedef struct canal_controller canal_controller_t;
/** A registered action. Opaque; owned by its controller. */
typedef struct canal_action canal_action_t;
/** The context of one action call: the request, the action, its filters. Opaque; it lives
 * in the request's memory, so it is valid as long as the request: in the action and its
 * filters, and in a deferred answer's done on the request's thread (canal_offload(),
 * canal_pending_post()) when done is given a request; never on another thread, nor once done
 * was given NULL (nobody to answer). */
typedef struct canal_ctx canal_ctx_t;

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
 * An action handler: a canal_handler_fn with its context and its bound arguments (args: the
 * struct the action's args schema describes, in request memory, bound and valid; NULL when it
 * declares none). It sets the answer on req (the
 * canal_res_* calls of canal/response.h, or canal_ctx_created()) and returns 0, or fails with
 * canal_req_fail() (500, or the developer error page). An action that answers later defers
 * the request (canal_req_defer() or canal_offload()) and returns CANAL_PENDING; its answer is
 * set the same way when it completes, and the after-filters run then. (Before-filters cannot
 * defer: their 1 means "answer with what was set".)
 */
typedef int (*canal_action_fn)(canal_ctx_t *ctx, canal_req_t *req, const void *args);

/** An action. All strings must outlive the mvc object (string literals, typically). */
typedef struct canal_action_def {
    const char *name;            /**< "Employee"; NULL ends a table */
    const char *methods;         /**< "GET" (default when NULL), or several: "GET,POST" */
    const char *routes[CANAL_ACTION_MAX_ROUTES]; /**< templates; none: conventional routes */
    const char *route_name;      /**< a name for link generation (first template), or NULL */
    canal_action_fn handler;     /**< the code of the action; required */
    const canal_schema_t *args;  /**< its arguments (canal/schema.h): bound after the
                                      before-filters, handed to handler; or NULL */
    canal_filter_t filters[CANAL_MAX_FILTERS];         /**< unused entries are all NULL */
    canal_route_option_t options[CANAL_MAX_ROUTE_OPTIONS]; /**< the features' settings of its
                                       routes (canal/app.h): CANAL_DOC() (its OpenAPI summary,
                                       description and answers), CANAL_POLICY() (checked
                                       before the filters and the binding), CANAL_RATE_LIMIT(),
                                       CANAL_SECURITY_HEADERS()...; a kind it has not: the
                                       controller's, else the group's or the app's. Its args
                                       come first (CANAL_ARGS(), given by the layer): with
                                       args, at most CANAL_MAX_ROUTE_OPTIONS - 1 here */
    size_t max_body;             /**< its routes' body limit in bytes, below the app's
                                      (canal_endpoint_spec_t.max_body: over it 413); 0: the
                                      app's */
} canal_action_def_t;

/** A controller. */
typedef struct canal_controller_def {
    const char *name;            /**< "Home" */
    const char *prefix;          /**< "api/[controller]", or NULL */
    void *state;                 /**< borrowed unless dispose is set */
    void (*dispose)(void *state);/**< called on state when the mvc object is destroyed */
    canal_filter_t filters[CANAL_MAX_FILTERS]; /**< controller-level filters; unused all NULL */
    const canal_action_def_t *actions; /**< a table ended by .name == NULL, or NULL */
    canal_route_option_t options[CANAL_MAX_ROUTE_OPTIONS]; /**< the settings of its actions
                                       that have none of the kind (a policy, a rate limit, a
                                       security headers preset: borrowed until its last action
                                       is added); a kind neither has: the group's or the
                                       app's */
} canal_controller_def_t;

/**
 * Creates the controller layer of an app. The app must not be started yet; the mvc object
 * must outlive it (destroy the app first). NULL when out of memory.
 */
CANAL_API canal_mvc_t *canal_mvc_create(canal_app_t *app);

/**
 * Lower-cases controller and action names where they become route segments ([controller]
 * and [action] in templates and prefixes, {controller} and {action} of conventional routes),
 * like ASP.NET Core's LowercaseUrls: the "Home" controller's "Json" action is "/home/json"
 * in the route table, the OpenAPI document and the metrics labels. On (non-zero) by default;
 * 0 keeps the names as written. Matching is case-insensitive either way. It applies to the
 * controllers and routes registered after the call: make it before canal_mvc_add_controller().
 */
CANAL_API void canal_mvc_lowercase_urls(canal_mvc_t *mvc, int on);

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
 * its operationId, the action's summary and description; its args and responses are
 * documented as every route's are (canal_endpoint_spec_t's args and responses: parameters,
 * request body, answers, components.schemas). Routes that are not actions are described as
 * canal_openapi_build() does. info may be NULL.
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

/**
 * 201 Created with obj written by its schema as the body (canal_res_model(); schema NULL: no
 * body) and a Location built by link generation to action of controller (NULL: the current
 * controller) with values, as the answer of the request. CANAL_ENOTFOUND or CANAL_EINVAL when
 * the link cannot be built (nothing is set then).
 */
CANAL_API int canal_ctx_created(canal_ctx_t *ctx, const char *controller, const char *action,
                                const canal_kv_t *values, size_t nvalues, const canal_schema_t *schema,
                                const void *obj);

#ifdef __cplusplus
}
#endif

#endif
