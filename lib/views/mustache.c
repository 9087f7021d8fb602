/* SPDX-License-Identifier: MIT */
/*
 * The Mustache engine: templates compiled once into a flat array of nodes, rendered with data
 * from jansson values, typed models (a struct and its canal_schema_t) or callbacks.
 *
 * Compiling scans the text once with the current delimiters. Each tag becomes a node; text
 * between tags becomes a text node that points into the template's own copy of the source. A
 * section node knows the index of its closing node, so rendering walks the array and skips or
 * repeats ranges without a tree. The specification's standalone rule is applied while scanning:
 * a tag that is the only thing on its line, but for spaces and tabs, takes its whole line with
 * it (the leading whitespace is cut from the text before, the line's end skipped after); a
 * standalone partial keeps that leading whitespace as its indentation.
 *
 * Rendering keeps a stack of contexts (values). A name is looked up from the top of the stack
 * down; the parts after the first of a dotted name are looked up in what the first found, only.
 * A value is an internal tagged union over the three data sources, so that every lookup,
 * truth test, list walk and write is one switch. Output goes into a growing buffer; escaping
 * copies runs of safe bytes at once. The walk over the nodes keeps its own stack of levels (a
 * section's list and item, a partial and what it changed) instead of recursing, so that it can
 * stop after any node and go on later: a streamed page (views.c) is rendered a part at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "views.h"
#include "models/models.h"

/* ---- templates ---- */

enum node_type { N_TEXT, N_VAR, N_RAW, N_SECTION, N_INVERTED, N_PARTIAL, N_END };

struct node {
    enum node_type type;
    const char *s; /* text, name or partial name: into the template's source */
    size_t len;
    const char *indent; /* standalone partials: the whitespace before the tag */
    size_t indent_len;
    size_t end;   /* sections: the index of the closing node */
    size_t first; /* names: the length of the first part of a dotted name (len: no dot) */
};

struct tpl {
    char *name;
    char *file; /* the file it was read from, or NULL */
    long long mtime_ns;
    char *src;
    struct node *nodes;
    size_t n;
};

struct canal_views {
    struct tpl **t;
    size_t n, cap;
};

static void tpl_free(struct tpl *t)
{
    if (t == NULL)
        return;
    free(t->name);
    free(t->file);
    free(t->src);
    free(t->nodes);
    free(t);
}

canal_views_t *canal_views_create(void)
{
    return calloc(1, sizeof(canal_views_t));
}

void canal_views_destroy(canal_views_t *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->n; i++)
        tpl_free(v->t[i]);
    free(v->t);
    free(v);
}

static const struct tpl *find(const canal_views_t *v, const char *name, size_t len)
{
    for (size_t i = 0; i < v->n; i++)
        if (strncmp(v->t[i]->name, name, len) == 0 && v->t[i]->name[len] == '\0')
            return v->t[i];
    return NULL;
}

int canal__views_has(const canal_views_t *v, const char *name)
{
    return find(v, name, strlen(name)) != NULL;
}

int canal__views_each_file(const canal_views_t *v, int (*fn)(const char *, long long, void *), void *arg)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->t[i]->file != NULL) {
            int rc = fn(v->t[i]->file, v->t[i]->mtime_ns, arg);
            if (rc != 0)
                return rc;
        }
    return 0;
}

/* ---- compiling ---- */

struct compiler {
    struct tpl *t;
    const char *label; /* the name or file in messages */
    size_t cap;
    canal_error_info_t *err;
};

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_space(char c)
{
    return is_blank(c) || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int fail_at(struct compiler *c, int code, size_t pos, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (c->t->src[i] == '\n')
            line++, col = 1;
        else
            col++;
    }
    return canal_error_set(c->err, code, pos, "%s:%zu:%zu: %s", c->label, line, col, what);
}

static struct node *add_node(struct compiler *c, enum node_type type, const char *s, size_t len)
{
    if (c->t->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        struct node *n = realloc(c->t->nodes, cap * sizeof(*n));
        if (n == NULL)
            return NULL;
        c->t->nodes = n, c->cap = cap;
    }
    struct node *n = &c->t->nodes[c->t->n++];
    const char *dot = type != N_TEXT && len > 1 ? memchr(s, '.', len) : NULL;
    *n = (struct node){.type = type, .s = s, .len = len, .first = dot ? (size_t)(dot - s) : len};
    return n;
}

static int add_text(struct compiler *c, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    return add_node(c, N_TEXT, s, len) ? 0 : canal_error_set(c->err, CANAL_ENOMEM, 0, "out of memory");
}

