/* SPDX-License-Identifier: MIT */
/*
 * Matching: split the raw path on '/', percent-decode each segment, then walk the tree
 * depth-first. At each node the literal child for the segment is tried first (binary search),
 * then the parameter children whose constraints accept the segment (constrained ones first,
 * the plain one last), then the catch-all children with the rest of the path. A branch that
 * fails deeper down is left and the next candidate tried (backtracking). Nodes carry a mask of
 * the methods that end at or below them, so branches that cannot answer are skipped.
 *
 * Nothing here allocates: the decoded path goes to the caller's scratch memory (or, when the
 * path has no '%', values point straight into the path) and the walk state lives on the stack.
 *
 * One way through: the table of literal paths (paths.c) answers a path that is one of its keys
 * in one probe when it can; otherwise split() cuts and decodes the path (the only splitter) and
 * the walk answers.
 */
#include <string.h>
#include "router_internal.h"

struct mctx {
    const canal_router_t *r;
    uint64_t mask;    /* the methods sought */
    int collect;      /* 1: visit every match and gather its methods in allow */
    int mi;           /* not collecting: the method sought (mask is its bit) */
    uint64_t allow;
    const char *buf;  /* the decoded path, without its leading '/' */
    size_t buflen;
    size_t nsegs;     /* segments in the path (boundaries kept for the first ones only) */
    size_t start[CANAL_ROUTER_MAX_SEGMENTS + 1], len[CANAL_ROUTER_MAX_SEGMENTS + 1];
    canal_str_t cap[CANAL_ROUTER_MAX_SEGMENTS];
    const struct node_route *ep; /* the result */
    size_t depth;
    int via_catchall;
    canal_str_t rest;
};

/* An endpoint reached by leaving segments out is usable unless a catch-all it leaves out
 * refuses the empty value. */
static int omitted_ok(const struct node_route *ep)
{
    const struct canal_route *rt = ep->route;
    for (size_t i = rt->nsegs - ep->omitted; i < rt->nsegs; i++) {
        const struct tseg *s = &rt->segs[i];
        if (s->kind == SEG_CATCHALL && rt->params[s->param].def == NULL &&
            !canal__constraints_ok(s->cons, s->ncons, (canal_str_t){"", 0}))
            return 0;
    }
    return 1;
}

/* The endpoint of n for the methods in mask: the one that leaves out the fewest segments, then
 * the first registered. With allow (collect mode), records every usable method there and
 * returns NULL. */
static const struct node_route *pick(const struct node *n, uint64_t mask, uint64_t *allow)
{
    const struct node_route *best = NULL;
    for (size_t i = 0; i < n->neps; i++) {
        const struct node_route *ep = &n->eps[i];
        uint64_t bit = (uint64_t)1 << ep->mi;
        if (!(mask & bit) || (ep->omitted && !omitted_ok(ep)))
            continue;
        if (allow != NULL)
            *allow |= bit;
        else if (best == NULL || ep->omitted < best->omitted)
            best = ep;
    }
    return best;
}

/* pick() for one method, mi. Registration refuses a second endpoint of one method that omits
 * nothing at one node, so such an endpoint, when there is one, is pick()'s answer: the common
 * case costs a short loop. */
static inline const struct node_route *pick_method(const struct node *n, int mi)
{
    for (uint32_t i = 0; i < n->neps; i++)
        if (n->eps[i].mi == mi && n->eps[i].omitted == 0)
            return &n->eps[i];
    uint64_t bit = (uint64_t)1 << mi;
    return (n->below & bit) ? pick(n, bit, NULL) : NULL; /* one that leaves segments out */
}

/* The endpoint of n the walk is after, or NULL; in collect mode, records methods and returns
 * NULL. */
static inline const struct node_route *walk_pick(struct mctx *c, const struct node *n)
{
    return c->collect ? pick(n, c->mask, &c->allow) : pick_method(n, c->mi);
}

