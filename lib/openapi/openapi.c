/* SPDX-License-Identifier: MIT */
/*
 * OpenAPI 3.1 from the router's routes, the route that serves the document and the Swagger UI
 * page (canal/openapi.h).
 *
 * The document is made from the router's public description of each route (segments,
 * parameters, constraints): a route becomes one operation per path it can match, from all its
 * segments down to its required ones, so "files/{*rest}" is described as "/files/{rest}" and
 * "/files". Constraints map to JSON Schema keywords; those that have none (an integer "min"
 * on a value that is also "alpha") are simply what they are, and the template is kept in
 * "x-canal-template" for the reader.
 *
 * The docs page serves a few files of swagger-ui-dist from memory under literal routes: no
 * request ever reaches the file system, so there is no path to traverse. (A general static
 * file mount can replace this later.)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canal/openapi.h"
#include "models/models.h"
#include "security/security.h"
#include "realtime/realtime.h"
#include "router/regex_internal.h"

/* ---- the document ---- */

/* A problem-details answer (application/problem+json) with its description. */
static json_t *problem_response(const char *description)
{
    return json_pack("{s:s, s:{s:{s:{s:s}}}}", "description", description, "content",
                     "application/problem+json", "schema", "$ref", "#/components/schemas/ProblemDetails");
}

/* components.responses: the answers canal and libh2o give themselves, each described once.
 * The document's root "x-canal-responses" says which of them any request may get, before or
 * instead of an operation (an unknown path, a method the path does not take, a malformed
 * target, a limit); operations reference those that their own path and method can get. */
static const struct {
    const char *name, *status, *description;
} server_answers[] = {
    {"MalformedRequest", "400",
     "The request target is malformed (a bad percent-escape, %00 or NUL in the path or the query, or no "
     "leading '/'): a plain problem, before routing or binding."},
    {"NotFound", "404", "No such resource, or a route value failed its constraints."},
    {"MethodNotAllowed", "405", "The path exists, but not for this method; Allow lists the methods it takes."},
    {"ContentTooLarge", "413", "The request body is larger than the app's max_body_size (or the route's max_body)."},
    {"UriTooLong", "414", "The request target is longer than the app's limit."},
    {"HeaderFieldsTooLarge", "431", "Too many request header fields, or too many bytes of them."},
};

static json_t *problem_components(void)
{
    json_t *problem = json_pack(
        "{s:s, s:s, s:{s:{s:s, s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}}",
        "type", "object", "description", "RFC 9457 problem details.", "properties",
        "type", "type", "string", "format", "uri-reference", "description",
        "A URI reference that identifies the problem type.",
        "title", "type", "string", "description", "A short summary of the problem type.",
        "status", "type", "integer", "description", "The HTTP status code.",
        "detail", "type", "string", "description", "What happened, for this occurrence.",
        "instance", "type", "string", "description", "A URI reference for this occurrence.");
    json_t *validation = json_pack(
        "{s:s, s:[{s:s}, {s:{s:{s:s, s:s, s:{s:s, s:{s:s}}}}, s:[s]}]}", "description",
        "A 400 answer listing every parameter that failed binding or validation.", "allOf",
        "$ref", "#/components/schemas/ProblemDetails", "properties", "errors", "type", "object",
        "description", "Messages by parameter name.", "additionalProperties", "type", "array",
        "items", "type", "string", "required", "errors");
    /* where binding happens, a malformed target is still the plain problem */
    json_t *responses = json_pack(
        "{s:{s:s, s:{s:{s:{s:[{s:s}, {s:s}]}}}}}", "ValidationProblem", "description",
        "One or more parameters are missing or not valid (errors lists them), or the request "
        "target is malformed (a plain problem, as MalformedRequest).",
        "content", "application/problem+json", "schema", "anyOf", "$ref",
        "#/components/schemas/ValidationProblemDetails", "$ref", "#/components/schemas/ProblemDetails");
    for (size_t i = 0; i < sizeof(server_answers) / sizeof(server_answers[0]); i++)
        json_object_set_new(responses, server_answers[i].name, problem_response(server_answers[i].description));
    json_object_set_new(json_object_get(responses, "MethodNotAllowed"), "headers",
                        json_pack("{s:{s:s, s:b, s:{s:s}}}", "Allow", "description",
                                  "The methods this path takes, comma-separated.", "required", 1,
                                  "schema", "type", "string"));
    return json_pack("{s:{s:o, s:o}, s:o}", "schemas", "ProblemDetails", problem,
                     "ValidationProblemDetails", validation, "responses", responses);
}

/* The root's "x-canal-responses": {status: {$ref}} of server_answers. */
static json_t *server_responses(void)
{
    json_t *out = json_object();
    for (size_t i = 0; i < sizeof(server_answers) / sizeof(server_answers[0]); i++) {
        char ref[96];
        snprintf(ref, sizeof(ref), "#/components/responses/%s", server_answers[i].name);
        json_object_set_new(out, server_answers[i].status, json_pack("{s:s}", "$ref", ref));
    }
    return out;
}

/* Sets key in schema, or when it is there already (two regexes), adds {key: value} to allOf:
 * every one of them must hold. Steals value. */
static void schema_add(json_t *schema, const char *key, json_t *value)
{
    if (json_object_get(schema, key) == NULL) {
        json_object_set_new(schema, key, value);
        return;
    }
    json_t *all = json_object_get(schema, "allOf");
    if (all == NULL)
        json_object_set_new(schema, "allOf", all = json_array());
    json_t *one = json_object();
    json_object_set_new(one, key, value);
    json_array_append_new(all, one);
}

static void schema_type(json_t *schema, const char *type, const char *format)
{
    if (json_object_get(schema, "type") == NULL)
        json_object_set_new(schema, "type", json_string(type));
    if (format != NULL && json_object_get(schema, "format") == NULL)
        json_object_set_new(schema, "format", json_string(format));
}

