/* SPDX-License-Identifier: MIT */
/*
 * The controller layer's OpenAPI document: canal_openapi_build() describes the routes, and
 * this file's callback adds to each operation of an action what the action declares
 * (canal/controller.h). Only public APIs are used: the callback knows an action's operation
 * by its route, which the action lists (canal_action_route_at()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "controller_internal.h"

/* A declared value as JSON of its type ("5" is 5 for an integer); a string if it does not
 * parse (registration already refused bad defaults, bounds and allowed values). */
static json_t *typed(canal_type_t type, const char *text)
{
    union canal_val v;
    if (type != CANAL_TYPE_STRING && type != CANAL_TYPE_JSON &&
        canal__parse_value(type, (canal_str_t){text, strlen(text)}, &v) == 0) {
        switch (type) {
        case CANAL_TYPE_INT32:
            return json_integer(v.i32);
        case CANAL_TYPE_INT64:
            return json_integer(v.i64);
        case CANAL_TYPE_DOUBLE:
            return json_real(v.d);
        case CANAL_TYPE_BOOL:
            return json_boolean(v.b);
        default:
            break;
        }
    }
    return json_string(text);
}

/* Sets the declared type on schema; a path parameter's schema may already have one from the
 * route's constraints, which a declared non-string type replaces (the constraint "string of at
 * least 1 character" of a plain {id} says less than "int32"). */
static void set_type(json_t *schema, canal_type_t type)
{
    const char *t = NULL, *format = NULL;
    switch (type) {
    case CANAL_TYPE_STRING:
        t = "string";
        break;
    case CANAL_TYPE_INT32:
        t = "integer", format = "int32";
        break;
    case CANAL_TYPE_INT64:
        t = "integer", format = "int64";
        break;
    case CANAL_TYPE_DOUBLE:
        t = "number", format = "double";
        break;
    case CANAL_TYPE_BOOL:
        t = "boolean";
        break;
    case CANAL_TYPE_JSON:
        return; /* any JSON value: no "type" */
    }
    const char *had = json_string_value(json_object_get(schema, "type"));
    if (had != NULL && strcmp(had, "string") == 0 && strcmp(t, "string") != 0)
        json_object_del(schema, "minLength");
    if (had == NULL || strcmp(t, "string") != 0) {
        json_object_set_new(schema, "type", json_string(t));
        if (format != NULL)
            json_object_set_new(schema, "format", json_string(format));
    }
}

/* The schema keywords of a declared parameter's rules. */
static void add_rules(json_t *schema, const canal_param_def_t *p)
{
    set_type(schema, p->type);
    if (p->min != NULL)
        json_object_set_new(schema, "minimum", typed(p->type, p->min));
    if (p->max != NULL)
        json_object_set_new(schema, "maximum", typed(p->type, p->max));
    if (p->min_length > 0)
        json_object_set_new(schema, "minLength", json_integer((json_int_t)p->min_length));
    if (p->max_length > 0)
        json_object_set_new(schema, "maxLength", json_integer((json_int_t)p->max_length));
    if (p->pattern != NULL) {
        /* canal matches the whole value; an OpenAPI pattern may match anywhere */
        char *anchored = NULL;
        if (asprintf(&anchored, "^(%s)$", p->pattern) >= 0) {
            json_object_set_new(schema, "pattern", json_string(anchored));
            free(anchored);
        }
    }
    if (p->allowed != NULL) {
        json_t *e = json_array();
        for (const char *const *a = p->allowed; *a != NULL; a++)
            json_array_append_new(e, typed(p->type, *a));
        json_object_set_new(schema, "enum", e);
    }
    if (p->def != NULL)
        json_object_set_new(schema, "default", typed(p->type, p->def));
}

static json_t *find_param(json_t *params, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach(params, i, p)
    {
        if (strcmp(json_string_value(json_object_get(p, "in")), "path") == 0 &&
            strcmp(json_string_value(json_object_get(p, "name")), name) == 0)
            return p;
    }
    return NULL;
}

