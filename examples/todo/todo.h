/* SPDX-License-Identifier: MIT */
/*
 * todo: a small JSON API in router mode, split the way an app that wants tests is split: the
 * routes and handlers in todo.c (linked by both the program and its tests), main() alone in
 * main.c, and the tests in test/ (they use canal/testing.h; see docs/testing.md).
 *
 *   GET    /todos        the list, oldest first
 *   POST   /todos        {"title": "..."} -> 201 with Location: /todos/{id}
 *   GET    /todos/{id}   one item, or 404
 *   PATCH  /todos/{id}   {"done": true|false} -> the item
 *   DELETE /todos/{id}   204, or 404
 */
#ifndef TODO_H
#define TODO_H

#include <canal.h>

/** The items, shared by every worker thread (a mutex guards them). */
typedef struct todo_store todo_store_t;

/** A new empty store, or NULL when out of memory. */
todo_store_t *todo_store_create(void);

/** Frees the store and its items. NULL is a no-op. */
void todo_store_destroy(todo_store_t *store);

/** Registers the API's routes on app; store is borrowed and must outlive the app. 0 or a
 * canal error. */
int todo_routes(canal_app_t *app, todo_store_t *store);

#endif
