/* SPDX-License-Identifier: MIT */
/*
 * Per request: before-filters, binding and validation, the action; then, when the server
 * commits the answer (at once, or when a deferred answer completes), the after-filters.
 *
 * The context lives in request memory; bound values are a small array beside it. The answer
 * is the request's own (canal/response.h): the action sets it, and the after-filters, which
 * run from the request's commit hook (canal_res_on_commit()), see it and may change it.
 * Binding errors are collected for every parameter and answered together as a 400 validation
 * problem, in the shape of ASP.NET Core's ValidationProblemDetails, before any action code
 * runs.
 */
#include <stdio.h>
#include <string.h>
#include "controller_internal.h"

struct canal_ctx {
    canal_req_t *req;
    const canal_action_t *action;
    int bound;
    size_t ran; /* filters whose before ran (or that have none): their after runs */
    int unsupported_body; /* a body that is not JSON where JSON members are declared: 415 */
    struct {
        int has;
        union canal_val v;
    } values[];
};

int canal__parse_value(canal_type_t type, canal_str_t text, union canal_val *out)
{
    switch (type) {
    case CANAL_TYPE_STRING:
        /* strings are text: a value that is not well-formed UTF-8 (an overlong '/', a
         * surrogate, a cut sequence) never reaches an action (docs/security.md) */
        if (!canal_utf8_valid(text))
            return CANAL_ETYPE;
        out->s = text;
        return 0;
    case CANAL_TYPE_INT32:
        return canal_parse_int32(text, &out->i32);
    case CANAL_TYPE_INT64:
        return canal_parse_int64(text, &out->i64);
    case CANAL_TYPE_DOUBLE:
        return canal_parse_double(text, &out->d);
    case CANAL_TYPE_BOOL:
        return canal_parse_bool(text, &out->b);
    case CANAL_TYPE_JSON:
        break;
    }
    return CANAL_ETYPE;
}

/* ---- validation errors ---- */

