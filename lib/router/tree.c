/* SPDX-License-Identifier: MIT */
/*
 * The router object: registration of routes into the segment tree, route groups, method
 * names, listings and accessors. See router_internal.h for the shape of the tree.
 *
 * Registration checks everything before it changes anything visible: a route that fails to
 * parse, duplicates another or exceeds a limit leaves the router as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "router_internal.h"

canal_router_t *canal_router_create(const canal_router_options_t *opts)
{
    canal_router_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    if (opts != NULL)
        r->opts = *opts;
    r->paths.fold = !r->opts.case_sensitive;
    return r;
}

/* Nodes are carved from slabs, each node at a 64-byte boundary, so that the part the matcher
 * reads is one cache line and nodes made one after the other (a route's path) sit together.
 * Nodes are only freed with their router. */
#define NODES_PER_SLAB 32
#define NODE_STRIDE ((sizeof(struct node) + 63) & ~(size_t)63)
struct node_slab {
    struct node_slab *next;
};

static struct node *node_new(canal_router_t *r)
{
    if (r->slabs == NULL || r->slab_used == NODES_PER_SLAB) {
        struct node_slab *s = calloc(1, sizeof(*s) + 63 + NODES_PER_SLAB * NODE_STRIDE);
        if (s == NULL)
            return NULL;
        s->next = r->slabs;
        r->slabs = s;
        r->slab_used = 0;
    }
    uintptr_t first = ((uintptr_t)(r->slabs + 1) + 63) & ~(uintptr_t)63;
    return (struct node *)(first + r->slab_used++ * NODE_STRIDE);
}

/* Gives back the node node_new() just made (it is still zeroed: only its key was tried). */
static void node_unmake(canal_router_t *r)
{
    r->slab_used--;
}

static void node_dispose(struct node *n)
{
    for (size_t i = 0; i < n->nlits; i++)
        node_dispose(n->lits[i].child);
    for (size_t i = 0; i < n->nparams; i++)
        node_dispose(n->params[i]);
    for (size_t i = 0; i < n->ncatchalls; i++)
        node_dispose(n->catchalls[i]);
    free(n->lits);
    free(n->params);
    free(n->catchalls);
    free(n->eps);
    free(n->key);
}

static void route_free(struct canal_route *route)
{
    canal__route_free_segments(route);
    free(route->method);
    free(route->tmpl);
    free(route->name);
    free(route);
}

void canal_router_destroy(canal_router_t *r)
{
    if (r == NULL)
        return;
    node_dispose(&r->root);
    while (r->slabs != NULL) {
        struct node_slab *s = r->slabs;
        r->slabs = s->next;
        free(s);
    }
    for (size_t i = 0; i < r->nroutes; i++) {
        if (r->routes[i]->dispose != NULL)
            r->routes[i]->dispose(r->routes[i]->data);
        route_free(r->routes[i]);
    }
    free(r->routes);
    while (r->dead != NULL) {
        struct canal_route *route = r->dead;
        r->dead = route->next_dead;
        route_free(route);
    }
    for (size_t i = 0; i < r->nmethods; i++)
        free(r->methods[i]);
    canal__paths_free(&r->paths);
    while (r->groups != NULL) {
        struct canal_route_group *g = r->groups;
        r->groups = g->next;
        free(g->prefix);
        free(g);
    }
    free(r);
}

const canal_router_options_t *canal_router_options(const canal_router_t *r)
{
    return &r->opts;
}

/* RFC 9110 token characters */
static int tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Compares a segment with a literal key (keys of case-insensitive routers are stored folded;
 * fold says the segment is not). Orders by length first, then bytes. */
static int lit_cmp(const char *s, size_t n, const struct lit *key, int fold)
{
    if (n != key->len)
        return n < key->len ? -1 : 1;
    const char *k = n <= CANAL__LIT_INLINE ? key->inl : key->child->key;
    if (!fold)
        return memcmp(s, k, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char a = canal__lower((unsigned char)s[i]), b = (unsigned char)k[i];
        if (a != b)
            return a < b ? -1 : 1;
    }
    return 0;
}

