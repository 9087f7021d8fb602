/* SPDX-License-Identifier: MIT */
/**
 * @file canal/router.h
 * canal's router: route templates, a segment tree, matching and link generation.
 *
 * Pure C11 and libc: this header and lib/router/ include nothing from h2o or jansson, so the
 * router can be used on its own ("router only" mode) or under any HTTP server.
 *
 * Life cycle: create a router, add routes (registration copies every string it is given),
 * then match from any number of threads at once: matching never writes to the router and
 * never allocates. Adding routes while other threads match is not allowed.
 *
 * Template grammar (docs/routing.md has the whole story):
 *   literal segments          home/plaintext         compared with the decoded path segment
 *   parameters                {id}                   one non-empty segment
 *   constraints               {id:int}  {id:int:min(1)}  int long bool double guid alpha
 *                             min(n) max(n) range(a,b) length(n) length(a,b) minlength(n)
 *                             maxlength(n) regex(PCRE2) utf8
 *   optional, default         {id?}  {action=Index}  only where every later segment may be
 *                             omitted too
 *   catch-all                 {*path}  {**path}      the rest of the path, possibly empty
 *   complex segments          {name}.{ext}  {lang}-{region}  {p1}.{p2?}  split from the right,
 *                             as ASP.NET Core splits them; an optional part only last, after '.'
 *   escaped braces            {{ and }} in literals and constraint arguments
 * Segments are never empty: "a//b" is an error (CANAL_ESYNTAX at the second '/').
 *
 * Regex dialect: regex(...) is PCRE2 (UTF-8, JIT-compiled), read as ASP.NET Core reads its
 * regex constraint: found anywhere in the value (not anchored: write ^...$), case-insensitive
 * unless the router is case_sensitive; `\d`, `\w`, `\s`, `\b` are ASCII-only (as in
 * ECMA-262); `$` matches only at the very end; a value that is not valid UTF-8 matches no regex.
 * Matching allocates nothing (with the JIT) and is thread-safe. Every regex must also have an
 * ECMA-262 form (canal_constraint_info_t.ecma, OpenAPI's `pattern`): backreferences,
 * possessive quantifiers, atomic groups, inline options ((?i)), recursion, conditionals and
 * verbs are refused at registration (CANAL_EINVAL).
 *
 * Priority: at the first segment where candidates differ, a literal beats a constrained
 * parameter or a complex segment (those two in registration order), which beat a plain
 * parameter, which beats a catch-all; the matcher walks the tree depth-first and backtracks
 * when a branch fails deeper down.
 */
#ifndef CANAL_ROUTER_H
#define CANAL_ROUTER_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A byte string that is not NUL-terminated. Borrowed: it points into someone else's memory. */
typedef struct canal_str {
    const char *base; /**< the first byte; may be NULL when len is 0 */
    size_t len;       /**< the number of bytes */
} canal_str_t;

/** A key and a NUL-terminated value, used to pass route values to link generation. */
typedef struct canal_kv {
    const char *key;   /**< the name, NUL-terminated */
    const char *value; /**< the value, NUL-terminated */
} canal_kv_t;

/** Most segments a template may have. */
#define CANAL_ROUTER_MAX_SEGMENTS 32
/** Most parameters a template may have (and so a match may capture). */
#define CANAL_ROUTER_MAX_PARAMS 16
/** Most distinct methods one router knows. */
#define CANAL_ROUTER_MAX_METHODS 64

/** What the router does with a path that ends in '/'. */
typedef enum canal_trailing_slash {
    CANAL_SLASH_IGNORE = 0, /**< default: "/a/" matches as "/a" */
    CANAL_SLASH_STRICT,     /**< "/a/" has an empty last segment and does not match "a" */
    CANAL_SLASH_REDIRECT    /**< "/a/" answers 308 to "/a" when "/a" matches */
} canal_trailing_slash_t;

