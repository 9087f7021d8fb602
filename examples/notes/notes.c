/* SPDX-License-Identifier: MIT */
/*
 * The notes API: its schemas (one table per struct: binding, validation, JSON and OpenAPI all
 * come from them), its database (canal/db.h: SQLite by default, PostgreSQL with a
 * postgresql:// URL, the same statements on both), and its actions.
 *
 * An action starts one statement and returns CANAL_PENDING; the statement's callback runs on
 * the request's thread with the rows, turns them into the structs below (in request memory)
 * and answers with them, written by the same schemas.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "notes.h"

/* ---- the models ---- */

typedef struct {
    canal_str_t text;
    int32_t qty;
    bool done;
} note_item_t;

static const canal_field_t item_fields[] = {
    {.name = "text", CANAL_FIELD(note_item_t, text), .type = CANAL_TYPE_STRING, .flags = CANAL_REQUIRED,
     .min_length = 1, .max_length = 200, .example = "\"milk\""},
    {.name = "qty", CANAL_FIELD(note_item_t, qty), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED, CANAL_MIN(1),
     CANAL_MAX(99), .example = "2"},
    {.name = "done", CANAL_FIELD(note_item_t, done), .type = CANAL_TYPE_BOOL, .def = "false"},
    {.name = NULL}};
static const canal_schema_t item_schema = {.name = "NoteItem", .size = sizeof(note_item_t), .fields = item_fields,
                                           .description = "One line of a note's list."};

enum { NOTE_DRAFT, NOTE_PUBLISHED };
static const char *const note_states[] = {"draft", "published", NULL};
#define TAG_PATTERN "[a-z0-9][a-z0-9-]*"

/* What a client sends: POST /api/notes, and PUT's body. */
typedef struct {
    canal_str_t title, body; /* body.base NULL: absent, or null */
    canal_str_t *tags;
    size_t ntags;
    note_item_t *items;
    size_t nitems;
    int state;
} note_input_t;

/* A published note needs a body: a rule over two fields, reported as canal reports its own. */
static int input_rules(canal_req_t *req, void *obj)
{
    const note_input_t *in = obj;
    if (in->state == NOTE_PUBLISHED && in->body.len == 0)
        return canal_req_invalid(req, "/body", "A published note needs a body.");
    return 0;
}

static const canal_field_t input_fields[] = {
    {.name = "title", CANAL_FIELD(note_input_t, title), .type = CANAL_TYPE_STRING, .flags = CANAL_REQUIRED,
     .min_length = 1, .max_length = 80, .example = "\"Groceries\""},
    {.name = "body", CANAL_FIELD(note_input_t, body), .type = CANAL_TYPE_STRING, .flags = CANAL_NULLABLE,
     .max_length = 10000},
    {.name = "tags", CANAL_FIELD(note_input_t, tags), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_STRING,
     CANAL_COUNT(note_input_t, ntags), .max_items = 8, .min_length = 1, .max_length = 20, .pattern = TAG_PATTERN},
    {.name = "items", CANAL_FIELD(note_input_t, items), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_OBJECT,
     .schema = &item_schema, CANAL_COUNT(note_input_t, nitems), .max_items = 50},
    {.name = "state", CANAL_FIELD(note_input_t, state), .type = CANAL_TYPE_ENUM, .allowed = note_states,
     .def = "draft"},
    {.name = NULL}};
static const canal_schema_t input_schema = {.name = "NoteInput", .size = sizeof(note_input_t),
                                            .fields = input_fields, .validate = input_rules,
                                            .description = "A note as a client writes it."};

/* What the server answers, and what the store keeps. The full view always writes every
 * field; only id, title and state are required in the document, so that the compact view's
 * answers (NoteSummary) validate against the one schema a status can document. */
typedef struct {
    int32_t id;
    canal_str_t title, body;
    canal_str_t *tags; /* never NULL once stored: an empty list is written [] */
    size_t ntags;
    note_item_t *items;
    size_t nitems;
    int state;
    canal_str_t created; /* RFC 3339, UTC, made by the server */
} note_t;

