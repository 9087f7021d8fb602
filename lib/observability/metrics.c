/* SPDX-License-Identifier: MIT */
/*
 * Prometheus metrics, cheap enough to leave on.
 *
 * Each worker owns an array of slots, one per route (slot 0: requests that matched no route),
 * allocated before the workers start. When h2o disposes of a request (the answer is sent),
 * canal's end-of-request logger (req.c; an app without metrics pays one pointer test there)
 * adds it to its worker's slot, timed from h2o's own timestamp of its start: a count per
 * (method, status) in a small open-addressing table and a latency histogram. Only that worker
 * writes the slot, so the counters are bumped with relaxed atomic loads and stores (plain
 * moves on x86, no locked instructions); a scrape, on whatever worker serves it, reads every
 * worker's slots with relaxed loads and sums them. A scrape may see one request counted in
 * requests_total and not yet in the histogram: Prometheus tolerates that skew.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "observability/observability.h"
#include "canal/metrics.h"

/* Upper bounds of the histogram buckets, in nanoseconds (seconds in the output). */
static const uint64_t bucket_ns[] = {
    500000, 1000000, 2500000, 5000000, 10000000, 25000000, 50000000, 100000000, 250000000,
    500000000, 1000000000, 2500000000, 5000000000, 10000000000,
};
static const char *const bucket_le[] = {"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
                                        "0.1",    "0.25",  "0.5",    "1",     "2.5",  "5",     "10"};
#define NBUCKETS (sizeof(bucket_ns) / sizeof(bucket_ns[0]))

static const char *const method_names[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "OTHER"};
#define METHOD_OTHER 7

/* (method, status) pairs one route may see before the rest go to the overflow counter */
#define NSTATUS 32

typedef _Atomic uint64_t counter_t;

struct canal__mslot {
    struct {
        _Atomic uint32_t key; /* method << 10 | status; 0: empty */
        counter_t n;
    } status[NSTATUS];
    counter_t overflow;        /* requests whose (method, status) found no room */
    counter_t buckets[NBUCKETS + 1]; /* not cumulative; the last is above the largest bound */
    counter_t count, sum_ns;
};

/* The feature's state */
struct canal__metrics {
    int on;                    /* canal_app_metrics() succeeded */
    size_t nslots;
    const char **routes;       /* slot i's route template with a leading '/' (slot 0: "(unmatched)";
                                  the others are owned) */
    struct canal__mslot **slots; /* worker k's counters, one slot per route */
};
static const struct canal__feature feature;

/* Only the owning worker writes: no read-modify-write instruction needed. */
static inline void bump(counter_t *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by, memory_order_relaxed);
}

static inline uint64_t get(counter_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}


static unsigned method_index(h2o_iovec_t m)
{
    for (unsigned i = 0; i < METHOD_OTHER; i++)
        if (h2o_memis(m.base, m.len, method_names[i], strlen(method_names[i])))
            return i;
    return METHOD_OTHER;
}

int64_t canal__elapsed_ns(h2o_req_t *h)
{
    /* from h2o's timestamp of the request's start (the event loop's clock when the request's
     * first bytes were read: no clock is read per request at the start) to now */
    if (h2o_timeval_is_null(&h->timestamps.request_begin_at))
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return ((int64_t)now.tv_sec - h->timestamps.request_begin_at.tv_sec) * 1000000000 +
           ((int64_t)now.tv_nsec - (int64_t)h->timestamps.request_begin_at.tv_usec * 1000);
}

/* A worker's own: its counters (m->slots[k], set by worker_init()) */
struct mworker {
    struct canal__mslot *slots;
};

/* The end of every request of canal's */
static void record(h2o_req_t *h, canal_req_t *req, void *st, void *wst)
{
    if (req == NULL)
        return;
    struct canal__mslot *s = &((struct mworker *)wst)->slots[req->endpoint ? req->match->index + 1 : 0];
    int64_t d = canal__elapsed_ns(h);
    uint64_t ns = d > 0 ? (uint64_t)d : 0;
    size_t b = 0;
    while (b < NBUCKETS && ns > bucket_ns[b])
        b++;
    bump(&s->buckets[b], 1);
    bump(&s->count, 1);
    bump(&s->sum_ns, ns);

    unsigned status = h->res.status > 0 && h->res.status < 1000 ? (unsigned)h->res.status : 0;
    uint32_t key = method_index(h->method) << 10 | status;
    key += key == 0; /* 0 marks an empty entry: GET with no status becomes GET 1, never shown */
    for (unsigned i = 0, at = (key * 2654435761u) >> 27; i < NSTATUS; i++, at = (at + 1) % NSTATUS) {
        uint32_t k = atomic_load_explicit(&s->status[at].key, memory_order_relaxed);
        if (k == 0)
            atomic_store_explicit(&s->status[at].key, k = key, memory_order_relaxed);
        if (k == key) {
            bump(&s->status[at].n, 1);
            return;
        }
    }
    bump(&s->overflow, 1);
}