/* Binary search among literal children; *at receives the insertion point. */
struct node *canal__find_literal(const canal_router_t *r, const struct node *n, const char *s,
                                 size_t len, int fold, size_t *at)
{
    size_t lo = 0, hi = n->nlits;
    fold = fold && !r->opts.case_sensitive;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = lit_cmp(s, len, &n->lits[mid], fold);
        if (c == 0) {
            if (at)
                *at = mid;
            return n->lits[mid].child;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (at)
        *at = lo;
    return NULL;
}

/* The child of n for template segment seg, or NULL (and *pos says where it would go). */
static struct node *find_child(const canal_router_t *r, const struct node *n, const struct tseg *seg,
                               size_t *pos)
{
    if (seg->kind == SEG_LITERAL)
        return canal__find_literal(r, n, seg->text, seg->len, 1, pos);
    /* complex segments rank with constrained parameters (their keys start with '/', which no
     * constraint text does) */
    int param = seg->kind == SEG_PARAM || seg->kind == SEG_COMPLEX;
    struct node *const *list = param ? n->params : n->catchalls;
    size_t count = param ? n->nparams : n->ncatchalls;
    for (size_t i = 0; i < count; i++)
        if (list[i]->keylen == seg->len && memcmp(list[i]->key, seg->text, seg->len) == 0)
            return list[i];
    /* constrained nodes go in registration order before the plain one, which stays last */
    *pos = (count > 0 && list[count - 1]->keylen == 0) ? count - 1 : count;
    return NULL;
}

static int insert_at(struct node ***list, uint32_t *count, size_t pos, struct node *child)
{
    struct node **grown = realloc(*list, (*count + 1) * sizeof(*grown));
    if (grown == NULL)
        return CANAL_ENOMEM;
    memmove(grown + pos + 1, grown + pos, (*count - pos) * sizeof(*grown));
    grown[pos] = child;
    *list = grown;
    (*count)++;
    return 0;
}

static int insert_lit(struct node *n, size_t pos, struct node *child)
{
    struct lit *grown = realloc(n->lits, (n->nlits + 1) * sizeof(*grown));
    if (grown == NULL)
        return CANAL_ENOMEM;
    memmove(grown + pos + 1, grown + pos, (n->nlits - pos) * sizeof(*grown));
    grown[pos] = (struct lit){.len = (uint32_t)child->keylen, .child = child};
    if (child->keylen <= CANAL__LIT_INLINE)
        memcpy(grown[pos].inl, child->key, child->keylen);
    n->lits = grown;
    n->nlits++;
    return 0;
}

static struct node *get_child(canal_router_t *r, struct node *n, const struct tseg *seg)
{
    size_t pos = 0;
    struct node *child = find_child(r, n, seg, &pos);
    if (child != NULL)
        return child;
    if ((child = node_new(r)) == NULL)
        return NULL;
    if ((child->key = malloc(seg->len + 1)) == NULL) {
        node_unmake(r);
        return NULL;
    }
    child->seg = seg;
    child->cons = seg->cons;
    child->ncons = (uint32_t)seg->ncons;
    child->complex = seg->kind == SEG_COMPLEX;
    child->depth = n->depth + 1;
    child->keylen = seg->len;
    for (size_t i = 0; i < seg->len; i++)
        child->key[i] = (seg->kind == SEG_LITERAL && !r->opts.case_sensitive)
                            ? (char)canal__lower((unsigned char)seg->text[i])
                            : seg->text[i];
    child->key[seg->len] = '\0';
    int rc;
    if (seg->kind == SEG_LITERAL)
        rc = insert_lit(n, pos, child);
    else if (seg->kind == SEG_PARAM || seg->kind == SEG_COMPLEX)
        rc = insert_at(&n->params, &n->nparams, pos, child);
    else
        rc = insert_at(&n->catchalls, &n->ncatchalls, pos, child);
    if (rc != 0) {
        free(child->key);
        memset(child, 0, sizeof(*child));
        node_unmake(r);
        return NULL;
    }
    return child;
}

/* The node a route reaches after its first depth segments, without creating anything. */
static const struct node *lookup_path(const canal_router_t *r, const struct canal_route *route,
                                      size_t depth)
{
    const struct node *n = &r->root;
    size_t pos;
    for (size_t i = 0; i < depth && n != NULL; i++)
        n = find_child(r, n, &route->segs[i], &pos);
    return n;
}

/* Records that the first depth segments of route, all literal and none empty, lead to n.
 * Best effort: without an entry a request takes the walk, slower but to the same answer. */
static void path_add(canal_router_t *r, const struct canal_route *route, size_t depth, struct node *n)
{
    char key[CANAL_ROUTER_MAX_SEGMENTS * 64];
    size_t len = 0;
    for (size_t i = 0; i < depth; i++) {
        const struct tseg *s = &route->segs[i];
        if (len + s->len + 1 > sizeof(key))
            return; /* a long path: the walk finds it */
        if (i > 0)
            key[len++] = '/';
        memcpy(key + len, s->text, s->len);
        len += s->len;
    }
    /* A '%' or '?' in a key could never be asked for: a request spells them %25 and %3F, and
     * the matcher asks the table only for paths with no escape. */
    if (memchr(key, '%', len) == NULL && memchr(key, '?', len) == NULL)
        canal__paths_add(&r->paths, key, len, n);
}

static int add_endpoint(struct node *n, const struct canal_route *route,
                        size_t omitted)
{
    struct node_route *grown = realloc(n->eps, (n->neps + 1) * sizeof(*grown));
    if (grown == NULL)
        return CANAL_ENOMEM;
    n->eps = grown;
    n->eps[n->neps++] = (struct node_route){.route = route, .mi = route->mi,
                                          .omitted = (uint16_t)omitted};
    return 0;
}

static char *dup_or_null(const char *s, int *failed)
{
    char *d = NULL;
    if (s != NULL && (d = strdup(s)) == NULL)
        *failed = 1;
    return d;
}

int canal_router_add(canal_router_t *r, const canal_route_spec_t *spec, const canal_route_t **out,
                     canal_error_info_t *err)
{
    if (r == NULL || spec == NULL || spec->tmpl == NULL)
        return canal__error(err, CANAL_EINVAL, 0, "no template given");
    const char *method = spec->method != NULL ? spec->method : "GET";
    if (method[0] == '\0')
        return canal__error(err, CANAL_ESYNTAX, 0, "empty method");
    for (const char *m = method; *m; m++)
        if (!tchar((unsigned char)*m))
            return canal__error(err, CANAL_ESYNTAX, 0, "'%c' is not allowed in a method", *m);

    int mi = canal__method_index(r, (canal_str_t){method, strlen(method)});
    if (mi < 0 && r->nmethods == CANAL_ROUTER_MAX_METHODS)
        return canal__error(err, CANAL_ELIMIT, 0, "more than %d methods", CANAL_ROUTER_MAX_METHODS);

    struct canal_route *route = calloc(1, sizeof(*route));
    if (route == NULL)
        return canal__error(err, CANAL_ENOMEM, 0, "out of memory");
    int rc = canal__template_parse(route, spec->tmpl, r->opts.trailing_slash == CANAL_SLASH_STRICT,
                                   !r->opts.case_sensitive, err);
    if (rc != 0)
        goto fail;

    /* a true duplicate: the same method ends at the same node without omitting anything */
    const struct node *end = lookup_path(r, route, route->nsegs);
    if (end != NULL && mi >= 0) {
        for (size_t i = 0; i < end->neps; i++) {
            if (end->eps[i].route->mi == mi && end->eps[i].omitted == 0) {
                rc = canal__error(err, CANAL_EEXIST, 0, "%s %s duplicates %s %s", method, spec->tmpl,
                                  method, end->eps[i].route->tmpl);
                goto fail;
            }
        }
    }
    if (spec->name != NULL) {
        const canal_route_t *named = canal_router_find(r, spec->name);
        if (named != NULL && strcmp(named->tmpl, spec->tmpl) != 0) {
            rc = canal__error(err, CANAL_EEXIST, 0, "route name '%s' is taken by %s", spec->name,
                              named->tmpl);
            goto fail;
        }
    }

    int failed = 0;
    route->method = dup_or_null(method, &failed);
    route->tmpl = dup_or_null(spec->tmpl, &failed);
    route->name = dup_or_null(spec->name, &failed);
    char *new_method = mi < 0 ? dup_or_null(method, &failed) : NULL;
    struct canal_route **grown = realloc(r->routes, (r->nroutes + 1) * sizeof(*grown));
    if (grown != NULL)
        r->routes = grown;
    if (failed || grown == NULL) {
        free(new_method);
        rc = canal__error(err, CANAL_ENOMEM, 0, "out of memory");
        goto fail;
    }
    if (mi < 0) {
        mi = (int)r->nmethods;
        r->method_lens[r->nmethods] = strlen(new_method);
        r->method_words[r->nmethods] =
            r->method_lens[r->nmethods] <= 8 ? canal__load_word(new_method, r->method_lens[r->nmethods]) : 0;
        r->methods[r->nmethods++] = new_method;
    }
    route->mi = mi;
    route->data = spec->data;
    route->dispose = spec->dispose;
    route->index = r->nroutes;

    /* Walk (creating nodes) and add an endpoint at every depth where the rest may be left
     * out. Nodes created before an allocation failure stay, empty and harmless. */
    struct node *path[CANAL_ROUTER_MAX_SEGMENTS + 1];
    path[0] = &r->root;
    for (size_t i = 0; i < route->nsegs; i++)
        if ((path[i + 1] = get_child(r, path[i], &route->segs[i])) == NULL) {
            rc = canal__error(err, CANAL_ENOMEM, 0, "out of memory");
            goto fail_after_nodes;
        }
    size_t added = 0;
    for (size_t d = route->first_omittable; d <= route->nsegs; d++, added++)
        if (add_endpoint(path[d], route, route->nsegs - d) != 0) {
            for (size_t k = 0; k < added; k++)
                path[route->first_omittable + k]->neps--;
            rc = canal__error(err, CANAL_ENOMEM, 0, "out of memory");
            goto fail_after_nodes;
        }
    uint64_t bit = (uint64_t)1 << mi;
    for (size_t d = 0; d <= route->nsegs; d++)
        path[d]->below |= bit;
    /* the ends reached by literal segments only go to the path table; paths with an empty
     * segment stay out ("" would then stand for the root and for "//") */
    size_t literal = 0;
    while (literal < route->nsegs && route->segs[literal].kind == SEG_LITERAL && route->segs[literal].len > 0)
        literal++;
    for (size_t d = route->first_omittable; d <= route->nsegs && d <= literal; d++)
        path_add(r, route, d, path[d]);
    r->routes[r->nroutes++] = route;
    if (out != NULL)
        *out = route;
    return 0;

fail_after_nodes:
    route->next_dead = r->dead;
    r->dead = route;
    return rc;
fail:
    route_free(route);
    return rc;
}

canal_route_group_t *canal_router_group(canal_router_t *r, canal_route_group_t *parent,
                                        const char *prefix)
{
    struct canal_route_group *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return NULL;
    const char *pp = parent != NULL ? parent->prefix : "";
    while (*prefix == '/')
        prefix++;
    size_t n = strlen(prefix);
    while (n > 0 && prefix[n - 1] == '/')
        n--;
    size_t len = strlen(pp) + 1 + n + 1;
    if ((g->prefix = malloc(len)) == NULL) {
        free(g);
        return NULL;
    }
    snprintf(g->prefix, len, "%s%s%.*s", pp, (*pp && n) ? "/" : "", (int)n, prefix);
    g->router = r;
    g->next = r->groups;
    r->groups = g;
    return g;
}

const char *canal_group_prefix(const canal_route_group_t *g)
{
    return g->prefix;
}

int canal_group_add(canal_route_group_t *g, const canal_route_spec_t *spec, const canal_route_t **out,
                    canal_error_info_t *err)
{
    if (spec == NULL || spec->tmpl == NULL)
        return canal__error(err, CANAL_EINVAL, 0, "no template given");
    const char *t = spec->tmpl;
    while (*t == '/')
        t++;
    size_t len = strlen(g->prefix) + strlen(t) + 3;
    char *full = malloc(len);
    if (full == NULL)
        return canal__error(err, CANAL_ENOMEM, 0, "out of memory");
    snprintf(full, len, "/%s%s%s", g->prefix, (*g->prefix && *t) ? "/" : "", t);
    canal_route_spec_t s = *spec;
    s.tmpl = full;
    int rc = canal_router_add(g->router, &s, out, err);
    free(full);
    return rc;
}

size_t canal_router_method_count(const canal_router_t *r)
{
    return r->nmethods;
}

const char *canal_router_method_name(const canal_router_t *r, size_t i)
{
    return i < r->nmethods ? r->methods[i] : NULL;
}

/* snprintf-like appending */
struct out {
    char *buf;
    size_t size, len;
};

static void out_put(struct out *o, const char *s, size_t n)
{
    if (o->len < o->size) {
        size_t room = o->size - o->len - 1;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
    if (o->size > 0)
        o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
}

size_t canal_router_allow_header(const canal_router_t *r, uint64_t allow, char *buf, size_t size)
{
    struct out o = {buf, size, 0};
    int get = canal__method_index(r, (canal_str_t){"GET", 3});
    int head = canal__method_index(r, (canal_str_t){"HEAD", 4});
    int options = canal__method_index(r, (canal_str_t){"OPTIONS", 7});
    int add_head = !r->opts.no_head_from_get && get >= 0 && (allow >> get & 1) &&
                   !(head >= 0 && (allow >> head & 1));
    int add_options = !r->opts.no_auto_options && !(options >= 0 && (allow >> options & 1));
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < r->nmethods; i++) {
        if (!(allow >> i & 1))
            continue;
        if (o.len)
            out_put(&o, ", ", 2);
        out_put(&o, r->methods[i], strlen(r->methods[i]));
        if ((int)i == get && add_head)
            out_put(&o, ", HEAD", 6);
    }
    if (add_options && o.len)
        out_put(&o, ", OPTIONS", 9);
    return o.len;
}

size_t canal_router_route_count(const canal_router_t *r)
{
    return r->nroutes;
}

const canal_route_t *canal_router_route_at(const canal_router_t *r, size_t i)
{
    return i < r->nroutes ? r->routes[i] : NULL;
}

const canal_route_t *canal_router_find(const canal_router_t *r, const char *name)
{
    for (size_t i = 0; i < r->nroutes; i++)
        if (r->routes[i]->name != NULL && strcmp(r->routes[i]->name, name) == 0)
            return r->routes[i];
    return NULL;
}

size_t canal_router_list(const canal_router_t *r, char *buf, size_t size)
{
    struct out o = {buf, size, 0};
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < r->nroutes; i++) {
        const struct canal_route *rt = r->routes[i];
        out_put(&o, rt->method, strlen(rt->method));
        out_put(&o, " ", 1);
        out_put(&o, rt->tmpl, strlen(rt->tmpl));
        if (rt->name != NULL) {
            out_put(&o, " ", 1);
            out_put(&o, rt->name, strlen(rt->name));
        }
        out_put(&o, "\n", 1);
    }
    return o.len;
}