static int walk(struct mctx *c, const struct node *n, size_t depth)
{
    if (depth == c->nsegs) {
        if ((c->ep = walk_pick(c, n)) == NULL)
            return 0;
        c->depth = depth;
        c->via_catchall = 0;
        return 1;
    }
    canal_str_t seg = {c->buf + c->start[depth], c->len[depth]};
    if (n->nlits > 0) {
        /* fold the segment once (case-insensitive routers store folded keys), not per compare */
        char folded[128];
        const char *key = seg.base;
        int fold = 0;
        if (!c->r->opts.case_sensitive) {
            if (seg.len <= sizeof(folded)) {
                for (size_t i = 0; i < seg.len; i++)
                    folded[i] = (char)canal__lower((unsigned char)seg.base[i]);
                key = folded;
            } else {
                fold = 1;
            }
        }
        const struct node *child = canal__find_literal(c->r, n, key, seg.len, fold, NULL);
        if (child != NULL && (child->below & c->mask) && walk(c, child, depth + 1))
            return 1;
    }
    if (seg.len > 0) {
        for (size_t i = 0; i < n->nparams; i++) {
            const struct node *p = n->params[i];
            if (!(p->below & c->mask) ||
                !(p->complex ? canal__complex_match(p->seg, seg, !c->r->opts.case_sensitive, NULL)
                             : canal__constraints_ok(p->cons, p->ncons, seg)))
                continue;
            c->cap[depth] = seg;
            if (walk(c, p, depth + 1))
                return 1;
        }
    }
    for (size_t i = 0; i < n->ncatchalls; i++) {
        const struct node *ca = n->catchalls[i];
        canal_str_t rest = {seg.base, c->buflen - c->start[depth]};
        if (!(ca->below & c->mask) || !canal__constraints_ok(ca->cons, ca->ncons, rest))
            continue;
        if ((c->ep = walk_pick(c, ca)) != NULL) {
            c->depth = depth;
            c->via_catchall = 1;
            c->rest = rest;
            return 1;
        }
    }
    return 0;
}

static int try_method(struct mctx *c, int mi)
{
    if (mi < 0)
        return 0;
    c->mask = (uint64_t)1 << mi;
    c->mi = mi;
    c->collect = 0;
    if (!(c->r->root.below & c->mask))
        return 0;
    return walk(c, &c->r->root, 0);
}

/* The values of the route of ep, reached at depth segments: captures (cap) for the segments
 * walked, the rest of the path for a catch-all met at depth (rest, or NULL), defaults and
 * empty catch-alls for the segments left out. */
static inline __attribute__((always_inline)) void
fill(const struct node_route *ep, size_t depth, const canal_str_t *cap, const canal_str_t *rest,
     int fold, canal_match_t *m)
{
    const struct canal_route *rt = ep->route;
    m->route = rt;
    m->index = rt->index;
    m->data = rt->data;
    m->nparams = 0;
    for (size_t i = 0; i < rt->nparams; i++) {
        const struct rparam *p = &rt->params[i];
        canal_str_t v;
        if (rest != NULL && p->seg == depth)
            v = *rest;
        else if (p->seg < depth && !p->complex)
            v = cap[p->seg];
        else if (p->seg < depth) { /* the split the walk accepted, again */
            canal_str_t parts[CANAL__MAX_PARTS];
            canal__complex_match(&rt->segs[p->seg], cap[p->seg], fold, parts);
            if ((v = parts[p->part]).len == 0)
                continue; /* an optional parameter left out */
        }
        else if (p->def != NULL)
            v = (canal_str_t){p->def, strlen(p->def)};
        else if (rt->segs[p->seg].kind == SEG_CATCHALL)
            v = (canal_str_t){"", 0};
        else
            continue; /* an optional parameter left out */
        m->params[m->nparams].name = (canal_str_t){p->name, p->name_len};
        m->params[m->nparams++].value = v;
    }
}

/* Notes a '/' at w (in the decoded path) as the end of segment *seg. Boundaries are kept for
 * the first CANAL_ROUTER_MAX_SEGMENTS + 1 segments: past that no route can match, and the walk
 * stops at the last one it keeps. */
static inline void boundary(struct mctx *c, size_t *seg, size_t w)
{
    if (*seg < CANAL_ROUTER_MAX_SEGMENTS)
        c->len[*seg] = w - c->start[*seg], c->start[*seg + 1] = w + 1;
    else if (*seg == CANAL_ROUTER_MAX_SEGMENTS)
        c->len[*seg] = w - c->start[*seg];
    (*seg)++;
}

/* The bytes split() must look at: '/', '?', '%' and NUL. */
static const unsigned char special[256] = {['/'] = 1, ['?'] = 1, ['%'] = 1, ['\0'] = 1};

/* The one splitter: the n bytes at p (the path after its leading '/') up to the first '?', cut
 * on the raw '/' into segments, each percent-decoded. Values point into the path itself until
 * the first escape; from there on the decoded path is written to scratch (the bytes before it
 * copied first). A raw NUL is refused like %00: values must be safe to use as C strings, or
 * "/f/a.txt<NUL>.png" would reach a handler as "a.txt" after a check on ".png". Returns 0, with
 * *raw the length of the path before its query, or 400. */