static const canal_field_t note_fields[] = {
    {.name = "id", CANAL_FIELD(note_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "title", CANAL_FIELD(note_t, title), .type = CANAL_TYPE_STRING, .flags = CANAL_REQUIRED},
    {.name = "body", CANAL_FIELD(note_t, body), .type = CANAL_TYPE_STRING, .flags = CANAL_NULLABLE},
    {.name = "tags", CANAL_FIELD(note_t, tags), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_STRING,
     CANAL_COUNT(note_t, ntags)},
    {.name = "items", CANAL_FIELD(note_t, items), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_OBJECT,
     .schema = &item_schema, CANAL_COUNT(note_t, nitems)},
    {.name = "state", CANAL_FIELD(note_t, state), .type = CANAL_TYPE_ENUM, .allowed = note_states,
     .flags = CANAL_REQUIRED},
    {.name = "created", CANAL_FIELD(note_t, created), .type = CANAL_TYPE_STRING, .format = "date-time"},
    {.name = NULL}};
static const canal_schema_t note_schema = {.name = "Note", .size = sizeof(note_t), .fields = note_fields};

/* The same struct seen through fewer fields: the answer of the cookie view=compact. */
static const canal_field_t summary_fields[] = {
    {.name = "id", CANAL_FIELD(note_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "title", CANAL_FIELD(note_t, title), .type = CANAL_TYPE_STRING, .flags = CANAL_REQUIRED},
    {.name = "state", CANAL_FIELD(note_t, state), .type = CANAL_TYPE_ENUM, .allowed = note_states,
     .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t summary_schema = {.name = "NoteSummary", .size = sizeof(note_t),
                                              .fields = summary_fields,
                                              .description = "A note with the cookie view=compact."};

enum { VIEW_FULL, VIEW_COMPACT };
static const char *const views[] = {"full", "compact", NULL};
#define VIEW_FIELD(T)                                                                                              \
    {.name = "view", CANAL_FIELD(T, view), .type = CANAL_TYPE_ENUM, .source = CANAL_FROM_COOKIE,               \
     .allowed = views, .def = "full", .description = "compact: id, title and state only"}

typedef struct {
    canal_str_t tag;
    int state;
    bool has_state;
    int32_t index, size;
    int view;
} list_args_t;

static const canal_field_t list_fields[] = {
    {.name = "tag", CANAL_FIELD(list_args_t, tag), .type = CANAL_TYPE_STRING, .source = CANAL_FROM_QUERY,
     .description = "only notes with this tag"},
    {.name = "state", CANAL_FIELD(list_args_t, state), .type = CANAL_TYPE_ENUM, .source = CANAL_FROM_QUERY,
     .allowed = note_states, CANAL_PRESENT(list_args_t, has_state)},
    {.name = "index", CANAL_FIELD(list_args_t, index), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_QUERY,
     .def = "0", CANAL_MIN(0), .description = "the page: notes index*size on"},
    {.name = "size", CANAL_FIELD(list_args_t, size), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_QUERY,
     .def = "10", CANAL_MIN(1), CANAL_MAX(100)},
    VIEW_FIELD(list_args_t),
    {.name = NULL}};
static const canal_schema_t list_args = {.name = "NoteListArgs", .size = sizeof(list_args_t), .fields = list_fields};

typedef struct {
    int32_t id;
    int view;
} get_args_t;

static const canal_field_t get_fields[] = {
    {.name = "id", CANAL_FIELD(get_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED},
    VIEW_FIELD(get_args_t),
    {.name = NULL}};
static const canal_schema_t get_args = {.name = "NoteGetArgs", .size = sizeof(get_args_t), .fields = get_fields};

typedef struct {
    int32_t id;
} id_args_t;

static const canal_field_t id_fields[] = {
    {.name = "id", CANAL_FIELD(id_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t id_args = {.name = "NoteIdArgs", .size = sizeof(id_args_t), .fields = id_fields};

typedef struct {
    int32_t id;
    note_input_t in;
} put_args_t;

static const canal_field_t put_fields[] = {
    {.name = "id", CANAL_FIELD(put_args_t, id), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED},
    {.name = "note", CANAL_FIELD(put_args_t, in), .type = CANAL_TYPE_OBJECT, .schema = &input_schema,
     .source = CANAL_FROM_BODY_WHOLE, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t put_args = {.name = "NotePutArgs", .size = sizeof(put_args_t), .fields = put_fields};

/* POST /api/notes/quick: an HTML form's fields (tags: the field given once per tag). */
typedef struct {
    canal_str_t title, body;
    canal_str_t *tags;
    size_t ntags;
} quick_args_t;

static const canal_field_t quick_fields[] = {
    {.name = "title", CANAL_FIELD(quick_args_t, title), .type = CANAL_TYPE_STRING, .source = CANAL_FROM_FORM,
     .flags = CANAL_REQUIRED, .min_length = 1, .max_length = 80},
    {.name = "body", CANAL_FIELD(quick_args_t, body), .type = CANAL_TYPE_STRING, .source = CANAL_FROM_FORM,
     .max_length = 10000},
    {.name = "tags", CANAL_FIELD(quick_args_t, tags), .type = CANAL_TYPE_ARRAY, .items = CANAL_TYPE_STRING,
     .source = CANAL_FROM_FORM, CANAL_COUNT(quick_args_t, ntags), .max_items = 8, .min_length = 1,
     .max_length = 20, .pattern = TAG_PATTERN},
    {.name = NULL}};
static const canal_schema_t quick_args = {.name = "NoteQuickArgs", .size = sizeof(quick_args_t),
                                          .fields = quick_fields};

/* POST /api/notes/{id}/attachments */
typedef struct {
    int32_t note;
    canal_str_t description;
    canal_part_t file;
} attach_args_t;

static const canal_field_t attach_fields[] = {
    {.name = "id", CANAL_FIELD(attach_args_t, note), .type = CANAL_TYPE_INT32, .source = CANAL_FROM_ROUTE,
     .flags = CANAL_REQUIRED},
    {.name = "description", CANAL_FIELD(attach_args_t, description), .type = CANAL_TYPE_STRING,
     .source = CANAL_FROM_FORM, .max_length = 200},
    {.name = "file", CANAL_FIELD(attach_args_t, file), .type = CANAL_TYPE_FILE, .source = CANAL_FROM_FORM,
     .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t attach_args = {.name = "NoteAttachArgs", .size = sizeof(attach_args_t),
                                           .fields = attach_fields};

/* What the store keeps of an upload: its metadata (the demo does not keep the bytes). */
typedef struct {
    int32_t id, note;
    canal_str_t filename, content_type, description;
    int64_t size;
} attachment_t;

static const canal_field_t attachment_fields[] = {
    {.name = "id", CANAL_FIELD(attachment_t, id), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "note", CANAL_FIELD(attachment_t, note), .type = CANAL_TYPE_INT32, .flags = CANAL_REQUIRED},
    {.name = "filename", CANAL_FIELD(attachment_t, filename), .type = CANAL_TYPE_STRING, .flags = CANAL_REQUIRED},
    {.name = "contentType", CANAL_FIELD(attachment_t, content_type), .type = CANAL_TYPE_STRING,
     .flags = CANAL_REQUIRED},
    {.name = "description", CANAL_FIELD(attachment_t, description), .type = CANAL_TYPE_STRING,
     .flags = CANAL_NULLABLE},
    {.name = "size", CANAL_FIELD(attachment_t, size), .type = CANAL_TYPE_INT64, .flags = CANAL_REQUIRED},
    {.name = NULL}};
static const canal_schema_t attachment_schema = {.name = "Attachment", .size = sizeof(attachment_t),
                                                 .fields = attachment_fields};

/* ---- the database ----
 *
 * One table of notes, one of attachments. A note's tags and items are kept as JSON text in
 * their columns (written with jansson, read back into the structs below): a note is one row,
 * written by one statement, so no action needs a transaction. Every statement is the same on
 * SQLite and PostgreSQL (parameters $1, $2..., RETURNING); only the migration's DDL differs,
 * for the ids each database makes. */

static const char migration_sqlite[] =
    "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, body TEXT,"
    " tags TEXT NOT NULL, items TEXT NOT NULL, state INTEGER NOT NULL, created TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS attachments (id INTEGER PRIMARY KEY AUTOINCREMENT, note INTEGER NOT NULL,"
    " filename TEXT NOT NULL, content_type TEXT NOT NULL, description TEXT, size INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS attachments_note ON attachments (note);";

static const char migration_postgresql[] =
    "CREATE TABLE IF NOT EXISTS notes (id serial PRIMARY KEY, title text NOT NULL, body text,"
    " tags text NOT NULL, items text NOT NULL, state int4 NOT NULL, created text NOT NULL);"
    "CREATE TABLE IF NOT EXISTS attachments (id serial PRIMARY KEY, note int4 NOT NULL,"
    " filename text NOT NULL, content_type text NOT NULL, description text, size int8 NOT NULL);"
    "CREATE INDEX IF NOT EXISTS attachments_note ON attachments (note);";

#define NOTE_COLUMNS "id, title, body, tags, items, state, created"
#define ATTACHMENT_COLUMNS "id, note, filename, content_type, description, size"

static const struct {
    const char *name, *sql;
} statements[] = {
    {"note_insert", "INSERT INTO notes (title, body, tags, items, state, created) VALUES ($1, $2, $3, $4, $5, $6)"
                    " RETURNING " NOTE_COLUMNS},
    {"note_get", "SELECT " NOTE_COLUMNS " FROM notes WHERE id = $1"},
    /* $1: a LIKE pattern on the tags' JSON, or '' for every note; $2: a state, or -1 for any */
    {"note_list", "SELECT " NOTE_COLUMNS " FROM notes WHERE ($1 = '' OR tags LIKE $1) AND ($2 < 0 OR state = $2)"
                  " ORDER BY id LIMIT $3 OFFSET $4"},
    {"note_update", "UPDATE notes SET title = $2, body = $3, tags = $4, items = $5, state = $6 WHERE id = $1"
                    " RETURNING " NOTE_COLUMNS},
    {"note_delete", "DELETE FROM notes WHERE id = $1"},
    {"attachments_delete", "DELETE FROM attachments WHERE note = $1"},
    /* no row when the note is not there */
    {"attachment_insert", "INSERT INTO attachments (note, filename, content_type, description, size)"
                          " SELECT id, $2, $3, $4, CAST($5 AS BIGINT) FROM notes WHERE id = $1"
                          " RETURNING " ATTACHMENT_COLUMNS},
};

int notes_db(canal_app_t *app, const char *url, const canal_db_options_t *opt, canal_error_info_t *err)
{
    int rc;
    if (url == NULL)
        url = NOTES_DEFAULT_DB;
    if ((rc = canal_app_db(app, url, opt, err)) != 0)
        return rc;
    for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++)
        if ((rc = canal_db_prepare(app, statements[i].name, statements[i].sql, err)) != 0)
            return rc;
    /* the schema, before the server starts (canal_app_start() refuses to start without it) */
    return canal_db_exec_script(app, strncmp(url, "sqlite:", 7) == 0 ? migration_sqlite : migration_postgresql, err);
}

/* ---- between the structs and the columns ---- */

/* A copy of s in request memory (base NULL stays absent). */
static canal_str_t req_str(canal_req_t *req, canal_str_t s)
{
    if (s.base == NULL || s.len == 0)
        return s.base == NULL ? s : (canal_str_t){"", 0};
    char *copy = canal_req_alloc(req, s.len);
    if (copy == NULL)
        return (canal_str_t){NULL, 0};
    memcpy(copy, s.base, s.len);
    return (canal_str_t){copy, s.len};
}

/* The tags and the items as the JSON text of their columns: malloc'd (free()), NULL when out of memory. */
static char *tags_json(const canal_str_t *tags, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_stringn(tags[i].base, tags[i].len));
    char *text = a != NULL ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return text;
}

static char *items_json(const note_item_t *items, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_pack("{s:s%,s:i,s:b}", "text", items[i].text.base, items[i].text.len, "qty",
                                           (int)items[i].qty, "done", (int)items[i].done));
    char *text = a != NULL ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return text;
}

/* The column col of row as a JSON array (a new reference), or NULL. */
static json_t *json_col(const canal_db_result_t *res, size_t row, size_t col)
{
    canal_str_t text;
    if (canal_db_text(res, row, col, &text) != 0)
        return NULL;
    json_t *v = json_loadb(text.base, text.len, 0, NULL);
    if (v != NULL && !json_is_array(v)) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

/* Row row of a result of NOTE_COLUMNS into *n, in request memory. 0, or -1 (a row this
 * program did not write, or out of memory). */
static int note_from_row(canal_req_t *req, const canal_db_result_t *res, size_t row, note_t *n)
{
    canal_str_t s;
    *n = (note_t){0};
    int32_t state;
    if (canal_db_int32(res, row, 0, &n->id) != 0 || canal_db_int32(res, row, 5, &state) != 0 ||
        state < NOTE_DRAFT || state > NOTE_PUBLISHED)
        return -1;
    n->state = state;
    if (canal_db_text(res, row, 1, &s) == 0)
        n->title = req_str(req, s);
    if (canal_db_text(res, row, 2, &s) == 0) /* NULL: absent */
        n->body = req_str(req, s);
    if (canal_db_text(res, row, 6, &s) == 0)
        n->created = req_str(req, s);
    json_t *tags = json_col(res, row, 3), *items = json_col(res, row, 4);
    int rc = tags != NULL && items != NULL ? 0 : -1;
    n->ntags = rc == 0 ? json_array_size(tags) : 0;
    n->nitems = rc == 0 ? json_array_size(items) : 0;
    n->tags = canal_req_alloc(req, n->ntags * sizeof(*n->tags) + 1); /* never NULL: [] */
    n->items = canal_req_alloc(req, n->nitems * sizeof(*n->items) + 1);
    if (n->tags == NULL || n->items == NULL)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < n->ntags; i++) {
        json_t *t = json_array_get(tags, i);
        n->tags[i] = req_str(req, (canal_str_t){(char *)json_string_value(t), json_string_length(t)});
    }
    for (size_t i = 0; rc == 0 && i < n->nitems; i++) {
        json_t *it = json_array_get(items, i), *text = json_object_get(it, "text");
        n->items[i] = (note_item_t){
            .text = req_str(req, (canal_str_t){(char *)json_string_value(text), json_string_length(text)}),
            .qty = (int32_t)json_integer_value(json_object_get(it, "qty")),
            .done = json_is_true(json_object_get(it, "done"))};
    }
    json_decref(tags);
    json_decref(items);
    return rc;
}

/* The parameters of a note's content ($1.. from first): title, body, tags, items, state.
 * tags and items are malloc'd JSON texts the caller frees after the query has started. */
static int content_params(const note_t *n, canal_db_param_t *p, char **tags, char **items)
{
    *tags = tags_json(n->tags, n->ntags);
    *items = items_json(n->items, n->nitems);
    if (*tags == NULL || *items == NULL) {
        free(*tags);
        free(*items);
        return -1;
    }
    p[0] = CANAL_DB_TEXTN(n->title.base, n->title.len);
    p[1] = n->body.base != NULL ? CANAL_DB_TEXTN(n->body.base, n->body.len) : CANAL_DB_NULL;
    p[2] = CANAL_DB_TEXT(*tags);
    p[3] = CANAL_DB_TEXT(*items);
    p[4] = CANAL_DB_INT(n->state);
    return 0;
}

/* ---- the actions: each starts a statement and answers from its callback ---- */

static note_t from_input(const note_input_t *in)
{
    return (note_t){.title = in->title, .body = in->body, .tags = in->tags, .ntags = in->ntags,
                    .items = in->items, .nitems = in->nitems, .state = in->state};
}

static int answer(canal_req_t *req, int status, const note_t *n, int view)
{
    return canal_res_model(req, status, view == VIEW_COMPACT ? &summary_schema : &note_schema, n);
}

/* The one note of res: *n set and 1; or 0 with the answer set (a failure, or 404 for id). */
static int one_note(canal_req_t *req, const canal_db_result_t *res, int32_t id, note_t *n)
{
    if (canal_db_failed(req, res))
        return 0;
    if (canal_db_rows(res) == 0) {
        canal_res_problem(req, 404, "no note %d", (int)id);
        return 0;
    }
    if (note_from_row(req, res, 0, n) != 0) {
        canal_req_fail(req, "notes: note %d cannot be read", (int)id);
        return 0;
    }
    return 1;
}

static void created(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    note_t n;
    if (!one_note(req, res, 0, &n))
        return;
    char id[16];
    snprintf(id, sizeof(id), "%d", (int)n.id);
    const canal_kv_t values[] = {{"id", id}};
    canal_ctx_created(data, NULL, "Get", values, 1, &note_schema, &n);
}

/* Stores a new note made of n's content and answers 201 with it and its Location. */
static int create_note(canal_ctx_t *ctx, canal_req_t *req, note_t n)
{
    char stamp[32], *tags, *items;
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    canal_db_param_t p[6];
    if (content_params(&n, p, &tags, &items) != 0)
        return canal_req_fail(req, "notes: out of memory");
    p[5] = CANAL_DB_TEXTN(stamp, strlen(stamp));
    int rc = canal_db_query(req, "note_insert", p, 6, created, ctx); /* the values are copied */
    free(tags);
    free(items);
    return rc;
}

static int create(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    return create_note(ctx, req, from_input(args));
}

static int quick(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const quick_args_t *a = args;
    return create_note(ctx, req, (note_t){.title = a->title, .body = a->body, .tags = a->tags, .ntags = a->ntags,
                                          .state = NOTE_DRAFT});
}

static void listed(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    const list_args_t *a = data;
    if (canal_db_failed(req, res))
        return;
    size_t n = canal_db_rows(res);
    note_t *page = canal_req_alloc(req, n * sizeof(*page) + 1);
    if (page == NULL) {
        canal_req_fail(req, "notes: out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (note_from_row(req, res, i, &page[i]) != 0) {
            canal_req_fail(req, "notes: a note cannot be read");
            return;
        }
    canal_res_model_array(req, 200, a->view == VIEW_COMPACT ? &summary_schema : &note_schema, page, n);
}

static int tag_ok(canal_str_t tag)
{
    for (size_t i = 0; i < tag.len; i++) {
        char c = tag.base[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && i > 0)))
            return 0;
    }
    return tag.len > 0;
}

static int list(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const list_args_t *a = args;
    const char *like = "";
    if (a->tag.base != NULL) {
        /* a stored tag matches TAG_PATTERN, so its JSON text is "tag" and LIKE needs no escape;
         * a tag that does not match it is on no note */
        if (!tag_ok(a->tag))
            return canal_res_model_array(req, 200, &note_schema, NULL, 0);
        like = canal_req_printf(req, "%%\"%.*s\"%%", (int)a->tag.len, a->tag.base);
    }
    canal_db_param_t p[] = {CANAL_DB_TEXT(like), CANAL_DB_INT(a->has_state ? a->state : -1), CANAL_DB_INT(a->size),
                            CANAL_DB_INT((int64_t)a->index * a->size)};
    return canal_db_query(req, "note_list", p, 4, listed, (void *)a);
}

struct got {
    int32_t id;
    int view;
};

static void got(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    const struct got *g = data;
    note_t n;
    if (one_note(req, res, g->id, &n))
        answer(req, 200, &n, g->view);
}

static int get(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const get_args_t *a = args;
    struct got *g = canal_req_alloc(req, sizeof(*g));
    if (g == NULL)
        return canal_req_fail(req, "notes: out of memory");
    *g = (struct got){a->id, a->view};
    canal_db_param_t id = CANAL_DB_INT(a->id);
    return canal_db_query(req, "note_get", &id, 1, got, g);
}

static int update(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const put_args_t *a = args;
    note_t n = from_input(&a->in);
    char *tags, *items;
    canal_db_param_t p[6];
    if (content_params(&n, p + 1, &tags, &items) != 0)
        return canal_req_fail(req, "notes: out of memory");
    p[0] = CANAL_DB_INT(a->id);
    struct got *g = canal_req_alloc(req, sizeof(*g));
    if (g != NULL)
        *g = (struct got){a->id, VIEW_FULL};
    int rc = g == NULL ? canal_req_fail(req, "notes: out of memory")
                       : canal_db_query(req, "note_update", p, 6, got, g);
    free(tags);
    free(items);
    return rc;
}

static void deleted(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    const id_args_t *a = data;
    if (canal_db_failed(req, res))
        return;
    if (canal_db_affected(res) == 0)
        canal_res_problem(req, 404, "no note %d", (int)a->id);
    else
        canal_res_status(req, 204);
}

static int delete(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    canal_db_param_t id = CANAL_DB_INT(((const id_args_t *)args)->id);
    /* the note and its attachments: two statements of one request, sent together; the answer
     * is the note's (an attachment row left by a failure is on no note, never listed) */
    int rc = canal_db_query(req, "attachments_delete", &id, 1, NULL, NULL);
    return rc == CANAL_PENDING ? canal_db_query(req, "note_delete", &id, 1, deleted, (void *)args) : rc;
}

static void attached(canal_req_t *req, const canal_db_result_t *res, void *data)
{
    const attach_args_t *a = data;
    attachment_t m = {0};
    canal_str_t s;
    if (canal_db_failed(req, res))
        return;
    if (canal_db_rows(res) == 0) {
        canal_res_problem(req, 404, "no note %d", (int)a->note);
        return;
    }
    canal_db_int32(res, 0, 0, &m.id);
    canal_db_int32(res, 0, 1, &m.note);
    canal_db_int64(res, 0, 5, &m.size);
    if (canal_db_text(res, 0, 2, &s) == 0)
        m.filename = req_str(req, s);
    if (canal_db_text(res, 0, 3, &s) == 0)
        m.content_type = req_str(req, s);
    if (canal_db_text(res, 0, 4, &s) == 0)
        m.description = req_str(req, s);
    canal_res_model(req, 201, &attachment_schema, &m);
}

/* A multipart upload, with a body limit of its own (max_body: over it 413, before binding).
 * The demo keeps the file's metadata, not its bytes. */
static int attach(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const attach_args_t *a = args;
    canal_db_param_t p[] = {CANAL_DB_INT(a->note), CANAL_DB_TEXTN(a->file.filename.base, a->file.filename.len),
                            CANAL_DB_TEXTN(a->file.content_type.base, a->file.content_type.len),
                            a->description.base != NULL ? CANAL_DB_TEXTN(a->description.base, a->description.len)
                                                        : CANAL_DB_NULL,
                            CANAL_DB_INT((int64_t)a->file.data.len)};
    return canal_db_query(req, "attachment_insert", p, 5, attached, (void *)a);
}

/* what the two 201s of create_note() carry besides the note, for the document */
static const canal_header_def_t note_location[] = {{"Location", "The new note's URL."}, {NULL, NULL}};

static const canal_action_def_t actions[] = {
    {.name = "List", .handler = list, .args = &list_args,
     .options = {CANAL_DOC(.summary = "A page of notes, oldest first",
                           .responses = {{.status = 200, .schema = &note_schema, .array = 1,
                                          .description = "Notes (NoteSummary objects with view=compact)"},
                                         {.status = 400}})}},
    {.name = "Create", .methods = "POST", .handler = create, .args = &input_schema,
     .options = {CANAL_DOC(.summary = "A new note",
                           .responses = {{.status = 201, .schema = &note_schema, .headers = note_location},
                                         {.status = 400},
                                         {.status = 415}})}},
    {.name = "Quick", .methods = "POST", .routes = {"quick"}, .handler = quick, .args = &quick_args,
     .options = {CANAL_DOC(.summary = "A new draft note from an HTML form",
                           .responses = {{.status = 201, .schema = &note_schema, .headers = note_location},
                                         {.status = 400},
                                         {.status = 415}})}},
    {.name = "Get", .routes = {"{id:int}"}, .handler = get, .args = &get_args,
     .options = {CANAL_DOC(.summary = "One note",
                           .responses = {{.status = 200, .schema = &note_schema,
                                          .description = "The note (a NoteSummary with view=compact)"},
                                         {.status = 400},
                                         {.status = 404}})}},
    {.name = "Update", .methods = "PUT", .routes = {"{id:int}"}, .handler = update, .args = &put_args,
     .options = {CANAL_DOC(.summary = "Replaces a note's content",
                           .responses = {{.status = 200, .schema = &note_schema},
                                         {.status = 400},
                                         {.status = 404},
                                         {.status = 415}})}},
    {.name = "Delete", .methods = "DELETE", .routes = {"{id:int}"}, .handler = delete, .args = &id_args,
     .options = {CANAL_DOC(.summary = "Deletes a note and its attachments",
                           .responses = {{.status = 204}, {.status = 404}})}},
    {.name = "Attach", .methods = "POST", .routes = {"{id:int}/attachments"}, .handler = attach,
     .args = &attach_args, .max_body = NOTES_MAX_UPLOAD,
     .options = {CANAL_DOC(.summary = "Attaches a file to a note",
                           .responses = {{.status = 201, .schema = &attachment_schema},
                                         {.status = 400},
                                         {.status = 404},
                                         {.status = 413},
                                         {.status = 415}})}},
    {.name = NULL}};

int notes_routes(canal_app_t *app, canal_mvc_t *mvc, canal_error_info_t *err)
{
    const canal_controller_def_t notes = {.name = "Notes", .prefix = "api/notes", .actions = actions};
    int rc;
    /* NoteSummary is named by no route (it is the view=compact answer): registered for
     * components.schemas */
    if ((rc = canal_app_schema(app, &summary_schema, err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &notes, NULL, err)) != 0)
        return rc;
    canal_openapi_info_t info = {.title = "canal notes", .version = "1.0.0"};
    return canal_app_openapi(app, "/openapi.json", canal_mvc_openapi(mvc, &info), err);
}
