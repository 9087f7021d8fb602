/* SPDX-License-Identifier: MIT */
/*
 * The views feature: the app's templates (canal_app_views(), canal_app_view()), its layout,
 * and canal_res_view(), which renders one into the answer.
 *
 * The templates are compiled at registration, so a syntax error is the app's registration
 * error with file, line and column. The feature keeps the registrations (folders, and texts
 * with their names) so that in the development environment a template file changed on disk
 * can be compiled again: each canal_res_view() then compares the files' modification times
 * with those at compile time, and on a change compiles every registration again into a new
 * set, which replaces the old one only if it compiles. The development path takes a mutex
 * around the check and the render; production never looks at the disk and takes no lock (the
 * set does not change once started).
 *
 * Rendering writes into a buffer of the worker's own (per-worker state), kept between
 * requests (up to 1 MiB), and the answer copies it into the request's memory: one allocation
 * per request, h2o's.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "canal/stream.h"
#include "core/core.h"
#include "core/feature.h"
#include "views.h"

struct reg {
    char *dir;        /* a folder, or NULL */
    char *name, *text; /* a template from a string */
    size_t len;
};

struct views {
    canal_views_t *set;
    struct reg *regs;
    size_t nregs;
    char *layout;
    int dev;
    pthread_mutex_t lock; /* the development path */
    int lock_made;
    atomic_int streams; /* streamed pages being rendered: the set is not compiled again meanwhile */
};

static const struct canal__feature feature;

/* The largest render buffer a worker keeps between requests */
#define KEEP_MAX (1u << 20)
/* a streamed page is rendered and sent in parts of about this many bytes */
#define VIEW_PART 16384

/* The feature's state, switched on; NULL (the registration error kept) once started */
static struct views *views_on(canal_app_t *app, canal_error_info_t *err)
{
    if (atomic_load(&app->state) != APP_CREATED) {
        canal__reg_fail(app, err, CANAL_ESTATE, "views: the app has started");
        return NULL;
    }
    struct views *v = canal__feature_on(app, &feature);
    if (v == NULL || (v->set == NULL && (v->set = canal_views_create()) == NULL)) {
        canal__reg_fail(app, err, CANAL_ENOMEM, NULL);
        return NULL;
    }
    return v;
}

/* Compiles one registration into set */
static int compile_reg(canal_views_t *set, const struct reg *r, canal_error_info_t *err)
{
    return r->dir ? canal_views_load(set, r->dir, err) : canal_views_add(set, r->name, r->text, r->len, err);
}

/* Compiles r into the app's templates and keeps it for the development reload; r's copies
 * are freed on failure (the set is then unchanged) */
static int add_reg(canal_app_t *app, struct views *v, struct reg r, canal_error_info_t *err)
{
    canal_error_info_t e = {0};
    struct reg *n = realloc(v->regs, (v->nregs + 1) * sizeof(*n));
    int rc = n == NULL || (r.dir == NULL && r.text == NULL) ? canal_error_set(&e, CANAL_ENOMEM, 0, "out of memory")
                                                           : compile_reg(v->set, &r, &e);
    if (n != NULL)
        v->regs = n;
    if (rc != 0) {
        free(r.dir), free(r.name), free(r.text);
        return canal__reg_fail(app, err, rc, "views: %s", e.message);
    }
    v->regs[v->nregs++] = r;
    return 0;
}

int canal_app_views(canal_app_t *app, const char *dir, canal_error_info_t *err)
{
    if (app == NULL || dir == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "views: no app or folder");
    struct views *v = views_on(app, err);
    return v == NULL ? canal_app_error(app, NULL) : add_reg(app, v, (struct reg){.dir = strdup(dir)}, err);
}

int canal_app_view(canal_app_t *app, const char *name, const char *text, canal_error_info_t *err)
{
    if (app == NULL || name == NULL || text == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "views: no app, name or text");
    struct views *v = views_on(app, err);
    if (v == NULL)
        return canal_app_error(app, NULL);
    struct reg r = {.name = strdup(name), .len = strlen(text)};
    r.text = r.name ? strdup(text) : NULL;
    return add_reg(app, v, r, err);
}

int canal_app_view_layout(canal_app_t *app, const char *layout, canal_error_info_t *err)
{
    if (app == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "views: no app");
    struct views *v = views_on(app, err);
    if (v == NULL)
        return canal_app_error(app, NULL);
    char *copy = layout ? strdup(layout) : NULL;
    if (layout && copy == NULL)
        return canal__reg_fail(app, err, CANAL_ENOMEM, NULL);
    free(v->layout);
    v->layout = copy;
    return 0;
}

