import GeofenceCore
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The failures GDAL reports, recorded by an error handler of this program's
/// own, so that a call which fails without saying so in its result is still
/// caught. GDAL's drivers do not all report a failure in what they return:
/// a FlatGeobuf cut short, or a VRT whose source cannot be opened, ends its
/// layer with the NULL that also means "no more features", and a GeoPackage
/// geometry GDAL cannot decode is a feature without one. Only the error GDAL
/// raised on the way tells them apart.
///
/// The handler records every error of class CE_Failure or worse (CE_Fatal)
/// with a serial number, and prints nothing (warnings and debug messages are
/// dropped, as GDAL's quiet handler does). A reader takes a `mark()` before a
/// call and asks for `failures(since:)` after it. Errors from any thread are
/// recorded, under a lock; one GDAL source is read at a time in this process.
enum GDALErrors {
    /// CPLErr's CE_Failure; CE_Fatal (4) is worse.
    static let failureClass: Int32 = 3
    /// How many recent messages are kept: enough for a cascade's first and last words.
    private static let kept = 8

    nonisolated(unsafe) private static var serial = 0
    nonisolated(unsafe) private static var recent: [(serial: Int, message: String)] = []
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }()

    /// The handler GDAL calls for each error (`CPLErrorHandler`: class, number, message).
    static let handler: @convention(c) (Int32, Int32, UnsafePointer<CChar>?) -> Void = { errorClass, _, message in
        guard errorClass >= GDALErrors.failureClass else { return }
        GDALErrors.record(Echo.plain(message.map { String(cString: $0) } ?? ""))
    }

    private static func record(_ message: String) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        serial += 1
        recent.append((serial, message))
        if recent.count > kept { recent.removeFirst(recent.count - kept) }
    }

    /// A point to ask `failures(since:)` from.
    static func mark() -> Int {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return serial
    }

    /// The failures GDAL raised after `mark`, as one line (each distinct
    /// message once, in order, joined by "; "; "GDAL gave no message" for
    /// failures without text); nil when there were none.
    static func failures(since mark: Int) -> String? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard serial > mark else { return nil }
        var messages: [String] = []
        for r in recent where r.serial > mark && !r.message.isEmpty && !messages.contains(r.message) {
            messages.append(r.message)
        }
        return messages.isEmpty ? "GDAL gave no message" : messages.joined(separator: "; ")
    }
}