/** Router options. All-zero is the default: the struct is meant for designated initializers. */
typedef struct canal_router_options {
    int case_sensitive;     /**< 0: literals compare ASCII case-insensitively (default) */
    canal_trailing_slash_t trailing_slash; /**< default CANAL_SLASH_IGNORE */
    int no_head_from_get;   /**< 0: a HEAD request is answered by the GET route (default) */
    int no_auto_options;    /**< 0: OPTIONS without a route answers 204 with Allow (default) */
} canal_router_options_t;

/** A router: routes, their tree and options. Opaque; canal_router_create() and
 * canal_router_destroy(). */
typedef struct canal_router canal_router_t;
/** A registered route. Opaque; owned by its router. */
typedef struct canal_route canal_route_t;
/** A route group (a template prefix). Opaque; owned by its router. */
typedef struct canal_route_group canal_route_group_t;

/** One route to register. Strings are copied; data is borrowed unless dispose is given. */
typedef struct canal_route_spec {
    const char *method;   /**< an HTTP method token, case-sensitive; NULL means "GET" */
    const char *tmpl;     /**< the route template; a leading '/' is optional */
    const char *name;     /**< a route name for link generation, or NULL */
    void *data;           /**< returned with every match of this route */
    void (*dispose)(void *data); /**< if set, called on data when the router is destroyed */
} canal_route_spec_t;

/** A captured route value: the parameter's name and its percent-decoded value. */
typedef struct canal_param {
    canal_str_t name;  /**< the parameter's name (or a query key) */
    canal_str_t value; /**< its value, percent-decoded */
} canal_param_t;

/**
 * The result of canal_router_match(). Owned by the caller (it may live on the stack); values
 * point into the router (names, defaults) and into the scratch buffer given to the match.
 */
typedef struct canal_match {
    const canal_route_t *route; /**< 200: the route that matched */
    size_t index;               /**< 200: its number (canal_route_index()) */
    void *data;                 /**< 200: that route's data */
    uint64_t allow;             /**< 405 and 204: bit i set when method i matches the path */
    canal_str_t location;       /**< 308: the path (no query) to redirect to */
    size_t nparams;             /**< 200: number of values in params */
    canal_param_t params[CANAL_ROUTER_MAX_PARAMS]; /**< in template order */
} canal_match_t;

/**
 * Creates a router. opts may be NULL for the defaults; it is copied.
 * Returns NULL when out of memory.
 */
CANAL_API canal_router_t *canal_router_create(const canal_router_options_t *opts);

/** Destroys a router, its routes and groups, calling each route's dispose. NULL is a no-op. */
CANAL_API void canal_router_destroy(canal_router_t *r);

/** The options the router was created with. Borrowed. */
CANAL_API const canal_router_options_t *canal_router_options(const canal_router_t *r);

/**
 * Registers a route.
 * @param r     the router.
 * @param spec  the route: method, template, name, data; the strings are copied.
 * @param route if not NULL, receives the new route (owned by the router).
 * @param err   if not NULL, filled on failure with the byte position in the template and a
 *              message.
 * @return 0; CANAL_ESYNTAX for a malformed template or method, CANAL_EINVAL for an unknown
 *         constraint or bad constraint argument, CANAL_EEXIST for a route that duplicates one
 *         already registered for the same method or a route name already taken by another
 *         template, CANAL_ELIMIT past a CANAL_ROUTER_MAX_* limit, CANAL_ENOMEM. On failure the
 *         router is unchanged and dispose is not called.
 */
CANAL_API int canal_router_add(canal_router_t *r, const canal_route_spec_t *spec,
                               const canal_route_t **route, canal_error_info_t *err);

/**
 * Creates a route group: a template prefix put before the template of every route added
 * through it. parent may be NULL (the router's root) or another group, whose prefix comes
 * first. The group is owned by the router. Returns NULL when out of memory.
 */
CANAL_API canal_route_group_t *canal_router_group(canal_router_t *r, canal_route_group_t *parent,
                                                  const char *prefix);

/** Registers a route under a group: as canal_router_add() with the group's prefix. */
CANAL_API int canal_group_add(canal_route_group_t *g, const canal_route_spec_t *spec,
                              const canal_route_t **route, canal_error_info_t *err);

