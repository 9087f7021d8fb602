/* SPDX-License-Identifier: MIT */
/**
 * @file canal/trace.h
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) for each request, and the begin
 * and end hooks where an application attaches a tracer (an OpenTelemetry exporter, say).
 *
 * With canal_config_t.trace on, every request canal's handler sees belongs to a trace: the
 * caller's, when it sent a valid `traceparent`, else a new one. The request gets a span ID of
 * its own. The IDs are made when first asked for (canal_req_trace(), the JSON access log,
 * problem details, the echo, a hook that reads them), so a request nothing asks about costs
 * nothing. With canal_config_t.trace_echo, the answer carries `traceparent` with the
 * request's own span as the parent: a caller can find the server's span.
 *
 * Parsing is strict. Version 00 is exactly "00-" 32 lower-case hex digits "-" 16 lower-case
 * hex digits "-" 2 lower-case hex digits, the trace ID and the parent ID not all zeros. A
 * higher version (01 to fe) is read as the specification says: at least 55 characters, the
 * same three fields at the same places, and after them the end of the value or a '-'. Version
 * ff, anything else malformed, or more than one traceparent field: the request starts a new
 * trace (never a 400), and its tracestate is not read.
 *
 * tracestate (the vendors' list, RFC-style "key=value" members separated by commas) is kept
 * as received, fields joined by ',', when it follows a valid traceparent and is well-formed:
 * keys of lower-case letters, digits and _ - * / with at most one '@', values of printable
 * ASCII but ',' and '=' not ending in a space, at most 32 members and 512 bytes in all. One
 * that is not is dropped whole. canal has no HTTP client: a handler that calls another
 * service passes the trace on with canal_trace_t.traceparent and .tracestate.
 */
#ifndef CANAL_TRACE_H
#define CANAL_TRACE_H

#include <stdint.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/** trace-flags bit 0: the caller records this trace (a new trace here is always sampled). */
#define CANAL_TRACE_SAMPLED 0x01

/** A request's trace context. Every string is NUL-terminated lower-case hex. */
typedef struct canal_trace {
    char trace_id[33];    /**< 32 hex digits: the caller's trace, or a new random one */
    char span_id[17];     /**< 16 hex digits: this request's span, new for every request */
    char parent_id[17];   /**< 16 hex digits: the caller's span; "" when the trace began here */
    uint8_t flags;        /**< trace-flags: the sampled bit of the caller's, or
                               CANAL_TRACE_SAMPLED for a new trace (other bits are 0) */
    char traceparent[56]; /**< "00-TRACE-SPAN-FLAGS" with this request's span: the value to
                               send to a service this request calls, and the echo */
    canal_str_t tracestate; /**< as received (fields joined by ','); base NULL if none or
                                 dropped. In request memory */
} canal_trace_t;

/**
 * The request's trace context, made on first use; NULL when canal_config_t.trace is off.
 * Borrowed: lives as long as the request. The request's thread only.
 */
CANAL_API const canal_trace_t *canal_req_trace(canal_req_t *req);

/* ---- begin and end hooks ---- */

/** What a hook is told about a request (canal_app_on_request()). */
typedef struct canal_request_info {
    int64_t start_unix_ns;   /**< when canal's handler got the request (CLOCK_REALTIME, ns) */
    canal_str_t method;      /**< as sent */
    const char *route;       /**< the matched route's template (canal_route_template()), or
                                  NULL: no route matched, or the request was refused first */
    /* the end hook only (0 in the begin hook) */
    int status;              /**< the status sent */
    int64_t duration_ns;     /**< from start_unix_ns to the end of the answer (monotonic) */
    uint64_t bytes;          /**< body bytes sent */
    const canal_trace_t *trace; /**< canal_req_trace(): NULL when tracing is off (also set in
                                     the begin hook) */
} canal_request_info_t;

/**
 * A begin or end hook. Called on the request's worker thread, so it must be quick (it holds
 * up that worker), and thread-safe when it shares state (every worker calls it). req may be
 * read with the canal/request.h getters (canal_req_id(), canal_req_header()...) in both; in
 * the end hook the answer is already sent. info is borrowed for the call.
 */
typedef void (*canal_request_hook_fn)(canal_req_t *req, const canal_request_info_t *info, void *data);

/**
 * Calls begin(req, info, data) for every request canal's handler sees, once the router has
 * matched it (before any policy, rate limit or handler runs), or when it is refused before
 * routing (a framing fault, a limit: route NULL); and end(req, info, data) when libh2o is
 * done with it: answered, timed out, or its client went away. Either may be NULL. What
 * libh2o answers itself (a body over max_body_size, a request it cannot parse) and static
 * files reach neither. A streamed answer ends after its last byte; a WebSocket route's request
 * ends at the upgrade (the handshake), not when the socket closes. One pair per app; data is
 * borrowed. Only before canal_app_start().
 * Returns 0, CANAL_EEXIST (hooks are set), CANAL_EINVAL (both NULL) or CANAL_ESTATE; a
 * failure is also kept as the app's registration error (canal_app_error()).
 */
CANAL_API int canal_app_on_request(canal_app_t *app, canal_request_hook_fn begin, canal_request_hook_fn end,
                                   void *data);

#ifdef __cplusplus
}
#endif

#endif