/* A default value in the schema's type: "5" is 5 for an integer. */
static json_t *typed_value(const json_t *schema, const char *text)
{
    const char *type = json_string_value(json_object_get(schema, "type"));
    canal_str_t s = {text, strlen(text)};
    int64_t i;
    double d;
    int b;
    if (type != NULL && strcmp(type, "integer") == 0 && canal_parse_int64(s, &i) == 0)
        return json_integer(i);
    if (type != NULL && strcmp(type, "number") == 0 && canal_parse_double(s, &d) == 0)
        return json_real(d);
    if (type != NULL && strcmp(type, "boolean") == 0 && canal_parse_bool(s, &b) == 0)
        return json_boolean(b);
    return json_string(text);
}

/* The JSON Schema of a route parameter, from its constraints. */
static json_t *param_schema(const canal_route_t *route, size_t i, const canal_route_param_info_t *p)
{
    json_t *s = json_object();
    for (size_t j = 0; j < p->nconstraints; j++) {
        canal_constraint_info_t c;
        canal_route_param_constraint(route, i, j, &c);
        switch (c.kind) {
        case CANAL_CONSTRAINT_INT:
            schema_type(s, "integer", "int32");
            break;
        case CANAL_CONSTRAINT_LONG:
            schema_type(s, "integer", "int64");
            break;
        case CANAL_CONSTRAINT_BOOL:
            schema_type(s, "boolean", NULL);
            break;
        case CANAL_CONSTRAINT_DOUBLE:
            schema_type(s, "number", "double");
            break;
        case CANAL_CONSTRAINT_GUID:
            schema_type(s, "string", "uuid");
            break;
        case CANAL_CONSTRAINT_ALPHA:
            schema_type(s, "string", NULL);
            schema_add(s, "pattern", json_string("^[A-Za-z]+$"));
            break;
        case CANAL_CONSTRAINT_MIN:
            schema_type(s, "integer", "int64");
            schema_add(s, "minimum", json_integer(c.a));
            break;
        case CANAL_CONSTRAINT_MAX:
            schema_type(s, "integer", "int64");
            schema_add(s, "maximum", json_integer(c.a));
            break;
        case CANAL_CONSTRAINT_RANGE:
            schema_type(s, "integer", "int64");
            schema_add(s, "minimum", json_integer(c.a));
            schema_add(s, "maximum", json_integer(c.b));
            break;
        case CANAL_CONSTRAINT_LENGTH:
            schema_type(s, "string", NULL);
            schema_add(s, "minLength", json_integer(c.a));
            schema_add(s, "maxLength", json_integer(c.b));
            break;
        case CANAL_CONSTRAINT_MINLENGTH:
            schema_type(s, "string", NULL);
            schema_add(s, "minLength", json_integer(c.a));
            break;
        case CANAL_CONSTRAINT_MAXLENGTH:
            schema_type(s, "string", NULL);
            schema_add(s, "maxLength", json_integer(c.a));
            break;
        case CANAL_CONSTRAINT_REGEX:
            schema_type(s, "string", NULL);
            schema_add(s, "pattern", json_string(c.ecma ? c.ecma : ""));
            break;
        case CANAL_CONSTRAINT_UTF8:
            schema_type(s, "string", NULL); /* a JSON string is Unicode already */
            break;
        }
    }
    schema_type(s, "string", NULL);
    /* A path segment is never empty, except a catch-all's, which may hold '/'. */
    if (!p->catch_all && strcmp(json_string_value(json_object_get(s, "type")), "string") == 0 &&
        json_object_get(s, "minLength") == NULL)
        json_object_set_new(s, "minLength", json_integer(1));
    if (p->def != NULL)
        json_object_set_new(s, "default", typed_value(s, p->def));
    return s;
}

static json_t *path_param(const canal_route_t *route, size_t i)
{
    canal_route_param_info_t p;
    canal_route_param_info(route, i, &p);
    json_t *o = json_pack("{s:s, s:s, s:b}", "name", p.name, "in", "path", "required", 1);
    json_t *schema = param_schema(route, i, &p);
    char desc[200];
    if (p.catch_all) {
        snprintf(desc, sizeof(desc),
                 "Catch-all: the rest of the path, '/' included%s; may be left out.",
                 p.catch_all == 2 ? "" : " (sent as %2F)");
        json_object_set_new(o, "description", json_string(desc));
        json_object_set_new(o, "allowReserved", json_true());
        json_object_set_new(o, "x-canal-catch-all", json_true());
    } else if (p.optional) {
        json_object_set_new(o, "description", json_string("Optional: may be left out."));
    } else if (p.def != NULL) {
        snprintf(desc, sizeof(desc), "May be left out: it is then %.160s.", p.def);
        json_object_set_new(o, "description", json_string(desc));
    }
    json_object_set_new(o, "schema", schema);
    return o;
}

/* Writes the OpenAPI form of the route's first nsegs segments: "/home/employee/{id}". */
static void format_path(const canal_route_t *route, size_t nsegs, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < nsegs && o < size; k++) {
        canal_segment_info_t seg;
        canal_route_segment(route, k, &seg);
        if (seg.kind == CANAL_SEGMENT_COMPLEX) {
            /* "{name:alpha}.{ext}": the literal parts as they are, each parameter by its name */
            size_t j = 0;
            if (o + 1 < size)
                buf[o++] = '/';
            for (const char *t = seg.text; *t != '\0' && o + 1 < size;) {
                if (t[0] == '{' && t[1] != '{') {
                    canal_route_param_info_t pi = {0};
                    canal_route_param_info(route, seg.param + j++, &pi);
                    int n = snprintf(buf + o, size - o, "{%s}", pi.name ? pi.name : "");
                    o += n > 0 ? (size_t)n : 0;
                    while (*t != '\0' && *t != '}')
                        t++;
                    t += *t == '}';
                } else {
                    buf[o++] = *t;
                    t += (t[0] == '{' || t[0] == '}') && t[1] == t[0] ? 2 : 1;
                }
            }
            if (o >= size)
                o = size - 1;
            buf[o] = '\0';
            continue;
        }
        if (seg.kind != CANAL_SEGMENT_LITERAL) {
            int n = snprintf(buf + o, size - o, "/{%s}", seg.text);
            o += n > 0 ? (size_t)n : 0;
            continue;
        }
        /* A brace in a literal ("{{" in the template) would read as a path parameter: OpenAPI
         * has no escape for it but percent-encoding, which the router decodes anyway. */
        if (o + 1 < size)
            buf[o++] = '/';
        for (const char *c = seg.text; *c && o + 4 < size; c++) {
            if (*c == '{' || *c == '}')
                o += (size_t)snprintf(buf + o, size - o, "%%%02X", (unsigned char)*c);
            else
                buf[o++] = *c;
        }
        buf[o < size ? o : size - 1] = '\0';
    }
    if (nsegs == 0)
        snprintf(buf, size, "/");
}

