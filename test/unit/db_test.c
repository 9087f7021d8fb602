/* SPDX-License-Identifier: MIT */
/*
 * The database client's plain parts (lib/db/db.c, included): the typed readers on a
 * PostgreSQL result made by hand (PQmakeEmptyPGresult) and on a SQLite table, timestamps,
 * binding a row through a schema, the parameters' text, and SQLite's errors mapped to
 * PostgreSQL's SQLSTATEs. The servers themselves are in test/e2e/db.sh and db-sqlite.sh.
 */
#include "test.h"
#include <stdbool.h>
#include "db/db.c"

/* a one-row result of text columns; NULL values are SQL NULLs */
static PGresult *pg_row(int n, const char *const *names, const char *const *values)
{
    PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    PGresAttDesc *att = calloc((size_t)n, sizeof(*att));
    for (int i = 0; i < n; i++)
        att[i] = (PGresAttDesc){.name = (char *)names[i], .typid = 25, .typlen = -1, .atttypmod = -1};
    assert_int_equal(PQsetResultAttrs(r, n, att), 1);
    free(att);
    for (int i = 0; i < n; i++)
        assert_int_equal(PQsetvalue(r, 0, i, (char *)values[i], values[i] ? (int)strlen(values[i]) : -1), 1);
    return r;
}

static const char *const one[] = {"v"};

static int read64(const char *text, int64_t *out)
{
    const char *v[] = {text};
    PGresult *r = pg_row(1, one, v);
    struct canal_db_result res = {.pg = r};
    int rc = canal_db_int64(&res, 0, 0, out);
    PQclear(r);
    return rc;
}

