import GeofenceCore
import GeofenceSQL

/// What `judge --out` writes: the run's notifications, in canonical order
/// (`ORDER BY subject_id, ts, area_id, condition_id, id`), each cell as
/// stored, exactly as `writeNotifications` gives them reading the run back.
///
///     let events = try RunEvents(output, format: .csv, database: conn)
///     judgement.notificationTap = events.tap
///     … run …
///     try events.finish(conn, NotificationListing(of: report))
///
/// They are written while the run stores them (`NotificationTap`), not
/// read back from gf_notifications afterwards: each subject's lines are made
/// on the thread that judged it, and the writing thread appends them. To the
/// output itself when it can be started over (a file), else to a spool
/// copied to it at `finish` (standard output, a FIFO). Where that could
/// differ from reading back, the run is read back instead:
/// - a trigger of the user's that names the stored notifications may change them, and
///   a table rebuilt by hand may store or order them otherwise
///   (`NotificationTap.storedAsWritten`): not streamed;
/// - every line is checked to come after the one before it, as SQLite
///   orders (text by its UTF-8 bytes, as the judge orders area_ids too):
///   should a run ever store them otherwise, `inOrder` turns false;
/// - each cell is what the stored value reads back as: SQLite stores a REAL
///   that is a whole number as an integer, so -0.0 comes back as 0.0.
final class RunEvents {
    private let output: OutputFile
    private let format: EventFormat
    /// Where lines go while the run stores them: `output`, or a spool; nil: read back.
    private let target: OutputFile?
    /// False once a subject's lines could not be made in canonical order
    /// (or a spool could not be written); nothing more is streamed then.
    private var inOrder = true
    private var last: Notification?
    /// Whether a notification has been streamed (the first one goes without `format.separator`).
    private var streamedAny = false
    /// The notifications are not stored: there is no reading back.
    private let streamOnly: Bool

    /// How a resumed run's output goes on (`judge --resume`): as a new one,
    /// read back whole at `finish` (its first chunks were committed by an
    /// earlier process), or appended to the partial file that process left
    /// (`OutputFile.reused`), which holds the committed chunks' lines.
    enum Resumed { case no, readBack, appending }

    init(_ output: OutputFile, format: EventFormat, database: Connection, streamOnly: Bool = false,
         resumed: Resumed = .no) throws {
        self.output = output
        self.format = format
        self.streamOnly = streamOnly
        if resumed == .readBack && !streamOnly {
            target = nil
        } else if streamOnly {
            target = output.canRewind ? output : try OutputFile.spool()
        } else if try !NotificationTap.storedAsWritten(database) {
            target = nil
        } else {
            // No room for a spool: read back, as before spools.
            target = output.canRewind ? output : try? OutputFile.spool()
        }
        let header = format.header(.notifications)
        if resumed == .appending, target === output, let kept = output.reused {
            streamedAny = kept.bytes > Int64(header.utf8.count)
            return
        }
        if output.reused != nil { try output.rewind() }  // not to be appended to after all: started over
        try target?.write(header)
    }

    /// With each chunk a resumable run commits: where its --out stands (the
    /// partial file, synced, and its length), which a resumed run goes on
    /// from; nil when its lines are not all in that file (a spool, or
    /// read back), and the resumed run reads them back.
    func committing() throws -> RecordedOutput? {
        guard inOrder, target === output, let partial = output.partialPath else { return nil }
        let bytes = try output.syncedLength()
        output.keepPartial()
        return RecordedOutput(partial: partial, format: format.rawValue, bytes: bytes)
    }

    /// The tap to give the judgement (nil: the run is read back at `finish`).
    var tap: NotificationTap? {
        guard target != nil else { return nil }
        let format = self.format
        return NotificationTap(encode: { Self.lines($0, format) }, write: { [unowned self] rows, bytes in try self.write(rows, bytes) })
    }

    /// Completes the output and closes it (the caller commits it): the
    /// streamed lines, or the run read back through `listing`.
    func finish(_ conn: Connection, _ listing: NotificationListing) throws {
        if target != nil && inOrder { return try finishStreamed() }
        if target === output { try output.rewind() }
        try writeNotifications(conn, listing, format: format, to: output)
    }

    /// Completes an output whose every line was streamed (always so when
    /// stream-only: lines out of order fail the run) and closes it.
    func finishStreamed() throws {
        guard let target, inOrder else { throw InputError("the notifications could not be streamed in canonical order", file: output.name) }
        try target.write(format.footer)
        if target !== output { try target.copy(to: output) }
        try output.close()
    }

    private func write(_ rows: [Notification], _ bytes: [UInt8]?) throws {
        guard inOrder, let target, let first = rows.first else { return }
        guard let bytes, last.map({ Self.precedes($0, first) }) ?? true else {
            if streamOnly { throw InputError("the notifications came out of canonical order, and with --no-store-notifications they cannot be read back in order: the run was not stored") }
            inOrder = false
            return
        }
        last = rows.last
        // Each subject's text was made on its own thread, every notification after a separator; the run's first has none.
        let text = streamedAny ? bytes : Array(bytes.dropFirst(format.separator.count))
        streamedAny = true
        guard target !== output else { return try target.write(bytes: text) }
        // A spool that cannot be written (a full temporary directory) is
        // given up, not the run: the run is read back instead, as it was
        // before spools, needing no temporary room.
        do { try target.write(bytes: text) } catch {
            if streamOnly { throw error }
            inOrder = false
            target.discard()
        }
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
            out += format.separator
            appendEventLine(cells, .notifications, format: format, to: &out)
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