static void add_error(canal_ctx_t *ctx, json_t **errors, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_error(canal_ctx_t *ctx, json_t **errors, const char *name, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (*errors == NULL)
        *errors = json_object();
    json_t *list = json_object_get(*errors, name);
    if (list == NULL)
        json_object_set_new(*errors, name, list = json_array());
    json_t *s = json_string(msg);
    /* a value that is not UTF-8 cannot be quoted back in JSON */
    json_array_append_new(list, s ? s : json_string("The value is not valid."));
}

static int same(canal_type_t t, const union canal_val *a, const union canal_val *b)
{
    switch (t) {
    case CANAL_TYPE_STRING:
        return a->s.len == b->s.len && memcmp(a->s.base, b->s.base, a->s.len) == 0;
    case CANAL_TYPE_INT32:
        return a->i32 == b->i32;
    case CANAL_TYPE_INT64:
        return a->i64 == b->i64;
    case CANAL_TYPE_DOUBLE:
        return a->d == b->d;
    default:
        return 0;
    }
}

/* Checks a parsed value against the declaration's bounds, lengths, pattern, allowed list. */
static void validate(canal_ctx_t *ctx, const struct canal_pdecl *p, const union canal_val *v, json_t **errors)
{
    const canal_param_def_t *d = &p->def;
    const char *name = d->name;
    if (p->has_min || p->has_max) {
        int low, high;
        if (d->type == CANAL_TYPE_DOUBLE) {
            low = p->has_min && v->d < p->dmin;
            high = p->has_max && v->d > p->dmax;
        } else {
            int64_t x = d->type == CANAL_TYPE_INT32 ? v->i32 : v->i64;
            low = p->has_min && x < p->imin;
            high = p->has_max && x > p->imax;
        }
        if (low || high) {
            if (p->has_min && p->has_max)
                add_error(ctx, errors, name, "The field %s must be between %s and %s.", name, d->min, d->max);
            else if (p->has_min)
                add_error(ctx, errors, name, "The field %s must be at least %s.", name, d->min);
            else
                add_error(ctx, errors, name, "The field %s must be at most %s.", name, d->max);
        }
    }
    if (d->type == CANAL_TYPE_STRING) {
        int64_t n = (int64_t)canal_str_chars(v->s);
        if ((int64_t)d->min_length > n || (d->max_length && n > (int64_t)d->max_length)) {
            if (d->min_length && d->max_length)
                add_error(ctx, errors, name,
                          "The field %s must be a string with a minimum length of %zu and a maximum length of %zu.",
                          name, d->min_length, d->max_length);
            else if (d->min_length)
                add_error(ctx, errors, name, "The field %s must be a string with a minimum length of %zu.", name,
                          d->min_length);
            else
                add_error(ctx, errors, name, "The field %s must be a string with a maximum length of %zu.", name,
                          d->max_length);
        }
        if (p->re != NULL) {
            regmatch_t pm[1] = {{0, (regoff_t)v->s.len}};
            if (memchr(v->s.base, '\0', v->s.len) != NULL ||
                regexec(p->re, v->s.base ? v->s.base : "", 1, pm, REG_STARTEND) != 0)
                add_error(ctx, errors, name, "The field %s must match the regular expression '%s'.", name,
                          d->pattern);
        }
    }
    if (p->nallowed > 0) {
        size_t i;
        for (i = 0; i < p->nallowed; i++)
            if (same(d->type, &p->allowed[i], v))
                break;
        if (i == p->nallowed) {
            char list[256];
            size_t o = 0;
            for (size_t k = 0; d->allowed[k] != NULL && o < sizeof(list); k++)
                o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", k ? ", " : "", d->allowed[k]);
            add_error(ctx, errors, name, "The field %s must be one of: %s.", name, list);
        }
    }
}

/* Reads a JSON body member as the declared type. Returns 0, 1 (absent: null), or -1 (wrong). */
static int from_json(const struct canal_pdecl *p, json_t *j, union canal_val *v)
{
    if (j == NULL || json_is_null(j))
        return 1;
    switch (p->def.type) {
    case CANAL_TYPE_STRING:
        if (!json_is_string(j))
            return -1;
        v->s = (canal_str_t){json_string_value(j), json_string_length(j)};
        return 0;
    case CANAL_TYPE_INT32:
        if (!json_is_integer(j) || json_integer_value(j) < INT32_MIN || json_integer_value(j) > INT32_MAX)
            return -1;
        v->i32 = (int32_t)json_integer_value(j);
        return 0;
    case CANAL_TYPE_INT64:
        if (!json_is_integer(j))
            return -1;
        v->i64 = json_integer_value(j);
        return 0;
    case CANAL_TYPE_DOUBLE:
        if (!json_is_number(j))
            return -1;
        v->d = json_number_value(j);
        return 0;
    case CANAL_TYPE_BOOL:
        if (!json_is_boolean(j))
            return -1;
        v->b = json_is_true(j);
        return 0;
    case CANAL_TYPE_JSON:
        v->j = j;
        return 0;
    }
    return -1;
}

static const char *json_type_name(canal_type_t t)
{
    static const char *const names[] = {"a string", "a 32-bit integer", "an integer", "a number", "true or false",
                                        "JSON"};
    return names[t];
}

/* Binds every declared parameter; on failure returns the errors object (new reference). */
static json_t *bind(canal_ctx_t *ctx)
{
    const canal_action_t *a = ctx->action;
    canal_req_t *req = ctx->req;
    json_t *errors = NULL, *body = NULL;
    int body_state = 0; /* 0 not read, 1 an object or value, -1 absent, -2 reported bad */

    for (int i = 0; i < a->nparams; i++) {
        const struct canal_pdecl *p = &a->params[i];
        const char *name = p->def.name;
        union canal_val v;
        canal_str_t text = {NULL, 0};
        int absent = 0;

        switch (p->def.source) {
        case CANAL_FROM_ROUTE:
            text = canal_req_param(req, name);
            absent = text.base == NULL;
            break;
        case CANAL_FROM_QUERY: {
            size_t n = canal_req_query(req, name, &text);
            if (n > 1) {
                add_error(ctx, &errors, name, "The %s field must be given once.", name);
                continue;
            }
            absent = n == 0;
            break;
        }
        case CANAL_FROM_HEADER:
            text = canal_req_header(req, name);
            absent = text.base == NULL;
            break;
        case CANAL_FROM_BODY:
        case CANAL_FROM_BODY_WHOLE: {
            if (body_state == 0) {
                json_error_t jerr;
                if (canal_req_body(req).len == 0) {
                    body_state = -1;
                } else if ((body = canal_req_json(req, &jerr)) == NULL) {
                    body_state = -2;
                    if (json_error_code(&jerr) == json_error_wrong_type)
                        ctx->unsupported_body = 1; /* a 415, not a validation error */
                    else if (json_error_code(&jerr) == json_error_stack_overflow)
                        add_error(ctx, &errors, "$body", "The JSON body is too deep: %s.", jerr.text);
                    else if (json_error_code(&jerr) == json_error_null_character)
                        /* jansson's text names its flag (JSON_ALLOW_NUL): say what is wrong */
                        add_error(ctx, &errors, "$body", "The JSON body has a string with \\u0000 (NUL) in it "
                                  "(line %d, column %d).", jerr.line, jerr.column);
                    else
                        add_error(ctx, &errors, "$body", "The JSON body is malformed: %s (line %d, column %d).",
                                  jerr.text, jerr.line, jerr.column);
                } else {
                    body_state = 1;
                }
            }
            if (body_state == -2)
                continue;
            if (body_state == -1) {
                absent = 1;
                break;
            }
            json_t *j = body;
            if (p->def.source == CANAL_FROM_BODY) {
                if (!json_is_object(body)) {
                    add_error(ctx, &errors, "$body", "The JSON body must be an object.");
                    body_state = -2;
                    continue;
                }
                j = json_object_get(body, name);
            }
            int rc = from_json(p, j, &v);
            if (rc < 0) {
                add_error(ctx, &errors, name, "The value for %s must be %s.", name, json_type_name(p->def.type));
                continue;
            }
            if (rc == 1) {
                absent = 1;
                break;
            }
            ctx->values[i].has = 1;
            ctx->values[i].v = v;
            validate(ctx, p, &v, &errors);
            continue;
        }
        }
        if (absent) {
            if (p->has_def) {
                ctx->values[i].has = 1;
                ctx->values[i].v = p->defv;
            } else if (p->def.required) {
                add_error(ctx, &errors, name, "The %s field is required.", name);
            }
            continue;
        }
        if (canal__parse_value(p->def.type, text, &v) != 0) {
            if (p->def.type == CANAL_TYPE_STRING)
                add_error(ctx, &errors, name, "The field %s must be valid UTF-8.", name);
            else
                add_error(ctx, &errors, name, "The value '%.*s' is not valid for %s.",
                          (int)(text.len > 64 ? 64 : text.len), text.base, name);
            continue;
        }
        ctx->values[i].has = 1;
        ctx->values[i].v = v;
        validate(ctx, p, &v, &errors);
    }
    return errors;
}

/* ---- the dispatcher ---- */

/* The commit hook of an action's request: the after-filters, in reverse order, of the filters
 * whose before ran; on a failure, notes for the development error page instead. */
static void after_filters(canal_req_t *req, void *data)
{
    canal_ctx_t *ctx = data;
    while (ctx->ran > 0 && canal_req_failure(req) == NULL) {
        const canal_filter_t *f = &ctx->action->chain[--ctx->ran];
        if (f->after != NULL && f->after(ctx, f->data) < 0 && canal_req_failure(req) == NULL)
            canal_req_fail(req, "an after-filter failed");
    }
    if (canal_req_failure(req) != NULL) {
        canal_req_note(req, "action", ctx->action->def.name);
        canal_req_note(req, "controller", ctx->action->ctrl->name);
    }
}

int canal__mvc_dispatch(canal_req_t *req, void *data)
{
    const canal_action_t *a = data;
    canal_ctx_t *ctx = canal_req_alloc(req, sizeof(*ctx) + (size_t)a->nparams * sizeof(ctx->values[0]));
    memset(ctx, 0, sizeof(*ctx) + (size_t)a->nparams * sizeof(ctx->values[0]));
    ctx->req = req;
    ctx->action = a;
    canal_res_on_commit(req, after_filters, ctx);

    for (; ctx->ran < a->nchain; ctx->ran++) {
        const canal_filter_t *f = &a->chain[ctx->ran];
        int rc = f->before != NULL ? f->before(ctx, f->data) : 0;
        if (rc < 0)
            return rc;
        if (rc > 0) {
            ctx->ran++;
            return canal_res_status_code(req) != 0
                       ? 0
                       : canal_req_fail(req, "a before-filter stopped the request without an answer");
        }
    }
    json_t *errors = bind(ctx);
    ctx->bound = 1;
    if (ctx->unsupported_body) {
        json_decref(errors);
        return canal_res_problem(req, 415, "the request body must be application/json");
    }
    if (errors != NULL) {
        json_t *p = json_pack("{s:s, s:s, s:o}", "type", "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                              "title", "One or more validation errors occurred.", "errors", errors);
        return canal_res_problem_new(req, 400, p);
    }
    return a->def.handler(ctx, req);
}

/* ---- accessors ---- */

canal_req_t *canal_ctx_req(const canal_ctx_t *ctx)
{
    return ctx->req;
}

void *canal_ctx_state(const canal_ctx_t *ctx)
{
    return ctx->action->ctrl->state;
}

const canal_action_t *canal_ctx_action(const canal_ctx_t *ctx)
{
    return ctx->action;
}

const canal_controller_t *canal_ctx_controller(const canal_ctx_t *ctx)
{
    return ctx->action->ctrl;
}

int canal_ctx_index(const canal_ctx_t *ctx, const char *name)
{
    for (int i = 0; i < ctx->action->nparams; i++)
        if (strcmp(ctx->action->params[i].def.name, name) == 0)
            return i;
    return -1;
}

/* The value of parameter i if it has one of type t, else NULL. */
static const union canal_val *value(const canal_ctx_t *ctx, int i, canal_type_t t)
{
    if (i < 0 || i >= ctx->action->nparams || !ctx->values[i].has || ctx->action->params[i].def.type != t)
        return NULL;
    return &ctx->values[i].v;
}

int canal_ctx_has(const canal_ctx_t *ctx, int i)
{
    return i >= 0 && i < ctx->action->nparams && ctx->values[i].has;
}

int32_t canal_ctx_int32(const canal_ctx_t *ctx, int i)
{
    const union canal_val *v = value(ctx, i, CANAL_TYPE_INT32);
    return v ? v->i32 : 0;
}

int64_t canal_ctx_int64(const canal_ctx_t *ctx, int i)
{
    const union canal_val *v = value(ctx, i, CANAL_TYPE_INT64);
    return v ? v->i64 : 0;
}

double canal_ctx_double(const canal_ctx_t *ctx, int i)
{
    const union canal_val *v = value(ctx, i, CANAL_TYPE_DOUBLE);
    return v ? v->d : 0.0;
}

int canal_ctx_bool(const canal_ctx_t *ctx, int i)
{
    const union canal_val *v = value(ctx, i, CANAL_TYPE_BOOL);
    return v ? v->b : 0;
}

canal_str_t canal_ctx_str(const canal_ctx_t *ctx, int i)
{
    const union canal_val *v = value(ctx, i, CANAL_TYPE_STRING);
    return v ? v->s : (canal_str_t){"", 0};
}

json_t *canal_ctx_json(const canal_ctx_t *ctx, int i)
{
    const union canal_val *v = value(ctx, i, CANAL_TYPE_JSON);
    return v ? v->j : NULL;
}

int canal_ctx_created(canal_ctx_t *ctx, const char *controller, const char *action, const canal_kv_t *values,
                      size_t nvalues, json_t *body)
{
    const canal_mvc_t *mvc = ctx->action->ctrl->mvc;
    const char *c = controller ? controller : ctx->action->ctrl->name;
    char small[256], *url = small;
    int n = canal_mvc_link(mvc, c, action, values, nvalues, small, sizeof(small));
    if (n >= (int)sizeof(small)) {
        url = canal_req_alloc(ctx->req, (size_t)n + 1);
        canal_mvc_link(mvc, c, action, values, nvalues, url, (size_t)n + 1);
    }
    int rc = n < 0 ? n : canal_res_header(ctx->req, "location", url);
    if (rc == 0)
        rc = body != NULL ? canal_res_json(ctx->req, 201, body) : canal_res_body_static(ctx->req, 201, NULL, NULL, 0);
    json_decref(body);
    return rc;
}
