/* SPDX-License-Identifier: MIT */
/**
 * @file canal/request.h
 * The request a handler is given: method, path, query, route values, headers, body (raw or
 * parsed as JSON), request memory and notes.
 *
 * Request memory (canal_req_alloc(), every canal_str_t a request hands out) lives until the
 * answer has been sent. On out-of-memory inside a request, h2o's pool aborts the process
 * (h2o's own policy).
 */
#ifndef CANAL_REQUEST_H
#define CANAL_REQUEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the request ---- */

/** The method, as sent. */
CANAL_API canal_str_t canal_req_method(const canal_req_t *req);
/** The path as sent (percent-encoded), without the query. */
CANAL_API canal_str_t canal_req_path(const canal_req_t *req);
/** The raw query string after '?', without it; empty if none. */
CANAL_API canal_str_t canal_req_query_string(const canal_req_t *req);

/**
 * Looks a query parameter up (percent-decoded, '+' as space; the query is parsed on first
 * use). Returns how many times name occurs (0: absent), and sets *value (if not NULL) to the
 * first occurrence. Values live as long as the request.
 */
CANAL_API size_t canal_req_query(canal_req_t *req, const char *name, canal_str_t *value);

/** All query parameters in order, repeated keys included; returns their count. Borrowed. */
CANAL_API size_t canal_req_query_all(canal_req_t *req, const canal_param_t **params);

/**
 * Reads a query parameter as an integer (canal_parse_int64 rules). Returns 0;
 * CANAL_ENOTFOUND when absent; CANAL_ETYPE, CANAL_ERANGE for a bad value; CANAL_EINVAL when
 * the key is repeated. *out is set only on 0, so a default goes in it before the call.
 */
CANAL_API int canal_req_query_int64(canal_req_t *req, const char *name, int64_t *out);

/** A captured route value by parameter name, or an empty string with base NULL if none. */
CANAL_API canal_str_t canal_req_param(const canal_req_t *req, const char *name);

/**
 * Reads a route value as a 32-bit integer. Returns 0, CANAL_ENOTFOUND, CANAL_ETYPE or
 * CANAL_ERANGE (the canal_parse_int32 rules).
 */
CANAL_API int canal_req_param_int32(const canal_req_t *req, const char *name, int32_t *out);
/** As canal_req_param_int32() for 64-bit integers. */
CANAL_API int canal_req_param_int64(const canal_req_t *req, const char *name, int64_t *out);

/**
 * The request's ID when request_id is on: the X-Request-Id a trusted proxy sent (1 to 128
 * printable characters), else one made here, unique within the process ("5f3a09c1-0-1a":
 * a random per-process prefix, the worker, a counter). The answer echoes it in X-Request-Id.
 * base NULL when request_id is off. Lives as long as the request; request's thread only.
 */
CANAL_API canal_str_t canal_req_id(canal_req_t *req);

/**
 * The client's address as text ("203.0.113.7", "2001:db8::1"; "-" if there is none). It is
 * the connection's peer, unless the peer is a trusted proxy: then the hops of Forwarded (RFC
 * 7239; preferred when present) or else X-Forwarded-For are walked from the nearest, and the
 * first address that is not a trusted proxy is the client. The peer of a unix socket
 * connection (canal_app_listen_unix()) is a process on this machine with no address: "-",
 * and a trusted proxy only if trusted_proxies has the word "unix" (then X-Forwarded-For names
 * the client, as from any trusted proxy). Found on first use; lives as long as the request.
 */
CANAL_API canal_str_t canal_req_client_addr(canal_req_t *req);

/** The matched route (for its template and name), or NULL. Borrowed. */
CANAL_API const canal_route_t *canal_req_route(const canal_req_t *req);

/** The first request header with this name (ASCII case-insensitive); base NULL if none. */
CANAL_API canal_str_t canal_req_header(const canal_req_t *req, const char *name);

/** The number of request headers; with canal_req_header_at() to walk them all. */
CANAL_API size_t canal_req_header_count(const canal_req_t *req);
/** Header i: its name (lower-case) and value. Returns 0, or CANAL_EINVAL past the end. */
CANAL_API int canal_req_header_at(const canal_req_t *req, size_t i, canal_str_t *name,
                                  canal_str_t *value);

/** The request body (buffered whole, at most max_body_size bytes); empty if none. */
CANAL_API canal_str_t canal_req_body(const canal_req_t *req);

/**
 * The body parsed as JSON (Content-Type must be application/json or +json). A borrowed
 * reference that lives until the response is sent. NULL when absent, of another type,
 * malformed or nested deeper than max_json_depth; err (if given) says why (jansson's position
 * and text; json_error_code() is json_error_wrong_type when the content type is not JSON
 * and json_error_stack_overflow for depth).
 */
CANAL_API json_t *canal_req_json(canal_req_t *req, json_error_t *err);

/**
 * Serializes json compactly (jansson, keys in insertion order) into request memory and returns
 * it (not NUL-terminated) with its length in *len; NULL if json cannot be serialized.
 * Borrows json.
 */
CANAL_API char *canal_req_json_dump(canal_req_t *req, const json_t *json, size_t *len);

/**
 * Attaches a note (key and value, both copied) to the request; the development error page
 * lists the notes (the controller layer notes the controller and the action).
 */
CANAL_API void canal_req_note(canal_req_t *req, const char *key, const char *value);

/** Allocates size bytes of request memory, freed when the request ends. Never NULL. */
CANAL_API void *canal_req_alloc(canal_req_t *req, size_t size);

/** printf into request memory. Never NULL. */
CANAL_API char *canal_req_printf(canal_req_t *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Records why the request failed and returns -1, so a handler can `return
 * canal_req_fail(req, "db: %s", why);`. The answer is then a 500 (production) or the
 * development error page, whatever else was set; the text is logged and shown on that page,
 * never to production clients. The first failure recorded is the one kept.
 */
CANAL_API int canal_req_fail(canal_req_t *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The failure recorded for the request (canal_req_fail()), or NULL. */
CANAL_API const char *canal_req_failure(const canal_req_t *req);

/** The app the request belongs to. */
CANAL_API canal_app_t *canal_req_app(const canal_req_t *req);

#ifdef __cplusplus
}
#endif

#endif
