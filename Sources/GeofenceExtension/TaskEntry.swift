#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CArrow
import GeofenceCore
import GeofenceSQL

// The task ABI: judgement in the caller's process over Arrow record batches,
// for a Spark task (python/geofence/arrow.py calls it through ctypes). The
// catalog is opened read-only and prepared once per handle; each call judges
// one batch of fixes with its subjects' state records and returns the
// notifications and the new records. Nothing is written to any file.
//
//   void *gf_task_open(const char *catalog_path, char **error);
//   int   gf_task_judge(void *task, struct ArrowArray *fixes, struct ArrowSchema *fixes_schema,
//                       struct ArrowArray *states, struct ArrowSchema *states_schema,      /* both NULL: no state */
//                       struct ArrowArray *out_notifications, struct ArrowSchema *out_notifications_schema,
//                       struct ArrowArray *out_states, struct ArrowSchema *out_states_schema,
//                       int64_t out_counters[7], char **error);
//   void  gf_task_close(void *task);
//   void  gf_free_error(char *error);
//
// Batches in (columns found by name, others ignored):
//   fixes   subject_id utf8; ts utf8 (as `geofence judge` reads it) or timestamp with a zone;
//           lat, lon, accuracy_m float64 (or float32, int64, int32); order int64 (optional)
//   states  subject_id utf8, record utf8 (a subject record, docs/subject-record.md)
// Batches out (the caller releases them):
//   notifications  subject_id, ts, area_id (utf8), condition_id (int64), transition (utf8),
//                  lat, lon, accuracy_m (float64): gf_notifications' columns without id and run_id,
//                  in canonical order
//   states         subject_id, record (utf8): every subject given a record or judged, in
//                  subject_id byte order; a subject given a record and no fix keeps it unchanged
// Counters: fixes (rows), judged, stale, invalid, transitions, notifications, filtered.
//
// Errors: NULL or 1 is returned and *error (if error is not NULL) gets a
// message naming the batch, row and subject, to be freed with gf_free_error.
// gf_task_judge always releases its input batches, and fills the outputs
// only when it returns 0.

/// Opens the catalog at `catalog_path` read-only and prepares every area;
/// returns the task handle, or NULL with `*error` set.
@_cdecl("gf_task_open")
public func gf_task_open(_ path: UnsafePointer<CChar>?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> UnsafeMutableRawPointer? {
    guard let path else { report("gf_task_open: the catalog path is NULL", error); return nil }
    do {
        let task = try TaskJudgement(catalogPath: String(cString: path))
        return Unmanaged.passRetained(task).toOpaque()
    } catch let e {
        report("\(e)", error)
        return nil
    }
}

/// Ends a task: frees its catalog and closes its connection. NULL is ignored.
@_cdecl("gf_task_close")
public func gf_task_close(_ task: UnsafeMutableRawPointer?) {
    if let task { Unmanaged<TaskJudgement>.fromOpaque(task).release() }
}

/// Frees an error message this library gave. NULL is ignored.
@_cdecl("gf_free_error")
public func gf_free_error(_ error: UnsafeMutablePointer<CChar>?) { free(error) }

/// How many areas the task's catalog holds (-1 for a NULL task).
@_cdecl("gf_task_area_count")
public func gf_task_area_count(_ task: UnsafeMutableRawPointer?) -> Int64 {
    guard let task else { return -1 }
    return Int64(Unmanaged<TaskJudgement>.fromOpaque(task).takeUnretainedValue().areaCount)
}

/// Judges one batch of fixes (see the header above); 0 on success, 1 with `*error` set.
@_cdecl("gf_task_judge")
public func gf_task_judge(_ task: UnsafeMutableRawPointer?,
                          _ fixes: UnsafeMutablePointer<ArrowArray>?, _ fixesSchema: UnsafeMutablePointer<ArrowSchema>?,
                          _ states: UnsafeMutablePointer<ArrowArray>?, _ statesSchema: UnsafeMutablePointer<ArrowSchema>?,
                          _ outNotifications: UnsafeMutablePointer<ArrowArray>?, _ outNotificationsSchema: UnsafeMutablePointer<ArrowSchema>?,
                          _ outStates: UnsafeMutablePointer<ArrowArray>?, _ outStatesSchema: UnsafeMutablePointer<ArrowSchema>?,
                          _ counters: UnsafeMutablePointer<Int64>?,
                          _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    defer {
        carrow_release_array(fixes); carrow_release_schema(fixesSchema)
        carrow_release_array(states); carrow_release_schema(statesSchema)
    }
    guard let task else { report("gf_task_judge: the task is NULL (gf_task_open failed?)", error); return 1 }
    guard let fixes, let fixesSchema, let outNotifications, let outNotificationsSchema, let outStates, let outStatesSchema else {
        report("gf_task_judge: the fixes batch and the four output structs must not be NULL", error)
        return 1
    }
    let call = TaskCall(fixes: fixes, fixesSchema: fixesSchema, states: states, statesSchema: statesSchema)
    do {
        let judgement = Unmanaged<TaskJudgement>.fromOpaque(task).takeUnretainedValue()
        let output = try judgement.judge(try call.rows(), states: try call.records())
        try TaskCall.export(output.notifications, into: outNotifications, outNotificationsSchema)
        try TaskCall.export(output.states, into: outStates, outStatesSchema)
        if let counters {
            let r = output.report, c = r.counters
            for (i, v) in [r.fixes, c.judged, c.stale, c.invalid, c.transitions, c.notifications, c.filtered].enumerated() {
                counters[i] = Int64(v)
            }
        }
        return 0
    } catch let e {
        report("\(e)", error)
        return 1
    }
}

/// Puts a malloc'd copy of `message` in `*error` (when the caller gave a place for it).
private func report(_ message: String, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
    error?.pointee = strdup(message)
}