/* A name: trimmed, not empty, no whitespace inside. */
static int take_name(const char **s, size_t *len)
{
    const char *b = *s, *e = *s + *len;
    while (b < e && is_space(*b))
        b++;
    while (e > b && is_space(e[-1]))
        e--;
    if (b == e)
        return -1;
    for (const char *p = b; p < e; p++)
        if (is_space(*p))
            return -1;
    *s = b, *len = (size_t)(e - b);
    return 0;
}

static const char *find_str(const char *s, const char *end, const char *what, size_t len)
{
    for (; (size_t)(end - s) >= len; s++)
        if (*s == *what && memcmp(s, what, len) == 0)
            return s;
    return NULL;
}

static int compile(struct compiler *c)
{
    char *src = c->t->src;
    const char *end = src + strlen(src);
    char otag[16] = "{{", ctag[16] = "}}";
    size_t olen = 2, clen = 2;
    size_t stack[CANAL_VIEW_MAX_DEPTH], open_at[CANAL_VIEW_MAX_DEPTH]; /* open sections: node, tag */
    int depth = 0;
    const char *text = src;     /* the start of the text not yet in a node */
    const char *prev_end = src; /* the end of the previous tag */
    const char *p = src;

    while ((p = find_str(p, end, otag, olen)) != NULL) {
        const char *tag = p, *in = p + olen;
        if (in >= end)
            return fail_at(c, CANAL_ESYNTAX, (size_t)(tag - src), "unclosed tag");
        char kind = *in;
        const char *close;
        size_t close_len = clen;
        switch (kind) {
        case '{':
        case '=': {
            char want[17];
            want[0] = kind == '{' ? '}' : '=';
            memcpy(want + 1, ctag, clen);
            close = find_str(in + 1, end, want, clen + 1);
            close_len = clen + 1;
            in++;
            break;
        }
        case '&':
        case '#':
        case '^':
        case '/':
        case '!':
        case '>':
            in++;
            close = find_str(in, end, ctag, clen);
            break;
        default:
            kind = 0;
            close = find_str(in, end, ctag, clen);
        }
        if (close == NULL)
            return fail_at(c, CANAL_ESYNTAX, (size_t)(tag - src), "unclosed tag");
        const char *name = in;
        size_t nlen = (size_t)(close - in);
        const char *after = close + close_len;

        /* the standalone rule: only spaces and tabs between the line's start and the tag, and
         * between the tag and the line's end, and no other tag on the line */
        int standalone = 0;
        const char *ls = NULL, *next = after;
        if (kind == '#' || kind == '^' || kind == '/' || kind == '!' || kind == '>' || kind == '=') {
            ls = tag;
            while (ls > text && is_blank(ls[-1]))
                ls--;
            int line_start = ls == src || ls[-1] == '\n';
            if (line_start && prev_end <= ls) {
                const char *q = after;
                while (q < end && is_blank(*q))
                    q++;
                if (q == end)
                    standalone = 1, next = q;
                else if (*q == '\n')
                    standalone = 1, next = q + 1;
                else if (*q == '\r' && q + 1 < end && q[1] == '\n')
                    standalone = 1, next = q + 2;
            }
        }
        int rc = add_text(c, text, (size_t)((standalone ? ls : tag) - text));
        if (rc != 0)
            return rc;

        struct node *n = NULL;
        switch (kind) {
        case '!':
            break;
        case '=': {
            /* "=<% %>=": two delimiters, no whitespace or '=' in them */
            const char *b = name, *e = name + nlen;
            while (b < e && is_space(*b))
                b++;
            const char *o = b;
            while (b < e && !is_space(*b))
                b++;
            size_t ol = (size_t)(b - o);
            while (b < e && is_space(*b))
                b++;
            const char *cl = b;
            while (b < e && !is_space(*b))
                b++;
            size_t cll = (size_t)(b - cl);
            while (b < e && is_space(*b))
                b++;
            if (ol == 0 || cll == 0 || b != e || ol >= sizeof(otag) || cll >= sizeof(ctag) ||
                memchr(o, '=', ol) || memchr(cl, '=', cll))
                return fail_at(c, CANAL_ESYNTAX, (size_t)(tag - src), "bad delimiters: {{=OPEN CLOSE=}}");
            memcpy(otag, o, ol), otag[ol] = '\0', olen = ol;
            memcpy(ctag, cl, cll), ctag[cll] = '\0', clen = cll;
            break;
        }
        default:
            if (take_name(&name, &nlen) != 0)
                return fail_at(c, CANAL_ESYNTAX, (size_t)(tag - src), "a tag without a name, or with spaces in it");
            if (kind == '/') {
                if (depth == 0)
                    return fail_at(c, CANAL_ESYNTAX, (size_t)(tag - src), "a closing tag without a section");
                struct node *open = &c->t->nodes[stack[depth - 1]];
                if (open->len != nlen || memcmp(open->s, name, nlen) != 0)
                    return fail_at(c, CANAL_ESYNTAX, (size_t)(tag - src), "a closing tag of another section");
                open->end = c->t->n;
                depth--;
                n = add_node(c, N_END, name, nlen);
            } else if (kind == '#' || kind == '^') {
                if (depth == CANAL_VIEW_MAX_DEPTH)
                    return fail_at(c, CANAL_ELIMIT, (size_t)(tag - src), "sections nested too deep");
                open_at[depth] = (size_t)(tag - src);
                stack[depth++] = c->t->n;
                n = add_node(c, kind == '#' ? N_SECTION : N_INVERTED, name, nlen);
            } else if (kind == '>') {
                n = add_node(c, N_PARTIAL, name, nlen);
                if (n != NULL && standalone)
                    n->indent = ls, n->indent_len = (size_t)(tag - ls);
            } else {
                n = add_node(c, kind == 0 ? N_VAR : N_RAW, name, nlen);
            }
            if (n == NULL)
                return canal_error_set(c->err, CANAL_ENOMEM, 0, "out of memory");
        }
        prev_end = after;
        text = p = next;
    }
    if (depth > 0)
        return fail_at(c, CANAL_ESYNTAX, open_at[depth - 1], "unclosed section");
    return add_text(c, text, (size_t)(end - text));
}