static const char *const openapi_methods[] = {"get",     "put",  "post",  "delete",
                                              "options", "head", "patch", "trace"};

/* The OpenAPI field for an HTTP method (lower case), or NULL if it has none. */
static const char *method_field(const char *method, char *buf, size_t size)
{
    size_t n = strlen(method);
    if (n + 1 > size)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        buf[i] = (char)((method[i] >= 'A' && method[i] <= 'Z') ? method[i] + 32 : method[i]);
    if (strcmp(method, buf) == 0)
        return NULL; /* methods are case-sensitive: "get" is not GET */
    for (size_t i = 0; i < sizeof(openapi_methods) / sizeof(openapi_methods[0]); i++)
        if (strcmp(buf, openapi_methods[i]) == 0)
            return buf;
    return NULL;
}

/* An operationId made unique in the document (ids holds those taken). */
static void set_operation_id(json_t *op, json_t *ids, const char *method, const char *path)
{
    char id[300];
    const char *given = json_string_value(json_object_get(op, "operationId"));
    if (given != NULL) {
        snprintf(id, sizeof(id), "%s", given);
    } else {
        size_t o = (size_t)snprintf(id, sizeof(id), "%s", method);
        for (const char *p = path; *p && o + 2 < sizeof(id); p++) {
            char c = *p;
            int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            if (alnum)
                id[o++] = c;
            else if (id[o - 1] != '_')
                id[o++] = '_';
        }
        while (o > 1 && id[o - 1] == '_')
            o--;
        id[o] = '\0';
    }
    char unique[320];
    snprintf(unique, sizeof(unique), "%s", id);
    for (int n = 2; json_object_get(ids, unique) != NULL; n++)
        snprintf(unique, sizeof(unique), "%s_%d", id, n);
    json_object_set_new(ids, unique, json_true());
    json_object_set_new(op, "operationId", json_string(unique));
}

static int is_docs_route(canal_app_t *app, const canal_route_t *route);


/* A WebSocket route's GET (canal_app_ws()): the 101 of a good handshake and the answers
 * refuse() in websocket.c gives a bad one; x-websocket marks the operation. Its OPTIONS door
 * (a 405 like every other method) is left out of the document. */
static void ws_operation(json_t *op, json_t *responses)
{
    json_object_set_new(op, "x-websocket", json_true());
    json_object_set_new(op, "description",
                        json_string("A WebSocket (RFC 6455, version 13, over HTTP/1.1 only): a GET with "
                                    "Upgrade: websocket, Connection: upgrade, Sec-WebSocket-Key and "
                                    "Sec-WebSocket-Version: 13 switches the connection to the WebSocket "
                                    "protocol."));
    json_object_set_new(
        responses, "101",
        json_pack("{s:s, s:{s:{s:s, s:{s:s, s:s}}, s:{s:s, s:{s:s}}, s:{s:s, s:{s:s}}}}", "description",
                  "Switching Protocols: the connection now speaks the WebSocket protocol (RFC 6455).",
                  "headers", "Upgrade", "description", "websocket", "schema", "type", "string", "const",
                  "websocket", "Connection", "description", "Upgrade", "schema", "type", "string",
                  "Sec-WebSocket-Accept", "description",
                  "base64 of the SHA-1 of Sec-WebSocket-Key and the RFC 6455 GUID.", "schema", "type",
                  "string"));
    json_object_set_new(responses, "400",
                        problem_response("A bad handshake: HTTP/1.0, or Sec-WebSocket-Key or "
                                         "Sec-WebSocket-Version missing or malformed."));
    json_object_set_new(responses, "405", problem_response("Not a GET: a WebSocket opens with GET."));
    json_t *upgrade = problem_response("Upgrade Required: no Upgrade: websocket, HTTP/2, or a "
                                       "WebSocket version other than 13.");
    json_object_set_new(upgrade, "headers",
                        json_pack("{s:{s:s, s:{s:s}}}", "Sec-WebSocket-Version", "description",
                                  "The version spoken here: 13.", "schema", "type", "string"));
    json_object_set_new(responses, "426", upgrade);
    json_object_set_new(json_object_get(responses, "default"), "description",
                        json_string("What on_open answers when it refuses the socket."));
}

/* A route's policy (auth.c): its schemes as alternatives in the operation's security, each
 * in components.securitySchemes, and its 401 (and 403 when it asks for more than an identity). */
