/* SPDX-License-Identifier: MIT */
/*
 * WebSockets on libh2o 2.2.5's h2o_upgrade_to_websocket() (HTTP/1.1 only) and wslay.
 *
 * A WebSocket route is a GET route whose handler, ws_handshake(), checks the handshake
 * (answers through canal's response model when it is bad), calls on_open and upgrades. From
 * then on libh2o owns the connection's socket and wslay its frames; canal sits in between at
 * two points:
 *   - reading: wslay's recv callback is canal's ws_recv(), which runs the client's bytes
 *     through canal__ws_scan() (ws_frame.c) and hands wslay only what passes; a client's Close
 *     is answered by canal, never seen by wslay;
 *   - writing: nothing is written from inside a call of the app's. canal_ws_send() queues the
 *     message in wslay and puts the socket on its worker's flush list, which a zero-delay timer
 *     runs on the next turn of the loop (h2o_websocket_proceed() may close the socket and free
 *     libh2o's connection: never under the feet of a callback or of a group's walk). A socket's
 *     own on_message needs no flush: it runs inside libh2o's h2o_websocket_proceed() for that
 *     socket, which sends what wslay holds once the message is handled (an echo is written in
 *     the same turn, as raw libh2o does).
 *
 * Threads: a socket is touched by its worker only. Other threads post (canal_ws_post(),
 * canal_ws_group_send()) with canal__post() (async.c), the one hand-off to a worker's loop that
 * deferred answers and streams use too: one queue per worker, in order per sender, refused
 * under post_lock once the worker is ending. A group keeps one member
 * list per worker, each touched by its worker only; a message to a group is copied once,
 * shared by reference count between the workers.
 *
 * The end of a socket: h2o calls on_event() with no message once the connection is gone, for
 * whatever reason. ws_closed() then tells the app (on_close), leaves the groups and frees
 * libh2o's connection; the canal_ws_t lives on while references are held.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <h2o/websocket.h>
#include "core/core.h"
#include "realtime/ws_internal.h"
#include "realtime/realtime.h"
#include "redis/redis.h"

/* A WebSocket route's settings, owned by the feature's state (struct ws_routes). */
struct canal__ws_route {
    struct canal__ws_route *next;
    canal_ws_open_fn on_open;
    canal_ws_message_fn on_message;
    canal_ws_close_fn on_close;
    void *data;
    size_t max_message;
    char **subprotocols; /* owned, NULL-terminated; NULL: none */
};

enum ws_state { WS_OPEN, WS_CLOSING, WS_CLOSED };

struct member {
    h2o_linklist_t link;      /* in the group's list of this socket's worker */
    struct member *next;      /* the socket's next group */
    canal_ws_group_t *group;
    canal_ws_t *ws;
};

/* A message queued before the upgrade (from on_open), when wslay does not exist yet. */
struct early {
    struct early *next;
    int opcode;
    size_t len;
    unsigned char bytes[];
};

/* A worker's part of the feature (its per-worker state, core/feature.h) */
struct ws_worker {
    struct canal_worker *w;
    h2o_linklist_t list;          /* its open sockets */
    h2o_linklist_t flush;         /* sockets with something to write, */
    h2o_timeout_t flush_timeout;  /* written on the next turn of the loop (0 ms) */
    h2o_timeout_entry_t flush_entry;
    h2o_timeout_t idle;           /* ws_idle_timeout_ms; made on the first socket (ready) */
    int ready;
    /* counters: written by the worker, read by the metrics on any thread */
    atomic_size_t open;
    atomic_ullong opened, received, sent, dropped;
};

struct canal_ws {
    h2o_websocket_conn_t *conn; /* NULL before the upgrade and once closed */
    struct canal_worker *worker;
    struct ws_worker *ww;       /* its worker's part */
    const struct canal__ws_route *route;
    void *user;
    const char *subprotocol;
    atomic_size_t refs;       /* the socket's own, and canal_ws_retain()'s */
    enum ws_state state;
    int in_callback;          /* inside its on_message (within libh2o's proceed, which flushes) */
    int pinged;               /* an idle socket was pinged */
    int sent_code;            /* the code of canal's Close, 0 if none sent */
    int recv_code;            /* the client's (0: its Close had none), -1 before one */
    struct canal__ws_scan scan;
    h2o_timeout_entry_t timer; /* idle, or the end of a closing handshake */
    h2o_linklist_t link;      /* the worker's sockets */
    h2o_linklist_t flush_link; /* the worker's flush list */
    struct member *groups;
    struct early *early;      /* queued in on_open, oldest first */
    size_t early_bytes;
    size_t reason_len;
    char reason[124];         /* the client's close reason */
    size_t hold_len;
    uint8_t hold[160];        /* an incomplete header or control frame (ws_recv()) */
};

struct canal_ws_group {
    canal_app_t *app;
    atomic_size_t refs, size;
    size_t nworkers;
    struct canal__redis_sub *_Atomic sub; /* canal_ws_group_share(): the store's channel */
    h2o_linklist_t members[]; /* one list per worker */
};

/* A message, copied once for every worker it goes to. */
struct payload {
    atomic_size_t refs;
    int opcode;
    size_t len;
    unsigned char bytes[];
};

/* What other threads hand a worker through canal__post(): a group's message for the
 * worker's members... */
