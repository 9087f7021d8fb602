/* SPDX-License-Identifier: MIT */
/*
 * Typed models (canal/schema.h), part one: a schema's table is checked and pre-parsed once,
 * when it is registered with the app (canal_app_schema(), or a route or action naming it),
 * into a struct canal__model the binder (bind.c) and the OpenAPI document (openapi.c) use;
 * and a struct is written as JSON from its table (canal_jw_model()), which needs nothing
 * registered.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/models.h"
#include "router/regex_internal.h"

/* ---- registration ---- */

size_t canal__type_size(canal_type_t t, const canal_schema_t *nested)
{
    switch (t) {
    case CANAL_TYPE_STRING:
        return sizeof(canal_str_t);
    case CANAL_TYPE_CSTRING:
        return sizeof(const char *);
    case CANAL_TYPE_INT32:
        return sizeof(int32_t);
    case CANAL_TYPE_INT64:
        return sizeof(int64_t);
    case CANAL_TYPE_DOUBLE:
        return sizeof(double);
    case CANAL_TYPE_BOOL:
        return sizeof(bool);
    case CANAL_TYPE_ENUM:
        return sizeof(int);
    case CANAL_TYPE_OBJECT:
        return nested != NULL ? nested->size : 0;
    case CANAL_TYPE_ARRAY:
        return sizeof(void *);
    case CANAL_TYPE_JSON:
        return sizeof(json_t *);
    case CANAL_TYPE_FILE:
        return sizeof(canal_part_t);
    }
    return 0;
}

static int is_string(canal_type_t t)
{
    return t == CANAL_TYPE_STRING || t == CANAL_TYPE_CSTRING;
}

static int is_number(canal_type_t t)
{
    return t == CANAL_TYPE_INT32 || t == CANAL_TYPE_INT64 || t == CANAL_TYPE_DOUBLE;
}

static int valid_schema_name(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s != '\0'; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') || *s == '.' ||
              *s == '-' || *s == '_'))
            return 0;
    return 1;
}

static const char *const formats[] = {"date-time", "date", "uuid", "email", NULL};

static void free_model(struct canal__model *m)
{
    for (size_t i = 0; i < m->nfields; i++)
        canal__regex_destroy(m->fields[i].re);
    free(m->fields);
    free(m);
}

/* The feature's state (core/feature.h): every schema registered, switched on by the first */
struct models {
    struct canal__model **list;
    size_t n;
};
static const struct canal__feature feature;

static void models_free(canal_app_t *app, void *st)
{
    struct models *all = st;
    for (size_t i = 0; i < all->n; i++)
        free_model(all->list[i]);
    free(all->list);
}

static const struct canal__feature feature = {
    .name = "models",
    .size = sizeof(struct models),
    .dispose = models_free,
};

size_t canal__models_all(const canal_app_t *app, struct canal__model *const **list)
{
    const struct models *all = canal__feature_state(app, &feature);
    *list = all != NULL ? all->list : NULL;
    return all != NULL ? all->n : 0;
}

const struct canal__model *canal__model_find(const canal_app_t *app, const canal_schema_t *s)
{
    struct canal__model *const *list;
    size_t n = canal__models_all(app, &list);
    for (size_t i = 0; i < n; i++)
        if (list[i]->schema == s)
            return list[i];
    return NULL;
}

/* One byte range of the struct a field (or its presence flag, or its count) occupies. */
struct span {
    size_t at, len;
    const char *name;
};

static int check_spans(const canal_schema_t *s, struct span *sp, size_t n, canal_error_info_t *err)
{
    for (size_t i = 0; i < n; i++) {
        if (sp[i].at > s->size || sp[i].len > s->size - sp[i].at)
            return canal_error_set(err, CANAL_EINVAL, 0, "schema %s, field %s: outside the struct (%zu bytes)",
                                   s->name, sp[i].name, s->size);
        for (size_t k = 0; k < i; k++)
            if (sp[i].at < sp[k].at + sp[k].len && sp[k].at < sp[i].at + sp[i].len)
                return canal_error_set(err, CANAL_EINVAL, 0, "schema %s: fields %s and %s overlap", s->name,
                                       sp[k].name, sp[i].name);
    }
    return 0;
}

static int register_model(canal_app_t *app, const canal_schema_t *s, int depth, const struct canal__model **out,
                          canal_error_info_t *err);

