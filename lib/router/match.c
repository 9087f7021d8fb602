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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strndup, strncasecmp, REG_STARTEND: also when built without the Makefile */
#endif
#include <string.h>
#include "router_internal.h"

struct mctx {
    const canal_router_t *r;
    uint64_t mask;    /* the methods sought */
    int collect;      /* 1: visit every match and gather its methods in allow */
    uint64_t allow;
    const char *buf;  /* the decoded path, without its leading '/' */
    const char *folded; /* buf folded (case-insensitive routers), or NULL: fold per segment */
    size_t buflen;
    size_t nsegs;     /* segments in the path (boundaries kept for the first ones only) */
    size_t start[CANAL_ROUTER_MAX_SEGMENTS + 1], len[CANAL_ROUTER_MAX_SEGMENTS + 1];
    canal_str_t cap[CANAL_ROUTER_MAX_SEGMENTS];
    const struct endpoint *ep; /* the result */
    size_t depth;
    int via_catchall;
    canal_str_t rest;
};

/* An endpoint reached by leaving segments out is usable unless a catch-all it leaves out
 * refuses the empty value. */
static int omitted_ok(const struct endpoint *ep)
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

/* The endpoint of n for the sought method: the one that leaves out the fewest segments, then
 * the first registered. In collect mode, records every usable method and returns NULL. */
static const struct endpoint *pick(struct mctx *c, const struct node *n)
{
    const struct endpoint *best = NULL;
    for (size_t i = 0; i < n->neps; i++) {
        const struct endpoint *ep = &n->eps[i];
        uint64_t bit = (uint64_t)1 << ep->mi;
        if (!(c->mask & bit) || (ep->omitted && !omitted_ok(ep)))
            continue;
        if (c->collect)
            c->allow |= bit;
        else if (best == NULL || ep->omitted < best->omitted)
            best = ep;
    }
    return best;
}

