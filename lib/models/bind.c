/* SPDX-License-Identifier: MIT */
/*
 * Typed models (canal/schema.h), part two: binding a request into a struct, and the 400
 * validation problem.
 *
 * canal_req_bind() walks the registered model of a schema: each field's value is read from
 * its source (a route value, the query, a header, a cookie: text, parsed strictly; or a JSON
 * body member, checked for its JSON type, nested objects and arrays walked with a JSON
 * pointer of where they are), checked against the field's rules (bounds, lengths, pattern,
 * allowed values, format), and stored at its offset. Every failure is collected on the
 * request (canal_req_invalid(), which handler code may use too) and answered together.
 * The same value checks serve registration: a default or an example that breaks its field's
 * rules is refused there (canal__model_field_values()).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/models.h"
#include "router/regex_internal.h"

/* ---- the 400 validation problem ---- */

/* A request's own: its validation errors so far (canal_req_invalid()), released with the
 * request unless they were answered */
static const char invalid_key;
struct invalid {
    json_t *errors;
};

static void invalid_dispose(void *st)
{
    json_decref(((struct invalid *)st)->errors);
}

/* The request's validation errors so far, or NULL */
static json_t *errors_of(const canal_req_t *req)
{
    const struct invalid *v = canal__req_state_find(req, &invalid_key);
    return v != NULL ? v->errors : NULL;
}

/* Forgets the request's validation errors; they are returned (a new reference), or NULL */
static json_t *take_errors(canal_req_t *req)
{
    struct invalid *v = canal__req_state_find(req, &invalid_key);
    json_t *errors = v != NULL ? v->errors : NULL;
    if (v != NULL)
        v->errors = NULL;
    return errors;
}

static int add_error(canal_req_t *req, const char *key, const char *msg)
{
    struct invalid *v = canal__req_state(req, &invalid_key, sizeof(*v), invalid_dispose);
    if (v->errors == NULL && (v->errors = json_object()) == NULL)
        return CANAL_ENOMEM;
    json_t *list = json_object_get(v->errors, key);
    if (list == NULL && json_object_set_new(v->errors, key, list = json_array()) != 0)
        return CANAL_ENOMEM;
    json_t *s = json_string(msg);
    /* a message quoting bytes that are not UTF-8 cannot be written in JSON */
    return json_array_append_new(list, s ? s : json_string("The value is not valid.")) == 0 ? 0 : CANAL_ENOMEM;
}

int canal_req_invalid(canal_req_t *req, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return add_error(req, field, msg);
}

int canal_res_invalid(canal_req_t *req)
{
    json_t *errors = take_errors(req);
    if (errors == NULL)
        return CANAL_ESTATE;
    json_t *p = json_pack("{s:s, s:s, s:o}", "type", "https://tools.ietf.org/html/rfc9110#section-15.5.1", "title",
                          "One or more validation errors occurred.", "errors", errors);
    return canal_res_problem_new(req, 400, p);
}

/* ---- values ---- */

/* Where errors go: a request's problem (key: the field's name or JSON pointer), or, at
 * registration, the first message only. */
struct sink {
    canal_req_t *req;
    const char *key;
    char *first;         /* registration: the first message, or "" */
    size_t size;
};