static void secure_operation(json_t *op, json_t *responses, json_t *components, const canal_policy_t *pol)
{
    json_t *security = json_array(), *schemes = json_object_get(components, "securitySchemes");
    if (schemes == NULL)
        json_object_set_new(components, "securitySchemes", schemes = json_object());
    for (size_t i = 0; i < CANAL_POLICY_MAX_SCHEMES && pol->schemes[i] != NULL; i++) {
        const char *name = canal__auth_name(pol->schemes[i]);
        json_t *scopes = json_array();
        for (const char *s = pol->scopes ? pol->scopes : ""; *s;) {
            size_t n = strcspn(s, " ");
            if (n > 0)
                json_array_append_new(scopes, json_stringn(s, n));
            s += n + (s[n] == ' ');
        }
        json_array_append_new(security, json_pack("{s:o}", name, scopes));
        if (json_object_get(schemes, name) == NULL)
            json_object_set_new(schemes, name, canal__auth_openapi_scheme(pol->schemes[i]));
    }
    json_object_set_new(op, "security", security);
    json_object_set_new(responses, "401", problem_response("No credentials, or refused ones (WWW-Authenticate "
                                                           "says which scheme)."));
    if ((pol->scopes != NULL && pol->scopes[0] != '\0') || (pol->roles != NULL && pol->roles[0] != '\0') ||
        pol->allow != NULL)
        json_object_set_new(responses, "403", problem_response("Authenticated, but not allowed here."));
}

/* ---- typed models (canal/schema.h) ---- */

/* A model every field of which is a body member: a JSON shape, in components.schemas. (An
 * args schema that also reads the route or the query is described as parameters.) */
static int is_shape(const struct canal__model *m)
{
    for (size_t i = 0; i < m->nfields; i++)
        if (m->fields[i].f->source != CANAL_FROM_BODY)
            return 0;
    return 1;
}

static json_t *ref(const canal_schema_t *s)
{
    char buf[300];
    snprintf(buf, sizeof(buf), "#/components/schemas/%s", s->name);
    return json_pack("{s:s}", "$ref", buf);
}

/* A value of type t as JSON ("5" of an int32 is 5); NULL when it is not one. */
static json_t *typed(canal_type_t t, const canal_field_t *f, const union canal__val *v)
{
    switch (t) {
    case CANAL_TYPE_STRING:
        return json_stringn(v->s.base, v->s.len);
    case CANAL_TYPE_CSTRING:
        return json_string(v->cs);
    case CANAL_TYPE_INT32:
        return json_integer(v->i32);
    case CANAL_TYPE_INT64:
        return json_integer(v->i64);
    case CANAL_TYPE_DOUBLE:
        return json_real(v->d);
    case CANAL_TYPE_BOOL:
        return json_boolean(v->b);
    case CANAL_TYPE_ENUM:
        return json_string(f->allowed[v->e]);
    default:
        return NULL;
    }
}

static json_t *bound(canal_type_t t, double v)
{
    return t == CANAL_TYPE_DOUBLE ? json_real(v) : json_integer((json_int_t)v);
}

/* The JSON Schema of a value of type t under field f's rules (t: the field's type, or its
 * array's items). */
static json_t *value_schema(const struct canal__mfield *mf, canal_type_t t)
{
    const canal_field_t *f = mf->f;
    static const char *const types[] = {"string", "string", "integer", "integer", "number", "boolean", "string"};
    static const char *const fmts[] = {NULL, NULL, "int32", "int64", "double", NULL, NULL};
    if (t == CANAL_TYPE_OBJECT)
        return ref(f->schema);
    if (t == CANAL_TYPE_JSON)
        return json_object(); /* any value */
    if (t == CANAL_TYPE_FILE)
        return json_pack("{s:s, s:s}", "type", "string", "format", "binary");
    if (t == CANAL_TYPE_ARRAY) {
        json_t *a = json_pack("{s:s, s:o}", "type", "array", "items", value_schema(mf, f->items));
        if (f->min_items)
            json_object_set_new(a, "minItems", json_integer((json_int_t)f->min_items));
        if (f->max_items)
            json_object_set_new(a, "maxItems", json_integer((json_int_t)f->max_items));
        return a;
    }
    json_t *s = json_pack("{s:s}", "type", types[t]);
    const char *format = f->format ? f->format : fmts[t];
    if (format != NULL)
        json_object_set_new(s, "format", json_string(format));
    if (f->has_min)
        json_object_set_new(s, "minimum", bound(t, f->min));
    if (f->has_max)
        json_object_set_new(s, "maximum", bound(t, f->max));
    if (f->min_length)
        json_object_set_new(s, "minLength", json_integer((json_int_t)f->min_length));
    if (f->max_length)
        json_object_set_new(s, "maxLength", json_integer((json_int_t)f->max_length));
    if (mf->re != NULL) /* its ECMA-262 form, anchored: canal matches the whole value */
        json_object_set_new(s, "pattern", json_string(canal__regex_ecma_form(mf->re)));
    if (f->allowed != NULL) {
        json_t *e = json_array();
        for (const char *const *a = f->allowed; *a != NULL; a++)
            json_array_append_new(e, json_string(*a));
        json_object_set_new(s, "enum", e);
    }
    return s;
}

/* A field's schema: its value's, with null allowed when nullable, its default, description
 * and example. */
static json_t *field_schema(const struct canal__mfield *mf)
{
    const canal_field_t *f = mf->f;
    json_t *s = value_schema(mf, f->type);
    if (f->flags & CANAL_NULLABLE) {
        json_t *type = json_object_get(s, "type");
        if (json_is_string(type))
            json_object_set_new(s, "type", json_pack("[s, s]", json_string_value(type), "null"));
        else
            s = json_pack("{s:[o, {s:s}]}", "anyOf", s, "type", "null");
    }
    if (mf->has_def)
        json_object_set_new(s, "default", typed(f->type, f, &mf->defv));
    if (f->description != NULL)
        json_object_set_new(s, "description", json_string(f->description));
    if (f->example != NULL) {
        json_t *x = json_loads(f->example, JSON_DECODE_ANY, NULL);
        if (x != NULL)
            json_object_set_new(s, "examples", json_pack("[o]", x));
    }
    return s;
}