struct group_msg {
    struct canal__post super;
    canal_ws_group_t *group;
    size_t k; /* the worker's index: its member list */
    struct payload *payload;
};

/* ...or a post to one socket. */
struct ws_post_msg {
    struct canal__post super;
    canal_ws_t *ws;
    canal_ws_post_fn fn;
    void *data;
};

/* The worker this thread runs, if any (set by canal__ws_worker_init()). */
static __thread struct canal_worker *this_worker;

/* How long canal waits for the client's answer to its Close (the context's own 1 s list). */
#define closing_list(w) (&(w)->ctx.one_sec_timeout)

static inline void bump(atomic_ullong *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* ---- writing ---- */

static void flush_later(canal_ws_t *ws)
{
    struct ws_worker *ww = ws->ww;
    if (!h2o_linklist_is_linked(&ws->flush_link))
        h2o_linklist_insert(&ww->flush, &ws->flush_link);
    if (!h2o_timeout_is_linked(&ww->flush_entry))
        h2o_timeout_link(ww->w->loop, &ww->flush_timeout, &ww->flush_entry);
}

static void on_flush(h2o_timeout_entry_t *entry)
{
    struct ws_worker *ww = H2O_STRUCT_FROM_MEMBER(struct ws_worker, flush_entry, entry);
    while (!h2o_linklist_is_empty(&ww->flush)) {
        canal_ws_t *ws = H2O_STRUCT_FROM_MEMBER(canal_ws_t, flush_link, ww->flush.next);
        h2o_linklist_unlink(&ws->flush_link);
        /* before the 101 is written libh2o has no socket for it: it proceeds itself then */
        if (ws->conn != NULL && ws->conn->sock != NULL)
            h2o_websocket_proceed(ws->conn); /* may end the socket (ws_closed) */
    }
}

/* Ends the connection at once, without a Close: a client that does not read gets none. libh2o
 * then sees the socket fail and ends it the normal way. */
static void drop(canal_ws_t *ws)
{
    ws->state = WS_CLOSING;
    if (ws->conn->sock != NULL)
        shutdown(h2o_socket_get_fd(ws->conn->sock), SHUT_RDWR);
}

/* A message of on_open's, kept until wslay exists (the upgrade) */
static int queue_early(canal_ws_t *ws, int opcode, const void *msg, size_t len)
{
    if (ws->early_bytes + len > ws->worker->app->cfg.ws_max_queued)
        return CANAL_ELIMIT;
    struct early *e = malloc(sizeof(*e) + len), **tail = &ws->early;
    if (e == NULL)
        return CANAL_ENOMEM;
    *e = (struct early){.opcode = opcode, .len = len};
    if (len > 0)
        memcpy(e->bytes, msg, len);
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = e;
    ws->early_bytes += len;
    return 0;
}

/* Hands on_open's messages to wslay (with h2o_upgrade_to_websocket()'s context), or drops them. */
static void move_early(canal_ws_t *ws, wslay_event_context_ptr ctx)
{
    while (ws->early != NULL) {
        struct early *e = ws->early;
        ws->early = e->next;
        if (ctx != NULL) {
            struct wslay_event_msg m = {.opcode = (uint8_t)e->opcode, .msg = e->bytes, .msg_length = e->len};
            if (wslay_event_queue_msg(ctx, &m) == 0 && e->opcode != WSLAY_PING)
                bump(&ws->ww->sent);
        }
        free(e);
    }
    ws->early_bytes = 0;
}

static int queue_msg(canal_ws_t *ws, int opcode, const void *msg, size_t len)
{
    if (ws->state != WS_OPEN)
        return CANAL_ESTATE;
    if (ws->conn == NULL)
        return queue_early(ws, opcode, msg, len);
    wslay_event_context_ptr ctx = ws->conn->ws_ctx;
    const canal_config_t *cfg = &ws->worker->app->cfg;
    if (wslay_event_get_queued_msg_length(ctx) + len > cfg->ws_max_queued && ws->conn->sock != NULL) {
        bump(&ws->ww->dropped);
        drop(ws);
        return CANAL_ELIMIT;
    }
    struct wslay_event_msg m = {.opcode = (uint8_t)opcode, .msg = msg, .msg_length = len};
    if (wslay_event_queue_msg(ctx, &m) != 0)
        return CANAL_ENOMEM; /* wslay's other refusals are states ruled out above */
    if (opcode == WSLAY_TEXT_FRAME || opcode == WSLAY_BINARY_FRAME)
        bump(&ws->ww->sent);
    if (!ws->in_callback) /* in its own on_message, libh2o's h2o_websocket_proceed() sends it next */
        flush_later(ws);
    return 0;
}

static int opcode_of(canal_ws_kind_t kind, const void *msg, size_t len)
{
    if (kind == CANAL_WS_BINARY)
        return WSLAY_BINARY_FRAME;
    if (kind == CANAL_WS_TEXT && canal_utf8_valid((canal_str_t){msg, len}))
        return WSLAY_TEXT_FRAME;
    return -1;
}

int canal_ws_send(canal_ws_t *ws, canal_ws_kind_t kind, const void *msg, size_t len)
{
    int opcode = opcode_of(kind, msg, len);
    return opcode < 0 ? CANAL_EINVAL : queue_msg(ws, opcode, msg, len);
}

int canal_ws_ping(canal_ws_t *ws, const void *payload, size_t len)
{
    return len > 125 ? CANAL_EINVAL : queue_msg(ws, WSLAY_PING, payload, len);
}

/* Queues canal's Close (code 0: an empty one). With stop_reading, nothing more the client sends
 * is read (a failed connection, or the answer to the client's Close): libh2o closes once the
 * Close is written. Otherwise the client has a second to answer. */
static void send_close(canal_ws_t *ws, int code, const char *reason, size_t reason_len, int stop_reading)
{
    wslay_event_context_ptr ctx = ws->conn->ws_ctx;
    struct canal_worker *w = ws->worker;
    ws->state = WS_CLOSING;
    if (ws->sent_code == 0 && !wslay_event_get_close_sent(ctx)) {
        wslay_event_queue_close(ctx, (uint16_t)code, (const uint8_t *)reason, reason_len);
        ws->sent_code = code != 0 ? code : CANAL__WS_NO_STATUS;
    }
    if (stop_reading)
        wslay_event_shutdown_read(ctx);
    if (h2o_timeout_is_linked(&ws->timer))
        h2o_timeout_unlink(&ws->timer);
    h2o_timeout_link(w->loop, closing_list(w), &ws->timer);
    flush_later(ws);
}

int canal_ws_close(canal_ws_t *ws, int code, const char *reason)
{
    size_t n = reason != NULL ? strlen(reason) : 0;
    if (!canal__ws_close_code_ok(code) || n > 123 || !canal_utf8_valid((canal_str_t){reason, n}))
        return CANAL_EINVAL;
    if (ws->state != WS_OPEN || ws->conn == NULL)
        return CANAL_ESTATE; /* in on_open, a socket is refused by on_open's return */
    send_close(ws, code, reason, n, 0);
    return 0;
}

/* ---- reading ---- */

static void touch(canal_ws_t *ws)
{
    struct canal_worker *w = ws->worker;
    if (ws->state != WS_OPEN)
        return;
    ws->pinged = 0;
    if (h2o_timeout_is_linked(&ws->timer)) {
        /* an open socket's timer is in ws_idle: linked again in the same millisecond, it
         * would be where it is, so it stays (several reads a turn, or turns a millisecond) */
        if (ws->timer.registered_at == h2o_now(w->loop))
            return;
        h2o_timeout_unlink(&ws->timer);
    }
    h2o_timeout_link(w->loop, &ws->ww->idle, &ws->timer);
}

/* wslay's recv callback: the client's bytes, through canal__ws_scan() first.
 *
 * libh2o's h2o_websocket_proceed() calls wslay again as long as the socket's input is not
 * empty, so ws_recv() never leaves bytes there when it says "would block": an incomplete
 * header or control frame (at most 14 or 131 bytes) waits in ws->hold, and the bytes that come
 * next are added to it until the scan can decide. */
static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
    h2o_websocket_conn_t *conn = user;
    canal_ws_t *ws = conn->data;
    h2o_buffer_t *in = conn->sock->input;
    if (ws->hold_len > 0 && in->size > 0) {
        size_t add = sizeof(ws->hold) - ws->hold_len < in->size ? sizeof(ws->hold) - ws->hold_len : in->size;
        memcpy(ws->hold + ws->hold_len, in->bytes, add);
        ws->hold_len += add;
        h2o_buffer_consume(&conn->sock->input, add);
    }
    int held = ws->hold_len > 0;
    const uint8_t *src = held ? ws->hold : (const uint8_t *)in->bytes;
    size_t avail = held ? ws->hold_len : in->size, n = 0;
    struct canal__ws_close close;
    int rc = ws->recv_code < 0 && avail > 0 ? canal__ws_scan(&ws->scan, src, avail, len, &n, &close) : CANAL__WS_PASS;
    if (rc == CANAL__WS_PASS && n == 0 && !held && avail > 0) {
        memcpy(ws->hold, src, avail); /* incomplete, hence small (see canal__ws_scan()) */
        ws->hold_len = avail;
        h2o_buffer_consume(&conn->sock->input, avail);
    }
    if (n > 0) {
        if (rc == CANAL__WS_PASS)
            memcpy(buf, src, n);
        if (held) {
            memmove(ws->hold, ws->hold + n, ws->hold_len - n);
            ws->hold_len -= n;
        } else {
            h2o_buffer_consume(&conn->sock->input, n);
        }
        if (rc == CANAL__WS_PASS) {
            touch(ws);
            return (ssize_t)n;
        }
    }
    if (rc == CANAL__WS_CLOSE) {
        ws->recv_code = close.code;
        ws->reason_len = close.reason_len;
        memcpy(ws->reason, close.reason, close.reason_len);
        send_close(ws, close.code, NULL, 0, 1); /* the same code back (or an empty Close) */
    } else if (rc != CANAL__WS_PASS) {
        send_close(ws, rc, NULL, 0, 1);
    }
    wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
    return -1;
}