static void report(struct sink *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void vreport(struct sink *k, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (k->req != NULL)
        add_error(k->req, k->key, msg);
    else if (k->first[0] == '\0')
        snprintf(k->first, k->size, "%s", msg);
}

static void report(struct sink *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(k, fmt, ap);
    va_end(ap);
}

/* A value that breaks one of f's rules: f's own message for a request when it has one (at
 * registration, canal's text, for the developer) */
static void broken(struct sink *k, const canal_field_t *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void broken(struct sink *k, const canal_field_t *f, const char *fmt, ...)
{
    if (k->req != NULL && f->message != NULL) {
        add_error(k->req, k->key, f->message);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vreport(k, fmt, ap);
    va_end(ap);
}

/* A bound, as the field's type shows it: integers without a fraction. */
static const char *num(char *buf, size_t size, canal_type_t t, double v)
{
    if (t == CANAL_TYPE_DOUBLE)
        snprintf(buf, size, "%.15g", v);
    else
        snprintf(buf, size, "%lld", (long long)v);
    return buf;
}

static int digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static int two(const char *s)
{
    return (s[0] - '0') * 10 + (s[1] - '0');
}

/* YYYY-MM-DD with a real day of a real month */
static int valid_date(const char *s, size_t n)
{
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (n != 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2))
        return 0;
    int y = atoi(s), m = two(s + 5), d = two(s + 8);
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m >= 1 && m <= 12 && d >= 1 && d <= days[m - 1] && !(m == 2 && d == 29 && !leap);
}

/* RFC 3339 5.6 date-time: full-date "T" HH:MM:SS[.frac] ("Z" / +HH:MM / -HH:MM) */
static int valid_date_time(const char *s, size_t n)
{
    if (n < 20 || !valid_date(s, 10) || (s[10] != 'T' && s[10] != 't'))
        return 0;
    const char *t = s + 11;
    if (!digits(t, 2) || t[2] != ':' || !digits(t + 3, 2) || t[5] != ':' || !digits(t + 6, 2) || two(t) > 23 ||
        two(t + 3) > 59 || two(t + 6) > 60)
        return 0;
    size_t i = 19;
    if (s[i] == '.') {
        size_t k = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == k)
            return 0;
    }
    if (i + 1 == n && (s[i] == 'Z' || s[i] == 'z'))
        return 1;
    return i + 6 == n && (s[i] == '+' || s[i] == '-') && digits(s + i + 1, 2) && s[i + 3] == ':' &&
           digits(s + i + 4, 2) && two(s + i + 1) <= 23 && two(s + i + 4) <= 59;
}

static int hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int valid_uuid(const char *s, size_t n)
{
    if (n != 36)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !hex(s[i]))
            return 0;
    return 1;
}

/* local@domain: a dot-atom local part (RFC 5322 atext) and a host name of labels */
static int valid_email(const char *s, size_t n)
{
    const char *at = memchr(s, '@', n);
    if (at == NULL || at == s || (size_t)(at - s) > 64)
        return 0;
    for (const char *p = s; p < at; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              (*p && strchr("!#$%&'*+/=?^_`{|}~.-", *p) != NULL)) ||
            (*p == '.' && (p == s || p + 1 == at || p[1] == '.')))
            return 0;
    const char *d = at + 1, *end = s + n;
    size_t label = 0, labels = 0;
    if (d == end || end - d > 253)
        return 0;
    for (const char *p = d; p <= end; p++) {
        if (p == end || *p == '.') {
            if (label == 0 || label > 63 || p[-1] == '-')
                return 0;
            labels++, label = 0;
        } else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                   (*p == '-' && label > 0)) {
            label++;
        } else {
            return 0;
        }
    }
    return labels >= 2;
}

static int valid_format(const char *format, canal_str_t s)
{
    if (strcmp(format, "date-time") == 0)
        return valid_date_time(s.base, s.len);
    if (strcmp(format, "date") == 0)
        return valid_date(s.base, s.len);
    if (strcmp(format, "uuid") == 0)
        return valid_uuid(s.base, s.len);
    return valid_email(s.base, s.len);
}

static canal_str_t as_str(canal_type_t t, const union canal__val *v)
{
    return t == CANAL_TYPE_CSTRING ? (canal_str_t){v->cs, strlen(v->cs)} : v->s;
}

/* The index of s in the field's allowed list (an enum's value), or -1. */
static int enum_value(const canal_field_t *f, canal_str_t s)
{
    for (int i = 0; f->allowed[i] != NULL; i++)
        if (strlen(f->allowed[i]) == s.len && memcmp(f->allowed[i], s.base, s.len) == 0)
            return i;
    return -1;
}

static void enum_error(struct sink *k, const canal_field_t *f)
{
    char list[256];
    size_t o = 0;
    for (size_t j = 0; f->allowed[j] != NULL && o < sizeof(list); j++)
        o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", j ? ", " : "", f->allowed[j]);
    broken(k, f, "The field %s must be one of: %s.", f->name, list);
}

/* 1 after reporting an array's element count out of its bounds. */
static int items_out_of_bounds(struct sink *k, const canal_field_t *f, size_t n)
{
    if (n >= f->min_items && (f->max_items == 0 || n <= f->max_items))
        return 0;
    if (f->max_items)
        broken(k, f, "The field %s must have from %zu to %zu items.", f->name, f->min_items, f->max_items);
    else
        broken(k, f, "The field %s must have at least %zu items.", f->name, f->min_items);
    return 1;
}