static int scrape(canal_req_t *req, void *data)
{
    canal_app_t *app = req->app;
    struct canal__metrics *m = canal__feature_state(app, &feature);
    size_t nw = app->nworkers, inflight = 0, conns = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return canal_req_fail(req, "metrics: out of memory");

    fputs("# HELP canal_http_requests_total Requests answered, by route template, method and status.\n"
          "# TYPE canal_http_requests_total counter\n",
          f);
    for (size_t i = 0; i < m->nslots; i++) {
        /* sum each (method, status) over the workers: every worker's table is small */
        for (size_t w = 0; w < nw; w++) {
            struct canal__mslot *s = &m->slots[w][i];
            for (unsigned e = 0; e < NSTATUS; e++) {
                uint32_t key = atomic_load_explicit(&s->status[e].key, memory_order_relaxed);
                if (key == 0 || (key & 1023) < 100)
                    continue;
                /* a key already written for an earlier worker is done */
                int seen = 0;
                for (size_t v = 0; v < w && !seen; v++)
                    for (unsigned x = 0; x < NSTATUS && !seen; x++)
                        seen = atomic_load_explicit(&m->slots[v][i].status[x].key,
                                                    memory_order_relaxed) == key;
                if (seen)
                    continue;
                uint64_t n = 0;
                for (size_t v = w; v < nw; v++)
                    for (unsigned x = 0; x < NSTATUS; x++)
                        if (atomic_load_explicit(&m->slots[v][i].status[x].key, memory_order_relaxed) ==
                            key)
                            n += get(&m->slots[v][i].status[x].n);
                fputs("canal_http_requests_total{route=\"", f);
                canal__metrics_label(f, m->routes[i]);
                fprintf(f, "\",method=\"%s\",status=\"%u\"} %llu\n", method_names[key >> 10], key & 1023,
                        (unsigned long long)n);
            }
        }
    }
    fputs("# HELP canal_http_request_duration_seconds Time from dispatch to the answer sent, by route.\n"
          "# TYPE canal_http_request_duration_seconds histogram\n",
          f);
    for (size_t i = 0; i < m->nslots; i++) {
        uint64_t buckets[NBUCKETS + 1] = {0}, sum = 0;
        for (size_t w = 0; w < nw; w++) {
            struct canal__mslot *s = &m->slots[w][i];
            for (size_t b = 0; b <= NBUCKETS; b++)
                buckets[b] += get(&s->buckets[b]);
            sum += get(&s->sum_ns);
        }
        uint64_t cum = 0;
        for (size_t b = 0; b <= NBUCKETS; b++) {
            cum += buckets[b];
            fputs("canal_http_request_duration_seconds_bucket{route=\"", f);
            canal__metrics_label(f, m->routes[i]);
            fprintf(f, "\",le=\"%s\"} %llu\n", b < NBUCKETS ? bucket_le[b] : "+Inf", (unsigned long long)cum);
        }
        fputs("canal_http_request_duration_seconds_sum{route=\"", f);
        canal__metrics_label(f, m->routes[i]);
        fprintf(f, "\"} %.9f\n", (double)sum / 1e9);
        fputs("canal_http_request_duration_seconds_count{route=\"", f);
        canal__metrics_label(f, m->routes[i]);
        /* the histogram's own count, so that +Inf == count holds within one scrape */
        fprintf(f, "\"} %llu\n", (unsigned long long)cum);
    }
    uint64_t overflow = 0;
    for (size_t w = 0; w < nw; w++) {
        struct canal_worker *wk = &app->workers[w];
        inflight += atomic_load(&wk->inflight);
        conns += atomic_load(&wk->connections);
        for (size_t i = 0; i < m->nslots; i++)
            overflow += get(&m->slots[w][i].overflow);
    }
    fprintf(f,
            "# HELP canal_http_requests_unlabelled_total Requests of a route past its %d (method, status) pairs.\n"
            "# TYPE canal_http_requests_unlabelled_total counter\n"
            "canal_http_requests_unlabelled_total %llu\n"
            "# HELP canal_http_requests_in_flight Requests being handled, this scrape included.\n"
            "# TYPE canal_http_requests_in_flight gauge\n"
            "canal_http_requests_in_flight %zu\n"
            "# HELP canal_http_connections Open client connections.\n"
            "# TYPE canal_http_connections gauge\n"
            "canal_http_connections %zu\n"
            "# HELP canal_workers Worker threads (one event loop each).\n"
            "# TYPE canal_workers gauge\n"
            "canal_workers %zu\n",
            NSTATUS, (unsigned long long)overflow, inflight, conns, nw);
    /* the features' own lines (rate limits, WebSockets...) */
    for (size_t i = 0; i < app->nfeatures; i++)
        if (app->features[i].f->metrics != NULL)
            app->features[i].f->metrics(app, app->features[i].state, f);
    if (fclose(f) != 0) {
        free(text);
        return canal_req_fail(req, "metrics: out of memory");
    }
    canal_res_compress(req, 1); /* a scrape is text: worth compressing when the scraper asks */
    int rc = canal_res_body(req, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
    free(text);
    return rc;
}

int canal_app_metrics(canal_app_t *app, const char *path, canal_error_info_t *err)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return canal__reg_fail(app, err, CANAL_ESTATE, "metrics are switched on before the app starts");
    struct canal__metrics *m = canal__feature_state(app, &feature);
    if (m != NULL && m->on)
        return canal__reg_fail(app, err, CANAL_EEXIST, "metrics are on already");
    if ((m = canal__feature_on(app, &feature)) == NULL)
        return canal__reg_fail(app, err, CANAL_ENOMEM, "metrics: out of memory");
    int rc = canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = path, .handler = scrape}, NULL, err);
    m->on = rc == 0;
    return rc;
}