/* The object schema of m's body members. */
static json_t *members_schema(const struct canal__model *m)
{
    json_t *props = json_object(), *required = json_array();
    for (size_t i = 0; i < m->nfields; i++) {
        const canal_field_t *f = m->fields[i].f;
        if (f->source != CANAL_FROM_BODY)
            continue;
        json_object_set_new(props, f->name, field_schema(&m->fields[i]));
        if (f->flags & CANAL_REQUIRED)
            json_array_append_new(required, json_string(f->name));
    }
    json_t *s = json_pack("{s:s, s:o}", "type", "object", "properties", props);
    if (m->schema->strict)
        json_object_set_new(s, "additionalProperties", json_false());
    if (json_array_size(required) > 0)
        json_object_set_new(s, "required", required);
    else
        json_decref(required);
    return s;
}

static json_t *model_schema(const struct canal__model *m)
{
    json_t *s = members_schema(m);
    if (m->schema->description != NULL)
        json_object_set_new(s, "description", json_string(m->schema->description));
    return s;
}

static json_t *find_path_param(json_t *params, const char *name)
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

/* An operation's parameters and request body from its args schema, and the 400 (and 415)
 * binding can answer. */
static void args_operation(json_t *op, json_t *responses, const struct canal__model *m)
{
    static const char *const in[] = {NULL, "path", "query", "header", "cookie", NULL, NULL};
    json_t *params = json_object_get(op, "parameters");
    if (params == NULL)
        json_object_set_new(op, "parameters", params = json_array());
    json_t *body = NULL, *form = NULL, *form_required = NULL;
    const char *form_type = "application/x-www-form-urlencoded";
    int body_required = 0, members = 0;
    for (size_t i = 0; i < m->nfields; i++) {
        const struct canal__mfield *mf = &m->fields[i];
        const canal_field_t *f = mf->f;
        if (f->source == CANAL_FROM_BODY) {
            members = 1;
            body_required |= (f->flags & CANAL_REQUIRED) != 0;
            continue;
        }
        if (f->source == CANAL_FROM_FORM) {
            /* a form body: its fields are the properties of one object */
            if (form == NULL)
                form = json_object(), form_required = json_array();
            json_object_set_new(form, f->name, field_schema(mf));
            if (f->flags & CANAL_REQUIRED)
                json_array_append_new(form_required, json_string(f->name)), body_required = 1;
            if (f->type == CANAL_TYPE_FILE)
                form_type = "multipart/form-data";
            continue;
        }
        if (f->source == CANAL_FROM_BODY_WHOLE) {
            body = field_schema(mf);
            body_required = (f->flags & CANAL_REQUIRED) != 0;
            continue;
        }
        json_t *schema = field_schema(mf), *p;
        if (f->source == CANAL_FROM_ROUTE) {
            /* the route's own parameter (not in this path: left out, it takes its default) */
            if ((p = find_path_param(params, f->name)) == NULL) {
                json_decref(schema);
                continue;
            }
            /* the route's constraints stay, unless they only say "a string of one character
             * or more" of a value the field types (an int32 is never empty) */
            const char *had = json_string_value(json_object_get(json_object_get(p, "schema"), "type"));
            if (had == NULL || strcmp(had, "string") != 0 || f->type == CANAL_TYPE_STRING ||
                f->type == CANAL_TYPE_CSTRING || f->type == CANAL_TYPE_ENUM)
                json_object_update_missing(schema, json_object_get(p, "schema"));
            json_object_set_new(p, "schema", schema);
        } else {
            p = json_pack("{s:s, s:s, s:b, s:o}", "name", f->name, "in", in[f->source], "required",
                          (f->flags & CANAL_REQUIRED) != 0, "schema", schema);
            json_array_append_new(params, p);
        }
        if (f->description != NULL)
            json_object_set_new(p, "description", json_string(f->description));
    }
    if (json_array_size(params) == 0)
        json_object_del(op, "parameters");
    if (members)
        body = is_shape(m) ? ref(m->schema) : members_schema(m);
    if (body != NULL) {
        json_object_set_new(op, "requestBody", json_pack("{s:b, s:{s:{s:o}}}", "required", body_required, "content",
                                                         "application/json", "schema", body));
        json_object_set_new(responses, "415", problem_response("The body is not application/json."));
    }
    if (form != NULL) {
        /* canal reads either form encoding; a file needs multipart */
        json_t *schema = json_pack("{s:s, s:o}", "type", "object", "properties", form), *content = json_object();
        if (json_array_size(form_required) > 0)
            json_object_set(schema, "required", form_required);
        json_decref(form_required);
        if (strcmp(form_type, "multipart/form-data") != 0)
            json_object_set_new(content, form_type, json_pack("{s:O}", "schema", schema));
        json_object_set_new(content, "multipart/form-data", json_pack("{s:o}", "schema", schema));
        json_object_set_new(op, "requestBody", json_pack("{s:b, s:o}", "required", body_required, "content", content));
        json_object_set_new(responses, "413", problem_response("The form is over a limit (its size, parts or headers)."));
        json_object_set_new(responses, "415", problem_response("The body is not a form."));
    }
    json_object_set_new(responses, "400", json_pack("{s:s}", "$ref", "#/components/responses/ValidationProblem"));
}

/* The answers a route or action documents (canal_response_def_t): they replace "default".
 * An answer without a body (its declaration says so, its status cannot have one, a redirect
 * that names no body, any answer to HEAD) is described without "content". */
