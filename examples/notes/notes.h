/* SPDX-License-Identifier: MIT */
/*
 * notes: a CRUD API in controller mode on typed models (canal/schema.h) and a database
 * (canal/db.h), split as examples/todo is: the schemas, the statements and the actions in
 * notes.c (linked by the program and by its tests), main() alone in main.c, the tests on the
 * test client in test/. Its data lives in SQLite (a file, notes.db in the working directory,
 * by default) or PostgreSQL (--db postgresql://...), with the same statements on both.
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

/** The database a user gets without --db: a file in the working directory, kept across runs. */
#define NOTES_DEFAULT_DB "sqlite:notes.db"

/** Switches app's database on (url: "sqlite:PATH", "sqlite::memory:", "postgresql://...";
 * NULL: NOTES_DEFAULT_DB; opt: canal_app_db()'s, may be NULL), declares the statements and runs
 * the schema migration (tables made if missing). Before canal_app_start(). 0, or a canal error
 * with err filled. */
int notes_db(canal_app_t *app, const char *url, const canal_db_options_t *opt, canal_error_info_t *err);

/** Registers the API's controller and /openapi.json on app through mvc (after notes_db()).
 * 0, or a canal error with err filled. */
int notes_routes(canal_app_t *app, canal_mvc_t *mvc, canal_error_info_t *err);

#endif
