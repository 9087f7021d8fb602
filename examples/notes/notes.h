/* SPDX-License-Identifier: MIT */
/*
 * notes: a CRUD API in controller mode on typed models (canal/schema.h), split as
 * examples/todo is: the schemas, the store and the actions in notes.c (linked by the program
 * and by its tests), main() alone in main.c, the tests on the test client in test/.
 *
 *   GET    /api/notes?tag=&state=&index=&size=   a page of notes, oldest first
 *   POST   /api/notes                  a JSON Note -> 201, Location: /api/notes/{id}
 *   POST   /api/notes/quick            the same from an urlencoded form (title, body, tags)
 *   GET    /api/notes/{id}             one note; the cookie view=compact answers a summary
 *   PUT    /api/notes/{id}             replaces title, body, tags, items, state
 *   DELETE /api/notes/{id}             204, or 404
 *   POST   /api/notes/{id}/attachments multipart/form-data: description and file (at most
 *                                      NOTES_MAX_UPLOAD bytes of body) -> 201, its metadata
 *   GET    /openapi.json               the OpenAPI document of all of the above
 */
#ifndef NOTES_H
#define NOTES_H

#include <canal.h>

/** The largest body the attachments route takes (the app's own limit is larger). */
#define NOTES_MAX_UPLOAD (64 * 1024)

/** The notes and their attachments, shared by every worker thread (a mutex guards them). */
typedef struct notes_store notes_store_t;

/** A new empty store, or NULL when out of memory. */
notes_store_t *notes_store_create(void);

/** Frees the store and everything in it. NULL is a no-op. */
void notes_store_destroy(notes_store_t *store);

/** Registers the API's controller and /openapi.json on app through mvc;
 * store is borrowed and must outlive the app. 0, or a canal error with err filled. */
int notes_routes(canal_app_t *app, canal_mvc_t *mvc, notes_store_t *store, canal_error_info_t *err);

#endif