static void documented_responses(json_t *responses, const canal_response_def_t *list, int head)
{
    json_object_del(responses, "default");
    for (size_t i = 0; i < CANAL_MAX_RESPONSES && list[i].status != 0; i++) {
        const canal_response_def_t *d = &list[i];
        char key[16];
        snprintf(key, sizeof(key), "%d", d->status);
        json_t *r;
        int plain = d->schema == NULL && d->content_type == NULL && d->headers == NULL;
        int no_body = d->no_body || head || d->status < 200 || d->status == 204 || d->status == 205 ||
                      d->status == 304 || (d->status / 100 == 3 && d->schema == NULL && d->content_type == NULL);
        if (no_body)
            r = json_pack("{s:s}", "description", d->description ? d->description : canal_status_reason(d->status));
        else if (d->status == 400 && plain)
            r = json_pack("{s:s}", "$ref", "#/components/responses/ValidationProblem");
        else if (d->status == 404 && plain && d->description == NULL)
            r = json_pack("{s:s}", "$ref", "#/components/responses/NotFound");
        else if (d->status >= 400 && d->schema == NULL && d->content_type == NULL)
            r = problem_response(d->description ? d->description : canal_status_reason(d->status));
        else {
            r = json_pack("{s:s}", "description", d->description ? d->description : canal_status_reason(d->status));
            json_t *schema = d->schema == NULL ? json_object()
                             : d->array        ? json_pack("{s:s, s:o}", "type", "array", "items", ref(d->schema))
                                               : ref(d->schema);
            if (d->schema == NULL && d->content_type != NULL && strncmp(d->content_type, "text/", 5) == 0)
                json_object_set_new(schema, "type", json_string("string"));
            json_object_set_new(r, "content",
                                json_pack("{s:{s:o}}", d->content_type ? d->content_type : "application/json",
                                          "schema", schema));
        }
        if (d->headers != NULL) { /* a reference takes no siblings: plain is 0 here */
            json_t *headers = json_object();
            for (const canal_header_def_t *h = d->headers; h->name != NULL; h++) {
                json_t *one = json_pack("{s:{s:s}}", "schema", "type", "string");
                if (h->description != NULL)
                    json_object_set_new(one, "description", json_string(h->description));
                json_object_set_new(headers, h->name, one);
            }
            json_object_set_new(r, "headers", headers);
        }
        json_object_set_new(responses, key, r);
    }
}

json_t *canal_openapi_build(canal_app_t *app, const canal_openapi_info_t *info, canal_openapi_fn fn,
                            void *data)
{
    const canal_router_t *r = canal_app_router(app);
    canal_openapi_info_t none = {0};
    if (info == NULL)
        info = &none;
    json_t *doc = json_pack("{s:s, s:{s:s, s:s}}", "openapi", "3.1.0", "info", "title",
                            info->title ? info->title : "canal app", "version",
                            info->version ? info->version : "0.1.0");
    json_t *paths = json_object(), *ids = json_object(), *components = problem_components();
    if (doc == NULL || paths == NULL || ids == NULL || components == NULL)
        goto fail;
    if (info->description != NULL)
        json_object_set_new(json_object_get(doc, "info"), "description",
                            json_string(info->description));
    if (info->license != NULL)
        json_object_set_new(json_object_get(doc, "info"), "license",
                            json_pack("{s:s, s:s}", "name", info->license, "identifier", info->license));
    /* "/": the server that serves the document (linters want servers to be there) */
    json_object_set_new(doc, "servers", json_pack("[{s:s}]", "url", info->server_url ? info->server_url : "/"));
    /* no scheme unless a route's policy names one (secure_operation()) */
    json_object_set_new(doc, "security", json_array());
    json_object_set_new(doc, "x-canal-responses", server_responses());

    for (size_t i = 0; i < canal_router_route_count(r); i++) {
        const canal_route_t *route = canal_router_route_at(r, i);
        char mbuf[16];
        const char *method = method_field(canal_route_method(route), mbuf, sizeof(mbuf));
        if (method == NULL || is_docs_route(app, route))
            continue;
        const struct canal_endpoint *ep = canal__endpoint_of(app, route);
        int ws = canal__ws_route(app, route);
        if (ws && strcmp(method, "get") != 0)
            continue;
        size_t nsegs = canal_route_segment_count(route);
        for (size_t k = nsegs + 1; k-- > canal_route_required_segments(route);) {
            char path[2048];
            format_path(route, k, path, sizeof(path));
            json_t *item = json_object_get(paths, path);
            if (item != NULL && json_object_get(item, method) != NULL)
                continue; /* an earlier route describes this path and method */
            json_t *op = json_object(), *params = json_array();
            for (size_t s = 0; s < k; s++) {
                canal_segment_info_t seg;
                canal_route_segment(route, s, &seg);
                for (size_t j = 0; j < seg.nparams; j++)
                    json_array_append_new(params, path_param(route, seg.param + j));
            }
            if (json_array_size(params) > 0)
                json_object_set_new(op, "parameters", params);
            else
                json_decref(params);
            if (canal_route_name(route) != NULL)
                json_object_set_new(op, "operationId", json_string(canal_route_name(route)));
            const canal_route_doc_t *about = ep != NULL ? canal__endpoint_option(ep, &canal_doc_option) : NULL;
            const struct canal__model *args = ep != NULL ? canal__endpoint_option(ep, &canal_args_option) : NULL;
            if (about != NULL && about->summary != NULL)
                json_object_set_new(op, "summary", json_string(about->summary));
            else {
                char summary[2100];
                snprintf(summary, sizeof(summary), "%s %s", canal_route_method(route), path);
                json_object_set_new(op, "summary", json_string(summary));
            }
            if (about != NULL && about->description != NULL)
                json_object_set_new(op, "description", json_string(about->description));
            json_object_set_new(op, "x-canal-template", json_string(canal_route_template(route)));
            json_t *responses = json_pack("{s:{s:s}}", "default", "description",
                                          "The handler's answer.");
            if (args != NULL)
                args_operation(op, responses, args);
            if (about != NULL && about->responses[0].status != 0)
                documented_responses(responses, about->responses, strcmp(method, "head") == 0);
            if (canal_route_param_count(route) > 0)
                json_object_set_new(responses, "404",
                                    json_pack("{s:s}", "$ref", "#/components/responses/NotFound"));
            /* a malformed target reaches no handler, whatever the route declares */
            if (json_object_get(responses, "400") == NULL)
                json_object_set_new(responses, "400",
                                    json_pack("{s:s}", "$ref", "#/components/responses/MalformedRequest"));
            if (ws)
                ws_operation(op, responses);
            const canal_policy_t *pol = canal_app_route_policy(app, route);
            if (pol != NULL)
                secure_operation(op, responses, components, pol);
            json_object_set_new(op, "responses", responses);
            int rc = fn ? fn(op, route, path, data) : 0;
            if (rc < 0) {
                json_decref(op);
                goto fail;
            }
            if (rc == 1) {
                json_decref(op);
                continue;
            }
            set_operation_id(op, ids, method, path);
            if (item == NULL)
                json_object_set_new(paths, path, item = json_object());
            json_object_set_new(item, method, op);
        }
    }
    json_object_set_new(doc, "paths", paths);
    struct canal__model *const *models;
    for (size_t i = 0, n = canal__models_all(app, &models); i < n; i++)
        if (is_shape(models[i]))
            json_object_set_new(json_object_get(components, "schemas"), models[i]->schema->name,
                                model_schema(models[i]));
    json_object_set_new(doc, "components", components);
    json_decref(ids);
    return doc;
fail:
    json_decref(doc);
    json_decref(paths);
    json_decref(ids);
    json_decref(components);
    return NULL;
}