/* Numbers the routes and gives every worker its slots; before the workers exist. */
static int metrics_start(canal_app_t *app, void *st)
{
    struct canal__metrics *m = st;
    size_t n = canal_router_route_count(app->router);
    m->nslots = n + 1;
    if ((m->routes = calloc(m->nslots, sizeof(*m->routes))) == NULL) {
        m->nslots = 0;
        return -1;
    }
    m->routes[0] = "(unmatched)";
    if ((m->slots = calloc(app->nworkers, sizeof(*m->slots))) == NULL)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const canal_route_t *r = canal_router_route_at(app->router, i);
        /* "home/plaintext" and "/home/plaintext" are one template: label both with the '/' */
        const char *t = canal_route_template(r);
        while (*t == '/')
            t++;
        size_t len = strlen(t);
        char *label = malloc(len + 2);
        if (label == NULL)
            goto nomem;
        label[0] = '/';
        memcpy(label + 1, t, len + 1);
        m->routes[i + 1] = label;
    }
    for (size_t w = 0; w < app->nworkers; w++)
        if ((m->slots[w] = calloc(m->nslots, sizeof(struct canal__mslot))) == NULL)
            goto nomem;
    return 0;
nomem:
    canal__log(app, CANAL_LOG_ERROR, "out of memory for metrics");
    return -1;
}

static void metrics_dispose(canal_app_t *app, void *st)
{
    struct canal__metrics *m = st;
    for (size_t w = 0; m->slots != NULL && w < app->nworkers; w++)
        free(m->slots[w]);
    free(m->slots);
    if (m->routes != NULL) {
        for (size_t i = 1; i < m->nslots; i++)
            free((char *)m->routes[i]);
        free(m->routes);
    }
}

static int metrics_worker_init(struct canal_worker *w, void *st, void *wst)
{
    ((struct mworker *)wst)->slots = ((struct canal__metrics *)st)->slots[w->index];
    return 0;
}

static const struct canal__feature feature = {
    .name = "metrics",
    .size = sizeof(struct canal__metrics),
    .worker_size = sizeof(struct mworker),
    .start = metrics_start,
    .dispose = metrics_dispose,
    .worker_init = metrics_worker_init,
    .end = record,
};
