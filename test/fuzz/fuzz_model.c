/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: writing a struct by its schema (canal_jw_model(), lib/models/schema.c)
 * against jansson's json_dumps(JSON_COMPACT) of the same object built member by member, which
 * canal/schema.h promises to reproduce byte for byte.
 *
 * The input is read as the values of one record: integers and reals from raw 8-byte words
 * (NaN and infinities included), a bool, an enum value that may have no name, strings of raw
 * bytes (invalid UTF-8, control characters, quotes, NUL in the slice type), C strings, NULLs
 * for the optional and nullable fields, an int32 array and an array of nested objects with
 * their own optional members. Then either both sides succeed with the same bytes, or the
 * value has something jansson cannot hold (a string that is not UTF-8, a NaN or infinity, an
 * enum without a name) and canal's writer fails with CANAL_EINVAL and hands out no body.
 *
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <h2o.h>
#include <jansson.h>
#include "models/models.h"

typedef struct {
    canal_str_t name;
    double weight;
    bool has_weight;
} part_t;

enum colour { RED, GREEN, BLUE };
static const char *const colours[] = {"red", "green", "blue", NULL};

typedef struct {
    int32_t i32;
    int64_t i64;
    double d;
    bool b;
    int colour;
    canal_str_t s;        /* optional: base NULL is left out */
    const char *cs;       /* required */
    const char *note;     /* nullable */
    int32_t *nums;
    size_t nnums;
    part_t *parts;
    size_t nparts;
    part_t main;
    bool has_main;
} rec_t;

static const canal_field_t part_fields[] = {
    {.name = "name", CANAL_FIELD(part_t, name), .flags = CANAL_REQUIRED},
    {.name = "w\"eight\\", CANAL_FIELD(part_t, weight), .type = CANAL_TYPE_DOUBLE, CANAL_PRESENT(part_t, has_weight)},
    {.name = NULL}};
static const canal_schema_t part_schema = {.name = "Part", .size = sizeof(part_t), .fields = part_fields};

static const canal_field_t rec_fields[] = {
    {.name = "i32", CANAL_FIELD(rec_t, i32), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "i64", CANAL_FIELD(rec_t, i64), .type = CANAL_TYPE_INT64, .flags = CANAL_REQUIRED},
    {.name = "d", CANAL_FIELD(rec_t, d), .type = CANAL_TYPE_DOUBLE, .flags = CANAL_REQUIRED},
    {.name = "b", CANAL_FIELD(rec_t, b), .type = CANAL_TYPE_BOOL, .flags = CANAL_REQUIRED},
    {.name = "colour", CANAL_FIELD(rec_t, colour), .type = CANAL_TYPE_ENUM, .allowed = colours, .flags = CANAL_REQUIRED},
    {.name = "s", CANAL_FIELD(rec_t, s)},
    {.name = "cs", CANAL_FIELD(rec_t, cs), .type = CANAL_TYPE_CSTRING, .flags = CANAL_REQUIRED},
    {.name = "n\xc3\xb6te", CANAL_FIELD(rec_t, note), .type = CANAL_TYPE_CSTRING, .flags = CANAL_NULLABLE},
    {.name = "nums", CANAL_FIELD(rec_t, nums), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_INT32,
     CANAL_COUNT(rec_t, nnums)},
    {.name = "parts", CANAL_FIELD(rec_t, parts), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_OBJECT,
     .schema = &part_schema, CANAL_COUNT(rec_t, nparts)},
    {.name = "main", CANAL_FIELD(rec_t, main), .type = CANAL_TYPE_OBJECT, .schema = &part_schema,
     CANAL_PRESENT(rec_t, has_main)},
    {.name = NULL}};
static const canal_schema_t rec_schema = {.name = "Rec", .size = sizeof(rec_t), .fields = rec_fields};

struct in {
    const uint8_t *p;
    size_t n;
};

static uint64_t word(struct in *in)
{
    uint64_t w = 0;
    size_t k = in->n < 8 ? in->n : 8;
    memcpy(&w, in->p, k);
    in->p += k, in->n -= k;
    return w;
}