/* ---- serving bytes kept for the app's lifetime ---- */

struct blob {
    char *body;
    size_t len;
    const char *type;
    const char *csp; /* Content-Security-Policy, or NULL */
    int status;
};

static void blob_dispose(void *p)
{
    struct blob *b = p;
    if (b != NULL)
        free(b->body);
    free(b);
}

static int serve_openapi(canal_req_t *req, void *data)
{
    const struct blob *b = data;
    return canal_res_body_static(req, b->status, b->type, b->body, b->len);
}

static int serve_docs(canal_req_t *req, void *data)
{
    const struct blob *b = data;
    if (b->csp != NULL)
        canal_res_header(req, "content-security-policy", b->csp);
    if (b->status == 200)
        canal_res_header(req, "cache-control", "no-cache");
    return canal_res_body_static(req, b->status, b->type, b->body, b->len);
}

/* The feature's state (core/feature.h): the routes that serve the document or its docs page,
 * by number, left out of the document; the routes' CANAL_DOC() copies */
struct docs_routes {
    size_t *routes;
    size_t n;
    struct kept_doc {
        struct kept_doc *next;
        canal_route_doc_t doc;
    } *docs;
};

static void docs_free(canal_app_t *app, void *st)
{
    struct docs_routes *d = st;
    free(d->routes);
    for (struct kept_doc *k = d->docs, *next; k != NULL; k = next) {
        next = k->next;
        free(k);
    }
}

static const struct canal__feature feature = {
    .name = "OpenAPI",
    .size = sizeof(struct docs_routes),
    .dispose = docs_free,
};

/* CANAL_DOC(): the answers checked and their schemas registered; the route keeps a copy */
static int doc_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err)
{
    const canal_route_doc_t *in = value;
    if (in == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "CANAL_DOC: no documentation");
    for (size_t i = 0; i < CANAL_MAX_RESPONSES && in->responses[i].status != 0; i++) {
        const canal_response_def_t *d = &in->responses[i];
        const struct canal__model *m;
        if (d->status < 100 || d->status > 599)
            return canal_error_set(err, CANAL_EINVAL, 0, "a documented answer has status %d", d->status);
        if (d->schema != NULL && canal__model_register(app, d->schema, &m, err) != 0)
            return err->code;
        for (const canal_header_def_t *h = d->headers; h != NULL && h->name != NULL; h++) {
            size_t k = 0;
            while (canal__is_tchar((unsigned char)h->name[k]))
                k++;
            if (k == 0 || h->name[k] != '\0')
                return canal_error_set(err, CANAL_EINVAL, 0, "answer %d documents a header named '%s', not a token",
                                       d->status, h->name);
        }
    }
    struct docs_routes *st = canal__feature_state(app, &feature);
    struct kept_doc *k = malloc(sizeof(*k));
    if (k == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    *k = (struct kept_doc){.next = st->docs, .doc = *in};
    st->docs = k;
    *kept = &k->doc;
    return 0;
}
const canal_option_kind_t canal_doc_option = {&feature, "doc", doc_attach, NULL};

static int is_docs_route(canal_app_t *app, const canal_route_t *route)
{
    const struct docs_routes *d = canal__feature_state(app, &feature);
    for (size_t i = 0; d != NULL && i < d->n; i++)
        if (d->routes[i] == canal_route_index(route))
            return 1;
    return 0;
}

/* Registers GET tmpl answering with b (which the route then owns). */
static int add_blob(canal_app_t *app, const char *tmpl, canal_handler_fn fn, struct blob *b,
                    canal_error_info_t *err)
{
    canal_endpoint_spec_t spec = {.tmpl = tmpl, .handler = fn, .data = b, .dispose = blob_dispose};
    const canal_route_t *route;
    struct docs_routes *d = canal__feature_on(app, &feature);
    size_t *grown = d != NULL ? realloc(d->routes, (d->n + 1) * sizeof(*grown)) : NULL;
    if (grown == NULL) {
        blob_dispose(b);
        return canal__reg_fail(app, err, CANAL_ENOMEM, "%s: out of memory", tmpl);
    }
    d->routes = grown;
    int rc = canal_app_route(app, &spec, &route, err);
    if (rc != 0)
        blob_dispose(b);
    else
        d->routes[d->n++] = canal_route_index(route);
    return rc;
}

int canal_app_openapi(canal_app_t *app, const char *path, json_t *doc, canal_error_info_t *err)
{
    char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
    json_decref(doc);
    struct blob *b = text ? calloc(1, sizeof(*b)) : NULL;
    if (b == NULL) {
        free(text);
        return canal__reg_fail(app, err, CANAL_EINVAL, "no OpenAPI document to serve");
    }
    *b = (struct blob){text, strlen(text), "application/json", NULL, 200};
    return add_blob(app, path, serve_openapi, b, err);
}

/* ---- the docs page ---- */

static char *read_file(const char *dir, const char *name, size_t *len, canal_error_info_t *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
            if (fread(buf, 1, (size_t)n, f) == (size_t)n) {
                *len = (size_t)n;
            } else {
                free(buf);
                buf = NULL;
            }
        }
    }
    if (buf == NULL && err != NULL) {
        err->code = CANAL_ENOTFOUND;
        err->position = 0;
        snprintf(err->message, sizeof(err->message), "Swagger UI: cannot read %.100s: %s", path,
                 strerror(errno ? errno : EIO));
    }
    if (f != NULL)
        fclose(f);
    return buf;
}