static void ws_closed(canal_ws_t *ws);

/* libh2o's callback: a message wslay has put together, or (arg NULL) the end. */
static void on_event(h2o_websocket_conn_t *conn, const struct wslay_event_on_msg_recv_arg *arg)
{
    canal_ws_t *ws = conn->data;
    if (arg == NULL) {
        ws_closed(ws);
        return;
    }
    if (arg->opcode != WSLAY_TEXT_FRAME && arg->opcode != WSLAY_BINARY_FRAME)
        return; /* pings are answered by wslay; pongs need nothing */
    bump(&ws->ww->received);
    if (ws->route->on_message == NULL || ws->state != WS_OPEN)
        return;
    ws->in_callback = 1;
    ws->route->on_message(ws, arg->opcode == WSLAY_TEXT_FRAME ? CANAL_WS_TEXT : CANAL_WS_BINARY, arg->msg,
                          arg->msg_length, ws->route->data);
    ws->in_callback = 0;
}

/* The socket's timer: idle (ping, then close) or a closing handshake that did not end. */
static void on_timer(h2o_timeout_entry_t *entry)
{
    canal_ws_t *ws = H2O_STRUCT_FROM_MEMBER(canal_ws_t, timer, entry);
    if (ws->state == WS_OPEN && !ws->pinged) {
        ws->pinged = 1;
        h2o_timeout_link(ws->worker->loop, &ws->ww->idle, &ws->timer);
        canal_ws_ping(ws, NULL, 0);
    } else if (ws->state == WS_OPEN) {
        send_close(ws, CANAL__WS_GOING_AWAY, "idle", 4, 0);
    } else if (ws->conn != NULL) {
        drop(ws);
    }
}