/* Compiles into a new template; name and file are copied. */
static int tpl_compile(const char *name, const char *file, const char *text, size_t len, struct tpl **out,
                       canal_error_info_t *err)
{
    const char *label = file ? file : name;
    if (len > CANAL_VIEW_MAX_SIZE)
        return canal_error_set(err, CANAL_ELIMIT, 0, "%s: a template over %u bytes", label, CANAL_VIEW_MAX_SIZE);
    if (memchr(text, '\0', len) != NULL)
        return canal_error_set(err, CANAL_ESYNTAX, (size_t)((const char *)memchr(text, '\0', len) - text),
                               "%s: a NUL byte in a template", label);
    struct tpl *t = calloc(1, sizeof(*t));
    if (t == NULL || (t->name = strdup(name)) == NULL || (file && (t->file = strdup(file)) == NULL) ||
        (t->src = malloc(len + 1)) == NULL) {
        tpl_free(t);
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    }
    memcpy(t->src, text, len);
    t->src[len] = '\0';
    struct compiler c = {.t = t, .label = label, .err = err};
    int rc = compile(&c);
    if (rc != 0) {
        tpl_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Puts t in the set, replacing one of the same name. */
static int put(canal_views_t *v, struct tpl *t, canal_error_info_t *err)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->t[i]->name, t->name) == 0) {
            tpl_free(v->t[i]);
            v->t[i] = t;
            return 0;
        }
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 8;
        struct tpl **n = realloc(v->t, cap * sizeof(*n));
        if (n == NULL) {
            tpl_free(t);
            return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
        }
        v->t = n, v->cap = cap;
    }
    v->t[v->n++] = t;
    return 0;
}

int canal_views_add(canal_views_t *v, const char *name, const char *text, size_t len, canal_error_info_t *err)
{
    if (v == NULL || name == NULL || (text == NULL && len > 0))
        return canal_error_set(err, CANAL_EINVAL, 0, "no set, name or text");
    struct tpl *t;
    int rc = tpl_compile(name, NULL, text ? text : "", len, &t, err);
    return rc != 0 ? rc : put(v, t, err);
}

/* Reads the templates of dir/rel into the list (a set of its own, merged on success). */
static int load_dir(canal_views_t *into, const char *dir, const char *rel, int depth, canal_error_info_t *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s%s%s", dir, *rel ? "/" : "", rel);
    if (depth > 16)
        return canal_error_set(err, CANAL_ELIMIT, 0, "%s: folders nested too deep", path);
    DIR *d = opendir(path);
    if (d == NULL)
        return canal_error_set(err, CANAL_ESYS, 0, "%s: %s", path, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096], file[4096];
        int m = snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        int k = snprintf(file, sizeof(file), "%s/%s", dir, sub);
        if (m < 0 || (size_t)m >= sizeof(sub) || k < 0 || (size_t)k >= sizeof(file)) {
            rc = canal_error_set(err, CANAL_ELIMIT, 0, "%s/%s: a path too long", path, e->d_name);
            break;
        }
        struct stat st;
        if (stat(file, &st) != 0) {
            rc = canal_error_set(err, CANAL_ESYS, 0, "%s: %s", file, strerror(errno));
            break;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = load_dir(into, dir, sub, depth + 1, err);
            continue;
        }
        size_t sl = strlen(sub), el = strlen(".mustache");
        if (!S_ISREG(st.st_mode) || sl <= el || strcmp(sub + sl - el, ".mustache") != 0)
            continue;
        if ((unsigned long long)st.st_size > CANAL_VIEW_MAX_SIZE) {
            rc = canal_error_set(err, CANAL_ELIMIT, 0, "%s: a template over %u bytes", file, CANAL_VIEW_MAX_SIZE);
            break;
        }
        FILE *f = fopen(file, "rb");
        char *buf = f ? malloc((size_t)st.st_size + 1) : NULL;
        size_t got = buf ? fread(buf, 1, (size_t)st.st_size + 1, f) : 0;
        if (f == NULL || buf == NULL || ferror(f) || got > (size_t)st.st_size) {
            rc = canal_error_set(err, f && !buf ? CANAL_ENOMEM : CANAL_ESYS, 0, "%s: cannot be read", file);
        } else {
            sub[sl - el] = '\0';
            struct tpl *t;
            rc = tpl_compile(sub, file, buf, got, &t, err);
            if (rc == 0) {
                t->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
                rc = put(into, t, err);
            }
        }
        free(buf);
        if (f)
            fclose(f);
    }
    closedir(d);
    return rc;
}