/* Checks a parsed value of type t (a field's, or its array's items) against the field's rules. */
static void check_value(struct sink *k, const struct canal__mfield *mf, canal_type_t t, const union canal__val *v)
{
    const canal_field_t *f = mf->f;
    const char *name = f->name;
    char a[40], b[40];
    if ((f->has_min || f->has_max) && t != CANAL_TYPE_ENUM) {
        int low, high;
        if (t == CANAL_TYPE_DOUBLE) {
            low = f->has_min && v->d < f->min;
            high = f->has_max && v->d > f->max;
        } else {
            int64_t x = t == CANAL_TYPE_INT32 ? v->i32 : v->i64;
            /* exact for every bound a double holds exactly, as integer bounds are */
            low = f->has_min && (double)x < f->min;
            high = f->has_max && (double)x > f->max;
        }
        if (low || high) {
            if (f->has_min && f->has_max)
                broken(k, f, "The field %s must be between %s and %s.", name, num(a, sizeof(a), t, f->min),
                       num(b, sizeof(b), t, f->max));
            else if (f->has_min)
                broken(k, f, "The field %s must be at least %s.", name, num(a, sizeof(a), t, f->min));
            else
                broken(k, f, "The field %s must be at most %s.", name, num(a, sizeof(a), t, f->max));
        }
    }
    if (t != CANAL_TYPE_STRING && t != CANAL_TYPE_CSTRING)
        return;
    canal_str_t s = as_str(t, v);
    size_t n = canal_str_chars(s);
    if (f->min_length > n || (f->max_length && n > f->max_length)) {
        if (f->min_length && f->max_length)
            broken(k, f, "The field %s must be a string with a minimum length of %zu and a maximum length of %zu.", name,
                   f->min_length, f->max_length);
        else if (f->min_length)
            broken(k, f, "The field %s must be a string with a minimum length of %zu.", name, f->min_length);
        else
            broken(k, f, "The field %s must be a string with a maximum length of %zu.", name, f->max_length);
    }
    if (mf->re != NULL && !canal__regex_test(mf->re, s))
        broken(k, f, "The field %s must match the regular expression '%s'.", name, f->pattern);
    if (f->format != NULL && !valid_format(f->format, s))
        broken(k, f, "The field %s must be a valid %s.", name, f->format);
    if (f->allowed != NULL && enum_value(f, s) < 0)
        enum_error(k, f);
}

/* Parses text as a value of type t into *v; req (NULL at registration) holds a C string's
 * copy. Reports and returns -1 when it is not one. */
static int parse_text(struct sink *k, canal_req_t *req, const canal_field_t *f, canal_type_t t, canal_str_t text,
                      union canal__val *v)
{
    int rc = CANAL_ETYPE, b;
    switch (t) {
    case CANAL_TYPE_STRING:
    case CANAL_TYPE_CSTRING:
        /* strings are text: a value that is not well-formed UTF-8 (an overlong '/', a
         * surrogate, a cut sequence) never reaches a handler (docs/security.md) */
        if (!canal_utf8_valid(text)) {
            report(k, "The field %s must be valid UTF-8.", f->name);
            return -1;
        }
        if (t == CANAL_TYPE_STRING) {
            v->s = text;
            return 0;
        }
        if (memchr(text.base, '\0', text.len) != NULL) {
            report(k, "The field %s must not contain NUL characters.", f->name);
            return -1;
        }
        if (req == NULL) {
            v->cs = text.base; /* a default: the table's own NUL-terminated string */
            return 0;
        }
        char *copy = canal_req_alloc(req, text.len + 1);
        memcpy(copy, text.base, text.len);
        copy[text.len] = '\0';
        v->cs = copy;
        return 0;
    case CANAL_TYPE_INT32:
        rc = canal_parse_int32(text, &v->i32);
        break;
    case CANAL_TYPE_INT64:
        rc = canal_parse_int64(text, &v->i64);
        break;
    case CANAL_TYPE_DOUBLE:
        rc = canal_parse_double(text, &v->d);
        break;
    case CANAL_TYPE_BOOL:
        rc = canal_parse_bool(text, &b);
        v->b = b;
        break;
    case CANAL_TYPE_ENUM:
        if ((v->e = enum_value(f, text)) >= 0)
            return 0;
        enum_error(k, f);
        return -1;
    default:
        break;
    }
    if (rc != 0) {
        report(k, "The value '%.*s' is not valid for %s.", (int)(text.len > 64 ? 64 : text.len), text.base, f->name);
        return -1;
    }
    return 0;
}

