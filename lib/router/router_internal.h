/* SPDX-License-Identifier: MIT */
/*
 * The router's private structures, shared by its files:
 *   template.c  parses a template into segments and constraints, checks constraint values
 *   tree.c      the router object, registration into the segment tree, groups, listings
 *   match.c     decoding a path and walking the tree
 *   link.c      link generation
 *   values.c    the strict value parsers and percent-decoding of the public API
 *
 * A route's template becomes an array of segments. The tree has one node per distinct
 * segment prefix: literal children (sorted, for binary search), parameter children (nodes keyed
 * by their constraint text, so {id} and {name} at the same place share a node; constrained
 * first, in registration order, the plain one last) and catch-all children (likewise). Each node
 * keeps the endpoints (route + method) that end there, and a mask of the methods that end at or
 * below it, so the matcher skips branches that cannot answer the request's method.
 */
#ifndef CANAL_ROUTER_INTERNAL_H
#define CANAL_ROUTER_INTERNAL_H

#include <regex.h>
#include <stdint.h>
#include "canal/router.h"

enum { SEG_LITERAL, SEG_PARAM, SEG_CATCHALL };

enum {
    CONS_INT, CONS_LONG, CONS_BOOL, CONS_DOUBLE, CONS_GUID, CONS_ALPHA, CONS_MIN, CONS_MAX,
    CONS_RANGE, CONS_LENGTH, CONS_MINLENGTH, CONS_MAXLENGTH, CONS_REGEX, CONS_UTF8
};

struct constraint {
    int type;
    int64_t a, b;
    regex_t *re;
};

struct tseg {
    int kind;
    char *text;    /* literal: unescaped text; parameter: canonical constraint text ("" plain) */
    size_t len;
    size_t pos;    /* byte offset of the segment in the template, for error positions */
    int param;     /* parameters: index into route->params */
    struct constraint *cons;
    size_t ncons;
};

struct rparam {
    char *name;
    size_t name_len;
    size_t seg;       /* index of its segment */
    char *def;        /* default value, or NULL */
    int optional;     /* {x?} */
    int keep_slash;   /* {**x}: link generation keeps '/' */
};

struct canal_route {
    char *method;
    int mi;           /* method index in the router */
    char *tmpl;       /* as registered */
    char *name;
    void *data;
    void (*dispose)(void *);
    size_t index;     /* registration order */
    struct tseg *segs;
    size_t nsegs;
    size_t first_omittable; /* segments from this index on may all be left out */
    struct rparam params[CANAL_ROUTER_MAX_PARAMS];
    size_t nparams;
    struct canal_route *next_dead; /* see canal_router.dead */
};

struct endpoint {
    int mi;           /* the route's method index, kept here to spare a read of the route */
    const struct canal_route *route;
    size_t omitted;   /* number of trailing template segments left out to end here */
};

/* A literal child, with its key (when short) beside the pointer, so that a binary search
 * reads one array and not a node and a string per comparison. */
#define CANAL__LIT_INLINE 20
struct lit {
    uint32_t len;
    char inl[CANAL__LIT_INLINE]; /* the key if len <= CANAL__LIT_INLINE */
    const char *key;             /* the child's key */
    struct node *child;
};

struct node {
    const struct tseg *seg; /* the segment that made this node (NULL for the root) */
    char *key;              /* literal: folded per the case policy; parameter: constraint text */
    size_t keylen;
    struct lit *lits;
    struct node **params, **catchalls;
    size_t nlits, nparams, ncatchalls;
    struct endpoint *eps;
    size_t neps;
    uint64_t below;         /* methods with an endpoint here or below */
    size_t depth;           /* segments from the root to here */
};

/* The nodes reached by all-literal paths, by their folded path ("a/b"), so a request for a
 * literal route is one hash probe instead of a walk (match.c checks it gives the same answer). */
struct lit_path {
    uint64_t hash;
    char *key;
    size_t len;
    struct node *node;
};

struct canal_route_group {
    struct canal_route_group *next;
    canal_router_t *router;
    char *prefix;
};

struct canal_router {
    canal_router_options_t opts;
    struct node root;
    struct canal_route **routes;
    size_t nroutes;
    char *methods[CANAL_ROUTER_MAX_METHODS];
    size_t method_lens[CANAL_ROUTER_MAX_METHODS];
    size_t nmethods;
    struct canal_route_group *groups;
    /* Routes whose registration ran out of memory after creating tree nodes: the nodes point
     * at their segments, so they live until the router is destroyed. */
    struct canal_route *dead;
    struct lit_path *paths;      /* open addressing, a power of two long */
    size_t npaths, paths_cap;
};

/* template.c */
int canal__template_parse(struct canal_route *route, const char *tmpl, int strict_slash,
                          canal_error_info_t *err);
void canal__route_free_segments(struct canal_route *route);
int canal__constraints_ok(const struct constraint *cons, size_t ncons, canal_str_t value);

/* tree.c */
int canal__method_index(const canal_router_t *r, canal_str_t method);
/* s must already be folded (case-insensitive routers) unless fold is 1 */
struct node *canal__find_literal(const canal_router_t *r, const struct node *n, const char *s,
                                 size_t len, int fold, size_t *at);

/* tree.c: the all-literal path table */
uint64_t canal__path_hash(const char *s, size_t len, int fold);
struct node *canal__path_lookup(const canal_router_t *r, const char *s, size_t len);

/* shared helpers */
int canal__hexval(unsigned char c); /* 0-15, or -1 */
int canal__error(canal_error_info_t *err, int code, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline unsigned char canal__lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

#endif
