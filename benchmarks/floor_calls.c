/*
** SQLite alone writing what a stream of gf_check calls wrote, two ways, in
** one transaction: `block`, the calls' rows a thousand calls at a time
** (check_targets.py's floor, written from C here), and `call`, each call's
** rows inside a SAVEPOINT of their own, as gf_check writes them: a call is
** all or nothing inside the caller's transaction (CallTransaction).
**
**     cc -O2 -o floor_calls benchmarks/floor_calls.c -lsqlite3
**     ./floor_calls ROWS DB block|call RECORD_BYTES     # prints the seconds
**
** ROWS holds, per call, a line "SUBJECT N" and then N lines of a
** notification's ten columns (run_id subject_key ts_us area_key
** condition_id transition lat lon accuracy_m local_day). DB is created
** with the floor's schema (write_targets.FLOOR_SCHEMA and a records table);
** the rows are read into memory before the clock starts. The connection
** has temp_store = MEMORY and a 64 MiB cache: SQLite at its quickest, so the
** floor is the lowest it can be.
**
** Why C: every statement a Python loop runs costs Python about a
** microsecond, which a savepoint per call would add twice per call to the
** floor and hide the engine's own cost in it.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { long long i[7]; double d[3]; } Row;     /* run_id subject_key ts_us area_key condition_id transition local_day; lat lon acc */
typedef struct { char subject[128]; int n; Row *rows; } Call;

static void check(int rc, sqlite3 *db, const char *what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fprintf(stderr, "floor_calls: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
  }
}

static void run(sqlite3 *db, sqlite3_stmt *s) { check(sqlite3_step(s), db, sqlite3_sql(s)); sqlite3_reset(s); }

static void exec(sqlite3 *db, const char *sql) { check(sqlite3_exec(db, sql, 0, 0, 0), db, sql); }

/* A call's record, upserted. */
static void write_record(sqlite3 *db, sqlite3_stmt *record, const Call *c, const char *text) {
  sqlite3_bind_text(record, 1, c->subject, -1, SQLITE_STATIC);
  sqlite3_bind_text(record, 2, text, -1, SQLITE_STATIC);
  run(db, record);
}

/* A call's notification rows. */
static void write_rows(sqlite3 *db, sqlite3_stmt *row, const Call *c) {
  for (int k = 0; k < c->n; k++) {
    const Row *r = &c->rows[k];
    for (int j = 0; j < 6; j++) sqlite3_bind_int64(row, j + 1, r->i[j]);
    for (int j = 0; j < 3; j++) sqlite3_bind_double(row, j + 7, r->d[j]);
    sqlite3_bind_int64(row, 10, r->i[6]);
    run(db, row);
  }
}

int main(int argc, char **argv) {
  if (argc != 5 || (strcmp(argv[3], "block") && strcmp(argv[3], "call"))) {
    fprintf(stderr, "usage: floor_calls ROWS DB block|call RECORD_BYTES\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 1; }
  int cap = 1024, n = 0;
  Call *calls = malloc(sizeof(Call) * cap);
  Call c;
  while (fscanf(f, "%127s %d", c.subject, &c.n) == 2) {
    c.rows = malloc(sizeof(Row) * (c.n ? c.n : 1));
    for (int k = 0; k < c.n; k++) {
      Row *r = &c.rows[k];
      if (fscanf(f, "%lld %lld %lld %lld %lld %lld %lf %lf %lf %lld", &r->i[0], &r->i[1], &r->i[2], &r->i[3], &r->i[4],
                 &r->i[5], &r->d[0], &r->d[1], &r->d[2], &r->i[6]) != 10) { fprintf(stderr, "floor_calls: bad row\n"); return 1; }
    }
    if (n == cap) calls = realloc(calls, sizeof(Call) * (cap *= 2));
    calls[n++] = c;
  }
  fclose(f);
  int bytes = atoi(argv[4]);
  char *text = malloc(bytes + 1);
  memset(text, 'x', bytes);
  text[bytes] = 0;

  sqlite3 *db;
  check(sqlite3_open(argv[2], &db), db, "open");
  exec(db, "PRAGMA journal_mode = WAL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;"
           "CREATE TABLE rows (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_key INTEGER NOT NULL, ts_us INTEGER NOT NULL,"
           " area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL, transition INTEGER NOT NULL CHECK (transition BETWEEN 0 AND 2),"
           " lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL, local_day INTEGER NOT NULL);"
           "CREATE INDEX rows_by_subject ON rows (subject_key, ts_us);"
           "CREATE TABLE records (subject_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;");
  sqlite3_stmt *record, *row, *sp, *rel;
  check(sqlite3_prepare_v2(db, "INSERT INTO records (subject_id, record) VALUES (?, ?) "
                               "ON CONFLICT (subject_id) DO UPDATE SET record = excluded.record", -1, &record, 0), db, "prepare");
  check(sqlite3_prepare_v2(db, "INSERT INTO rows (run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, "
                               "accuracy_m, local_day) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &row, 0), db, "prepare");
  check(sqlite3_prepare_v2(db, "SAVEPOINT call", -1, &sp, 0), db, "prepare");
  check(sqlite3_prepare_v2(db, "RELEASE call", -1, &rel, 0), db, "prepare");

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  exec(db, "BEGIN");
  int per_call = strcmp(argv[3], "call") == 0;
  if (per_call) {
    for (int i = 0; i < n; i++) { run(db, sp); write_record(db, record, &calls[i], text); write_rows(db, row, &calls[i]); run(db, rel); }
  } else {
    /* As check_targets.py's floor: a block's records, then its rows. */
    for (int at = 0; at < n; at += 1000) {
      int end = at + 1000 < n ? at + 1000 : n;
      for (int i = at; i < end; i++) write_record(db, record, &calls[i], text);
      for (int i = at; i < end; i++) write_rows(db, row, &calls[i]);
    }
  }
  exec(db, "COMMIT");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.6f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  sqlite3_finalize(record); sqlite3_finalize(row); sqlite3_finalize(sp); sqlite3_finalize(rel);
  sqlite3_close(db);
  return 0;
}