static int field_error(canal_error_info_t *err, const canal_schema_t *s, const canal_field_t *f, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int field_error(canal_error_info_t *err, const canal_schema_t *s, const canal_field_t *f, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return canal_error_set(err, CANAL_EINVAL, 0, "schema %s, field %s: %s", s->name, f->name, msg);
}

/* Checks one field's rules; the value checks of its default and example are bind.c's. */
static int check_field(canal_app_t *app, const canal_schema_t *s, const canal_field_t *f, struct canal__mfield *mf,
                       int nested, int depth, canal_error_info_t *err)
{
    canal_type_t t = f->type, et = t == CANAL_TYPE_ARRAY ? f->items : t;
    if ((unsigned)t > CANAL_TYPE_FILE)
        return field_error(err, s, f, "unknown type %d", (int)t);
    if ((unsigned)f->source > CANAL_FROM_FORM)
        return field_error(err, s, f, "unknown source %d", (int)f->source);
    if (t == CANAL_TYPE_ARRAY && ((unsigned)et > CANAL_TYPE_ENUM && et != CANAL_TYPE_OBJECT))
        return field_error(err, s, f, "an array's items must be a string, number, bool, enum or object");
    if ((et == CANAL_TYPE_OBJECT) != (f->schema != NULL))
        return field_error(err, s, f, et == CANAL_TYPE_OBJECT ? "an object needs a schema" : "only objects have a schema");
    if (et == CANAL_TYPE_OBJECT) {
        int rc = register_model(app, f->schema, depth + 1, &mf->nested, err);
        if (rc != 0)
            return rc;
    }
    size_t want = canal__type_size(t, f->schema);
    if (f->size != want && !(t == CANAL_TYPE_BOOL && f->size == sizeof(int)))
        return field_error(err, s, f, "member size %zu does not fit the type (%zu)", f->size, want);
    if ((t == CANAL_TYPE_ARRAY) != (f->count != 0))
        return field_error(err, s, f, t == CANAL_TYPE_ARRAY ? "an array needs CANAL_COUNT()" : "only arrays have a count");
    if (et == CANAL_TYPE_ENUM) {
        if (f->allowed == NULL || f->allowed[0] == NULL)
            return field_error(err, s, f, "an enum needs its names in allowed");
    } else if (f->allowed != NULL && !is_string(et)) {
        return field_error(err, s, f, "allowed values are for strings and enums");
    }
    if ((f->has_min || f->has_max) && !is_number(et))
        return field_error(err, s, f, "bounds are for numbers");
    if (f->has_min && f->has_max && f->min > f->max)
        return field_error(err, s, f, "min > max");
    if ((f->min_length || f->max_length || f->pattern || f->format) && !is_string(et))
        return field_error(err, s, f, "lengths, patterns and formats are for strings");
    if (f->max_length && f->min_length > f->max_length)
        return field_error(err, s, f, "min_length > max_length");
    if ((f->min_items || f->max_items) && t != CANAL_TYPE_ARRAY)
        return field_error(err, s, f, "item counts are for arrays");
    if (f->max_items && f->min_items > f->max_items)
        return field_error(err, s, f, "min_items > max_items");
    if (f->format != NULL) {
        size_t i = 0;
        while (formats[i] != NULL && strcmp(formats[i], f->format) != 0)
            i++;
        if (formats[i] == NULL)
            return field_error(err, s, f, "unknown format '%s'", f->format);
    }
    if (f->pattern != NULL) {
        /* the router's dialect (PCRE2), on the whole value, case-sensitive as JSON Schema's;
         * refused when it has no ECMA-262 form for the OpenAPI document */
        canal_error_info_t re_err = {0};
        if ((mf->re = canal__regex_create(f->pattern, CANAL__REGEX_WHOLE, &re_err)) == NULL) {
            if (re_err.code == CANAL_ENOMEM)
                return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
            return field_error(err, s, f, "bad pattern '%s': %s", f->pattern, re_err.message);
        }
    }
    /* where the value may come from */
    if (nested && f->source != CANAL_FROM_BODY)
        return field_error(err, s, f, "the fields of a nested schema come from the body");
    switch (f->source) {
    case CANAL_FROM_ROUTE:
    case CANAL_FROM_HEADER:
    case CANAL_FROM_COOKIE:
    case CANAL_FROM_QUERY:
    case CANAL_FROM_FORM:
        if (t == CANAL_TYPE_OBJECT || t == CANAL_TYPE_JSON || et == CANAL_TYPE_OBJECT ||
            (t == CANAL_TYPE_ARRAY && f->source != CANAL_FROM_QUERY && f->source != CANAL_FROM_FORM) ||
            (t == CANAL_TYPE_FILE && f->source != CANAL_FROM_FORM))
            return field_error(err, s, f, "a text source gives strings, numbers, bools and enums (arrays: the "
                                          "query and forms; files: forms)");
        break;
    case CANAL_FROM_BODY_WHOLE:
        if (t != CANAL_TYPE_OBJECT && t != CANAL_TYPE_ARRAY && t != CANAL_TYPE_JSON)
            return field_error(err, s, f, "the whole body is an object, an array or json");
        break;
    case CANAL_FROM_BODY:
        if (t == CANAL_TYPE_FILE)
            return field_error(err, s, f, "files come from a form");
        break;
    }
    /* how "absent" shows */
    int pointer = is_string(t) || t == CANAL_TYPE_ARRAY || t == CANAL_TYPE_JSON || t == CANAL_TYPE_FILE;
    if (f->def != NULL && (t == CANAL_TYPE_OBJECT || t == CANAL_TYPE_ARRAY || t == CANAL_TYPE_JSON || t == CANAL_TYPE_FILE))
        return field_error(err, s, f, "objects, arrays, json and files take no default");
    if (f->def != NULL && (f->flags & CANAL_REQUIRED))
        return field_error(err, s, f, "a required field takes no default");
    if (!pointer && !(f->flags & CANAL_REQUIRED) && f->def == NULL && f->present == 0)
        return field_error(err, s, f, "optional without a default: name a presence flag (CANAL_PRESENT()), or absent "
                           "cannot be told from 0");
    if (f->flags & ~(unsigned)(CANAL_REQUIRED | CANAL_NULLABLE))
        return field_error(err, s, f, "unknown flags");
    return canal__model_field_values(s, f, mf, err);
}

static int register_model(canal_app_t *app, const canal_schema_t *s, int depth, const struct canal__model **out,
                          canal_error_info_t *err)
{
    if (s == NULL || s->fields == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "a schema needs a table of fields");
    if ((*out = canal__model_find(app, s)) != NULL)
        return 0;
    if (!valid_schema_name(s->name))
        return canal_error_set(err, CANAL_EINVAL, 0, "schema name '%s': letters, digits, '.', '-', '_'",
                               s->name ? s->name : "(null)");
    if (s->size == 0)
        return canal_error_set(err, CANAL_EINVAL, 0, "schema %s: size 0", s->name);
    if (depth > 32)
        return canal_error_set(err, CANAL_EINVAL, 0, "schema %s: nested more than 32 deep (a cycle?)", s->name);
    struct models *all = canal__feature_on(app, &feature);
    if (all == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    for (size_t i = 0; i < all->n; i++)
        if (strcmp(all->list[i]->schema->name, s->name) == 0)
            return canal_error_set(err, CANAL_EEXIST, 0, "two schemas are named %s", s->name);
    size_t n = 0;
    while (s->fields[n].name != NULL)
        n++;
    struct canal__model *m = calloc(1, sizeof(*m));
    struct canal__mfield *fields = calloc(n ? n : 1, sizeof(*fields));
    struct span *sp = calloc(3 * n + 1, sizeof(*sp));
    struct canal__model **list = realloc(all->list, (all->n + 1) * sizeof(*list));
    if (list != NULL)
        all->list = list;
    if (m == NULL || fields == NULL || sp == NULL || list == NULL) {
        free(m), free(fields), free(sp);
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    }
    m->schema = s;
    m->fields = fields;
    m->nfields = n;
    /* registered before its fields are checked, so that a cycle is found by name, not recursion */
    all->list[all->n++] = m;
    int rc = 0, whole = 0, members = 0, form = 0;
    size_t nsp = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const canal_field_t *f = &s->fields[i];
        fields[i].f = f;
        for (size_t k = 0; k < i && rc == 0; k++)
            if (strcmp(s->fields[k].name, f->name) == 0 && s->fields[k].source == f->source)
                rc = canal_error_set(err, CANAL_EEXIST, 0, "schema %s: field %s declared twice", s->name, f->name);
        if (rc == 0)
            rc = check_field(app, s, f, &fields[i], depth > 0, depth, err);
        sp[nsp++] = (struct span){f->offset, f->size, f->name};
        if (f->present)
            sp[nsp++] = (struct span){f->present - 1, sizeof(bool), f->name};
        if (f->count)
            sp[nsp++] = (struct span){f->count - 1, sizeof(size_t), f->name};
        whole += f->source == CANAL_FROM_BODY_WHOLE;
        members += f->source == CANAL_FROM_BODY;
        form += f->source == CANAL_FROM_FORM;
        m->body |= f->source == CANAL_FROM_BODY || f->source == CANAL_FROM_BODY_WHOLE;
    }
    if (rc == 0)
        rc = check_spans(s, sp, nsp, err);
    if (rc == 0 && (whole > 1 || (whole && members)))
        rc = canal_error_set(err, CANAL_EINVAL, 0, "schema %s: the whole body is bound once, and alone", s->name);
    if (rc == 0 && form && (whole || members))
        rc = canal_error_set(err, CANAL_EINVAL, 0, "schema %s: a body is a form or JSON, not both", s->name);
    free(sp);
    if (rc != 0) {
        /* nested models registered on the way stay: they were checked and are fine */
        for (size_t i = 0; i < all->n; i++)
            if (all->list[i] == m)
                all->list[i] = all->list[--all->n];
        free_model(m);
        *out = NULL;
        return rc;
    }
    *out = m;
    return 0;
}

int canal__model_register(canal_app_t *app, const canal_schema_t *s, const struct canal__model **out,
                          canal_error_info_t *err)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return canal__reg_fail(app, err, CANAL_ESTATE, "schemas are registered before the app starts");
    return register_model(app, s, 0, out, err);
}