/* ---- a socket's life ---- */

canal_ws_t *canal_ws_retain(canal_ws_t *ws)
{
    atomic_fetch_add(&ws->refs, 1);
    return ws;
}

void canal_ws_release(canal_ws_t *ws)
{
    if (ws != NULL && atomic_fetch_sub(&ws->refs, 1) == 1)
        free(ws);
}

static void leave_all(canal_ws_t *ws);

static void ws_closed(canal_ws_t *ws)
{
    struct canal_worker *w = ws->worker;
    ws->state = WS_CLOSED;
    if (h2o_timeout_is_linked(&ws->timer))
        h2o_timeout_unlink(&ws->timer);
    if (h2o_linklist_is_linked(&ws->flush_link))
        h2o_linklist_unlink(&ws->flush_link);
    h2o_linklist_unlink(&ws->link);
    atomic_fetch_sub(&ws->ww->open, 1);
    canal__worker_touch(w);
    if (ws->route->on_close != NULL) {
        int code = ws->recv_code > 0 ? ws->recv_code : ws->recv_code == 0 ? CANAL__WS_NO_STATUS
                                                   : ws->sent_code != 0   ? ws->sent_code
                                                                          : CANAL__WS_ABNORMAL;
        ws->route->on_close(ws, code, (canal_str_t){ws->reason, ws->reason_len}, ws->route->data);
    }
    /* after on_close, which may leave its groups under the app's own lock (examples/realtime's
     * rooms): a group's count must not change behind it */
    leave_all(ws);
    h2o_websocket_close(ws->conn); /* closes the socket: on_conn_close() in conn.c */
    ws->conn = NULL;
    canal_ws_release(ws);
}

/* Closes every socket of a stopping worker with 1001; the drain waits for them. */
static void ws_worker_drain(struct canal_worker *w, void *st, void *wst)
{
    struct ws_worker *ww = wst;
    for (h2o_linklist_t *l = ww->list.next; l != &ww->list; l = l->next) {
        canal_ws_t *ws = H2O_STRUCT_FROM_MEMBER(canal_ws_t, link, l);
        if (ws->state == WS_OPEN)
            send_close(ws, CANAL__WS_GOING_AWAY, "server shutting down", 20, 0);
    }
}

void *canal_ws_user(const canal_ws_t *ws)
{
    return ws->user;
}

void canal_ws_set_user(canal_ws_t *ws, void *user)
{
    ws->user = user;
}

const char *canal_ws_subprotocol(const canal_ws_t *ws)
{
    return ws->subprotocol;
}

canal_app_t *canal_ws_app(const canal_ws_t *ws)
{
    return ws->worker->app;
}

/* ---- the handshake ---- */

/* 1 if the comma-separated list has the token (ASCII case-sensitive as subprotocols are). */
static int list_has(h2o_iovec_t list, const char *token)
{
    size_t n = strlen(token), i = 0;
    while (i < list.len) {
        while (i < list.len && (list.base[i] == ' ' || list.base[i] == '\t' || list.base[i] == ','))
            i++;
        size_t start = i;
        while (i < list.len && list.base[i] != ',' && list.base[i] != ' ' && list.base[i] != '\t')
            i++;
        if (i - start == n && memcmp(list.base + start, token, n) == 0)
            return 1;
    }
    return 0;
}

/* The first of the route's subprotocols the client offers, or NULL. */
static const char *pick_subprotocol(const struct canal__ws_route *r, const h2o_headers_t *hs)
{
    for (char **p = r->subprotocols; p != NULL && *p != NULL; p++)
        for (ssize_t i = -1; (i = h2o_find_header_by_str(hs, H2O_STRLIT("sec-websocket-protocol"), i)) != -1;)
            if (list_has(hs->entries[i].value, *p))
                return *p;
    return NULL;
}

/* 426 Upgrade Required, saying what would do. */
static int upgrade_required(canal_req_t *req, const char *why)
{
    canal_res_header(req, "upgrade", "websocket");
    canal_res_header(req, "sec-websocket-version", "13");
    return canal_res_problem(req, 426, "%s", why);
}

