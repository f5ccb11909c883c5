import GeofenceCore
@preconcurrency import Glibc

/// One run at a time on a state file (`judge --state STATE`): a run holds
/// an exclusive `flock` on `STATE.lock` from before it reads STATE until
/// the process ends, and a second run on the same STATE is refused at once.
///
///     geofence judge fences.db --fixes a.csv --state devices.jsonl &
///     geofence judge fences.db --fixes b.csv --state devices.jsonl
///     error: devices.jsonl: another run is using this state file …
///
/// Why: each run reads STATE, judges, and renames its new state over it;
/// two runs at once would each start from the same state and the later
/// rename would drop what the earlier one judged, with both reporting
/// success. The lock is on a file beside STATE, not on STATE itself,
/// because STATE is replaced by a rename: a lock on its old inode would
/// not keep the next run out. The lock file is left in place (removing it
/// could let a third run lock a new file while the second holds the old);
/// it holds nothing. The kernel lets go of the lock when the process ends,
/// however it ends, so a killed run never leaves STATE locked.
enum StateFileLock {
    /// Takes the lock for `statePath`, or throws naming the file.
    static func take(_ statePath: String) throws {
        let lockPath = statePath + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw InputError("cannot make the lock file \(lockPath) beside the state file: \(String(cString: strerror(errno)))",
                             file: statePath)
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            close(fd)
            throw InputError(busy ? "another run is using this state file (it holds \(lockPath)): runs on one state file must "
                                    + "take turns, or each would start from the same state and the later would drop what the "
                                    + "earlier judged; wait for it, or give each run its own state file"
                                  : "cannot lock \(lockPath): \(reason)", file: statePath)
        }
        // Kept open (and locked) until the process exits.
    }
}