/** The group's full prefix, without leading or trailing '/'. Borrowed. */
CANAL_API const char *canal_group_prefix(const canal_route_group_t *g);

/**
 * Matches a request.
 * @param r       the router.
 * @param method  the request method, as sent (case-sensitive).
 * @param path    the request target in origin form, percent-encoded as on the wire; anything
 *                from the first '?' on is ignored.
 * @param scratch memory for the decoded path: at least path.len bytes. Captured values point
 *                into it, so it must live as long as the match is used.
 * @param scratch_size the size of scratch in bytes.
 * @param m       receives the outcome; owned by the caller.
 * @return the HTTP status this outcome maps to:
 *         200 matched (m->route, m->data, m->params);
 *         400 the path is malformed (does not start with '/', a bad or truncated
 *             percent-escape, or %00);
 *         404 no route matches the path for any method;
 *         405 routes match the path for other methods only (m->allow);
 *         204 an OPTIONS request with no OPTIONS route, answered automatically (m->allow);
 *         308 trailing-slash policy "redirect": m->location is the path without its '/';
 *         CANAL_EINVAL (negative) if scratch is too small.
 *         Never allocates.
 */
CANAL_API int canal_router_match(const canal_router_t *r, canal_str_t method, canal_str_t path,
                                 char *scratch, size_t scratch_size, canal_match_t *m);

/** A captured value by parameter name (exact comparison), or NULL. Borrowed from m. */
CANAL_API const canal_str_t *canal_match_get(const canal_match_t *m, const char *name);

/** The route's number: its place in registration order, from 0 (canal_router_route_at()). */
CANAL_API size_t canal_route_index(const canal_route_t *route);

/** The number of distinct methods the router knows (they are numbered 0..count-1). */
CANAL_API size_t canal_router_method_count(const canal_router_t *r);
/** The name of method i, NUL-terminated, or NULL past the end. Borrowed. */
CANAL_API const char *canal_router_method_name(const canal_router_t *r, size_t i);

/**
 * Formats an HTTP Allow header value ("GET, HEAD, POST") from a canal_match_t allow mask,
 * adding HEAD for GET and OPTIONS as the router's options say. Writes at most size bytes
 * including the NUL; returns the length it needed (as snprintf).
 */
CANAL_API size_t canal_router_allow_header(const canal_router_t *r, uint64_t allow, char *buf,
                                           size_t size);

/** Number of routes registered. */
CANAL_API size_t canal_router_route_count(const canal_router_t *r);
/** Route i in registration order, or NULL past the end. Borrowed. */
CANAL_API const canal_route_t *canal_router_route_at(const canal_router_t *r, size_t i);
/** The route registered under name, or NULL. Borrowed. */
CANAL_API const canal_route_t *canal_router_find(const canal_router_t *r, const char *name);

/** The route's method, NUL-terminated. Borrowed. */
CANAL_API const char *canal_route_method(const canal_route_t *route);
/** The route's template, exactly as registered (group prefixes included). Borrowed. */
CANAL_API const char *canal_route_template(const canal_route_t *route);
/** The route's name, or NULL. Borrowed. */
CANAL_API const char *canal_route_name(const canal_route_t *route);
/** The route's data as registered. */
CANAL_API void *canal_route_data(const canal_route_t *route);
/** The number of parameters in the route's template. */
CANAL_API size_t canal_route_param_count(const canal_route_t *route);
/** The name of parameter i (template order), or NULL past the end. Borrowed. */
CANAL_API const char *canal_route_param_name(const canal_route_t *route, size_t i);

/** The kinds of a route's segments (canal_route_segment()). */
typedef enum canal_segment_kind {
    CANAL_SEGMENT_LITERAL = 0, /**< literal text */
    CANAL_SEGMENT_PARAM,       /**< a parameter: {x}, {x:int}, {x?}, {x=default} */
    CANAL_SEGMENT_CATCHALL,    /**< a catch-all: {*x} or {**x} */
    CANAL_SEGMENT_COMPLEX      /**< literals and parameters in one segment: {name}.{ext} */
} canal_segment_kind_t;

