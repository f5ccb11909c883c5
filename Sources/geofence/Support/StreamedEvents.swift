import GeofenceCore
import GeofenceSQL

/// `judge --out FILE` written while the run stores its notifications
/// (`NotificationTap`), not read back from gf_notifications afterwards: each
/// subject's lines are made on the thread that judged it, and the writing
/// thread appends them to the file.
///
/// The file must be byte for byte what reading the run back gives
/// (`writeNotifications`: the rows in canonical order, `ORDER BY
/// subject_id, ts, area_id, condition_id, id`, each cell as stored). So:
/// - it is used only for a file that can be started over (`OutputFile.canRewind`)
///   and when no trigger on gf_notifications could change the stored rows;
/// - every notification is checked to come after the one before it in that
///   order, as SQLite compares (text by its UTF-8 bytes). A batch stores a
///   fix's notifications in area_id order as Swift compares strings, which
///   differs from bytes for some ids that are not in Unicode's composed form;
///   then `inOrder` turns false and the caller reads the run back instead;
/// - each cell is what the stored value reads back as: SQLite stores a REAL
///   that is a whole number as an integer, so -0.0 comes back as 0.0.
final class StreamedEvents {
    private let output: OutputFile
    private let format: EventFormat
    /// False once a subject's lines could not be made in canonical order;
    /// nothing more is written then.
    private(set) var inOrder = true
    private var last: Notification?

    init(_ output: OutputFile, format: EventFormat) throws {
        self.output = output
        self.format = format
        try output.write(notificationHeader(format))
    }

    var tap: NotificationTap {
        let format = self.format
        return NotificationTap(encode: { Self.lines($0, format) }, write: { [unowned self] rows, bytes in try self.write(rows, bytes) })
    }

    private func write(_ rows: [Notification], _ bytes: [UInt8]?) throws {
        guard inOrder, let first = rows.first else { return }
        guard let bytes, last.map({ Self.precedes($0, first) }) ?? true else { inOrder = false; return }
        last = rows.last
        try output.write(bytes: bytes)
    }

    /// One subject's lines, or nil if its notifications are not in canonical order.
    static func lines(_ rows: [Notification], _ format: EventFormat) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * 96)
        var cells = [String?](repeating: nil, count: notificationColumns.count)
        var time: (Timestamp, String)?
        for (k, n) in rows.enumerated() {
            if k > 0 && !precedes(rows[k - 1], n) { return nil }
            if time?.0 != n.ts { time = (n.ts, n.ts.iso8601) }
            cells[0] = n.subjectId
            cells[1] = time?.1
            cells[2] = n.areaId
            cells[3] = String(n.conditionId)
            cells[4] = n.transition.rawValue
            cells[5] = "\(n.lat + 0.0)"
            cells[6] = "\(n.lon + 0.0)"
            cells[7] = "\(n.accuracy + 0.0)"
            appendNotificationLine(cells, format: format, to: &out)
        }
        return out
    }

    /// Whether `a` comes strictly before `b` in canonical order. (Two rows
    /// equal in all four keys would be ordered by id, as they are stored;
    /// one fix gives one per area and condition, so that never happens.)
    static func precedes(_ a: Notification, _ b: Notification) -> Bool {
        if !a.subjectId.utf8.elementsEqual(b.subjectId.utf8) { return a.subjectId.utf8.lexicographicallyPrecedes(b.subjectId.utf8) }
        if a.ts != b.ts { return a.ts < b.ts }
        if !a.areaId.utf8.elementsEqual(b.areaId.utf8) { return a.areaId.utf8.lexicographicallyPrecedes(b.areaId.utf8) }
        return a.conditionId < b.conditionId
    }
}