int canal_app_schema(canal_app_t *app, const canal_schema_t *schema, canal_error_info_t *err)
{
    const struct canal__model *m;
    canal_error_info_t e;
    int rc = canal__model_register(app, schema, &m, &e);
    if (rc != 0 && err != NULL)
        *err = e;
    return rc != 0 ? canal__reg_error(app, &e) : 0;
}

/* CANAL_ARGS(): the schema registered; what the route keeps is its model */
static int args_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err)
{
    const struct canal__model *m;
    if (value == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "CANAL_ARGS(NULL): a schema is needed");
    int rc = canal__model_register(app, value, &m, err);
    *kept = m;
    return rc;
}

/* ... and, once the route exists, its fields bound from the route checked against it */
static int args_added(canal_app_t *app, const void *kept, const canal_route_t *route, canal_error_info_t *err)
{
    (void)app;
    return canal__model_check_route(kept, route, err);
}

const canal_option_kind_t canal_args_option = {&feature, "args", args_attach, args_added};

/* ---- writing ---- */

#define AT(obj, off) ((const char *)(obj) + (off))

static int absent(const canal_field_t *f, const void *obj)
{
    const char *p = AT(obj, f->offset);
    if (f->present && !*(const bool *)AT(obj, f->present - 1))
        return 1;
    switch (f->type) {
    case CANAL_TYPE_STRING:
        return ((const canal_str_t *)p)->base == NULL;
    case CANAL_TYPE_FILE:
        return ((const canal_part_t *)p)->data.base == NULL;
    case CANAL_TYPE_CSTRING:
    case CANAL_TYPE_ARRAY:
    case CANAL_TYPE_JSON:
        return *(void *const *)p == NULL;
    default:
        return 0;
    }
}