int canal_views_load(canal_views_t *v, const char *dir, canal_error_info_t *err)
{
    if (v == NULL || dir == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "no set or folder");
    canal_views_t tmp = {0};
    int rc = load_dir(&tmp, dir, "", 0, err);
    size_t i = 0;
    for (; rc == 0 && i < tmp.n; i++)
        rc = put(v, tmp.t[i], err); /* put frees t on failure */
    for (size_t j = rc == 0 ? tmp.n : i; j < tmp.n; j++)
        tpl_free(tmp.t[j]);
    free(tmp.t);
    return rc;
}

/* ---- values ---- */

/* A value: a view datum, a model's field, or an item of a model's array of scalars. */
enum vkind { V_NONE, V_JSON, V_MODEL, V_MODELS, V_TEXT, V_BOOL, V_FN, V_SCALAR, V_SCALARS };

struct val {
    enum vkind k;
    const void *p;
    const canal_schema_t *schema;
    const canal_field_t *field; /* V_SCALAR(S): the field, for enums' names and the type */
    canal_type_t type;          /* V_SCALAR(S): the scalar's type */
    size_t n;                   /* MODELS, SCALARS: count; TEXT: length; BOOL */
    canal_view_fn fn;
};

static struct val from_data(const canal_view_data_t *d)
{
    switch (d->kind) {
    case CANAL_VIEW_JSON:
        return d->value ? (struct val){.k = V_JSON, .p = d->value} : (struct val){0};
    case CANAL_VIEW_MODEL:
        return d->value && d->schema ? (struct val){.k = V_MODEL, .p = d->value, .schema = d->schema} : (struct val){0};
    case CANAL_VIEW_MODELS:
        return d->schema && (d->value || !d->n)
                   ? (struct val){.k = V_MODELS, .p = d->value, .schema = d->schema, .n = d->n}
                   : (struct val){0};
    case CANAL_VIEW_TEXT:
        return d->value || !d->n ? (struct val){.k = V_TEXT, .p = d->value ? d->value : "", .n = d->n} : (struct val){0};
    case CANAL_VIEW_BOOL:
        return (struct val){.k = V_BOOL, .n = d->n != 0};
    case CANAL_VIEW_FN:
        return d->fn ? (struct val){.k = V_FN, .p = d->value, .fn = d->fn} : (struct val){0};
    case CANAL_VIEW_NONE:
        break;
    }
    return (struct val){0};
}

#define AT(obj, off) ((const char *)(obj) + (off))

/* A scalar of type t at p (of a field f), as a value */
static struct val scalar(canal_type_t t, const canal_field_t *f, const char *p, size_t size)
{
    switch (t) {
    case CANAL_TYPE_STRING: {
        const canal_str_t *s = (const canal_str_t *)p;
        return s->base ? (struct val){.k = V_TEXT, .p = s->base, .n = s->len} : (struct val){0};
    }
    case CANAL_TYPE_CSTRING: {
        const char *s = *(const char *const *)p;
        return s ? (struct val){.k = V_TEXT, .p = s, .n = strlen(s)} : (struct val){0};
    }
    case CANAL_TYPE_BOOL:
        return (struct val){.k = V_BOOL, .n = size == sizeof(int) ? *(const int *)p != 0 : *(const bool *)p};
    case CANAL_TYPE_ENUM: {
        int v = *(const int *)p;
        for (int i = 0; f->allowed && f->allowed[i] != NULL; i++)
            if (i == v)
                return (struct val){.k = V_TEXT, .p = f->allowed[i], .n = strlen(f->allowed[i])};
        return (struct val){0};
    }
    case CANAL_TYPE_INT32:
    case CANAL_TYPE_INT64:
    case CANAL_TYPE_DOUBLE:
        return (struct val){.k = V_SCALAR, .p = p, .type = t, .field = f};
    default:
        return (struct val){0};
    }
}

