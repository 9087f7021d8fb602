/* SPDX-License-Identifier: MIT */
/*
 * The access log's line formats (acclog_line.c): pure C, no libh2o, so the unit test and the
 * fuzzer call them on any bytes. acclog.c fills an entry from a request and hands it here.
 */
#ifndef CANAL_ACCLOG_INTERNAL_H
#define CANAL_ACCLOG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "canal/router.h"

/* One answer, as the log sees it. Strings are borrowed; base NULL means absent. */
struct canal__acclog_entry {
    canal_str_t client;     /* the address as printed ("-": not over IP) */
    canal_str_t clf_time;   /* "02/Dec/2026:07:46:58 +0000" (libh2o's); absent: "-" */
    int64_t unix_us;        /* the same moment for JSON; < 0: unknown (null) */
    canal_str_t method, target;
    int version;            /* 0x100, 0x101, 0x200 */
    int status;
    uint64_t bytes;         /* body bytes sent */
    int64_t duration_us;    /* the request's first bytes to the end of its answer (libh2o's start,
                             * a clock read at the end); < 0: unknown */
    canal_str_t route;      /* the matched route's template, as registered: JSON writes it with
                             * one leading '/' */
    canal_str_t request_id;
    canal_str_t trace_id, span_id; /* JSON only: the request's trace (canal/trace.h): hex digits only */
    canal_str_t referer, user_agent;
    unsigned char id_column; /* CLF: the quoted request ID column is there (request IDs on) */
};

/* The most bytes either format can write for e, newline included. */
size_t canal__acclog_bound(const struct canal__acclog_entry *e);
/* Writes e's line, '\n' included, at out (canal__acclog_bound(e) bytes of room); returns its
 * length. CLF: libh2o 2.2.5's Combined Log Format, byte for byte, with its escaping (see
 * acclog_line.c). JSON: one object a line, always valid JSON and UTF-8. */
size_t canal__acclog_clf(char *out, const struct canal__acclog_entry *e);
size_t canal__acclog_json(char *out, const struct canal__acclog_entry *e);

#endif
