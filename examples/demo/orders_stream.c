/* SPDX-License-Identifier: MIT */
/*
 * GET /home/orders.ndjson: every order, one JSON object per line (NDJSON), written as the
 * client reads: orders go into the stream until its queue is full, and the rest follow each
 * time canal says the client has taken it (the writable callback). The stream's memory is its
 * bounded queue and one order's worth of JSON, however many orders there are. Both modes
 * send it with this one function.
 */
#include <stdlib.h>
#include "demo.h"
#include "northwind.h"

struct cursor {
    size_t next; /* the next order to write */
    int held;    /* it is in the stream's JSON writer already (its flush was refused) */
};

/* Writes orders from c->next on until the queue is full or none is left (then the end). */
static void write_orders(canal_stream_t *s, void *data)
{
    struct cursor *c = data;
    canal_jw_t *w = canal_stream_jw(s);
    const order_t *o;
    while ((o = northwind_order_at(c->next)) != NULL) {
        if (!c->held && canal_jw_model(w, &order_schema, o) != 0)
            break; /* cannot be: the data set fits its schema */
        int rc = canal_stream_jw_flush(s);
        c->held = rc == CANAL_EAGAIN;
        if (c->held)
            return; /* flushed again when the client has taken the queue */
        if (rc != 0)
            break; /* closed from the start (HEAD): no closed() comes */
        c->next++;
    }
    canal_stream_end(s);
    free(c);
}

static void closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    canal_stream_end(s);
    free(data);
}

int demo_orders_ndjson(canal_req_t *req)
{
    static const canal_stream_cb_t cb = {.writable = write_orders, .closed = closed};
    struct cursor *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return CANAL_ENOMEM;
    canal_stream_t *s = canal_res_stream_begin(req, "application/x-ndjson", &cb, c);
    if (s == NULL) {
        free(c);
        return canal_req_failure(req) ? 0 : CANAL_ENOMEM;
    }
    write_orders(s, c);
    return 0;
}