static struct val field_val(const canal_field_t *f, const void *obj)
{
    const char *p = AT(obj, f->offset);
    if (f->present && !*(const bool *)AT(obj, f->present - 1))
        return (struct val){0};
    switch (f->type) {
    case CANAL_TYPE_OBJECT:
        return f->schema ? (struct val){.k = V_MODEL, .p = p, .schema = f->schema} : (struct val){0};
    case CANAL_TYPE_ARRAY: {
        const void *items = *(const void *const *)p;
        size_t n = f->count ? *(const size_t *)AT(obj, f->count - 1) : 0;
        if (items == NULL)
            return (struct val){0};
        if (f->items == CANAL_TYPE_OBJECT)
            return f->schema ? (struct val){.k = V_MODELS, .p = items, .schema = f->schema, .n = n} : (struct val){0};
        return (struct val){.k = V_SCALARS, .p = items, .type = f->items, .field = f, .n = n};
    }
    case CANAL_TYPE_JSON: {
        const json_t *j = *(const json_t *const *)p;
        return j ? (struct val){.k = V_JSON, .p = j} : (struct val){0};
    }
    default:
        return scalar(f->type, f, p, f->size);
    }
}

/* The member name of v, or V_NONE */
static struct val member(struct val v, const char *name, size_t len)
{
    switch (v.k) {
    case V_JSON: {
        const json_t *j = json_object_getn((const json_t *)v.p, name, len);
        return j ? (struct val){.k = V_JSON, .p = j} : (struct val){0};
    }
    case V_MODEL:
        for (const canal_field_t *f = v.schema->fields; f->name != NULL; f++)
            if (f->name[0] == name[0] && strncmp(f->name, name, len) == 0 && f->name[len] == '\0')
                return field_val(f, v.p);
        return (struct val){0};
    case V_FN: {
        canal_view_data_t d = {0};
        return v.fn(name, len, &d, (void *)v.p) ? from_data(&d) : (struct val){0};
    }
    default:
        return (struct val){0};
    }
}

/* A lookup found something (null and false are found: they stop the walk down the stack) */
static int found(struct val v)
{
    return v.k != V_NONE;
}

static int is_list(struct val v)
{
    return v.k == V_MODELS || v.k == V_SCALARS || (v.k == V_JSON && json_is_array((const json_t *)v.p));
}

static size_t list_len(struct val v)
{
    return v.k == V_JSON ? json_array_size((const json_t *)v.p) : v.n;
}

static struct val item(struct val v, size_t i)
{
    switch (v.k) {
    case V_JSON: {
        const json_t *j = json_array_get((const json_t *)v.p, i);
        return (struct val){.k = V_JSON, .p = j};
    }
    case V_MODELS:
        return (struct val){.k = V_MODEL, .p = AT(v.p, i * v.schema->size), .schema = v.schema};
    case V_SCALARS: {
        size_t each = canal__type_size(v.type, NULL);
        return scalar(v.type, v.field, AT(v.p, i * each), each);
    }
    default:
        return (struct val){0};
    }
}

static int truthy(struct val v)
{
    switch (v.k) {
    case V_NONE:
        return 0;
    case V_BOOL:
        return v.n != 0;
    case V_JSON: {
        const json_t *j = v.p;
        return !(json_is_null(j) || json_is_false(j) || (json_is_array(j) && json_array_size(j) == 0));
    }
    case V_MODELS:
    case V_SCALARS:
        return v.n > 0;
    default:
        return 1;
    }
}

/* ---- output ---- */

/* A standalone partial's indentation, the outer ones' first */
struct indent {
    const struct indent *outer;
    const char *s;
    size_t len;
};

/* One level of the walk: the nodes [i, to) of t. A section's level has pushed a context: for a
 * list, item k of count, from node `from` again for the next one. A partial's level puts back,
 * when it ends, the body and indentation it changed. */
enum level_kind { L_NODES, L_ONCE, L_LIST, L_PARTIAL };
struct level {
    enum level_kind kind;
    const struct tpl *t;
    size_t i, from, to;
    struct val list;          /* L_LIST */
    size_t k, count;          /* L_LIST */
    const struct tpl *body;   /* L_PARTIAL: what r->body was */
    const struct indent *indent; /* L_PARTIAL: what r->indent was */
};

struct render {
    const canal_views_t *views;
    const struct tpl *body; /* the page, when rendering its layout */
    struct canal__vbuf *out;
    struct val stack[CANAL_VIEW_MAX_DEPTH * 2 + 1];
    size_t depth;
    struct level *levels;   /* the walk's own stack: first_levels, or malloc'd when deeper */
    size_t nlevels, cap;
    struct level first_levels[16];
    struct indent indents[CANAL_VIEW_MAX_PARTIALS]; /* indents[p]: that of partial level p */
    int partials;
    int at_line_start;
    const struct indent *indent;
    int oom;
    canal_error_info_t *err;
};