static int split(struct mctx *c, const char *p, size_t n, char *scratch, size_t *raw)
{
    char *out = NULL; /* scratch, once an escape was met */
    size_t seg = 0, w = 0, i = 0;
    c->start[0] = 0;
    while (i < n) {
        size_t from = i;
        const unsigned char *q = (const unsigned char *)p + i, *e = (const unsigned char *)p + n;
        while (q + 2 <= e && !(special[q[0]] | special[q[1]])) /* the bytes between specials */
            q += 2;
        q += q < e && !special[*q];
        q += q < e && !special[*q];
        i = (size_t)(q - (const unsigned char *)p);
        if (out != NULL)
            memmove(out + w, p + from, i - from);
        w += i - from;
        if (i == n || p[i] == '?')
            break;
        char ch = p[i];
        if (ch == '/') {
            boundary(c, &seg, w);
            i++;
        } else if (ch == '%') {
            int hi, lo;
            if (n - i < 3 || (hi = canal__hexval((unsigned char)p[i + 1])) < 0 ||
                (lo = canal__hexval((unsigned char)p[i + 2])) < 0 || (hi | lo) == 0)
                return 400;
            if (out == NULL)
                out = memcpy(scratch, p, i); /* w == i: nothing decoded before */
            ch = (char)(hi << 4 | lo);
            i += 3;
        } else {
            return 400; /* NUL */
        }
        if (out != NULL)
            out[w] = ch;
        w++;
    }
    *raw = i;
    c->buf = out != NULL ? out : p;
    c->buflen = w;
    if (seg <= CANAL_ROUTER_MAX_SEGMENTS)
        c->len[seg] = w - c->start[seg];
    c->nsegs = i == 0 ? 0 : seg + 1; /* "/" has no segment */
    return 0;
}

/* The endpoint the walk would find, from the table of literal paths, or NULL: split and walk.
 * A path that is a key as it comes has no query, escape, NUL, empty segment or trailing '/'
 * (no key holds one), so its segments are the key's literals, and the walk would follow
 * literal children all the way to the key's node (they come first at every level): if that
 * node answers the method, so does the walk. HEAD falls back on GET here only when the router
 * has no HEAD route at all: a HEAD route anywhere beats the fallback. A literal path in any
 * other form (with a query, say) takes the walk, to the same answer. */
static inline const struct node_route *from_table(const canal_router_t *r, canal_str_t path, int mi,
                                                int fallback)
{
    const struct node *n = canal__paths_find(&r->paths, path.base + 1, path.len - 1);
    if (n == NULL || (mi < 0 && (mi = fallback) < 0))
        return NULL;
    return pick_method(n, mi);
}

int canal_router_match(const canal_router_t *r, canal_str_t method, canal_str_t path, char *scratch,
                       size_t scratch_size, canal_match_t *m)
{
    struct mctx c;
    size_t raw;
    if (scratch_size < path.len)
        return CANAL_EINVAL;
    if (path.len == 0 || path.base[0] != '/')
        return 400;
    int mi = canal__method_index(r, method), fallback = -1;
    if (!r->opts.no_head_from_get && method.len == 4 && memcmp(method.base, "HEAD", 4) == 0)
        fallback = canal__method_index(r, (canal_str_t){"GET", 3});
    const struct node_route *ep = from_table(r, path, mi, fallback);
    if (ep != NULL) {
        fill(ep, ep->route->nsegs - ep->omitted, NULL, NULL, 0, m); /* literals: no captures */
        return 200;
    }

    c.r = r;
    c.allow = 0;
    if (split(&c, path.base + 1, path.len - 1, scratch, &raw) != 0)
        return 400;
    const char *end = path.base + 1 + raw;

    /* a trailing '/' (an empty last segment) */
    int trailing = c.nsegs > 0 && end[-1] == '/';
    if (trailing && r->opts.trailing_slash == CANAL_SLASH_IGNORE) {
        c.nsegs--;
        c.buflen--;
    }

    if (try_method(&c, mi) || try_method(&c, fallback)) {
        fill(c.ep, c.depth, c.cap, c.via_catchall ? &c.rest : NULL, !r->opts.case_sensitive, m);
        return 200;
    }
    if (trailing && r->opts.trailing_slash == CANAL_SLASH_REDIRECT) {
        c.nsegs--;
        c.buflen--;
        if (try_method(&c, mi) || try_method(&c, fallback)) {
            m->location = (canal_str_t){path.base, (size_t)(end - path.base) - 1};
            return 308;
        }
        c.nsegs++;
        c.buflen++;
    }
    c.mask = ~(uint64_t)0;
    c.collect = 1;
    walk(&c, &r->root, 0);
    m->allow = c.allow;
    if (c.allow == 0)
        return 404;
    if (!r->opts.no_auto_options && method.len == 7 && memcmp(method.base, "OPTIONS", 7) == 0)
        return 204;
    return 405;
}

const canal_str_t *canal_match_get(const canal_match_t *m, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < m->nparams; i++)
        if (m->params[i].name.len == n && memcmp(m->params[i].name.base, name, n) == 0)
            return &m->params[i].value;
    return NULL;
}