const char *canal_route_method(const canal_route_t *route)
{
    return route->method;
}

const char *canal_route_template(const canal_route_t *route)
{
    return route->tmpl;
}

const char *canal_route_name(const canal_route_t *route)
{
    return route->name;
}

void *canal_route_data(const canal_route_t *route)
{
    return route->data;
}

size_t canal_route_index(const canal_route_t *route)
{
    return route->index;
}

size_t canal_route_param_count(const canal_route_t *route)
{
    return route->nparams;
}

const char *canal_route_param_name(const canal_route_t *route, size_t i)
{
    return i < route->nparams ? route->params[i].name : NULL;
}

size_t canal_route_segment_count(const canal_route_t *route)
{
    return route->nsegs;
}

size_t canal_route_required_segments(const canal_route_t *route)
{
    return route->first_omittable;
}

int canal_route_segment(const canal_route_t *route, size_t i, canal_segment_info_t *out)
{
    if (i >= route->nsegs)
        return CANAL_EINVAL;
    const struct tseg *s = &route->segs[i];
    static const int kinds[] = {[SEG_LITERAL] = CANAL_SEGMENT_LITERAL,
                                [SEG_PARAM] = CANAL_SEGMENT_PARAM,
                                [SEG_CATCHALL] = CANAL_SEGMENT_CATCHALL,
                                [SEG_COMPLEX] = CANAL_SEGMENT_COMPLEX};
    out->kind = kinds[s->kind];
    out->param = s->kind == SEG_LITERAL ? 0 : (size_t)s->param;
    out->nparams = s->kind == SEG_LITERAL ? 0 : 1;
    out->text = s->kind == SEG_LITERAL ? s->text : route->params[s->param].name;
    if (s->kind == SEG_COMPLEX) {
        out->text = s->raw;
        out->nparams = 0;
        for (size_t k = 0; k < s->nparts; k++)
            out->nparams += s->parts[k].kind != SEG_LITERAL;
    }
    return 0;
}