static void store(canal_type_t t, char *dst, size_t size, const union canal__val *v)
{
    switch (t) {
    case CANAL_TYPE_STRING:
        memcpy(dst, &v->s, sizeof(v->s));
        break;
    case CANAL_TYPE_CSTRING:
        memcpy(dst, &v->cs, sizeof(v->cs));
        break;
    case CANAL_TYPE_INT32:
        memcpy(dst, &v->i32, sizeof(v->i32));
        break;
    case CANAL_TYPE_INT64:
        memcpy(dst, &v->i64, sizeof(v->i64));
        break;
    case CANAL_TYPE_DOUBLE:
        memcpy(dst, &v->d, sizeof(v->d));
        break;
    case CANAL_TYPE_BOOL:
        if (size == sizeof(int)) {
            int b = v->b;
            memcpy(dst, &b, sizeof(b));
        } else {
            bool b = v->b != 0;
            memcpy(dst, &b, sizeof(b));
        }
        break;
    case CANAL_TYPE_ENUM:
        memcpy(dst, &v->e, sizeof(v->e));
        break;
    default:
        break;
    }
}

int canal__model_field_values(const canal_schema_t *s, const canal_field_t *f, struct canal__mfield *mf,
                              canal_error_info_t *err)
{
    char msg[512] = "";
    struct sink k = {NULL, NULL, msg, sizeof(msg)};
    canal_type_t et = f->type == CANAL_TYPE_ARRAY ? f->items : f->type;
    if (f->def != NULL) {
        if (parse_text(&k, NULL, f, f->type, (canal_str_t){f->def, strlen(f->def)}, &mf->defv) == 0)
            check_value(&k, mf, f->type, &mf->defv);
        if (msg[0] != '\0')
            return canal_error_set(err, CANAL_EINVAL, 0, "schema %s, field %s: default '%s': %s", s->name, f->name,
                                   f->def, msg);
        mf->has_def = 1;
    }
    if (f->example != NULL) {
        json_t *j = json_loads(f->example, JSON_DECODE_ANY, NULL);
        int ok = j != NULL;
        if (ok && f->type == CANAL_TYPE_ARRAY)
            ok = json_is_array(j);
        else if (ok)
            switch (et) {
            case CANAL_TYPE_STRING:
            case CANAL_TYPE_CSTRING:
            case CANAL_TYPE_ENUM:
                ok = json_is_string(j);
                break;
            case CANAL_TYPE_INT32:
            case CANAL_TYPE_INT64:
                ok = json_is_integer(j);
                break;
            case CANAL_TYPE_DOUBLE:
                ok = json_is_number(j);
                break;
            case CANAL_TYPE_BOOL:
                ok = json_is_boolean(j);
                break;
            case CANAL_TYPE_OBJECT:
                ok = json_is_object(j);
                break;
            default:
                break;
            }
        if (ok && json_is_string(j)) {
            union canal__val v;
            if (parse_text(&k, NULL, f, et, (canal_str_t){json_string_value(j), json_string_length(j)}, &v) == 0)
                check_value(&k, mf, et, &v);
            ok = msg[0] == '\0';
        }
        json_decref(j);
        if (!ok)
            return canal_error_set(err, CANAL_EINVAL, 0, "schema %s, field %s: example %s: not a valid value%s%s",
                                   s->name, f->name, f->example, msg[0] ? ": " : "", msg);
    }
    return 0;
}

/* ---- binding ---- */

struct binder {
    canal_req_t *req;
    json_t *body;
    int body_state;        /* 0 not read, 1 parsed, -1 absent (empty), -2 reported bad */
    char ptr[512];         /* the JSON pointer of the body member being bound */
    size_t plen;
    int status;            /* a form body that cannot be read: 413 or 415 (why: the detail) */
    int failed;            /* a validate callback failed: a 500 */
    const char *why;
};

/* Appends "/" and a member name (~ and / escaped, RFC 6901) or an index to the pointer;
 * returns the old length to restore. A pointer too long to hold is cut (the key still says
 * where, roughly). */
static size_t push(struct binder *b, const char *name, size_t index)
{
    size_t old = b->plen, room = sizeof(b->ptr) - 1;
    char tmp[24];
    if (name == NULL) {
        snprintf(tmp, sizeof(tmp), "%zu", index);
        name = tmp;
    }
    if (b->plen < room)
        b->ptr[b->plen++] = '/';
    for (const char *p = name; *p != '\0' && b->plen + 2 <= room; p++) {
        if (*p == '~' || *p == '/') {
            b->ptr[b->plen++] = '~';
            b->ptr[b->plen++] = *p == '~' ? '0' : '1';
        } else {
            b->ptr[b->plen++] = *p;
        }
    }
    b->ptr[b->plen] = '\0';
    return old;
}

static void pop(struct binder *b, size_t old)
{
    b->plen = old;
    b->ptr[old] = '\0';
}