static int views_start(canal_app_t *app, void *st)
{
    struct views *v = st;
    if (v->layout && !canal__views_has(v->set, v->layout)) {
        canal__log(app, CANAL_LOG_ERROR, "views: no layout \"%s\" among the templates", v->layout);
        return -1;
    }
    v->dev = canal_app_config(app)->env == CANAL_ENV_DEVELOPMENT;
    if (v->dev) {
        if (pthread_mutex_init(&v->lock, NULL) != 0)
            return -1;
        v->lock_made = 1;
    }
    return 0;
}

static void views_dispose(canal_app_t *app, void *st)
{
    struct views *v = st;
    canal_views_destroy(v->set);
    for (size_t i = 0; i < v->nregs; i++)
        free(v->regs[i].dir), free(v->regs[i].name), free(v->regs[i].text);
    free(v->regs);
    free(v->layout);
    if (v->lock_made)
        pthread_mutex_destroy(&v->lock);
}

static void views_worker_exit(struct canal_worker *w, void *st, void *wst)
{
    struct canal__vbuf *b = wst;
    free(b->base);
    *b = (struct canal__vbuf){0};
}

/* 1 if the file's modification time is not the one it had when compiled */
static int changed(const char *path, long long mtime_ns, void *arg)
{
    struct stat s;
    if (stat(path, &s) != 0)
        return 1;
    return (long long)s.st_mtim.tv_sec * 1000000000LL + s.st_mtim.tv_nsec != mtime_ns;
}

/* Development: compiles every registration again when a file changed. 0, or the error of the
 * new set (the old one stays). */