static int grow(struct render *r, size_t more)
{
    struct canal__vbuf *b = r->out;
    if (b->cap - b->len >= more)
        return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2)
            return r->oom = 1, -1;
        cap *= 2;
    }
    char *n = realloc(b->base, cap);
    if (n == NULL)
        return r->oom = 1, -1;
    b->base = n, b->cap = cap;
    return 0;
}

static inline void put_raw(struct render *r, const char *s, size_t len)
{
    if (len == 0 || (r->out->cap - r->out->len < len && grow(r, len) != 0))
        return;
    memcpy(r->out->base + r->out->len, s, len);
    r->out->len += len;
}

static void put_indent(struct render *r, const struct indent *in)
{
    if (in == NULL)
        return;
    put_indent(r, in->outer);
    put_raw(r, in->s, in->len);
}

/* Before output at a line's start inside an indented partial: the indentation */
static void line_start(struct render *r)
{
    if (r->at_line_start) {
        r->at_line_start = 0;
        put_indent(r, r->indent);
    }
}

/* Template text: indented line by line inside an indented partial */
static void put_text(struct render *r, const char *s, size_t len)
{
    if (r->indent == NULL) {
        put_raw(r, s, len);
        return;
    }
    while (len > 0) {
        line_start(r);
        const char *nl = memchr(s, '\n', len);
        size_t n = nl ? (size_t)(nl - s) + 1 : len;
        put_raw(r, s, n);
        s += n, len -= n;
        if (nl)
            r->at_line_start = 1;
    }
}

/* The entity of each byte that needs one, by byte */
static const char *const entity[256] = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
};
static const unsigned char entity_len[256] = {['&'] = 5, ['<'] = 4, ['>'] = 4, ['"'] = 6, ['\''] = 5};

size_t canal_html_escape(char *out, const char *s, size_t len)
{
    char *o = out;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (entity_len[c]) {
            memcpy(o, entity[c], entity_len[c]);
            o += entity_len[c];
        } else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return (size_t)(o - out);
}

/* Whether any byte of x is c, or one of the five needing an entity: SWAR, 8 bytes a step
 * ('<' and '>' differ in bit 1, '&' and '\'' in bit 0) */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t has_byte(uint64_t x, unsigned char c)
{
    uint64_t y = x ^ (ONES * c);
    return (y - ONES) & ~y & HIGHS;
}

static inline int needs_entity8(const char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return (has_byte(x | (ONES * 2), '>') | has_byte(x | ONES, '\'') | has_byte(x, '"')) != 0;
}

static void put_escaped(struct render *r, const char *s, size_t len)
{
    const char *run = s, *end = s + len, *p = s;
    while (p < end) {
        if (end - p >= 8 && !needs_entity8(p)) {
            p += 8;
            continue;
        }
        const char *stop = end - p >= 8 ? p + 8 : end;
        for (; p < stop; p++) {
            unsigned char c = (unsigned char)*p;
            if (entity_len[c]) {
                put_raw(r, run, (size_t)(p - run));
                put_raw(r, entity[c], entity_len[c]);
                run = p + 1;
            }
        }
    }
    put_raw(r, run, (size_t)(end - run));
}

/* An integer in decimal, into buf (21 bytes at least); returns the length */
static size_t format_int(char *buf, int64_t v)
{
    char tmp[24], *t = tmp + sizeof(tmp);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--t = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--t = '-';
    size_t n = (size_t)(tmp + sizeof(tmp) - t);
    memcpy(buf, t, n);
    return n;
}

/* A double in the fewest digits that read back the same */
static int format_double(char *buf, size_t size, double d)
{
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return n;
}

static void put_value(struct render *r, struct val v, int escape)
{
    char num[40];
    const char *s = NULL;
    size_t len = 0;
    switch (v.k) {
    case V_TEXT:
        s = v.p, len = v.n;
        break;
    case V_BOOL:
        s = v.n ? "true" : "false", len = strlen(s);
        break;
    case V_SCALAR:
        if (v.type == CANAL_TYPE_INT32)
            len = format_int(num, *(const int32_t *)v.p);
        else if (v.type == CANAL_TYPE_INT64)
            len = format_int(num, *(const int64_t *)v.p);
        else
            len = (size_t)format_double(num, sizeof(num), *(const double *)v.p);
        s = num;
        break;
    case V_JSON: {
        const json_t *j = v.p;
        if (json_is_string(j))
            s = json_string_value(j), len = json_string_length(j);
        else if (json_is_integer(j))
            s = num, len = format_int(num, json_integer_value(j));
        else if (json_is_real(j))
            s = num, len = (size_t)format_double(num, sizeof(num), json_real_value(j));
        else if (json_is_boolean(j))
            s = json_is_true(j) ? "true" : "false", len = strlen(s);
        break;
    }
    default:
        break;
    }
    if (s == NULL)
        return;
    if (escape)
        put_escaped(r, s, len);
    else
        put_raw(r, s, len);
}