/** One segment of a route's template, as canal_route_segment() describes it. */
typedef struct canal_segment_info {
    canal_segment_kind_t kind; /**< literal, parameter, catch-all or complex */
    const char *text;    /**< literals: the text with {{ }} unescaped; parameters: the name;
                          *   complex: the segment as written in the template */
    size_t param;        /**< parameters: their index (canal_route_param_info()); complex: the
                          *   index of its first parameter */
    size_t nparams;      /**< 0 for a literal, 1 for a parameter; complex: its parameters,
                          *   param to param + nparams - 1 */
} canal_segment_info_t;

/** A route parameter, as canal_route_param_info() describes it. Strings are borrowed. */
typedef struct canal_route_param_info {
    const char *name;    /**< the parameter's name, as in the template */
    const char *def;     /**< the default ({x=5}), or NULL */
    int optional;        /**< 1 for {x?} */
    int catch_all;       /**< 0; 1 for {*x}; 2 for {**x} (link generation keeps its '/') */
    size_t nconstraints; /**< see canal_route_param_constraint() */
} canal_route_param_info_t;

/** The route constraints (canal_constraint_info_t.kind). */
typedef enum canal_constraint_kind {
    CANAL_CONSTRAINT_INT = 0,   /**< int: a 32-bit integer */
    CANAL_CONSTRAINT_LONG,      /**< long: a 64-bit integer */
    CANAL_CONSTRAINT_BOOL,      /**< bool: true or false, any case */
    CANAL_CONSTRAINT_DOUBLE,    /**< double */
    CANAL_CONSTRAINT_GUID,      /**< guid: 8-4-4-4-12 hex digits, optionally in {} or () */
    CANAL_CONSTRAINT_ALPHA,     /**< alpha: one or more ASCII letters */
    CANAL_CONSTRAINT_MIN,       /**< min(a): an integer >= a */
    CANAL_CONSTRAINT_MAX,       /**< max(a): an integer <= a */
    CANAL_CONSTRAINT_RANGE,     /**< range(a,b): an integer in [a, b] */
    CANAL_CONSTRAINT_LENGTH,    /**< length(a) (b == a) or length(a,b): a to b characters */
    CANAL_CONSTRAINT_MINLENGTH, /**< minlength(a) */
    CANAL_CONSTRAINT_MAXLENGTH, /**< maxlength(a) */
    CANAL_CONSTRAINT_REGEX,     /**< regex(PCRE2): found in the value (unanchored), ASP.NET Core's way */
    CANAL_CONSTRAINT_UTF8       /**< utf8: the decoded value is valid UTF-8 (canal_utf8_valid()) */
} canal_constraint_kind_t;

/** One constraint of a route parameter (canal_route_param_constraint()). */
typedef struct canal_constraint_info {
    canal_constraint_kind_t kind; /**< which constraint; a and b are its arguments */
    int64_t a;           /**< the first integer argument, as the kinds above say; 0 otherwise */
    int64_t b;           /**< the second integer argument (range, length); 0 otherwise */
    const char *regex;   /**< CANAL_CONSTRAINT_REGEX: the expression as written; else NULL */
    /** CANAL_CONSTRAINT_REGEX: the same expression as ECMA-262 source, valid for JavaScript's
     *  `new RegExp(ecma, "u")` and meaning what the route matches (OpenAPI's `pattern`); else
     *  NULL. Registration refuses a regex that has no such form (docs/routing.md). */
    const char *ecma;
} canal_constraint_info_t;

/** The number of segments of the route's template ("" has none). */
CANAL_API size_t canal_route_segment_count(const canal_route_t *route);

/**
 * The number of leading segments a request must give: the segments after it (optional
 * parameters, parameters with defaults and a catch-all) may all be left out, so the route
 * matches paths of canal_route_required_segments() to canal_route_segment_count() segments.
 */
CANAL_API size_t canal_route_required_segments(const canal_route_t *route);