static int walk(struct mctx *c, const struct node *n, size_t depth)
{
    if (depth == c->nsegs) {
        if ((c->ep = pick(c, n)) == NULL)
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
        if (c->folded != NULL) {
            key = c->folded + c->start[depth];
        } else if (!c->r->opts.case_sensitive) {
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
            if (!(p->below & c->mask) || !canal__constraints_ok(p->cons, p->ncons, seg))
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
        if ((c->ep = pick(c, ca)) != NULL) {
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
    c->collect = 0;
    if (!(c->r->root.below & c->mask))
        return 0;
    return walk(c, &c->r->root, 0);
}

static void fill(const struct mctx *c, canal_match_t *m)
{
    const struct canal_route *rt = c->ep->route;
    m->route = rt;
    m->data = rt->data;
    m->nparams = 0;
    for (size_t i = 0; i < rt->nparams; i++) {
        const struct rparam *p = &rt->params[i];
        canal_str_t v;
        if (c->via_catchall && p->seg == c->depth)
            v = c->rest;
        else if (p->seg < c->depth)
            v = c->cap[p->seg];
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

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SCAN_WORDS 1
/* The high bit of each zero byte of t (exact: no borrow between bytes). */
static inline uint64_t zero_bytes(uint64_t t)
{
    return ~(((t & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | t | 0x7f7f7f7f7f7f7f7fULL);
}

/* The common case in one pass, 8 bytes at a time: copies the n bytes of the path after its
 * leading '/' into words (zero-padded; folded for case-insensitive routers), hashes them as the
 * path table does (*hash) and notes the segments, which point into the path. Returns 1, with
 * nothing noted, when the path holds a '%' or a NUL: split() decodes those. n is at most
 * 8 * CANAL__PATH_WORDS. */
static int scan(struct mctx *c, const char *p, size_t n, uint64_t *words, int fold, uint64_t *hash)
{
    size_t nw = (n + 7) / 8, seg = 0;
    uint64_t h = canal__hash_init(n);
    c->start[0] = 0;
    for (size_t i = 0; i < nw; i++) {
        uint64_t x;
        if (8 * i + 8 <= n)
            memcpy(&x, p + 8 * i, 8);
        else
            x = canal__load_le(p + 8 * i, n - 8 * i);
        uint64_t bad = zero_bytes(x ^ 0x2525252525252525ULL) | zero_bytes(x); /* '%' or NUL */
        if (i + 1 == nw && n % 8 != 0)
            bad &= ((uint64_t)1 << (8 * (n % 8))) - 1; /* not the padding */
        if (bad)
            return 1;
        for (uint64_t slash = zero_bytes(x ^ 0x2f2f2f2f2f2f2f2fULL); slash; slash &= slash - 1) {
            size_t at = i * 8 + ((size_t)__builtin_ctzll(slash) >> 3);
            if (seg < CANAL_ROUTER_MAX_SEGMENTS)
                c->len[seg] = at - c->start[seg], c->start[seg + 1] = at + 1;
            seg++;
        }
        if (fold)
            x = canal__lower8(x);
        words[i] = x;
        h = canal__hash_step(h, x);
    }
    if (seg <= CANAL_ROUTER_MAX_SEGMENTS)
        c->len[seg] = n - c->start[seg];
    c->nsegs = seg + 1;
    c->buf = p;
    c->buflen = n;
    *hash = h;
    return 0;
}
#else
#define SCAN_WORDS 0
#endif

/* Splits (and decodes) the path after its leading '/'. Returns 0 or 400. */
static int split(struct mctx *c, const char *p, const char *end, char *scratch)
{
    size_t seg = 0, n = (size_t)(end - p), i;
    c->start[0] = 0;
    /* One pass for the common case: no escapes, so segments point into the path itself. A raw
     * NUL is refused like %00: values must be safe to use as C strings, or "/f/a.txt<NUL>.png"
     * would reach a handler as "a.txt" after a check on ".png". */
    for (i = 0; i < n; i++) {
        char ch = p[i];
        if (ch == '/') {
            if (seg < CANAL_ROUTER_MAX_SEGMENTS)
                c->len[seg] = i - c->start[seg], c->start[seg + 1] = i + 1;
            else if (seg == CANAL_ROUTER_MAX_SEGMENTS) /* the last one kept: walk reads it */
                c->len[seg] = i - c->start[seg];
            seg++;
        } else if (ch == '%' || ch == '\0') {
            break;
        }
    }
    if (i == n) {
        c->buf = p;
        c->buflen = n;
    } else {
        size_t o = 0;
        if (memchr(p, '\0', n) != NULL)
            return 400;
        seg = 0;
        while (p < end) {
            char ch = *p++;
            if (ch == '/') {
                if (seg < CANAL_ROUTER_MAX_SEGMENTS)
                    c->len[seg] = o - c->start[seg], c->start[seg + 1] = o + 1;
                else if (seg == CANAL_ROUTER_MAX_SEGMENTS)
                    c->len[seg] = o - c->start[seg];
                seg++;
            } else if (ch == '%') {
                int hi, lo;
                if (end - p < 2 || (hi = canal__hexval((unsigned char)p[0])) < 0 ||
                    (lo = canal__hexval((unsigned char)p[1])) < 0 || (hi | lo) == 0)
                    return 400;
                ch = (char)(hi << 4 | lo);
                p += 2;
            }
            scratch[o++] = ch;
        }
        c->buf = scratch;
        c->buflen = o;
    }
    if (seg <= CANAL_ROUTER_MAX_SEGMENTS)
        c->len[seg] = c->buflen - c->start[seg];
    c->nsegs = seg + 1;
    return 0;
}

int canal_router_match(const canal_router_t *r, canal_str_t method, canal_str_t path, char *scratch,
                       size_t scratch_size, canal_match_t *m)
{
    struct mctx c;
    if (scratch_size < path.len)
        return CANAL_EINVAL;
    const char *end = memchr(path.base, '?', path.len);
    if (end == NULL)
        end = path.base + path.len;
    if (end == path.base || path.base[0] != '/')
        return 400;
    c.r = r;
    c.allow = 0;
    c.folded = NULL;
    int mi = canal__method_index(r, method);
    int fallback = -1;
    if (!r->opts.no_head_from_get && method.len == 4 && memcmp(method.base, "HEAD", 4) == 0)
        fallback = canal__method_index(r, (canal_str_t){"GET", 3});

    /* The fast way for literal routes. A path of literals only: the walk would follow literal
     * children all the way down (they come first at every level) and answer with that node's
     * endpoint if it has one; only when it has none must the walk look further. With no
     * escapes and no NUL the path is its own decoded form (a decoded %2F would not be a
     * separator, so decoded paths never use the table): one probe. scan() prepares the probe
     * and splits the path in the same pass. */
    const char *p = path.base + 1;
    size_t rawlen = (size_t)(end - p);
    uint64_t words[CANAL__PATH_WORDS], h = 0;
    int scanned = SCAN_WORDS && rawlen <= sizeof(words);
    int escaped = 1;
#if SCAN_WORDS
    if (scanned && !(escaped = scan(&c, p, rawlen, words, !r->opts.case_sensitive, &h)) &&
        !r->opts.case_sensitive)
        c.folded = (const char *)words;
#endif
    int slash_end = rawlen > 0 && end[-1] == '/';
    if (r->npaths > 0 && mi >= 0 && !(r->opts.trailing_slash == CANAL_SLASH_REDIRECT && slash_end)) {
        /* the request's own method only: a HEAD route anywhere beats the GET fallback. The
         * table holds no path with an empty segment: "//" (trimmed to "") is not the root. */
        const struct node *n = NULL;
        if (r->opts.trailing_slash == CANAL_SLASH_IGNORE && slash_end) {
            if (rawlen > 1 && memchr(p, '%', rawlen) == NULL && memchr(p, '\0', rawlen) == NULL)
                n = canal__path_lookup(r, p, rawlen - 1);
        } else if (scanned && !escaped) {
            n = canal__path_probe(r, words, rawlen, h);
        } else if (!scanned && memchr(p, '%', rawlen) == NULL && memchr(p, '\0', rawlen) == NULL) {
            n = canal__path_lookup(r, p, rawlen);
        }
        c.mask = (uint64_t)1 << mi;
        c.collect = 0;
        if (n != NULL && (n->below & c.mask) && (c.ep = pick(&c, n)) != NULL) {
            c.depth = n->depth;
            c.via_catchall = 0;
            fill(&c, m);
            return 200;
        }
    }

    if (rawlen == 0) {
        c.nsegs = 0;
        c.buf = end;
        c.buflen = 0;
    } else if ((!scanned || escaped) && split(&c, p, end, scratch) != 0) {
        return 400;
    }
    /* a trailing '/' (an empty last segment) */
    int trailing = c.nsegs > 0 && end[-1] == '/';
    if (trailing && r->opts.trailing_slash == CANAL_SLASH_IGNORE) {
        c.nsegs--;
        c.buflen = c.buflen > 0 ? c.buflen - 1 : 0;
    }

    if (try_method(&c, mi) || try_method(&c, fallback)) {
        fill(&c, m);
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