/* The handshake's faults in the order; 0 and *key when there is none. */
static int refuse(canal_req_t *req, const char **key)
{
    h2o_req_t *h = req->h2o;
    if (!h2o_memis(h->method.base, h->method.len, H2O_STRLIT("GET"))) {
        canal_res_header(req, "allow", "GET");
        return canal_res_problem(req, 405, "a WebSocket opens with GET"), 1;
    }
    if (h->version >= 0x200)
        return canal_res_problem(req, 426, "WebSockets need HTTP/1.1 here (no RFC 8441)"), 1;
    if (h->version < 0x101) {
        h->http1_is_persistent = 0;
        return canal_res_problem(req, 400, "a WebSocket handshake needs HTTP/1.1"), 1;
    }
    /* libh2o keeps Upgrade only when Connection has the token "upgrade" */
    if (h->upgrade.base == NULL || !h2o_lcstris(h->upgrade.base, h->upgrade.len, H2O_STRLIT("websocket")))
        return upgrade_required(req, "a WebSocket route: Upgrade: websocket and Connection: upgrade needed"), 1;
    ssize_t v = h2o_find_header_by_str(&h->headers, H2O_STRLIT("sec-websocket-version"), -1);
    if (v == -1)
        return upgrade_required(req, "Sec-WebSocket-Version: 13 needed"), 1;
    h2o_iovec_t ver = h->headers.entries[v].value;
    size_t digits = 0;
    while (digits < ver.len && ver.base[digits] >= '0' && ver.base[digits] <= '9')
        digits++;
    if (digits == 0 || digits != ver.len || h2o_find_header_by_str(&h->headers, H2O_STRLIT("sec-websocket-version"), v) != -1)
        return canal_res_problem(req, 400, "Sec-WebSocket-Version is not a number"), 1;
    if (!h2o_memis(ver.base, ver.len, H2O_STRLIT("13")))
        return upgrade_required(req, "only WebSocket version 13 is spoken here"), 1;
    ssize_t k = h2o_find_header_by_str(&h->headers, H2O_STRLIT("sec-websocket-key"), -1);
    size_t key_len;
    if (k == -1 || h2o_find_header_by_str(&h->headers, H2O_STRLIT("sec-websocket-key"), k) != -1 ||
        !canal__ws_key_ok(h->headers.entries[k].value.base, h->headers.entries[k].value.len, key, &key_len))
        return canal_res_problem(req, 400, "Sec-WebSocket-Key must be one base64 value of 16 bytes"), 1;
    return 0;
}


/* The feature's state: every WebSocket route's settings, and each route's (NULL for the app's
 * other routes), at the route's number */
struct ws_routes {
    struct canal__ws_route *head;
    const struct canal__ws_route **by_route;
    size_t n;
};
static const struct canal__feature feature;

static int ws_handshake(canal_req_t *req, void *data)
{
    const struct ws_routes *all = canal__feature_state(req->app, &feature);
    const struct canal__ws_route *r = all->by_route[req->match->index];
    struct canal_worker *w = req->worker;
    h2o_req_t *h = req->h2o;
    const char *key;
    if (refuse(req, &key))
        return 0;
    canal_ws_t *ws = malloc(sizeof(*ws));
    if (ws == NULL)
        return canal_req_fail(req, "WebSocket: out of memory");
    struct ws_worker *ww = canal__worker_state(w, &feature);
    *ws = (canal_ws_t){.worker = w, .ww = ww, .route = r, .state = WS_OPEN, .recv_code = -1,
                       .scan = {.max_message = r->max_message}};
    atomic_init(&ws->refs, 1);
    ws->timer.cb = on_timer; /* links and the timer start unlinked (zero) */
    ws->subprotocol = pick_subprotocol(r, &h->headers); /* on_open may look at it */
    if (r->on_open != NULL) {
        int rc = r->on_open(ws, req, r->data);
        if (rc != 0) { /* refused: the answer set on req (or the failure) goes out */
            leave_all(ws);
            move_early(ws, NULL);
            free(ws);
            return rc < 0 ? rc : 0;
        }
    }
    if (ws->subprotocol != NULL)
        h2o_add_header_by_str(&h->pool, &h->res.headers, H2O_STRLIT("sec-websocket-protocol"), 0, NULL,
                              ws->subprotocol, strlen(ws->subprotocol));
    if (!ww->ready) {
        /* made on first use: a timer list costs every turn of the loop a look */
        h2o_timeout_init(w->loop, &ww->idle, w->app->cfg.ws_idle_timeout_ms);
        h2o_timeout_init(w->loop, &ww->flush_timeout, 0);
        ww->ready = 1;
    }
    /* the 101 (with Connection: upgrade) is written now; libh2o then hands the socket over,
     * the bytes after the request (a first frame in the same segment) still in its input */
    ws->conn = h2o_upgrade_to_websocket(h, key, ws, on_event);
    struct wslay_event_callbacks cb = ws->conn->ws_callbacks;
    cb.recv_callback = ws_recv;
    wslay_event_config_set_callbacks(ws->conn->ws_ctx, &cb);
    /* canal__ws_scan() refuses a larger message first; wslay's own bound is the same */
    wslay_event_config_set_max_recv_msg_length(ws->conn->ws_ctx, r->max_message);
    move_early(ws, ws->conn->ws_ctx);
    req->res.committed = 1; /* answered by libh2o: canal__commit() has nothing to do */
    if (req->conn != NULL)
        req->conn->upgraded = 1; /* no longer HTTP: the sweep of slow clients leaves it */
    h2o_linklist_insert(&ww->list, &ws->link);
    atomic_fetch_add(&ww->open, 1);
    bump(&ww->opened);
    touch(ws);
    return 0;
}