static int write_value(canal_jw_t *w, canal_type_t t, const canal_field_t *f, const char *p, size_t size)
{
    switch (t) {
    case CANAL_TYPE_STRING: {
        const canal_str_t *s = (const canal_str_t *)p;
        return canal_jw_stringn(w, s->base, s->len);
    }
    case CANAL_TYPE_CSTRING:
        return canal_jw_string(w, *(const char *const *)p);
    case CANAL_TYPE_INT32:
        return canal_jw_int(w, *(const int32_t *)p);
    case CANAL_TYPE_INT64:
        return canal_jw_int(w, *(const int64_t *)p);
    case CANAL_TYPE_DOUBLE:
        return canal_jw_real(w, *(const double *)p);
    case CANAL_TYPE_BOOL:
        return canal_jw_bool(w, size == sizeof(int) ? *(const int *)p : *(const bool *)p);
    case CANAL_TYPE_ENUM: {
        int v = *(const int *)p;
        for (int i = 0; f->allowed[i] != NULL; i++)
            if (i == v)
                return canal_jw_string(w, f->allowed[i]);
        return canal__jw_fail(w, CANAL_EINVAL, "an enum value without a name");
    }
    case CANAL_TYPE_OBJECT:
        return canal_jw_model(w, f->schema, p);
    case CANAL_TYPE_ARRAY: {
        const char *items = *(const char *const *)p;
        size_t n = *(const size_t *)AT(p - f->offset, f->count - 1);
        if (f->items == CANAL_TYPE_OBJECT) /* its keys made once for all items */
            return canal_jw_model_array(w, f->schema, items, n);
        size_t each = canal__type_size(f->items, f->schema);
        canal_jw_array_begin(w);
        for (size_t i = 0; i < n; i++)
            write_value(w, f->items, f, items + i * each, each);
        return canal_jw_array_end(w);
    }
    case CANAL_TYPE_JSON:
        return canal_jw_json(w, *(const json_t *const *)p);
    case CANAL_TYPE_FILE:
        break; /* bytes have no JSON form */
    }
    return canal__jw_fail(w, CANAL_EINVAL, "a field that cannot be written as JSON");
}