static int reload(canal_app_t *app, struct views *v, canal_error_info_t *err)
{
    if (atomic_load(&v->streams) > 0 || canal__views_each_file(v->set, changed, NULL) == 0)
        return 0;
    canal_views_t *set = canal_views_create();
    if (set == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    for (size_t i = 0; i < v->nregs; i++) {
        int rc = compile_reg(set, &v->regs[i], err);
        if (rc != 0) {
            canal_views_destroy(set);
            return rc;
        }
    }
    canal_views_destroy(v->set);
    v->set = set;
    canal__log(app, CANAL_LOG_INFO, "views: templates compiled again after a change");
    return 0;
}

/* The app's views, or NULL with the request failed (none were registered) */
static struct views *views_of(canal_req_t *req)
{
    struct views *v = canal__feature_state(req->app, &feature);
    if (v == NULL)
        canal_req_fail(req, "views: no templates (canal_app_views())");
    return v;
}

int canal_res_view(canal_req_t *req, int status, const char *name, const canal_view_data_t *data)
{
    if (req == NULL || name == NULL)
        return CANAL_EINVAL;
    struct views *v = views_of(req);
    if (v == NULL)
        return CANAL_ENOTFOUND;
    struct canal__vbuf own = {0}, *b = req->worker ? canal__worker_state(req->worker, &feature) : NULL;
    if (b == NULL)
        b = &own;
    b->len = 0;
    canal_error_info_t e = {0};
    int rc = 0;
    if (v->dev) {
        pthread_mutex_lock(&v->lock);
        rc = reload(req->app, v, &e);
    }
    if (rc == 0)
        rc = canal__views_render_to(v->set, name, v->layout, data, b, &e);
    if (v->dev)
        pthread_mutex_unlock(&v->lock);
    if (rc == 0)
        rc = canal_res_body(req, status, "text/html; charset=utf-8", b->base ? b->base : "", b->len);
    else
        canal_req_fail(req, "views: %s", e.message);
    free(own.base);
    if (b->cap > KEEP_MAX) { /* an unusually large page: its buffer is not kept */
        free(b->base);
        *b = (struct canal__vbuf){0};
    }
    return rc;
}

/* ---- streamed pages ---- */

/* A streamed page: its suspended render, and the part in hand (rendered, not yet taken by the
 * stream's queue). */
struct page {
    struct views *v;
    canal_app_t *app;
    canal_stream_t *s;
    struct canal__walk *walk;
    struct canal__vbuf part;
    void (*done)(int rc, void *arg);
    void *arg;
    int written; /* the render has ended */
    int pumping; /* in pump(): a closed callback there is left to it */
    int closed;
};

static void page_free(struct page *p)
{
    if (p->walk != NULL) {
        canal__views_walk_free(p->walk);
        atomic_fetch_sub(&p->v->streams, 1);
    }
    free(p->part.base);
    free(p);
}

static void page_end(struct page *p, int rc)
{
    void (*done)(int, void *) = p->done;
    void *arg = p->arg;
    canal_stream_end(p->s);
    page_free(p);
    if (done != NULL)
        done(rc, arg);
}

/* Hands the part in hand to the stream and renders the next, until the stream's queue is
 * full (its writable callback comes back here), the page is written, or it cannot go on. */
static void pump(struct page *p)
{
    p->pumping = 1;
    for (;;) {
        int rc = p->part.len > 0 ? canal_stream_write(p->s, p->part.base, p->part.len) : 0;
        if (rc == 0 && p->closed)
            rc = CANAL_ECLOSED;
        if (rc == CANAL_EAGAIN) {
            p->pumping = 0;
            return;
        }
        p->part.len = 0;
        if (rc == 0 && !p->written) {
            canal_error_info_t e = {0};
            rc = canal__views_walk(p->walk, &p->part, VIEW_PART, &e);
            if (rc < 0) { /* the status and the first part are sent: the body ends where it stopped */
                canal__log(p->app, CANAL_LOG_ERROR, "views: a streamed page stopped: %s", e.message);
                if (p->part.len > 0)
                    canal_stream_write(p->s, p->part.base, p->part.len); /* taken, or not: it ends */
            }
            p->written = rc == 1;
            rc = rc < 0 ? rc : 0;
        }
        if (rc != 0 || (p->written && p->part.len == 0)) {
            page_end(p, rc);
            return;
        }
    }
}

static void page_writable(canal_stream_t *s, void *data)
{
    pump(data);
}

static void page_closed(canal_stream_t *s, canal_stream_close_t why, void *data)
{
    struct page *p = data;
    if (p->pumping)
        p->closed = 1;
    else
        page_end(p, CANAL_ECLOSED);
}

int canal_res_view_stream(canal_req_t *req, int status, const char *name, const canal_view_data_t *data,
                          void (*done)(int rc, void *arg), void *arg)
{
    static const canal_stream_cb_t cb = {.writable = page_writable, .closed = page_closed, .max_queued = VIEW_PART};
    if (req == NULL || name == NULL)
        return CANAL_EINVAL;
    struct views *v = views_of(req);
    if (v == NULL)
        return CANAL_ENOTFOUND;
    struct page *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        canal_req_fail(req, "views: out of memory");
        return CANAL_ENOMEM;
    }
    *p = (struct page){.v = v, .app = req->app, .done = done, .arg = arg};
    canal_error_info_t e = {0};
    int rc = 0;
    if (v->dev) {
        pthread_mutex_lock(&v->lock);
        rc = reload(req->app, v, &e);
    }
    if (rc == 0 && (p->walk = canal__views_walk_new(v->set, name, v->layout, data, &e)) == NULL)
        rc = e.code;
    if (p->walk != NULL)
        atomic_fetch_add(&v->streams, 1); /* under the lock: no compiling again under the walk */
    if (v->dev)
        pthread_mutex_unlock(&v->lock);
    /* the first part before anything is sent: a failure there is an ordinary 500, and a page
     * that ends within it is answered whole, with its length */
    if (rc == 0 && (rc = canal__views_walk(p->walk, &p->part, VIEW_PART, &e)) >= 0)
        p->written = rc == 1, rc = 0;
    if (rc == 0 && p->written) {
        rc = canal_res_body(req, status, "text/html; charset=utf-8", p->part.base ? p->part.base : "", p->part.len);
        page_free(p);
        if (rc == 0 && done != NULL)
            done(0, arg);
        return rc;
    }
    if (rc == 0 && (rc = canal_res_status(req, status)) == 0 &&
        (p->s = canal_res_stream_begin(req, "text/html; charset=utf-8", &cb, p)) != NULL) {
        pump(p);
        return 0;
    }
    if (rc == 0 && canal_req_failure(req) != NULL) {
        rc = CANAL_ESTATE; /* the commit hook failed the request: its 500 is sent */
    } else if (rc == 0) { /* the answer was committed already, or memory is short */
        rc = CANAL_ENOMEM;
        canal_req_fail(req, "views: the page's stream could not begin");
    } else {
        canal_req_fail(req, "views: %s", e.message[0] != '\0' ? e.message : canal_strerror(rc));
    }
    page_free(p);
    return rc;
}

static const struct canal__feature feature = {
    .name = "views",
    .size = sizeof(struct views),
    .worker_size = sizeof(struct canal__vbuf),
    .start = views_start,
    .dispose = views_dispose,
    .worker_exit = views_worker_exit,
};