/* ---- registration ---- */

static void route_free(struct canal__ws_route *r)
{
    for (char **p = r->subprotocols; p != NULL && *p != NULL; p++)
        free(*p);
    free(r->subprotocols);
    free(r);
}

static void ws_routes_free(canal_app_t *app, void *st)
{
    struct ws_routes *all = st;
    while (all->head != NULL) {
        struct canal__ws_route *r = all->head;
        all->head = r->next;
        route_free(r);
    }
    free(all->by_route);
}

int canal__ws_route(const canal_app_t *app, const canal_route_t *route)
{
    const struct ws_routes *all = canal__feature_state(app, &feature);
    size_t i = canal_route_index(route);
    return all != NULL && i < all->n && all->by_route[i] != NULL;
}

/* r is the settings of route (its number's slot, the table grown to it); -1: no memory */
static int set_route(struct ws_routes *all, const canal_route_t *route, const struct canal__ws_route *r)
{
    size_t i = canal_route_index(route);
    if (i >= all->n) {
        size_t n = i + 16;
        const struct canal__ws_route **grown = realloc(all->by_route, n * sizeof(*grown));
        if (grown == NULL)
            return -1;
        memset(grown + all->n, 0, (n - all->n) * sizeof(*grown));
        all->by_route = grown;
        all->n = n;
    }
    all->by_route[i] = r;
    return 0;
}

/* The route's settings, copied from spec; NULL when out of memory. */
/* Sockets open: the drain waits for their closing handshakes */
static int ws_worker_busy(struct canal_worker *w, void *st, void *wst)
{
    return atomic_load(&((struct ws_worker *)wst)->open) > 0;
}

static int ws_worker_init(struct canal_worker *w, void *st, void *wst);
static void ws_worker_stop(struct canal_worker *w, void *st, void *wst);
static void ws_metrics(canal_app_t *app, void *st, FILE *f);

/* The feature (core/feature.h), switched on by the first WebSocket route */
static const struct canal__feature feature = {
    .name = "WebSockets",
    .size = sizeof(struct ws_routes),
    .worker_size = sizeof(struct ws_worker),
    .metrics = ws_metrics,
    .dispose = ws_routes_free,
    .worker_init = ws_worker_init,
    .worker_drain = ws_worker_drain,
    .worker_busy = ws_worker_busy,
    .worker_stop = ws_worker_stop,
};

static struct canal__ws_route *route_new(const canal_ws_spec_t *spec)
{
    struct canal__ws_route *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    *r = (struct canal__ws_route){.on_open = spec->on_open, .on_message = spec->on_message,
                                  .on_close = spec->on_close, .data = spec->data,
                                  .max_message = spec->max_message ? spec->max_message : CANAL_WS_MAX_MESSAGE};
    size_t n = 0;
    while (spec->subprotocols != NULL && spec->subprotocols[n] != NULL)
        n++;
    if (n > 0) {
        if ((r->subprotocols = calloc(n + 1, sizeof(char *))) == NULL) {
            free(r);
            return NULL;
        }
        for (size_t i = 0; i < n; i++)
            if ((r->subprotocols[i] = strdup(spec->subprotocols[i])) == NULL) {
                route_free(r);
                return NULL;
            }
    }
    return r;
}

int canal_app_ws(canal_app_t *app, const canal_ws_spec_t *spec, const canal_route_t **route, canal_error_info_t *err)
{
    canal_error_info_t e = {0};
    struct ws_routes *all = canal__feature_on(app, &feature);
    struct canal__ws_route *r = spec != NULL && all != NULL ? route_new(spec) : NULL;
    const canal_route_t *get = NULL, *options = NULL;
    if (r == NULL) {
        canal_error_set(&e, spec == NULL ? CANAL_EINVAL : CANAL_ENOMEM, 0, "a WebSocket route: %s",
                        spec == NULL ? "no spec" : "out of memory");
        if (err != NULL)
            *err = e;
        return canal__reg_error(app, &e);
    }
    canal_endpoint_spec_t es = {.method = "GET", .tmpl = spec->tmpl, .handler = ws_handshake, .data = spec->data,
                                .dispose = spec->dispose, .name = spec->name, .group = spec->group};
    int rc = canal_app_route(app, &es, &get, err);
    if (rc == 0) {
        /* any other method is a 405 from the router; OPTIONS too, rather than its 204 */
        es = (canal_endpoint_spec_t){.method = "OPTIONS", .tmpl = spec->tmpl, .handler = ws_handshake,
                                     .data = spec->data, .group = spec->group};
        rc = canal_app_route(app, &es, &options, err);
    }
    if (rc != 0) {
        route_free(r);
        return rc;
    }
    r->next = all->head;
    all->head = r; /* freed with the app from now on */
    if (set_route(all, get, r) != 0 || set_route(all, options, r) != 0) {
        canal_error_set(&e, CANAL_ENOMEM, 0, "a WebSocket route: out of memory");
        if (err != NULL)
            *err = e;
        return canal__reg_error(app, &e);
    }
    if (route != NULL)
        *route = get;
    return 0;
}

/* ---- groups ---- */