static void add_params(json_t *op, const canal_action_def_t *d)
{
    json_t *params = json_object_get(op, "parameters");
    json_t *body = NULL, *body_required = json_array();
    int body_is_required = 0;
    if (params == NULL)
        json_object_set_new(op, "parameters", params = json_array());
    for (size_t i = 0; i < CANAL_ACTION_MAX_PARAMS && d->params[i].name != NULL; i++) {
        const canal_param_def_t *p = &d->params[i];
        int required = p->required && p->def == NULL;
        json_t *o = NULL, *schema;
        switch (p->source) {
        case CANAL_FROM_ROUTE:
            /* not in this path: a route value left out, which takes its default */
            if ((o = find_param(params, p->name)) == NULL)
                continue;
            add_rules(json_object_get(o, "schema"), p);
            break;
        case CANAL_FROM_QUERY:
        case CANAL_FROM_HEADER:
            schema = json_object();
            add_rules(schema, p);
            o = json_pack("{s:s, s:s, s:b, s:o}", "name", p->name, "in",
                          p->source == CANAL_FROM_QUERY ? "query" : "header", "required", required,
                          "schema", schema);
            json_array_append_new(params, o);
            break;
        case CANAL_FROM_BODY:
            if (body == NULL)
                body = json_pack("{s:s, s:{}}", "type", "object", "properties");
            schema = json_object();
            add_rules(schema, p);
            if (p->description != NULL)
                json_object_set_new(schema, "description", json_string(p->description));
            json_object_set_new(json_object_get(body, "properties"), p->name, schema);
            if (required)
                json_array_append_new(body_required, json_string(p->name));
            body_is_required |= required;
            continue;
        case CANAL_FROM_BODY_WHOLE:
            json_decref(body);
            body = json_object();
            if (p->description != NULL)
                json_object_set_new(body, "description", json_string(p->description));
            body_is_required |= required;
            continue;
        }
        if (o != NULL && p->description != NULL)
            json_object_set_new(o, "description", json_string(p->description));
    }
    if (json_array_size(params) == 0)
        json_object_del(op, "parameters");
    if (body != NULL) {
        if (json_array_size(body_required) > 0)
            json_object_set(body, "required", body_required);
        json_object_set_new(op, "requestBody",
                            json_pack("{s:b, s:{s:{s:o}}}", "required", body_is_required,
                                      "content", "application/json", "schema", body));
    }
    json_decref(body_required);
}

static json_t *response(int status, const char *content_type)
{
    if (status == 400)
        return json_pack("{s:s}", "$ref", "#/components/responses/ValidationProblem");
    if (status == 404)
        return json_pack("{s:s}", "$ref", "#/components/responses/NotFound");
    json_t *r = json_pack("{s:s}", "description", canal_status_reason(status));
    int no_body = status < 200 || status == 204 || status == 205 || status == 304;
    if (status >= 200 && status < 300 && !no_body)
        json_object_set_new(r, "content", json_pack("{s:{}}", content_type));
    else if (status >= 400)
        json_object_set_new(r, "content",
                            json_pack("{s:{s:{s:s}}}", "application/problem+json", "schema", "$ref",
                                      "#/components/schemas/ProblemDetails"));
    return r;
}

static void add_responses(json_t *op, const canal_action_def_t *d)
{
    json_t *responses = json_object_get(op, "responses");
    if (d->produces[0] != 0)
        json_object_del(responses, "default");
    for (size_t i = 0; i < CANAL_ACTION_MAX_PRODUCES && d->produces[i] != 0; i++) {
        char key[16];
        snprintf(key, sizeof(key), "%d", d->produces[i]);
        json_object_set_new(responses, key,
                            response(d->produces[i],
                                     d->content_type ? d->content_type : "application/json"));
    }
    /* Binding can refuse any declared parameter (a wrong type, given twice, ...). */
    if (d->params[0].name != NULL && json_object_get(responses, "400") == NULL)
        json_object_set_new(responses, "400", response(400, NULL));
}

static int describe(json_t *op, const canal_route_t *route, const char *path, void *data)
{
    const canal_mvc_t *mvc = data;
    for (size_t i = 0; i < canal_mvc_controller_count(mvc); i++) {
        const canal_controller_t *c = canal_mvc_controller_at(mvc, i);
        for (size_t j = 0; j < canal_controller_action_count(c); j++) {
            const canal_action_t *a = canal_controller_action_at(c, j);
            for (size_t k = 0; k < canal_action_route_count(a); k++) {
                if (canal_action_route_at(a, k) != route)
                    continue;
                const canal_action_def_t *d = canal_action_def(a);
                char id[200];
                snprintf(id, sizeof(id), "%s_%s", canal_controller_name(c), d->name);
                json_object_set_new(op, "operationId", json_string(id));
                json_object_set_new(op, "tags", json_pack("[s]", canal_controller_name(c)));
                if (d->summary != NULL)
                    json_object_set_new(op, "summary", json_string(d->summary));
                if (d->description != NULL)
                    json_object_set_new(op, "description", json_string(d->description));
                add_params(op, d);
                add_responses(op, d);
                return 0;
            }
        }
    }
    return 0;
}

json_t *canal_mvc_openapi(const canal_mvc_t *mvc, const canal_openapi_info_t *info)
{
    return canal_openapi_build(mvc->app, info, describe, (void *)mvc);
}