/* URL characters only: they go into a JavaScript string and an HTML attribute unescaped. */
static int url_ok(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s >= 0x7f || strchr("\"'<>\\`", *s) != NULL)
            return 0;
    return 1;
}

static const char missing_page[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>API docs unavailable</title>"
    "</head>\n<body>\n<h1>503: the API page's files are not installed</h1>\n"
    "<p>This page renders the OpenAPI document with Swagger UI, from npm's "
    "<code>swagger-ui-dist</code>, which was not found in <code>%s</code>.</p>\n"
    "<p>To get it: <code>make npm</code> in canal's source tree (needs <code>npm</code>), or "
    "<code>npm install swagger-ui-dist</code> and point the app at "
    "<code>node_modules/swagger-ui-dist</code>.</p>\n"
    "<p>The document itself is at <a href=\"%s\">%s</a>.</p>\n</body></html>\n";

static const char page[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>API documentation</title>\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<link rel=\"icon\" href=\"data:,\">\n"
    "<link rel=\"stylesheet\" href=\"%s/swagger-ui.css\">\n"
    "</head>\n<body>\n<div id=\"swagger-ui\"></div>\n"
    "<script src=\"%s/swagger-ui-bundle.js\"></script>\n"
    "<script src=\"%s/canal-docs.js\"></script>\n</body></html>\n";

/* The page starts Swagger UI from a script file of its own, not an inline one, so the page's
 * Content-Security-Policy can forbid inline scripts. */
static const char init_js[] =
    "window.addEventListener('load', function () {\n"
    "  window.ui = SwaggerUIBundle({url: '%s', dom_id: '#swagger-ui', deepLinking: true});\n"
    "});\n";

static struct blob *blob_printf(int status, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static struct blob *blob_printf(int status, const char *type, const char *fmt, ...)
{
    struct blob *b = calloc(1, sizeof(*b));
    va_list ap;
    va_start(ap, fmt);
    int n = b ? vasprintf(&b->body, fmt, ap) : -1;
    va_end(ap);
    if (n < 0) {
        free(b);
        return NULL;
    }
    b->len = (size_t)n;
    b->type = type;
    b->status = status;
    return b;
}

int canal_app_docs(canal_app_t *app, const char *path, const char *openapi_url,
                   const char *assets_dir, canal_error_info_t *err)
{
    if (!url_ok(openapi_url) || !url_ok(path))
        return canal__reg_fail(app, err, CANAL_EINVAL, "the docs path and the document's URL must be plain URL characters");
    /* The page links its files by absolute path, so "/docs/" works as "/docs" does. */
    char base[512], tmpl[600];
    snprintf(base, sizeof(base), "%s%s", path[0] == '/' ? "" : "/", path);
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/')
        base[--bl] = '\0';

    static const struct {
        const char *name, *type;
    } assets[] = {{"swagger-ui-bundle.js", "text/javascript; charset=utf-8"},
                  {"swagger-ui.css", "text/css; charset=utf-8"}};
    struct blob *files[2] = {NULL, NULL};
    canal_error_info_t missing = {0};
    int found = 1;
    for (size_t i = 0; i < 2; i++) {
        files[i] = calloc(1, sizeof(*files[i]));
        if (files[i] == NULL ||
            (files[i]->body = read_file(assets_dir ? assets_dir : ".", assets[i].name,
                                        &files[i]->len, &missing)) == NULL) {
            found = 0;
            break;
        }
        files[i]->type = assets[i].type;
        files[i]->status = 200;
    }
    if (!found) {
        blob_dispose(files[0]);
        blob_dispose(files[1]);
        struct blob *b = blob_printf(503, "text/html; charset=utf-8", missing_page,
                                     assets_dir ? assets_dir : "(no directory given)", openapi_url,
                                     openapi_url);
        if (b == NULL)
            return canal__reg_fail(app, err, CANAL_ENOMEM, "the docs page: out of memory");
        b->csp = "default-src 'none'";
        int rc = add_blob(app, base, serve_docs, b, err);
        if (rc != 0)
            return rc;
        if (err != NULL)
            *err = missing;
        return CANAL_ENOTFOUND;
    }
    struct blob *html = blob_printf(200, "text/html; charset=utf-8", page, base, base, base);
    struct blob *js = blob_printf(200, "text/javascript; charset=utf-8", init_js, openapi_url);
    if (html == NULL || js == NULL) {
        blob_dispose(html);
        blob_dispose(js);
        blob_dispose(files[0]);
        blob_dispose(files[1]);
        return canal__reg_fail(app, err, CANAL_ENOMEM, "the docs page: out of memory");
    }
    /* Swagger UI sets inline styles; scripts come from this app only. */
    html->csp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                "script-src 'self'; object-src 'none'; base-uri 'none'";
    int rc = add_blob(app, base, serve_docs, html, err);
    snprintf(tmpl, sizeof(tmpl), "%s/canal-docs.js", base);
    if (rc == 0)
        rc = add_blob(app, tmpl, serve_docs, js, err);
    else
        blob_dispose(js);
    for (size_t i = 0; i < 2; i++) {
        snprintf(tmpl, sizeof(tmpl), "%s/%s", base, assets[i].name);
        if (rc == 0)
            rc = add_blob(app, tmpl, serve_docs, files[i], err);
        else
            blob_dispose(files[i]);
    }
    return rc;
}
