// The SQLite C API as Swift sees it. sqlite3ext.h brings in sqlite3.h and the
// sqlite3_api_routines table; the SQL layer calls SQLite only through that table
// (see Sources/GeofenceSQL/SQLiteAPI.swift), so the same code runs inside any
// host's SQLite. Only the CLI links libsqlite3 itself, to open its connections.
#include <sqlite3ext.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer: Swift cannot
// import it, so expose it as a function.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type csqlite_static(void) { return SQLITE_STATIC; }

// A virtual table and its cursor as SQLite sees them (the base struct first,
// as the vtab interface requires), with a pointer back to the Swift object
// that does the work. Swift cannot promise a struct's layout, C can.
typedef struct csqlite_vtab {
    sqlite3_vtab base;
    void *owner;
} csqlite_vtab;

typedef struct csqlite_vtab_cursor {
    sqlite3_vtab_cursor base;
    void *owner;
} csqlite_vtab_cursor;
