// libgeofence.so: the geofence engine as a SQLite loadable extension.
//
//   sqlite> .load mod_spatialite
//   sqlite> .load ./libgeofence
//   sqlite> SELECT gf_version();
//   sqlite> SELECT gf_contains(gf_circle(35.681, 139.767, 500), 35.682, 139.768, 10);
//   1
//
// How it works: SQLite calls the entry point below with its routines table;
// GeofenceSQL.Registration stores the table and registers every gf_ function.
// The .so exports only these two symbols (exports.map), is linked with
// `-z defs` so that no direct libsqlite3 call can sneak in, and in release
// builds carries the Swift runtime statically, so it loads on a machine
// without Swift. The function contracts are in docs/sql.md.
import CSQLite
import GeofenceSQL

/// Found by SQLite from the file name libgeofence.so.
@_cdecl("sqlite3_geofence_init")
public func sqlite3_geofence_init(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                  _ api: UnsafePointer<sqlite3_api_routines>?) -> Int32 {
    Registration.initialize(db, err, api)
}

/// The generic entry point, so the library loads under any file name.
@_cdecl("sqlite3_extension_init")
public func sqlite3_extension_init(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                   _ api: UnsafePointer<sqlite3_api_routines>?) -> Int32 {
    Registration.initialize(db, err, api)
}