/* ---- rendering ---- */

static struct val lookup(struct render *r, const struct node *n)
{
    const char *name = n->s;
    if (n->len == 1 && name[0] == '.')
        return r->stack[r->depth - 1];
    struct val v = {0};
    for (size_t i = r->depth; i-- > 0;) {
        v = member(r->stack[i], name, n->first);
        if (found(v))
            break;
    }
    /* the parts after the first, in what the first found only */
    const char *end = name + n->len, *part = name + n->first;
    while (part < end && found(v)) {
        part++;
        const char *dot = memchr(part, '.', (size_t)(end - part));
        size_t len = (size_t)((dot ? dot : end) - part);
        v = member(v, part, len);
        part += len;
    }
    return v;
}

static int push(struct render *r, struct val v)
{
    if (r->depth == sizeof(r->stack) / sizeof(r->stack[0]))
        return canal_error_set(r->err, CANAL_ELIMIT, 0, "contexts nested too deep");
    r->stack[r->depth++] = v;
    return 0;
}

/* A new level of the walk over the nodes [from, to) of t; NULL when out of memory (r->oom) */
static struct level *enter(struct render *r, enum level_kind kind, const struct tpl *t, size_t from, size_t to)
{
    if (r->nlevels == r->cap) {
        size_t cap = r->cap * 2;
        struct level *l = r->levels == r->first_levels ? malloc(cap * sizeof(*l))
                                                       : realloc(r->levels, cap * sizeof(*l));
        if (l == NULL)
            return r->oom = 1, NULL;
        if (r->levels == r->first_levels)
            memcpy(l, r->first_levels, sizeof(r->first_levels));
        r->levels = l, r->cap = cap;
    }
    struct level *l = &r->levels[r->nlevels++];
    *l = (struct level){.kind = kind, .t = t, .i = from, .from = from, .to = to};
    return l;
}

/* The level on top has run its nodes: the next item of its list, or it ends. */
static int leave(struct render *r)
{
    struct level *l = &r->levels[r->nlevels - 1];
    switch (l->kind) {
    case L_LIST:
        r->depth--;
        if (++l->k < l->count) {
            l->i = l->from;
            return push(r, item(l->list, l->k));
        }
        break;
    case L_ONCE:
        r->depth--;
        break;
    case L_PARTIAL:
        r->partials--;
        r->indent = l->indent;
        r->body = l->body;
        break;
    case L_NODES:
        break;
    }
    r->nlevels--;
    return 0;
}

static int partial(struct render *r, const struct node *n)
{
    const struct tpl *p = r->body && n->len == 4 && memcmp(n->s, "body", 4) == 0
                              ? r->body
                              : find(r->views, n->s, n->len);
    if (p == NULL)
        return 0; /* the specification: a missing partial renders empty */
    if (r->partials == CANAL_VIEW_MAX_PARTIALS)
        return canal_error_set(r->err, CANAL_ELIMIT, 0, "partials nested deeper than %d (%.*s)",
                               CANAL_VIEW_MAX_PARTIALS, (int)n->len, n->s);
    struct level *l = enter(r, L_PARTIAL, p, 0, p->n);
    if (l == NULL)
        return 0; /* r->oom */
    l->body = r->body, l->indent = r->indent;
    if (p == r->body)
        r->body = NULL; /* the page's own {{>body}} is a partial of the set */
    if (n->indent_len > 0) {
        struct indent *in = &r->indents[r->partials];
        *in = (struct indent){.outer = r->indent, .s = n->indent, .len = n->indent_len};
        r->indent = in, r->at_line_start = 1;
    }
    r->partials++;
    return 0;
}

/* Walks the nodes until the page is written (1), something fails (a negative error), or
 * r->out holds at least budget bytes (0: call again to go on). A section's level starts
 * past its node and ends at its closing node, where the level below goes on. */
