/* SPDX-License-Identifier: MIT */
/*
 * Per request: before-filters, binding and validation, the action, after-filters, the result.
 *
 * The context lives in request memory; bound values are a small array beside it. A result is
 * only recorded (status, content type, body already in request memory) until the after-filters
 * have run; headers go straight to the response. Binding errors are collected for every
 * parameter and answered together as a 400 validation problem, in the shape of ASP.NET Core's
 * ValidationProblemDetails, before any action code runs.
 */
#include <stdio.h>
#include <string.h>
#include "controller_internal.h"

struct canal_ctx {
    canal_req_t *req;
    const canal_action_t *action;
    int bound;
    int fail_recorded; /* canal_ctx_fail() was called: its reason is the one to report */
    /* the result */
    int status;
    const char *ctype;
    const char *body;
    size_t len;
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
                    if (canal_req_header(req, "content-type").base == NULL || strstr(jerr.text, "content type"))
                        add_error(ctx, &errors, "$body", "The request body must be application/json.");
                    else if (json_error_code(&jerr) == json_error_stack_overflow)
                        add_error(ctx, &errors, "$body", "The JSON body is too deep: %s.", jerr.text);
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

static int send_result(canal_ctx_t *ctx)
{
    return canal_res_send_static(ctx->req, ctx->status, ctx->ctype, ctx->body, ctx->len);
}

/* A problem names the request when request IDs are on, as canal_res_problem() does. */
static void add_request_id(canal_ctx_t *ctx, json_t *problem)
{
    canal_str_t id = canal_req_id(ctx->req);
    json_t *s;
    if (id.base != NULL && problem != NULL && (s = json_stringn(id.base, id.len)) != NULL)
        json_object_set_new(problem, "requestId", s);
}

static int set_json(canal_ctx_t *ctx, int status, const char *ctype, const json_t *body)
{
    size_t n;
    char *buf = canal_req_json_dump(ctx->req, body, &n);
    if (buf == NULL)
        return CANAL_EINVAL;
    ctx->status = status;
    ctx->ctype = ctype;
    ctx->body = buf;
    ctx->len = n;
    return 0;
}

static int failed(canal_ctx_t *ctx)
{
    canal_req_note(ctx->req, "action", ctx->action->def.name);
    canal_req_note(ctx->req, "controller", ctx->action->ctrl->name);
    return -1;
}

int canal__mvc_dispatch(canal_req_t *req, void *data)
{
    const canal_action_t *a = data;
    canal_ctx_t *ctx = canal_req_alloc(req, sizeof(*ctx) + (size_t)a->nparams * sizeof(ctx->values[0]));
    memset(ctx, 0, sizeof(*ctx) + (size_t)a->nparams * sizeof(ctx->values[0]));
    ctx->req = req;
    ctx->action = a;

    size_t ran = 0; /* filters whose before ran (or that have none): their after runs */
    int rc = 0, stop = 0;
    for (; ran < a->nchain && !stop; ran++) {
        const canal_filter_t *f = &a->chain[ran];
        if (f->before == NULL)
            continue;
        rc = f->before(ctx, f->data);
        if (rc < 0)
            return failed(ctx);
        if (rc > 0) {
            if (ctx->status == 0)
                return canal_ctx_fail(ctx, "a before-filter stopped the request without a result"), failed(ctx);
            stop = 1;
        }
    }
    if (!stop) {
        json_t *errors = bind(ctx);
        ctx->bound = 1;
        if (errors != NULL) {
            json_t *p = json_pack("{s:s, s:s, s:i, s:o}", "type", "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                                  "title", "One or more validation errors occurred.", "status", 400, "errors", errors);
            add_request_id(ctx, p);
            set_json(ctx, 400, "application/problem+json", p);
            json_decref(p);
        } else {
            int hrc = a->def.handler(ctx);
            if (hrc == CANAL_PENDING)
                return CANAL_PENDING; /* it answers later, with canal_res_*: no after-filters */
            if (hrc < 0)
                return failed(ctx);
            if (ctx->status == 0) {
                /* an action may ignore a failed result (canal_result_jw()) and return 0 */
                if (!ctx->fail_recorded)
                    canal_ctx_fail(ctx, "the action set no result");
                return failed(ctx);
            }
        }
    }
    while (ran-- > 0) {
        const canal_filter_t *f = &a->chain[ran];
        if (f->after != NULL && f->after(ctx, f->data) < 0)
            return failed(ctx);
    }
    return send_result(ctx);
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

int canal_ctx_fail(canal_ctx_t *ctx, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ctx->fail_recorded = 1;
    return canal_req_fail(ctx->req, "%s", msg);
}

/* ---- results ---- */

int canal_result_static(canal_ctx_t *ctx, int status, const char *content_type, const char *static_body, size_t len)
{
    ctx->status = status;
    ctx->ctype = content_type;
    ctx->body = static_body;
    ctx->len = len;
    return 0;
}

int canal_result_text(canal_ctx_t *ctx, int status, const char *text)
{
    size_t n = strlen(text);
    char *copy = canal_req_alloc(ctx->req, n);
    memcpy(copy, text, n);
    return canal_result_static(ctx, status, "text/plain; charset=utf-8", copy, n);
}

int canal_result_json(canal_ctx_t *ctx, int status, const json_t *body)
{
    return set_json(ctx, status, "application/json", body);
}

int canal_result_json_new(canal_ctx_t *ctx, int status, json_t *body)
{
    int rc = set_json(ctx, status, "application/json", body);
    json_decref(body);
    return rc;
}

canal_jw_t *canal_ctx_jw(canal_ctx_t *ctx)
{
    return canal_res_jw(ctx->req);
}

int canal_result_jw(canal_ctx_t *ctx, int status, canal_jw_t *w)
{
    const char *body;
    size_t len;
    int rc = canal_jw_finish(w, &body, &len);
    if (rc != 0) {
        canal_ctx_fail(ctx, "JSON writer: %s", canal_jw_error_text(w));
        return rc;
    }
    return canal_result_static(ctx, status, "application/json", body, len);
}

int canal_result_status(canal_ctx_t *ctx, int status)
{
    return canal_result_static(ctx, status, NULL, NULL, 0);
}

int canal_result_problem(canal_ctx_t *ctx, int status, const char *detail)
{
    json_t *p = canal_problem(status, detail);
    add_request_id(ctx, p);
    int rc = set_json(ctx, status, "application/problem+json", p);
    json_decref(p);
    return rc;
}

int canal_result_not_found(canal_ctx_t *ctx, const char *detail)
{
    return canal_result_problem(ctx, 404, detail);
}

int canal_result_redirect(canal_ctx_t *ctx, int status, const char *location)
{
    if (status != 301 && status != 302 && status != 303 && status != 307 && status != 308)
        return CANAL_EINVAL;
    int rc = canal_res_header(ctx->req, "location", location);
    return rc != 0 ? rc : canal_result_status(ctx, status);
}

int canal_result_created(canal_ctx_t *ctx, const char *controller, const char *action, const canal_kv_t *values,
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
        rc = body != NULL ? set_json(ctx, 201, "application/json", body) : canal_result_status(ctx, 201);
    json_decref(body);
    return rc;
}

int canal_result_header(canal_ctx_t *ctx, const char *name, const char *value)
{
    return canal_res_header(ctx->req, name, value);
}

int canal_result_status_code(const canal_ctx_t *ctx)
{
    return ctx->status;
}
