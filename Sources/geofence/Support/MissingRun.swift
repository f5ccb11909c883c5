import GeofenceCore
import GeofenceSQL

/// Refuses `--run N` naming a run that is not in the catalog at `db`: a
/// script asking for the wrong run must know, not get an empty listing.
/// A run with rows in `table` (gf_notification_rows, gf_explain) but no gf_runs
/// row (written or pruned by hand) is there.
func refuseMissingRun(_ run: Int64?, in conn: Connection, db: String, rowsIn table: String) throws {
    guard let run, try conn.scalar("""
        SELECT CASE WHEN EXISTS (SELECT 1 FROM gf_runs WHERE run_id = ?1) THEN 1
                    ELSE EXISTS (SELECT 1 FROM \(table) WHERE run_id = ?1) END
        """, [.integer(run)]).int64 == 0 else { return }
    let last = try conn.scalar("SELECT max(run_id) FROM gf_runs").int64
    throw InputError("no run \(run) in \(db)" + (last.map { " (its runs are numbered up to \($0))" } ?? " (it has no runs yet)"),
                     field: "--run")
}