canal_ws_group_t *canal_ws_group_create(canal_app_t *app)
{
    int state = atomic_load(&app->state); /* canal_app_wait() runs the app as APP_STOPPING */
    if (state != APP_STARTED && state != APP_STOPPING)
        return NULL;
    canal_ws_group_t *g = malloc(sizeof(*g) + app->nworkers * sizeof(h2o_linklist_t));
    if (g == NULL)
        return NULL;
    g->app = app;
    g->nworkers = app->nworkers;
    atomic_init(&g->sub, NULL);
    atomic_init(&g->refs, 1);
    atomic_init(&g->size, 0);
    for (size_t i = 0; i < g->nworkers; i++)
        h2o_linklist_init_anchor(&g->members[i]);
    return g;
}

/* a member's or a message's reference */
static void group_unref(canal_ws_group_t *g)
{
    if (atomic_fetch_sub(&g->refs, 1) == 1)
        free(g);
}

/* the creator's: the link to the store ends first (no callback of it runs after) */
void canal_ws_group_release(canal_ws_group_t *g)
{
    if (g == NULL)
        return;
    canal__redis_unsubscribe(atomic_exchange(&g->sub, NULL));
    group_unref(g);
}

size_t canal_ws_group_size(const canal_ws_group_t *g)
{
    return atomic_load(&g->size);
}

int canal_ws_join(canal_ws_t *ws, canal_ws_group_t *g)
{
    if (ws->state != WS_OPEN)
        return CANAL_ESTATE;
    for (struct member *m = ws->groups; m != NULL; m = m->next)
        if (m->group == g)
            return CANAL_EEXIST;
    struct member *m = malloc(sizeof(*m));
    if (m == NULL)
        return CANAL_ENOMEM;
    *m = (struct member){.next = ws->groups, .group = g, .ws = ws};
    h2o_linklist_insert(&g->members[ws->worker->index], &m->link);
    ws->groups = m;
    atomic_fetch_add(&g->refs, 1); /* a member keeps its group */
    atomic_fetch_add(&g->size, 1);
    return 0;
}

static void member_free(struct member *m)
{
    canal_ws_group_t *g = m->group;
    h2o_linklist_unlink(&m->link);
    atomic_fetch_sub(&g->size, 1);
    free(m);
    group_unref(g);
}

int canal_ws_leave(canal_ws_t *ws, canal_ws_group_t *g)
{
    for (struct member **p = &ws->groups; *p != NULL; p = &(*p)->next) {
        if ((*p)->group == g) {
            struct member *m = *p;
            *p = m->next;
            member_free(m);
            return 0;
        }
    }
    return CANAL_ENOTFOUND;
}

static void leave_all(canal_ws_t *ws)
{
    while (ws->groups != NULL) {
        struct member *m = ws->groups;
        ws->groups = m->next;
        member_free(m);
    }
}

static void payload_release(struct payload *p)
{
    if (atomic_fetch_sub(&p->refs, 1) == 1)
        free(p);
}

/* The group's members on worker k (this thread's): queue_msg() never ends a socket at once,
 * so the walk is safe. */
static void deliver(canal_ws_group_t *g, size_t k, const struct payload *p)
{
    h2o_linklist_t *list = &g->members[k];
    for (h2o_linklist_t *l = list->next; l != list; l = l->next)
        queue_msg(H2O_STRUCT_FROM_MEMBER(struct member, link, l)->ws, p->opcode, p->bytes, p->len);
}

/* On the member's worker. The worker's one queue keeps each sender's messages in order, so a
 * sender's group messages reach every member in the order they were sent. */
static void run_group(struct canal__post *msg)
{
    struct group_msg *m = (struct group_msg *)msg;
    deliver(m->group, m->k, m->payload);
    payload_release(m->payload);
    group_unref(m->group);
    free(m);
}

/* The message to this instance's members, on every worker. */
static int local_send(canal_ws_group_t *g, int opcode, const void *msg, size_t len)
{
    struct payload *p = malloc(sizeof(*p) + len);
    if (p == NULL)
        return CANAL_ENOMEM;
    atomic_init(&p->refs, 1); /* this call's, until every worker has its own */
    p->opcode = opcode;
    p->len = len;
    if (len > 0)
        memcpy(p->bytes, msg, len);
    int rc = 0;
    struct canal_worker *self = this_worker != NULL && this_worker->app == g->app ? this_worker : NULL;
    for (size_t k = 0; k < g->nworkers; k++) {
        struct canal_worker *w = &g->app->workers[k];
        if (w == self) {
            deliver(g, k, p);
            continue;
        }
        struct group_msg *m = malloc(sizeof(*m));
        if (m == NULL) {
            rc = CANAL_ENOMEM;
            continue;
        }
        *m = (struct group_msg){.super.run = run_group, .group = g, .k = k, .payload = p};
        atomic_fetch_add(&p->refs, 1);
        atomic_fetch_add(&g->refs, 1);
        if (canal__post(w, &m->super) != 0) {
            payload_release(p);
            group_unref(g);
            free(m);
        }
    }
    payload_release(p);
    return rc;
}

/* Shared, the message goes to the store's channel as its opcode's byte then its bytes; what
 * comes back (on_store_message()) reaches the members. If it cannot be published now, this
 * instance's members get it at least. */