int canal_route_param_info(const canal_route_t *route, size_t i, canal_route_param_info_t *out)
{
    if (i >= route->nparams)
        return CANAL_EINVAL;
    const struct rparam *p = &route->params[i];
    const struct tseg *s = &route->segs[p->seg];
    out->name = p->name;
    out->def = p->def;
    out->optional = p->optional;
    out->catch_all = s->kind == SEG_CATCHALL ? 1 + p->keep_slash : 0;
    out->nconstraints = p->ncons;
    return 0;
}

/* The internal CONS_* are the public CANAL_CONSTRAINT_* in the same order. */
_Static_assert((int)CONS_INT == (int)CANAL_CONSTRAINT_INT &&
                   (int)CONS_ALPHA == (int)CANAL_CONSTRAINT_ALPHA &&
                   (int)CONS_RANGE == (int)CANAL_CONSTRAINT_RANGE &&
                   (int)CONS_REGEX == (int)CANAL_CONSTRAINT_REGEX &&
                   (int)CONS_UTF8 == (int)CANAL_CONSTRAINT_UTF8,
               "constraint kinds out of step");

int canal_route_param_constraint(const canal_route_t *route, size_t i, size_t j,
                                 canal_constraint_info_t *out)
{
    if (i >= route->nparams || j >= route->params[i].ncons)
        return CANAL_EINVAL;
    const struct constraint *c = &route->params[i].cons[j];
    out->kind = c->type;
    out->a = c->a;
    out->b = c->b;
    out->regex = c->re_text;
    out->ecma = c->ecma;
    return 0;
}
