/* SPDX-License-Identifier: MIT */
/*
 * The todo API's handlers. Items live in a JSON array guarded by a mutex: requests run on
 * several worker threads at once. Answers are built while the lock is held and sent after it
 * is released, so no lock is held across canal's I/O.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "todo.h"

struct todo_store {
    pthread_mutex_t lock;
    json_t *items; /* array of {"id", "title", "done"} */
    json_int_t next_id;
};

todo_store_t *todo_store_create(void)
{
    todo_store_t *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->items = json_array()) == NULL) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->next_id = 1;
    return s;
}

void todo_store_destroy(todo_store_t *s)
{
    if (s == NULL)
        return;
    json_decref(s->items);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The index of item id, or -1. With the lock held. */
static long find(todo_store_t *s, int32_t id)
{
    size_t i;
    json_t *item;
    json_array_foreach(s->items, i, item)
        if (json_integer_value(json_object_get(item, "id")) == id)
            return (long)i;
    return -1;
}

static int list(canal_req_t *req, void *data)
{
    todo_store_t *s = data;
    pthread_mutex_lock(&s->lock);
    json_t *copy = json_deep_copy(s->items); /* answered after the lock is released */
    pthread_mutex_unlock(&s->lock);
    return canal_res_json_new(req, 200, copy);
}

static int create(canal_req_t *req, void *data)
{
    todo_store_t *s = data;
    json_error_t jerr;
    json_t *in = canal_req_json(req, &jerr);
    if (in == NULL)
        return canal_res_problem(req, 400, "%s", jerr.text);
    const char *title = json_string_value(json_object_get(in, "title"));
    if (title == NULL || title[0] == '\0')
        return canal_res_problem(req, 400, "\"title\" must be a non-empty string");
    pthread_mutex_lock(&s->lock);
    json_int_t id = s->next_id++;
    json_t *item = json_pack("{s:I, s:s, s:b}", "id", id, "title", title, "done", 0);
    json_array_append_new(s->items, item);
    json_t *copy = json_deep_copy(item); /* the stored one may change while this one is sent */
    pthread_mutex_unlock(&s->lock);
    canal_res_header(req, "Location", canal_req_printf(req, "/todos/%lld", (long long)id));
    return canal_res_json_new(req, 201, copy);
}

static int get(canal_req_t *req, void *data)
{
    todo_store_t *s = data;
    int32_t id = 0;
    canal_req_param_int32(req, "id", &id); /* the route's {id:int} matched: it is an int */
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    json_t *item = i >= 0 ? json_deep_copy(json_array_get(s->items, (size_t)i)) : NULL;
    pthread_mutex_unlock(&s->lock);
    if (item == NULL)
        return canal_res_problem(req, 404, "no todo %d", (int)id);
    return canal_res_json_new(req, 200, item);
}

static int update(canal_req_t *req, void *data)
{
    todo_store_t *s = data;
    int32_t id = 0;
    canal_req_param_int32(req, "id", &id);
    json_t *in = canal_req_json(req, NULL), *done = json_object_get(in, "done");
    if (!json_is_boolean(done))
        return canal_res_problem(req, 400, "the body must be {\"done\": true|false}");
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    json_t *item = NULL;
    if (i >= 0) {
        json_object_set(json_array_get(s->items, (size_t)i), "done", done);
        item = json_deep_copy(json_array_get(s->items, (size_t)i));
    }
    pthread_mutex_unlock(&s->lock);
    if (item == NULL)
        return canal_res_problem(req, 404, "no todo %d", (int)id);
    return canal_res_json_new(req, 200, item);
}

static int delete(canal_req_t *req, void *data)
{
    todo_store_t *s = data;
    int32_t id = 0;
    canal_req_param_int32(req, "id", &id);
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    if (i >= 0)
        json_array_remove(s->items, (size_t)i);
    pthread_mutex_unlock(&s->lock);
    if (i < 0)
        return canal_res_problem(req, 404, "no todo %d", (int)id);
    return canal_res_status(req, 204);
}

int todo_routes(canal_app_t *app, todo_store_t *store)
{
    int rc;
    if ((rc = canal_app_get(app, "todos", list, store)) != 0 ||
        (rc = canal_app_post(app, "todos", create, store)) != 0 ||
        (rc = canal_app_get(app, "todos/{id:int}", get, store)) != 0 ||
        (rc = canal_app_patch(app, "todos/{id:int}", update, store)) != 0 ||
        (rc = canal_app_delete(app, "todos/{id:int}", delete, store)) != 0)
        return rc;
    return 0;
}