static const char *json_type_name(canal_type_t t)
{
    static const char *const names[] = {"a string", "a string", "a 32-bit integer", "an integer", "a number",
                                        "true or false", "one of its names", "an object", "an array", "JSON", "a file"};
    return names[t];
}

static void bind_object(struct binder *b, const struct canal__model *m, char *obj, json_t *j, int nested);

/* Binds a JSON value (not NULL, not null) of type t into dst; reports under the pointer. */
static void bind_json(struct binder *b, const struct canal__mfield *mf, canal_type_t t, json_t *j, char *dst,
                      size_t size, char *obj)
{
    const canal_field_t *f = mf->f;
    struct sink k = {b->req, b->ptr, NULL, 0};
    union canal__val v;
    int ok = 1;
    switch (t) {
    case CANAL_TYPE_STRING:
    case CANAL_TYPE_CSTRING:
        /* jansson refuses NUL (no JSON_ALLOW_NUL) and invalid UTF-8 */
        if ((ok = json_is_string(j)) != 0) {
            v.s = (canal_str_t){json_string_value(j), json_string_length(j)}; /* v.cs is v.s.base */
        }
        break;
    case CANAL_TYPE_INT32:
        ok = json_is_integer(j) && json_integer_value(j) >= INT32_MIN && json_integer_value(j) <= INT32_MAX;
        v.i32 = ok ? (int32_t)json_integer_value(j) : 0;
        break;
    case CANAL_TYPE_INT64:
        ok = json_is_integer(j);
        v.i64 = json_integer_value(j);
        break;
    case CANAL_TYPE_DOUBLE:
        ok = json_is_number(j);
        v.d = json_number_value(j);
        break;
    case CANAL_TYPE_BOOL:
        ok = json_is_boolean(j);
        v.b = json_is_true(j);
        break;
    case CANAL_TYPE_ENUM:
        if (!json_is_string(j) || (v.e = enum_value(f, (canal_str_t){json_string_value(j), json_string_length(j)})) < 0) {
            enum_error(&k, f);
            return;
        }
        break;
    case CANAL_TYPE_OBJECT:
        if ((ok = json_is_object(j)) == 0)
            break;
        bind_object(b, mf->nested, dst, j, 1);
        return;
    case CANAL_TYPE_ARRAY: {
        if (!json_is_array(j)) {
            ok = 0;
            break;
        }
        size_t n = json_array_size(j), each = canal__type_size(f->items, f->schema);
        if (items_out_of_bounds(&k, f, n))
            return;
        char *items = n ? canal_req_alloc(b->req, n * each) : canal_req_alloc(b->req, 1);
        memset(items, 0, n ? n * each : 1);
        for (size_t i = 0; i < n; i++) {
            size_t old = push(b, NULL, i);
            json_t *e = json_array_get(j, i);
            if (json_is_null(e))
                report(&(struct sink){b->req, b->ptr, NULL, 0}, "The value for %s must be %s.", f->name,
                       json_type_name(f->items));
            else
                bind_json(b, mf, f->items, e, items + i * each, each, NULL);
            pop(b, old);
        }
        memcpy(dst, &items, sizeof(items));
        memcpy(obj + f->count - 1, &n, sizeof(n));
        return;
    }
    case CANAL_TYPE_JSON:
        memcpy(dst, &j, sizeof(j));
        return;
    case CANAL_TYPE_FILE:
        ok = 0; /* never: registration keeps files to forms */
        break;
    }
    if (!ok) {
        report(&k, "The value for %s must be %s.", f->name, json_type_name(t));
        return;
    }
    store(t, dst, size, &v);
    check_value(&k, mf, t, &v);
}

/* A field with no value: its default, or a 400 if required. */
static void bind_absent(struct binder *b, const struct canal__mfield *mf, const char *key, char *obj)
{
    const canal_field_t *f = mf->f;
    if (mf->has_def) {
        store(f->type, obj + f->offset, f->size, &mf->defv);
        if (f->present)
            obj[f->present - 1] = 1;
    } else if (f->flags & CANAL_REQUIRED) {
        canal_req_invalid(b->req, key, "The %s field is required.", f->name);
    }
}

/* A strict schema's object: one error per member that no body field of m names */
static void unknown_members(struct binder *b, const struct canal__model *m, json_t *j)
{
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v) {
        size_t i = 0;
        while (i < m->nfields && !(m->fields[i].f->source == CANAL_FROM_BODY && strcmp(m->fields[i].f->name, key) == 0))
            i++;
        if (i < m->nfields)
            continue;
        size_t old = push(b, key, 0);
        canal_req_invalid(b->req, b->ptr, "The member %.100s is not a field of %s.", key, m->schema->name);
        pop(b, old);
    }
}

