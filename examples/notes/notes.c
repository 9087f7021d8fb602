/* SPDX-License-Identifier: MIT */
/*
 * The notes API: its schemas (one table per struct: binding, validation, JSON and OpenAPI all
 * come from them), its store, and its actions.
 *
 * A bound struct points into request memory; the store keeps its own copy of each note in one
 * heap block (note_pack()), and hands out copies in request memory, made while its lock is
 * held and written as JSON after the lock is released, so no lock is held across canal's I/O.
 */
#include <pthread.h>
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

/* ---- copies: one block for a note and everything it points to ---- */

typedef void *(*alloc_fn)(void *ctx, size_t size);

static void *heap(void *ctx, size_t size)
{
    return malloc(size);
}

static void *request_memory(void *ctx, size_t size)
{
    return canal_req_alloc(ctx, size);
}

/* Copies s's bytes to *at and returns the copy (base NULL stays absent). */
static canal_str_t put_str(char **at, canal_str_t s)
{
    if (s.base == NULL)
        return s;
    canal_str_t copy = {*at, s.len};
    memcpy(*at, s.base, s.len);
    *at += s.len;
    return copy;
}

/* A deep copy of n in one block from alloc (NULL when it fails). sizeof(note_t) and
 * sizeof(note_item_t) are multiples of 8, so the arrays that follow the struct are aligned. */
static note_t *note_pack(const note_t *n, alloc_fn alloc, void *ctx)
{
    size_t size = sizeof(note_t) + n->nitems * sizeof(note_item_t) + n->ntags * sizeof(canal_str_t) + n->title.len +
                  n->body.len + n->created.len;
    for (size_t i = 0; i < n->ntags; i++)
        size += n->tags[i].len;
    for (size_t i = 0; i < n->nitems; i++)
        size += n->items[i].text.len;
    char *block = alloc(ctx, size);
    if (block == NULL)
        return NULL;
    note_t *c = (note_t *)block;
    *c = *n;
    c->items = (note_item_t *)(block + sizeof(note_t));
    c->tags = (canal_str_t *)(block + sizeof(note_t) + n->nitems * sizeof(note_item_t));
    char *at = (char *)(c->tags + n->ntags);
    c->title = put_str(&at, n->title);
    c->body = put_str(&at, n->body);
    c->created = put_str(&at, n->created);
    for (size_t i = 0; i < n->ntags; i++)
        c->tags[i] = put_str(&at, n->tags[i]);
    for (size_t i = 0; i < n->nitems; i++) {
        c->items[i] = n->items[i];
        c->items[i].text = put_str(&at, n->items[i].text);
    }
    return c;
}

static attachment_t *attachment_pack(const attachment_t *a, alloc_fn alloc, void *ctx)
{
    char *block = alloc(ctx, sizeof(*a) + a->filename.len + a->content_type.len + a->description.len);
    if (block == NULL)
        return NULL;
    attachment_t *c = (attachment_t *)block;
    char *at = block + sizeof(*a);
    *c = *a;
    c->filename = put_str(&at, a->filename);
    c->content_type = put_str(&at, a->content_type);
    c->description = put_str(&at, a->description);
    return c;
}

/* ---- the store ---- */

struct notes_store {
    pthread_mutex_t lock;
    note_t **notes; /* by id, oldest first; each one heap block */
    size_t n, cap;
    attachment_t **files; /* each one heap block */
    size_t nfiles, capfiles;
    int32_t next_id, next_file;
};

notes_store_t *notes_store_create(void)
{
    notes_store_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    s->next_id = s->next_file = 1;
    return s;
}

void notes_store_destroy(notes_store_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->notes[i]);
    for (size_t i = 0; i < s->nfiles; i++)
        free(s->files[i]);
    free(s->notes);
    free(s->files);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Makes room for one more pointer in *list. 0 or -1. */
static int grow(void ***list, size_t n, size_t *cap)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void **l = realloc(*list, c * sizeof(*l));
    if (l == NULL)
        return -1;
    *list = l;
    *cap = c;
    return 0;
}

/* The index of note id, or -1. With the lock held. */
static long find(const notes_store_t *s, int32_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->notes[i]->id == id)
            return (long)i;
    return -1;
}

static int has_tag(const note_t *n, canal_str_t tag)
{
    for (size_t i = 0; i < n->ntags; i++)
        if (n->tags[i].len == tag.len && memcmp(n->tags[i].base, tag.base, tag.len) == 0)
            return 1;
    return 0;
}

/* ---- the actions ---- */

static note_t from_input(const note_input_t *in)
{
    return (note_t){.title = in->title, .body = in->body, .tags = in->tags, .ntags = in->ntags,
                    .items = in->items, .nitems = in->nitems, .state = in->state};
}

static int answer(canal_req_t *req, int status, const note_t *n, int view)
{
    return canal_res_model(req, status, view == VIEW_COMPACT ? &summary_schema : &note_schema, n);
}