/**
 * Describes segment i of the route into *out (strings borrowed from the route).
 * Returns 0, or CANAL_EINVAL past the end.
 */
CANAL_API int canal_route_segment(const canal_route_t *route, size_t i, canal_segment_info_t *out);

/**
 * Describes parameter i (template order) of the route into *out (strings borrowed from the
 * route). Returns 0, or CANAL_EINVAL past the end.
 */
CANAL_API int canal_route_param_info(const canal_route_t *route, size_t i,
                                     canal_route_param_info_t *out);

/**
 * Describes constraint j (template order) of parameter i into *out (the regex text is
 * borrowed from the route). Returns 0, or CANAL_EINVAL past the end.
 */
CANAL_API int canal_route_param_constraint(const canal_route_t *route, size_t i, size_t j,
                                           canal_constraint_info_t *out);

/**
 * Builds the URL of a route from route values (link generation). Values whose key names a
 * parameter fill it (percent-encoded; a {**x} catch-all keeps its '/'); parameters with no
 * value take their default or, when optional, are left out with everything after them;
 * trailing parameters whose value equals their default are left out. The other values go to
 * the query string, in the order given.
 * Writes at most size bytes including the NUL (buf may be NULL when size is 0).
 * @return the length of the URL (as snprintf: more than size-1 means it was cut);
 *         CANAL_EINVAL when a required value is missing or a value fails its constraints.
 */
CANAL_API int canal_route_link(const canal_route_t *route, const canal_kv_t *values,
                               size_t nvalues, char *buf, size_t size);

/** As canal_route_link() for the route registered under name; CANAL_ENOTFOUND if none. */
CANAL_API int canal_router_link(const canal_router_t *r, const char *name,
                                const canal_kv_t *values, size_t nvalues, char *buf,
                                size_t size);

/**
 * Writes a table of every route ("METHOD TEMPLATE [NAME]", one a line, registration order)
 * into buf as snprintf does. Returns the length it needed.
 */
CANAL_API size_t canal_router_list(const canal_router_t *r, char *buf, size_t size);

/**
 * Strict parsers for route and query values, as the route constraints use them.
 * int32/int64: an optional '-' then ASCII digits, in range ("+3", "0x10", " 1", "1e3" fail).
 * double: optional '-', digits, optional fraction and exponent; no "inf", "nan" or hex.
 * bool: "true" or "false", ASCII case-insensitive.
 * Return 0 and set *out, or CANAL_ETYPE (not that type) or CANAL_ERANGE (overflow).
 */
CANAL_API int canal_parse_int32(canal_str_t s, int32_t *out);
/** Parses a 64-bit integer, as canal_parse_int32() does a 32-bit one. */
CANAL_API int canal_parse_int64(canal_str_t s, int64_t *out);
/** Parses a number (see canal_parse_int32() for the rules and the errors). */
CANAL_API int canal_parse_double(canal_str_t s, double *out);
/** Parses "true" (1) or "false" (0) (see canal_parse_int32() for the errors). */
CANAL_API int canal_parse_bool(canal_str_t s, int *out);

/**
 * The number of characters in s counted as UTF-8 code points; a byte that is not part of a
 * valid sequence counts as one character. The length constraints use it.
 */
CANAL_API size_t canal_str_chars(canal_str_t s);

/**
 * 1 if s is well-formed UTF-8 (RFC 3629): shortest forms only (no overlong "C0 AF" for '/'),
 * no UTF-16 surrogates, nothing above U+10FFFF, no truncated sequence; else 0. The empty string
 * is valid. The `utf8` route constraint and the controller layer's string parameters use it.
 */
CANAL_API int canal_utf8_valid(canal_str_t s);

/**
 * Percent-decodes src into dst (which may be src itself; dst needs src.len bytes).
 * plus_is_space: 1 for query strings ('+' is a space), 0 for paths.
 * Returns the decoded length, or CANAL_EBADREQ for a bad or truncated escape or %00.
 */
CANAL_API int canal_percent_decode(canal_str_t src, char *dst, int plus_is_space);

#ifdef __cplusplus
}
#endif

#endif