/* Binds body member values (j: an object) into the fields of m that come from the body; a
 * nested object's schema's validate runs when nothing failed so far (the bound schema's own
 * runs last, in canal_req_bind()). */
static void bind_object(struct binder *b, const struct canal__model *m, char *obj, json_t *j, int nested)
{
    for (size_t i = 0; i < m->nfields; i++) {
        const struct canal__mfield *mf = &m->fields[i];
        const canal_field_t *f = mf->f;
        if (f->source != CANAL_FROM_BODY)
            continue;
        size_t old = push(b, f->name, 0);
        json_t *v = json_object_get(j, f->name);
        if (v == NULL) {
            bind_absent(b, mf, b->ptr, obj);
        } else if (json_is_null(v)) {
            if (!(f->flags & CANAL_NULLABLE))
                canal_req_invalid(b->req, b->ptr, "The value for %s must be %s.", f->name, json_type_name(f->type));
        } else {
            bind_json(b, mf, f->type, v, obj + f->offset, f->size, obj);
            if (f->present)
                obj[f->present - 1] = 1;
        }
        pop(b, old);
    }
    if (m->schema->strict)
        unknown_members(b, m, j);
    if (nested && m->schema->validate != NULL && errors_of(b->req) == NULL && b->failed == 0 &&
        m->schema->validate(b->req, obj) < 0)
        b->failed = 1;
}

/* Reads and parses the body once. Returns 1 when it is a JSON value, 0 when there is none
 * (empty), -1 when it was refused (the error recorded, or unsupported set for a 415). */
static int body(struct binder *b, int *unsupported)
{
    if (b->body_state == 0) {
        json_error_t jerr;
        canal_req_t *req = b->req;
        if (canal_req_body(req).len == 0) {
            b->body_state = -1;
        } else if ((b->body = canal_req_json(req, &jerr)) == NULL) {
            b->body_state = -2;
            if (json_error_code(&jerr) == json_error_wrong_type)
                *unsupported = 1; /* a 415, not a validation error */
            else if (json_error_code(&jerr) == json_error_stack_overflow)
                canal_req_invalid(req, "$body", "The JSON body is too deep: %s.", jerr.text);
            else if (json_error_code(&jerr) == json_error_null_character)
                /* jansson's text names its flag (JSON_ALLOW_NUL): say what is wrong */
                canal_req_invalid(req, "$body",
                                  "The JSON body has a string with \\u0000 (NUL) in it (line %d, column %d).",
                                  jerr.line, jerr.column);
            else
                canal_req_invalid(req, "$body", "The JSON body is malformed: %s (line %d, column %d).", jerr.text,
                                  jerr.line, jerr.column);
        } else {
            b->body_state = 1;
        }
    }
    return b->body_state == 1 ? 1 : b->body_state == -1 ? 0 : -1;
}

/* The form's fields (canal_req_form_all()), or NULL after recording why there are none: a
 * body of another media type (a 415), over a limit (a 413), malformed (a 400 error). */
static const canal_param_t *form_fields(struct binder *b, size_t *n)
{
    const canal_param_t *all = NULL;
    canal_error_info_t e;
    int rc = canal_req_form_all(b->req, &all, &e);
    if (rc >= 0) {
        *n = (size_t)rc;
        return all;
    }
    if (b->status == 0 && errors_of(b->req) == NULL) {
        b->status = rc == CANAL_ETYPE ? 415 : rc == CANAL_ELIMIT ? 413 : 400;
        if (b->status == 400)
            canal_req_invalid(b->req, "$body", "The form body is malformed: %s.", e.message);
        else if (b->status == 413)
            b->why = canal_req_printf(b->req, "the form body is over a limit: %s", e.message);
    }
    return NULL;
}