static void test_integers(void **state)
{
    int64_t v = 99;
    assert_int_equal(read64("42", &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(read64("-9000000000", &v), 0);
    assert_true(v == -9000000000LL);
    assert_int_equal(read64("9223372036854775808", &v), CANAL_ERANGE);
    v = 7;
    assert_int_equal(read64("abc", &v), CANAL_ETYPE);
    assert_int_equal(read64("", &v), CANAL_ETYPE);
    assert_int_equal(read64(" 5", &v), CANAL_ETYPE);
    assert_int_equal(read64("5x", &v), CANAL_ETYPE);
    assert_int_equal(read64(NULL, &v), CANAL_ENOTFOUND);
    assert_int_equal(v, 7); /* untouched by failures */

    const char *vals[] = {"2147483647", "2147483648", "-2147483649"};
    const char *names[] = {"a", "b", "c"};
    PGresult *r = pg_row(3, names, vals);
    struct canal_db_result res = {.pg = r};
    int32_t i = 0;
    assert_int_equal(canal_db_int32(&res, 0, 0, &i), 0);
    assert_int_equal(i, INT32_MAX);
    assert_int_equal(canal_db_int32(&res, 0, 1, &i), CANAL_ERANGE);
    assert_int_equal(canal_db_int32(&res, 0, 2, &i), CANAL_ERANGE);
    assert_int_equal(canal_db_int32(&res, 1, 0, &i), CANAL_ENOTFOUND); /* no row 1 */
    assert_int_equal(canal_db_int32(&res, 0, 3, &i), CANAL_ENOTFOUND); /* no column 3 */
    assert_int_equal(canal_db_rows(&res), 1);
    assert_int_equal(canal_db_cols(&res), 3);
    assert_string_equal(canal_db_col_name(&res, 2), "c");
    assert_null(canal_db_col_name(&res, 3));
    PQclear(r);
}

static void test_doubles_bools_text(void **state)
{
    const char *names[] = {"d", "nan", "inf", "bad", "t", "f", "one", "word", "text"};
    const char *vals[] = {"1.5", "NaN", "-Infinity", "1.5x", "t", "f", "1", "true", "h\xc3\xa9llo"};
    PGresult *r = pg_row(9, names, vals);
    struct canal_db_result res = {.pg = r};
    double d = 0;
    assert_int_equal(canal_db_double(&res, 0, 0, &d), 0);
    assert_true(d == 1.5);
    assert_int_equal(canal_db_double(&res, 0, 1, &d), 0);
    assert_true(isnan(d));
    assert_int_equal(canal_db_double(&res, 0, 2, &d), 0);
    assert_true(isinf(d) && d < 0);
    assert_int_equal(canal_db_double(&res, 0, 3, &d), CANAL_ETYPE);
    int b = -1;
    assert_int_equal(canal_db_bool(&res, 0, 4, &b), 0);
    assert_int_equal(b, 1);
    assert_int_equal(canal_db_bool(&res, 0, 5, &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(canal_db_bool(&res, 0, 6, &b), 0); /* SQLite's 1 */
    assert_int_equal(b, 1);
    assert_int_equal(canal_db_bool(&res, 0, 7, &b), CANAL_ETYPE);
    canal_str_t t = {0};
    assert_int_equal(canal_db_text(&res, 0, 8, &t), 0);
    assert_int_equal(t.len, 6);
    assert_memory_equal(t.base, "h\xc3\xa9llo", 6);
    PQclear(r);
}

static int read_ts(const char *text, int64_t *out)
{
    const char *v[] = {text};
    PGresult *r = pg_row(1, one, v);
    struct canal_db_result res = {.pg = r};
    int rc = canal_db_timestamp(&res, 0, 0, out);
    PQclear(r);
    return rc;
}

static void test_timestamps(void **state)
{
    int64_t t = 1;
    assert_int_equal(read_ts("1970-01-01 00:00:00", &t), 0);
    assert_true(t == 0);
    assert_int_equal(read_ts("1970-01-01 00:00:00+00", &t), 0);
    assert_true(t == 0);
    assert_int_equal(read_ts("1969-12-31 23:59:59.999999", &t), 0);
    assert_true(t == -1);
    /* 2026-12-03 14:27:11.5 UTC, written in three zones */
    const int64_t want = 1796308031500000LL;
    assert_int_equal(read_ts("2026-12-03 15:27:11.5+01", &t), 0);
    assert_true(t == want);
    assert_int_equal(read_ts("2026-12-03 09:57:11.50-04:30", &t), 0);
    assert_true(t == want);
    assert_int_equal(read_ts("2026-12-03 14:27:11.5", &t), 0);
    assert_true(t == want);
    assert_int_equal(read_ts("2000-02-29 00:00:00", &t), 0);
    assert_true(t == 951782400LL * 1000000);
    assert_int_equal(read_ts("12026-01-01 00:00:00", &t), 0); /* a year past 9999 */
    t = 5;
    assert_int_equal(read_ts("2026-13-01 00:00:00", &t), CANAL_ETYPE);
    assert_int_equal(read_ts("2026-12-03T14:27:11", &t), CANAL_ETYPE);
    assert_int_equal(read_ts("0044-03-15 00:00:00 BC", &t), CANAL_ETYPE);
    assert_int_equal(read_ts("2026-12-03 14:27:11.", &t), CANAL_ETYPE);
    assert_int_equal(read_ts("2026-12-03", &t), CANAL_ETYPE);
    assert_int_equal(read_ts("infinity", &t), CANAL_ETYPE);
    assert_true(t == 5);
}

typedef struct {
    int32_t id;
    int64_t big;
    double price;
    bool active;
    int32_t missing;
    int64_t stock;
    bool has_stock;
} row_t;

static const canal_field_t row_fields[] = {
    {.name = "id", CANAL_FIELD(row_t, id), .type = CANAL_TYPE_INT32},
    {.name = "big", CANAL_FIELD(row_t, big), .type = CANAL_TYPE_INT64},
    {.name = "price", CANAL_FIELD(row_t, price), .type = CANAL_TYPE_DOUBLE},
    {.name = "active", CANAL_FIELD(row_t, active), .type = CANAL_TYPE_BOOL},
    {.name = "missing", CANAL_FIELD(row_t, missing), .type = CANAL_TYPE_INT32},
    {.name = "stock", CANAL_FIELD(row_t, stock), .type = CANAL_TYPE_INT64, CANAL_PRESENT(row_t, has_stock)},
    {.name = NULL}};
static const canal_schema_t row_schema = {.name = "Row", .size = sizeof(row_t), .fields = row_fields};

static void test_bind(void **state)
{
    const char *names[] = {"price", "id", "active", "big", "stock", "extra"};
    const char *vals[] = {"2.25", "7", "t", "9000000000", NULL, "ignored"};
    PGresult *r = pg_row(6, names, vals);
    struct bind_map map = {0};
    struct canal_db_result res = {.pg = r, .map = &map};
    row_t row;
    memset(&row, 0xff, sizeof(row));
    assert_int_equal(canal_db_bind(&res, 0, &row_schema, &row), 0);
    assert_int_equal(row.id, 7);
    assert_true(row.big == 9000000000LL);
    assert_true(row.price == 2.25);
    assert_true(row.active);
    assert_int_equal(row.missing, 0);  /* no such column: zero */
    assert_false(row.has_stock);       /* NULL: absent */
    assert_int_equal(canal_db_bind(&res, 1, &row_schema, &row), CANAL_ENOTFOUND);
    PQclear(r);

    const char *bad[] = {"2.25", "seven", "t", "1", "1", ""};
    r = pg_row(6, names, bad);
    res.pg = r;
    assert_int_equal(canal_db_bind(&res, 0, &row_schema, &row), CANAL_ETYPE);
    PQclear(r);
}

/* SQLite's results go through the same readers, from a table of text */
static void test_table(void **state)
{
    struct table *t = calloc(1, sizeof(*t));
    t->cols = 2;
    t->names = calloc(2, sizeof(*t->names));
    t->names[0] = strdup("id");
    t->names[1] = strdup("note");
    for (int i = 0; i < 100; i++) { /* past the first growth of the cells */
        char v[16];
        snprintf(v, sizeof(v), "%d", i);
        t->cap = 0;
        assert_int_equal(table_add(t, v, strlen(v)), 0);
        assert_int_equal(table_add(t, i % 2 ? NULL : "even", i % 2 ? 0 : 4), 0);
        t->rows++;
    }
    t->cap = 0;
    struct canal_db_result res = {.t = t};
    assert_int_equal(canal_db_rows(&res), 100);
    assert_string_equal(canal_db_col_name(&res, 1), "note");
    int32_t id = 0;
    assert_int_equal(canal_db_int32(&res, 99, 0, &id), 0);
    assert_int_equal(id, 99);
    assert_true(canal_db_is_null(&res, 99, 1));
    canal_str_t s = {0};
    assert_int_equal(canal_db_text(&res, 98, 1, &s), 0);
    assert_int_equal(s.len, 4);
    res.error = "failed";
    assert_int_equal(canal_db_rows(&res), 0); /* a failure has no rows */
    table_free(t);
}

static void test_params(void **state)
{
    canal_db_param_t p[] = {CANAL_DB_INT(-42), CANAL_DB_DOUBLE(0.1), CANAL_DB_BOOL(3), CANAL_DB_NULL,
                            CANAL_DB_TEXT("it's"), CANAL_DB_BYTEA("\0\1", 2), CANAL_DB_TEXT(NULL)};
    struct query *q = query_make(p, 7, "SELECT $1");
    assert_string_equal(q->values[0], "-42");
    assert_true(strtod(q->values[1], NULL) == 0.1); /* %.17g: the same double back */
    assert_string_equal(q->values[2], "t");
    assert_null(q->values[3]);
    assert_string_equal(q->values[4], "it's");
    assert_int_equal(q->lengths[4], 4);
    assert_int_equal(q->formats[4], 0);
    assert_int_equal(q->lengths[5], 2);
    assert_int_equal(q->formats[5], 1); /* bytea in binary */
    assert_memory_equal(q->values[5], "\0\1", 2);
    assert_null(q->values[6]);
    assert_int_equal(q->kinds[6], CANAL_DB_P_NULL);
    assert_string_equal(q->sql, "SELECT $1");
    free(q);
}

static const char *lite_error(sqlite3 *c, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    const char *state = lite_state(c, rc);
    sqlite3_finalize(st);
    return state;
}

static void test_sqlite_states(void **state)
{
    sqlite3 *c = NULL;
    assert_int_equal(sqlite3_open(":memory:", &c), SQLITE_OK);
    sqlite3_extended_result_codes(c, 1);
    assert_int_equal(sqlite3_exec(c, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,"
                                     " n INTEGER CHECK (n > 0)); INSERT INTO t VALUES (1, 'a', 1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_string_equal(lite_error(c, "INSERT INTO t VALUES (2, 'a', 1)"), "23505");
    assert_string_equal(lite_error(c, "INSERT INTO t VALUES (1, 'b', 1)"), "23505");
    assert_string_equal(lite_error(c, "INSERT INTO t VALUES (3, NULL, 1)"), "23502");
    assert_string_equal(lite_error(c, "INSERT INTO t VALUES (4, 'c', 0)"), "23514");
    assert_string_equal(lite_error(c, "SELEC 1"), "42601");
    assert_string_equal(lite_error(c, "SELECT * FROM nope"), "42P01");
    assert_string_equal(lite_error(c, "SELECT nope FROM t"), "42703");
    sqlite3_close(c);
}

/* Registration: every bad call refused with its code and a sentence, and the first error
 * kept by the app */
static void test_registration(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    canal_app_t *app = canal_app_create(&cfg);
    canal_error_info_t err;
    assert_int_equal(canal_db_prepare(app, "a", "SELECT 1", &err), CANAL_ESTATE); /* no client yet */
    assert_int_equal(canal_db_exec_script(app, "SELECT 1", &err), CANAL_ESTATE);
    assert_int_equal(canal_app_db(app, "", NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_db(app, "nosuchoption=1", NULL, &err), CANAL_EINVAL);
    assert_non_null(strstr(err.message, "bad URL"));
    assert_int_equal(canal_app_db(app, "sqlite:", NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_app_db(app, "sqlite:/nonexistent-dir/x.db", NULL, &err), CANAL_EINVAL);
    canal_app_destroy(app);

    app = canal_app_create(&cfg);
    assert_int_equal(canal_app_db(app, "sqlite::memory:", NULL, &err), 0);
    assert_int_equal(canal_app_db(app, "sqlite::memory:", NULL, &err), CANAL_EEXIST);
    assert_int_equal(canal_db_prepare(app, "one", "SELECT $1", &err), 0);
    assert_int_equal(canal_db_prepare(app, "one", "SELECT 2", &err), CANAL_EEXIST);
    assert_int_equal(canal_db_prepare(app, "", "SELECT 2", &err), CANAL_EINVAL);
    assert_int_equal(canal_db_prepare(app, "two", NULL, &err), CANAL_EINVAL);
    assert_int_equal(canal_db_exec_script(app, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", &err), 0);
    assert_int_equal(canal_db_exec_script(app, "CREATE TABLE t (x)", &err), CANAL_ESYS);
    assert_non_null(strstr(err.message, "already exists"));
    canal_error_info_t first;
    assert_int_equal(canal_app_error(app, &first), CANAL_EEXIST); /* the first error is kept */
    canal_app_destroy(app);

    app = canal_app_create(&cfg);
    assert_int_equal(canal_app_db(app, "host=/nonexistent dbname=x", NULL, &err), 0); /* checked by libpq only */
    assert_int_equal(canal_db_exec_script(app, "SELECT 1", &err), CANAL_ESYS); /* no server there */
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),   cmocka_unit_test(test_doubles_bools_text),
        cmocka_unit_test(test_timestamps), cmocka_unit_test(test_bind),
        cmocka_unit_test(test_table),      cmocka_unit_test(test_params),
        cmocka_unit_test(test_sqlite_states), cmocka_unit_test(test_registration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