int canal_ws_group_send(canal_ws_group_t *g, canal_ws_kind_t kind, const void *msg, size_t len)
{
    int opcode = opcode_of(kind, msg, len);
    if (opcode < 0)
        return CANAL_EINVAL;
    struct canal__redis_sub *sub = atomic_load(&g->sub);
    if (sub == NULL)
        return local_send(g, opcode, msg, len);
    unsigned char small[512], *buf = len < sizeof(small) ? small : malloc(len + 1);
    if (buf == NULL)
        return CANAL_ENOMEM;
    buf[0] = (unsigned char)opcode;
    if (len > 0)
        memcpy(buf + 1, msg, len);
    int rc = canal__redis_sub_publish(sub, buf, len + 1);
    if (buf != small)
        free(buf);
    return rc == 0 ? 0 : local_send(g, opcode, msg, len);
}

/* A message from the store's channel (worker 0, under the subscription lock). */
static void on_store_message(void *target, const char *msg, size_t len)
{
    int opcode = len > 0 ? (unsigned char)msg[0] : -1;
    if (opcode == WSLAY_TEXT_FRAME || opcode == WSLAY_BINARY_FRAME)
        local_send(target, opcode, msg + 1, len - 1);
}

int canal_ws_group_share(canal_ws_group_t *g, const char *name, size_t len)
{
    return canal__redis_share(g->app, &g->sub, "canal:ws:", name, len, on_store_message, g);
}

static void run_ws_post(struct canal__post *msg)
{
    struct ws_post_msg *m = (struct ws_post_msg *)msg;
    m->fn(m->ws->state != WS_CLOSED ? m->ws : NULL, m->data);
    canal_ws_release(m->ws);
    free(m);
}

void canal_ws_post(canal_ws_t *ws, canal_ws_post_fn fn, void *data)
{
    struct ws_post_msg *m = malloc(sizeof(*m));
    if (m != NULL) {
        *m = (struct ws_post_msg){.super.run = run_ws_post, .ws = canal_ws_retain(ws), .fn = fn, .data = data};
        if (canal__post(ws->worker, &m->super) == 0)
            return;
        canal_ws_release(ws);
        free(m);
    }
    fn(NULL, data); /* the worker has stopped (or memory is short): give data back */
}

/* ---- a worker's part ---- */

/* The sockets' lines of the metrics, summed over the workers */
static void ws_metrics(canal_app_t *app, void *st, FILE *f)
{
    size_t open = 0;
    unsigned long long opened = 0, in = 0, out = 0, dropped = 0;
    for (size_t k = 0; k < app->nworkers; k++) {
        const struct ws_worker *ww = canal__worker_state(&app->workers[k], &feature);
        open += atomic_load(&ww->open);
        opened += atomic_load_explicit(&ww->opened, memory_order_relaxed);
        in += atomic_load_explicit(&ww->received, memory_order_relaxed);
        out += atomic_load_explicit(&ww->sent, memory_order_relaxed);
        dropped += atomic_load_explicit(&ww->dropped, memory_order_relaxed);
    }
    fprintf(f,
            "# HELP canal_ws_connections Open WebSockets.\n"
            "# TYPE canal_ws_connections gauge\n"
            "canal_ws_connections %zu\n"
            "# HELP canal_ws_opened_total WebSockets opened (handshakes that upgraded).\n"
            "# TYPE canal_ws_opened_total counter\n"
            "canal_ws_opened_total %llu\n"
            "# HELP canal_ws_messages_received_total Whole text and binary messages from clients.\n"
            "# TYPE canal_ws_messages_received_total counter\n"
            "canal_ws_messages_received_total %llu\n"
            "# HELP canal_ws_messages_sent_total Text and binary messages queued to clients.\n"
            "# TYPE canal_ws_messages_sent_total counter\n"
            "canal_ws_messages_sent_total %llu\n"
            "# HELP canal_ws_dropped_total WebSockets dropped for falling too far behind (ws_max_queued).\n"
            "# TYPE canal_ws_dropped_total counter\n"
            "canal_ws_dropped_total %llu\n",
            open, opened, in, out, dropped);
}

static int ws_worker_init(struct canal_worker *w, void *st, void *wst)
{
    struct ws_worker *ww = wst;
    this_worker = w;
    ww->w = w;
    h2o_linklist_init_anchor(&ww->list);
    h2o_linklist_init_anchor(&ww->flush);
    ww->flush_entry.cb = on_flush;
    return 0;
}

/* After the connections are gone and canal__worker_async_dispose() has closed the door to
 * posts and delivered what came before. */
static void ws_worker_stop(struct canal_worker *w, void *st, void *wst)
{
    /* a socket that outlived close_connections() in worker.c keeps no timer in lists disposed of */
    struct ws_worker *ww = wst;
    for (h2o_linklist_t *l = ww->list.next; l != &ww->list; l = l->next) {
        canal_ws_t *ws = H2O_STRUCT_FROM_MEMBER(canal_ws_t, link, l);
        if (h2o_timeout_is_linked(&ws->timer))
            h2o_timeout_unlink(&ws->timer);
    }
    if (ww->ready) {
        if (h2o_timeout_is_linked(&ww->flush_entry))
            h2o_timeout_unlink(&ww->flush_entry);
        h2o_timeout_dispose(w->loop, &ww->flush_timeout);
        h2o_timeout_dispose(w->loop, &ww->idle);
        ww->ready = 0;
    }
    this_worker = NULL;
}