static uint8_t byte(struct in *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

/* a slice of the input, up to 40 bytes (may hold anything) */
static canal_str_t bytes(struct in *in)
{
    size_t k = byte(in) % 41;
    if (k > in->n)
        k = in->n;
    canal_str_t s = {(const char *)in->p, k};
    in->p += k, in->n -= k;
    return s;
}

static double real(struct in *in)
{
    uint64_t w = word(in);
    double d;
    switch (w & 7) {
    case 0:
        return (double)(int32_t)(w >> 16); /* a whole number: "1.0" */
    case 1:
        return (double)(w >> 3) / 1024.0;
    default:
        memcpy(&d, &w, sizeof(d)); /* any bit pattern: NaN and infinities too */
        return d;
    }
}

/* jansson's string of s, or NULL when it cannot hold it */
static json_t *jstr(canal_str_t s)
{
    return json_stringn(s.base, s.len);
}

static json_t *jpart(const part_t *p, int *bad)
{
    json_t *o = json_object(), *name = jstr(p->name);
    *bad |= name == NULL;
    json_object_set_new(o, "name", name ? name : json_null());
    if (p->has_weight) {
        json_t *w = json_real(p->weight);
        *bad |= w == NULL;
        json_object_set_new(o, "w\"eight\\", w ? w : json_null());
    }
    return o;
}

static void fill_part(struct in *in, part_t *p)
{
    p->name = bytes(in);
    p->has_weight = byte(in) & 1;
    p->weight = real(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct in in = {data, size};
    rec_t r = {0};
    char *cs = NULL, *note = NULL;
    int32_t nums[16];
    part_t parts[8];
    uint8_t flags = byte(&in);
    r.i32 = (int32_t)word(&in);
    r.i64 = (int64_t)word(&in);
    r.d = real(&in);
    r.b = flags & 1;
    r.colour = byte(&in) % 4; /* 3 has no name */
    if (flags & 2)
        r.s = bytes(&in);
    canal_str_t c = bytes(&in);
    cs = strndup(c.base ? c.base : "", c.len); /* cut at a NUL, as a C string is */
    r.cs = cs;
    if (flags & 4) {
        canal_str_t n = bytes(&in);
        note = strndup(n.base ? n.base : "", n.len);
        r.note = note;
    }
    if (flags & 8) {
        r.nnums = byte(&in) % 17;
        for (size_t i = 0; i < r.nnums; i++)
            nums[i] = (int32_t)word(&in);
        r.nums = nums;
    }
    if (flags & 16) {
        r.nparts = byte(&in) % 9;
        for (size_t i = 0; i < r.nparts; i++)
            fill_part(&in, &parts[i]);
        r.parts = parts;
    }
    if (flags & 32) {
        r.has_main = true;
        fill_part(&in, &r.main);
    }

    /* the same object with jansson, member by member in the table's order */
    int bad = 0;
    json_t *j = json_object(), *v;
    json_object_set_new(j, "i32", json_integer(r.i32));
    json_object_set_new(j, "i64", json_integer(r.i64));
    bad |= (v = json_real(r.d)) == NULL;
    json_object_set_new(j, "d", v ? v : json_null());
    json_object_set_new(j, "b", json_boolean(r.b));
    bad |= r.colour == 3;
    json_object_set_new(j, "colour", json_string(r.colour < 3 ? colours[r.colour] : "?"));
    if (r.s.base != NULL) {
        bad |= (v = jstr(r.s)) == NULL;
        json_object_set_new(j, "s", v ? v : json_null());
    }
    bad |= (v = json_string(r.cs)) == NULL;
    json_object_set_new(j, "cs", v ? v : json_null());
    v = r.note ? json_string(r.note) : json_null();
    bad |= v == NULL;
    json_object_set_new(j, "n\xc3\xb6te", v ? v : json_null());
    if (r.nums != NULL) {
        json_t *a = json_array();
        for (size_t i = 0; i < r.nnums; i++)
            json_array_append_new(a, json_integer(r.nums[i]));
        json_object_set_new(j, "nums", a);
    }
    if (r.parts != NULL) {
        json_t *a = json_array();
        for (size_t i = 0; i < r.nparts; i++)
            json_array_append_new(a, jpart(&r.parts[i], &bad));
        json_object_set_new(j, "parts", a);
    }
    if (r.has_main)
        json_object_set_new(j, "main", jpart(&r.main, &bad));

    h2o_mem_pool_t pool;
    h2o_mem_init_pool(&pool);
    struct canal_jw w;
    canal__jw_init(&w, &pool, 16);
    int rc = canal_jw_model(&w, &rec_schema, &r);
    const char *body = NULL;
    size_t len = 0;
    int frc = canal_jw_finish(&w, &body, &len);
    if (bad) {
        if (rc != CANAL_EINVAL || frc != CANAL_EINVAL) {
            fprintf(stderr, "canal wrote what jansson cannot: rc %d, finish %d: %.*s\n", rc, frc, (int)len,
                    body ? body : "");
            abort();
        }
    } else {
        char *theirs = json_dumps(j, JSON_COMPACT);
        if (rc != 0 || frc != 0 || theirs == NULL || strlen(theirs) != len || memcmp(theirs, body, len) != 0) {
            fprintf(stderr, "differs (rc %d, %s)\ncanal:   %.*s\njansson: %s\n", rc, canal_jw_error_text(&w),
                    (int)len, body ? body : "", theirs ? theirs : "(null)");
            abort();
        }
        free(theirs);
    }
    h2o_mem_clear_pool(&pool);
    json_decref(j);
    free(cs);
    free(note);
    return 0;
}