static int walk(struct render *r, size_t budget)
{
    while (r->nlevels > 0) {
        struct level *l = &r->levels[r->nlevels - 1];
        if (l->i >= l->to) {
            int rc = leave(r);
            if (rc != 0)
                return rc;
            continue;
        }
        const struct tpl *t = l->t;
        size_t at = l->i;
        const struct node *n = &t->nodes[at];
        l->i = at + 1;
        int rc = 0;
        switch (n->type) {
        case N_TEXT:
            put_text(r, n->s, n->len);
            break;
        case N_VAR:
        case N_RAW:
            if (r->indent)
                line_start(r);
            put_value(r, lookup(r, n), n->type == N_VAR);
            break;
        case N_SECTION: {
            struct val v = lookup(r, n);
            l->i = n->end + 1;
            size_t count = is_list(v) ? list_len(v) : 0;
            struct level *in = NULL;
            if (count > 0 && (in = enter(r, L_LIST, t, at + 1, n->end)) != NULL) {
                in->list = v, in->count = count;
                rc = push(r, item(v, 0));
            } else if (!is_list(v) && truthy(v) && (in = enter(r, L_ONCE, t, at + 1, n->end)) != NULL) {
                rc = push(r, v);
            }
            if (rc != 0)
                r->nlevels--; /* its context was not pushed */
            break;
        }
        case N_INVERTED:
            l->i = n->end + 1;
            if (!truthy(lookup(r, n)))
                enter(r, L_NODES, t, at + 1, n->end);
            break;
        case N_PARTIAL:
            rc = partial(r, n);
            break;
        case N_END:
            break;
        }
        if (rc != 0)
            return rc;
        if (r->oom)
            return canal_error_set(r->err, CANAL_ENOMEM, 0, "out of memory");
        if (r->out->len >= budget)
            return 0;
    }
    return 1;
}

/* Sets r up to render name (inside layout) with data: 0, or CANAL_ENOTFOUND */
static int walk_init(struct render *r, const canal_views_t *v, const char *name, const char *layout,
                     const canal_view_data_t *data, canal_error_info_t *err)
{
    if (v == NULL || name == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "no set or name");
    const struct tpl *page = find(v, name, strlen(name));
    if (page == NULL)
        return canal_error_set(err, CANAL_ENOTFOUND, 0, "no template \"%s\"", name);
    const struct tpl *lay = NULL;
    if (layout != NULL && (lay = find(v, layout, strlen(layout))) == NULL)
        return canal_error_set(err, CANAL_ENOTFOUND, 0, "no layout \"%s\"", layout);
    r->views = v, r->err = err, r->body = lay ? page : NULL;
    r->depth = 0, r->partials = 0, r->at_line_start = 0, r->indent = NULL, r->oom = 0;
    r->levels = r->first_levels, r->cap = sizeof(r->first_levels) / sizeof(r->first_levels[0]), r->nlevels = 0;
    canal_view_data_t none = {0};
    r->stack[r->depth++] = from_data(data ? data : &none);
    const struct tpl *t = lay ? lay : page;
    enter(r, L_NODES, t, 0, t->n);
    return 0;
}

static void walk_done(struct render *r)
{
    if (r->levels != r->first_levels)
        free(r->levels);
    r->levels = r->first_levels, r->nlevels = 0;
}

int canal__views_render_to(const canal_views_t *v, const char *name, const char *layout, const canal_view_data_t *data,
                           struct canal__vbuf *out, canal_error_info_t *err)
{
    struct render r;
    int rc = walk_init(&r, v, name, layout, data, err);
    if (rc != 0)
        return rc;
    r.out = out;
    rc = walk(&r, SIZE_MAX);
    walk_done(&r);
    if (rc < 0)
        return rc;
    if (grow(&r, 1) != 0)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    out->base[out->len] = '\0'; /* a NUL after the bytes, not counted */
    return 0;
}

struct canal__walk {
    struct render r;
    canal_error_info_t err;
};

struct canal__walk *canal__views_walk_new(const canal_views_t *v, const char *name, const char *layout,
                                          const canal_view_data_t *data, canal_error_info_t *err)
{
    struct canal__walk *w = malloc(sizeof(*w));
    if (w == NULL) {
        canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
        return NULL;
    }
    if (walk_init(&w->r, v, name, layout, data, err) != 0) {
        free(w);
        return NULL;
    }
    w->r.err = &w->err;
    return w;
}

int canal__views_walk(struct canal__walk *w, struct canal__vbuf *out, size_t budget, canal_error_info_t *err)
{
    w->r.out = out;
    w->err = (canal_error_info_t){0};
    int rc = walk(&w->r, out->len + budget);
    if (rc < 0 && err != NULL)
        *err = w->err;
    return rc;
}

void canal__views_walk_free(struct canal__walk *w)
{
    if (w != NULL) {
        walk_done(&w->r);
        free(w);
    }
}

int canal_views_render(const canal_views_t *v, const char *name, const char *layout, const canal_view_data_t *data,
                       char **out, size_t *len, canal_error_info_t *err)
{
    struct canal__vbuf b = {0};
    if (out == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "no output");
    *out = NULL;
    int rc = canal__views_render_to(v, name, layout, data, &b, err);
    if (rc != 0) {
        free(b.base);
        return rc;
    }
    if (b.base == NULL && (b.base = calloc(1, 1)) == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    *out = b.base;
    if (len)
        *len = b.len;
    return 0;
}