/* Stores a new note made of n's content and answers 201 with it and its Location. */
static int create_note(canal_ctx_t *ctx, canal_req_t *req, note_t n)
{
    notes_store_t *s = canal_ctx_state(ctx);
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    n.created = (canal_str_t){created, strlen(created)};
    pthread_mutex_lock(&s->lock);
    n.id = s->next_id;
    note_t *kept = grow((void ***)&s->notes, s->n, &s->cap) == 0 ? note_pack(&n, heap, NULL) : NULL;
    note_t *copy = kept ? note_pack(kept, request_memory, req) : NULL;
    if (kept != NULL) {
        s->notes[s->n++] = kept;
        s->next_id++;
    }
    pthread_mutex_unlock(&s->lock);
    if (copy == NULL)
        return canal_req_fail(req, "notes: out of memory");
    char id[16];
    snprintf(id, sizeof(id), "%d", (int)copy->id);
    const canal_kv_t values[] = {{"id", id}};
    return canal_ctx_created(ctx, NULL, "Get", values, 1, &note_schema, copy);
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

static int list(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const list_args_t *a = args;
    notes_store_t *s = canal_ctx_state(ctx);
    note_t *page = canal_req_alloc(req, (size_t)a->size * sizeof(*page));
    size_t n = 0, skip = (size_t)a->index * (size_t)a->size;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n && n < (size_t)a->size; i++) {
        const note_t *x = s->notes[i];
        if ((a->tag.base != NULL && !has_tag(x, a->tag)) || (a->has_state && x->state != a->state))
            continue;
        if (skip > 0) {
            skip--;
            continue;
        }
        page[n++] = *note_pack(x, request_memory, req);
    }
    pthread_mutex_unlock(&s->lock);
    return canal_res_model_array(req, 200, a->view == VIEW_COMPACT ? &summary_schema : &note_schema, page, n);
}

static int get(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const get_args_t *a = args;
    notes_store_t *s = canal_ctx_state(ctx);
    pthread_mutex_lock(&s->lock);
    long i = find(s, a->id);
    note_t *copy = i >= 0 ? note_pack(s->notes[i], request_memory, req) : NULL;
    pthread_mutex_unlock(&s->lock);
    if (copy == NULL)
        return canal_res_problem(req, 404, "no note %d", (int)a->id);
    return answer(req, 200, copy, a->view);
}

static int update(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const put_args_t *a = args;
    notes_store_t *s = canal_ctx_state(ctx);
    note_t n = from_input(&a->in), *copy = NULL;
    pthread_mutex_lock(&s->lock);
    long i = find(s, a->id);
    if (i >= 0) {
        n.id = a->id;
        n.created = s->notes[i]->created;
        note_t *kept = note_pack(&n, heap, NULL);
        if (kept != NULL) {
            free(s->notes[i]);
            s->notes[i] = kept;
            copy = note_pack(kept, request_memory, req);
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (i < 0)
        return canal_res_problem(req, 404, "no note %d", (int)a->id);
    if (copy == NULL)
        return canal_req_fail(req, "notes: out of memory");
    return answer(req, 200, copy, VIEW_FULL);
}

static int delete(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    const id_args_t *a = args;
    notes_store_t *s = canal_ctx_state(ctx);
    pthread_mutex_lock(&s->lock);
    long i = find(s, a->id);
    if (i >= 0) {
        free(s->notes[i]);
        memmove(&s->notes[i], &s->notes[i + 1], (s->n - (size_t)i - 1) * sizeof(s->notes[0]));
        s->n--;
        for (size_t k = 0; k < s->nfiles;) /* and its attachments */
            if (s->files[k]->note == a->id) {
                free(s->files[k]);
                s->files[k] = s->files[--s->nfiles];
            } else {
                k++;
            }
    }
    pthread_mutex_unlock(&s->lock);
    if (i < 0)
        return canal_res_problem(req, 404, "no note %d", (int)a->id);
    return canal_res_status(req, 204);
}

/* A multipart upload, with a body limit of its own (max_body: over it 413, before binding). */
static int attach(canal_ctx_t *ctx, canal_req_t *req, const void *args)
{
    notes_store_t *s = canal_ctx_state(ctx);
    attach_args_t a = *(const attach_args_t *)args;
    attachment_t meta = {.note = a.note, .filename = a.file.filename, .content_type = a.file.content_type,
                         .description = a.description, .size = (int64_t)a.file.data.len};
    attachment_t *copy = NULL;
    pthread_mutex_lock(&s->lock);
    long i = find(s, a.note);
    if (i >= 0 && grow((void ***)&s->files, s->nfiles, &s->capfiles) == 0) {
        meta.id = s->next_file;
        attachment_t *kept = attachment_pack(&meta, heap, NULL);
        if (kept != NULL) {
            s->files[s->nfiles++] = kept;
            s->next_file++;
            copy = attachment_pack(kept, request_memory, req);
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (i < 0)
        return canal_res_problem(req, 404, "no note %d", (int)a.note);
    if (copy == NULL)
        return canal_req_fail(req, "notes: out of memory");
    return canal_res_model(req, 201, &attachment_schema, copy);
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

int notes_routes(canal_app_t *app, canal_mvc_t *mvc, notes_store_t *store, canal_error_info_t *err)
{
    const canal_controller_def_t notes = {.name = "Notes", .prefix = "api/notes", .state = store,
                                          .actions = actions};
    int rc;
    /* NoteSummary is named by no route (it is the view=compact answer): registered for
     * components.schemas */
    if ((rc = canal_app_schema(app, &summary_schema, err)) != 0 ||
        (rc = canal_mvc_add_controller(mvc, &notes, NULL, err)) != 0)
        return rc;
    canal_openapi_info_t info = {.title = "canal notes", .version = "1.0.0"};
    return canal_app_openapi(app, "/openapi.json", canal_mvc_openapi(mvc, &info), err);
}