/* The JSON forms of a schema's field names ("name", escaped), made once per call and copied
 * for every object written: in an array of rows a key costs a memcpy, not a check of its bytes.
 * They live for the call only (on the stack, or malloc'd for a large schema), never in the
 * writer's pool, which a stream's writer keeps for the stream's life. */
struct keys {
    struct canal_jw text; /* the forms one after the other: field i's from at[i] to at[i + 1] */
    size_t *at;
    void *heap;           /* at and the text when they do not fit in mem */
    size_t mem[64];
};

static int keys_make(canal_jw_t *w, const canal_schema_t *schema, struct keys *k)
{
    size_t n = 0, worst = 0;
    for (; schema->fields[n].name != NULL; n++) {
        size_t len = strlen(schema->fields[n].name);
        if (len > SIZE_MAX / 8 - worst)
            return canal__jw_fail(w, CANAL_ENOMEM, "a field name too long");
        worst += 6 * len + 2; /* six bytes at most for each (an escape), and the quotes */
    }
    size_t need = (n + 1) * sizeof(size_t) + worst;
    k->heap = need > sizeof(k->mem) ? malloc(need) : NULL;
    if (need > sizeof(k->mem) && k->heap == NULL)
        return canal__jw_fail(w, CANAL_ENOMEM, "out of memory");
    k->at = k->heap != NULL ? k->heap : k->mem;
    /* a writer on the room after at[], which the forms never outgrow */
    k->text = (struct canal_jw){.buf = (char *)(k->at + n + 1), .cap = worst, .why = ""};
    k->at[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = schema->fields[i].name;
        if (canal__jw_key_form(&k->text, name, strlen(name)) != 0) {
            free(k->heap);
            return canal__jw_fail(w, CANAL_EINVAL, "a key that is not valid UTF-8");
        }
        k->at[i + 1] = k->text.len;
    }
    return 0;
}

static int write_object(canal_jw_t *w, const canal_schema_t *schema, const struct keys *k, const void *obj)
{
    canal_jw_object_begin(w);
    size_t i = 0;
    for (const canal_field_t *f = schema->fields; f->name != NULL; f++, i++) {
        const char *key = k->text.buf + k->at[i];
        size_t klen = k->at[i + 1] - k->at[i];
        if (absent(f, obj)) {
            if (f->flags & CANAL_NULLABLE) {
                canal__jw_key_json(w, key, klen);
                canal_jw_null(w);
            } else if (f->flags & CANAL_REQUIRED) {
                return canal__jw_fail(w, CANAL_EINVAL, "a required field is absent");
            }
            continue;
        }
        canal__jw_key_json(w, key, klen);
        write_value(w, f->type, f, AT(obj, f->offset), f->size);
    }
    return canal_jw_object_end(w);
}

int canal_jw_model(canal_jw_t *w, const canal_schema_t *schema, const void *obj)
{
    struct keys k;
    if (w == NULL)
        return CANAL_EINVAL;
    if (schema == NULL || obj == NULL)
        return canal__jw_fail(w, CANAL_EINVAL, "no schema or no struct to write");
    if (w->err != 0 || keys_make(w, schema, &k) != 0)
        return w->err;
    int rc = write_object(w, schema, &k, obj);
    free(k.heap);
    return rc;
}

int canal_jw_model_array(canal_jw_t *w, const canal_schema_t *schema, const void *objs, size_t n)
{
    struct keys k;
    if (w == NULL)
        return CANAL_EINVAL;
    if (schema == NULL || (objs == NULL && n > 0))
        return canal__jw_fail(w, CANAL_EINVAL, "no schema or no structs to write");
    if (w->err != 0 || keys_make(w, schema, &k) != 0)
        return w->err;
    canal_jw_array_begin(w);
    for (size_t i = 0; i < n; i++)
        write_object(w, schema, &k, AT(objs, i * schema->size));
    free(k.heap);
    return canal_jw_array_end(w);
}

int canal_res_model(canal_req_t *req, int status, const canal_schema_t *schema, const void *obj)
{
    canal_jw_t *w = canal_req_jw(req);
    canal_jw_model(w, schema, obj);
    return canal_res_jw(req, status, w);
}

int canal_res_model_array(canal_req_t *req, int status, const canal_schema_t *schema, const void *objs, size_t n)
{
    canal_jw_t *w = canal_req_jw(req);
    canal_jw_model_array(w, schema, objs, n);
    return canal_res_jw(req, status, w);
}
