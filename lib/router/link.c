/* SPDX-License-Identifier: MIT */
/*
 * Link generation: from a route and a set of values back to a URL. The route's segments are
 * written in order, parameters from the values (or their defaults); trailing segments that may
 * be left out are left out when they have no value or only their default, the way ASP.NET Core
 * writes "/" rather than "/Home/Index". Values that name no parameter become the query string.
 * Every value is percent-encoded and checked against the parameter's constraints.
 */
#include <string.h>
#include "router_internal.h"

struct out {
    char *buf;
    size_t size, len;
};

static void put(struct out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, o->len++)
        if (o->len + 1 < o->size)
            o->buf[o->len] = s[i];
}

/* Unreserved characters, plus (in paths) the sub-delimiters, ':' and '@' of RFC 3986. */
static int keep(unsigned char c, int in_path, int keep_slash)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        c == '-' || c == '.' || c == '_' || c == '~')
        return 1;
    if (c == '/')
        return keep_slash;
    return in_path && c != 0 && strchr("!$'()*+,;:@", c) != NULL;
}

static void put_encoded(struct out *o, const char *s, size_t n, int in_path, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (keep(c, in_path, keep_slash)) {
            put(o, (const char *)&c, 1);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            put(o, e, 3);
        }
    }
}

static const char *value_of(const canal_kv_t *values, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (values[i].key != NULL && values[i].value != NULL && strcmp(values[i].key, key) == 0)
            return values[i].value;
    return NULL;
}

/* A complex segment's parts: the literals, and the values, each non-empty and accepted by
 * its constraints; an optional last parameter without a value is left out with its '.', when
 * a part comes before them (as the matcher leaves it out: ".{p?}" needs its value). */
static int complex_link(const struct canal_route *rt, const struct tseg *s, const canal_kv_t *values,
                        size_t nvalues, struct out *o)
{
    size_t n = s->nparts;
    const struct tseg *last = &s->parts[n - 1];
    if (last->optional) {
        const char *v = value_of(values, nvalues, rt->params[last->param].name);
        if ((v == NULL || v[0] == '\0') && n >= 3)
            n -= 2;
    }
    for (size_t k = 0; k < n; k++) {
        const struct tseg *part = &s->parts[k];
        if (part->kind == SEG_LITERAL) {
            put_encoded(o, part->text, part->len, 1, 0);
            continue;
        }
        const char *v = value_of(values, nvalues, rt->params[part->param].name);
        canal_str_t val = {v, v ? strlen(v) : 0};
        if (val.len == 0 || !canal__constraints_ok(part->cons, part->ncons, val))
            return CANAL_EINVAL;
        put_encoded(o, val.base, val.len, 1, 0);
    }
    return 0;
}

int canal_route_link(const canal_route_t *rt, const canal_kv_t *values, size_t nvalues, char *buf,
                     size_t size)
{
    struct out o = {buf, size, 0};
    const char *v[CANAL_ROUTER_MAX_SEGMENTS];

    /* the values of parameter segments: given, else the default, else none */
    for (size_t i = 0; i < rt->nsegs; i++) {
        const struct tseg *s = &rt->segs[i];
        v[i] = NULL;
        if (s->kind == SEG_PARAM || s->kind == SEG_CATCHALL) {
            const struct rparam *p = &rt->params[s->param];
            v[i] = value_of(values, nvalues, p->name);
            if (v[i] == NULL)
                v[i] = p->def;
        }
    }
    /* leave out the trailing segments that may be left out and carry nothing of their own */
    size_t upto = rt->nsegs;
    while (upto > rt->first_omittable) {
        const struct tseg *s = &rt->segs[upto - 1];
        const struct rparam *p = &rt->params[s->param];
        if (v[upto - 1] != NULL && !(p->def != NULL && strcmp(v[upto - 1], p->def) == 0) &&
            !(s->kind == SEG_CATCHALL && v[upto - 1][0] == '\0'))
            break;
        /* the matcher leaves a catch-all out only if its constraints accept "": so must we */
        if (s->kind == SEG_CATCHALL && p->def == NULL && !canal__constraints_ok(s->cons, s->ncons, (canal_str_t){"", 0}))
            break;
        upto--;
    }
    for (size_t i = 0; i < upto; i++) {
        const struct tseg *s = &rt->segs[i];
        put(&o, "/", 1);
        if (s->kind == SEG_LITERAL) {
            put_encoded(&o, s->text, s->len, 1, 0);
            continue;
        }
        if (s->kind == SEG_COMPLEX) {
            if (complex_link(rt, s, values, nvalues, &o) != 0)
                return CANAL_EINVAL;
            continue;
        }
        canal_str_t val = {v[i], v[i] ? strlen(v[i]) : 0};
        if (val.base == NULL || (s->kind == SEG_PARAM && val.len == 0) ||
            !canal__constraints_ok(s->cons, s->ncons, val))
            return CANAL_EINVAL;
        put_encoded(&o, val.base, val.len, 1, rt->params[s->param].keep_slash);
    }
    if (upto == 0)
        put(&o, "/", 1);
    /* the other values go to the query string, in the order given */
    int first = 1;
    for (size_t i = 0; i < nvalues; i++) {
        if (values[i].key == NULL || values[i].value == NULL)
            continue;
        int is_param = 0;
        for (size_t k = 0; k < rt->nparams && !is_param; k++)
            is_param = strcmp(rt->params[k].name, values[i].key) == 0;
        if (is_param)
            continue;
        put(&o, first ? "?" : "&", 1);
        first = 0;
        put_encoded(&o, values[i].key, strlen(values[i].key), 0, 0);
        put(&o, "=", 1);
        put_encoded(&o, values[i].value, strlen(values[i].value), 0, 0);
    }
    if (size > 0)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return (int)o.len;
}

int canal_router_link(const canal_router_t *r, const char *name, const canal_kv_t *values,
                      size_t nvalues, char *buf, size_t size)
{
    const canal_route_t *rt = canal_router_find(r, name);
    if (rt == NULL)
        return CANAL_ENOTFOUND;
    return canal_route_link(rt, values, nvalues, buf, size);
}