/* A file field: the first file part of that name of a multipart body. */
static void bind_file(struct binder *b, const struct canal__mfield *mf, char *obj)
{
    const canal_field_t *f = mf->f;
    canal_req_t *req = b->req;
    size_t n;
    if (form_fields(b, &n) == NULL)
        return; /* reported */
    canal_multipart_t mp;
    canal_part_t part, found = {{NULL, 0}, {NULL, 0}, {NULL, 0}, {NULL, 0}};
    size_t count = 0, len = strlen(f->name);
    if (canal_req_body(req).len > 0 && canal_multipart_init(&mp, canal_req_header(req, "content-type"), canal_req_body(req), NULL) == 0)
        while (canal_multipart_next(&mp, &part, NULL) == 1)
            if (CANAL_PART_IS_FILE(&part) && part.name.len == len && memcmp(part.name.base, f->name, len) == 0 &&
                count++ == 0)
                found = part;
    if (count > 1) {
        canal_req_invalid(req, f->name, "The %s field must be given once.", f->name);
    } else if (count == 1 && (!canal_utf8_valid(found.filename) || !canal_utf8_valid(found.content_type))) {
        /* text the handler may write back, checked as every bound string is */
        canal_req_invalid(req, f->name, "The filename and content type of %s must be valid UTF-8.", f->name);
    } else if (count == 0) {
        bind_absent(b, mf, f->name, obj);
    } else {
        if (found.data.base == NULL)
            found.data.base = found.filename.base; /* an empty file is there: not "absent" */
        memcpy(obj + f->offset, &found, sizeof(found));
        if (f->present)
            obj[f->present - 1] = 1;
    }
}

/* A top-level field from a text source. */
static void bind_text(struct binder *b, const struct canal__mfield *mf, char *obj)
{
    const canal_field_t *f = mf->f;
    canal_req_t *req = b->req;
    struct sink k = {req, f->name, NULL, 0};
    canal_str_t text = {NULL, 0};
    union canal__val v;
    switch (f->source) {
    case CANAL_FROM_ROUTE:
        text = canal_req_param(req, f->name);
        break;
    case CANAL_FROM_HEADER:
        text = canal_req_header(req, f->name);
        break;
    case CANAL_FROM_COOKIE:
        if (canal_req_cookie(req, f->name, &text) != 0)
            text.base = NULL;
        break;
    case CANAL_FROM_QUERY:
    case CANAL_FROM_FORM: {
        if (f->type == CANAL_TYPE_FILE) {
            bind_file(b, mf, obj);
            return;
        }
        /* the query and a form are lists of name=value: a field takes the values of its name */
        const canal_param_t *all;
        size_t n = 0, count = 0, len = strlen(f->name);
        if (f->source == CANAL_FROM_QUERY)
            n = canal_req_query_all(req, &all);
        else if ((all = form_fields(b, &n)) == NULL)
            return; /* reported */
        for (size_t i = 0; i < n; i++)
            if (all[i].name.len == len && memcmp(all[i].name.base, f->name, len) == 0 && count++ == 0)
                text = all[i].value;
        if (count == 0) {
            bind_absent(b, mf, f->name, obj);
            return;
        }
        if (f->type != CANAL_TYPE_ARRAY && count > 1) {
            report(&k, "The %s field must be given once.", f->name);
            return;
        }
        if (f->type != CANAL_TYPE_ARRAY)
            break;
        if (items_out_of_bounds(&k, f, count))
            return;
        size_t each = canal__type_size(f->items, NULL);
        char *items = canal_req_alloc(req, count * each);
        memset(items, 0, count * each);
        for (size_t i = 0, at = 0; i < n; i++)
            if (all[i].name.len == len && memcmp(all[i].name.base, f->name, len) == 0) {
                if (parse_text(&k, req, f, f->items, all[i].value, &v) == 0) {
                    store(f->items, items + at * each, each, &v);
                    check_value(&k, mf, f->items, &v);
                }
                at++;
            }
        memcpy(obj + f->offset, &items, sizeof(items));
        memcpy(obj + f->count - 1, &count, sizeof(count));
        return;
    }
    default:
        return;
    }
    if (text.base == NULL) {
        bind_absent(b, mf, f->name, obj);
        return;
    }
    if (parse_text(&k, req, f, f->type, text, &v) != 0)
        return;
    store(f->type, obj + f->offset, f->size, &v);
    if (f->present)
        obj[f->present - 1] = 1;
    check_value(&k, mf, f->type, &v);
}

int canal_req_bind(canal_req_t *req, const canal_schema_t *schema, void *out)
{
    const struct canal__model *m = schema ? canal__model_find(req->app, schema) : NULL;
    if (m == NULL) {
        canal_req_fail(req, "canal_req_bind: schema %s was never registered with the app",
                       schema && schema->name ? schema->name : "(null)");
        return CANAL_ESTATE;
    }
    char *obj = out;
    memset(obj, 0, schema->size);
    struct binder b = {.req = req};
    const struct canal__mfield *whole = NULL;
    for (size_t i = 0; i < m->nfields; i++) {
        const struct canal__mfield *mf = &m->fields[i];
        if (mf->f->source == CANAL_FROM_BODY_WHOLE)
            whole = mf;
        else if (mf->f->source != CANAL_FROM_BODY)
            bind_text(&b, mf, obj);
    }
    int unsupported = 0, has = m->body ? body(&b, &unsupported) : -1;
    if (has == 0 || (has > 0 && whole != NULL && json_is_null(b.body))) {
        for (size_t i = 0; i < m->nfields; i++) /* no body: every body field is absent */
            if (&m->fields[i] == whole) {
                bind_absent(&b, whole, "$body", obj);
            } else if (m->fields[i].f->source == CANAL_FROM_BODY) {
                size_t old = push(&b, m->fields[i].f->name, 0);
                bind_absent(&b, &m->fields[i], b.ptr, obj);
                pop(&b, old);
            }
    } else if (has > 0 && whole != NULL) {
        bind_json(&b, whole, whole->f->type, b.body, obj + whole->f->offset, whole->f->size, obj);
        if (whole->f->present)
            obj[whole->f->present - 1] = 1;
    } else if (has > 0 && !json_is_object(b.body)) {
        canal_req_invalid(req, "$body", "The JSON body must be an object.");
    } else if (has > 0) {
        bind_object(&b, m, obj, b.body, 0);
    }
    if (unsupported || b.status == 413 || b.status == 415) {
        json_decref(take_errors(req));
        if (b.status == 413)
            canal_res_problem(req, 413, "%s", b.why);
        else
            canal_res_problem(req, 415, "the request body must be %s",
                              unsupported ? "application/json"
                                          : "application/x-www-form-urlencoded or multipart/form-data");
        return CANAL_EINVAL;
    }
    if (b.failed || (errors_of(req) == NULL && schema->validate != NULL && schema->validate(req, obj) < 0)) {
        if (canal_req_failure(req) == NULL)
            canal_req_fail(req, "the validate callback of schema %s failed", schema->name);
        return CANAL_ESTATE;
    }
    if (errors_of(req) != NULL) {
        canal_res_invalid(req);
        return CANAL_EINVAL;
    }
    return 0;
}

/* The type a route value has after its constraints: int, long, bool and double say it;
 * anything else is text. */
static canal_type_t route_type(const canal_route_t *r, size_t i, const char **said)
{
    canal_route_param_info_t info;
    canal_route_param_info(r, i, &info);
    for (size_t j = 0; j < info.nconstraints; j++) {
        canal_constraint_info_t c;
        if (canal_route_param_constraint(r, i, j, &c) != 0)
            continue;
        switch (c.kind) {
        case CANAL_CONSTRAINT_INT:
            return *said = "int", CANAL_TYPE_INT32;
        case CANAL_CONSTRAINT_LONG:
            return *said = "long", CANAL_TYPE_INT64;
        case CANAL_CONSTRAINT_BOOL:
            return *said = "bool", CANAL_TYPE_BOOL;
        case CANAL_CONSTRAINT_DOUBLE:
            return *said = "double", CANAL_TYPE_DOUBLE;
        default:
            break;
        }
    }
    return *said = "no type", CANAL_TYPE_STRING;
}

int canal__model_check_route(const struct canal__model *m, const canal_route_t *r, canal_error_info_t *err)
{
    static const char *const names[] = {"string", "cstring", "int32", "int64", "double", "bool", "enum"};
    for (size_t i = 0; i < m->nfields; i++) {
        const canal_field_t *f = m->fields[i].f;
        if (f->source != CANAL_FROM_ROUTE)
            continue;
        size_t k = 0, n = canal_route_param_count(r);
        while (k < n && strcmp(canal_route_param_name(r, k), f->name) != 0)
            k++;
        if (k == n && (f->flags & CANAL_REQUIRED))
            return canal_error_set(err, CANAL_EINVAL, 0, "schema %s, field %s is required, but the route %s has no {%s}",
                                   m->schema->name, f->name, canal_route_template(r), f->name);
        if (k == n)
            continue; /* an action's other template: absent here */
        const char *said;
        canal_type_t t = route_type(r, k, &said);
        /* a value without a type constraint is text, parsed by the binder as the field says */
        if (t != CANAL_TYPE_STRING && t != f->type)
            return canal_error_set(err, CANAL_EINVAL, 0, "schema %s, field %s is %s, but the route %s says {%s:%s}",
                                   m->schema->name, f->name, names[f->type], canal_route_template(r), f->name, said);
    }
    return 0;
}
