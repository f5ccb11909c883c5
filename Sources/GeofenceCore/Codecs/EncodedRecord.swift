/// A subject record's text together with where each of its stays lies in
/// it, so that the next record of the same subject copies the bytes of every
/// stay that only lengthened and writes just its streaks. gf_check rewrites
/// a subject's record at every judged fix; a subject inside hundreds of
/// areas (a dense city) has hundreds of stays, nearly all of them only
/// lengthened by the fix.
///
///     let first = SubjectRecord.encoded(state)
///     let next = SubjectRecord.encoded(later, reusing: first)
///     // next.text == SubjectRecord.encode(later), byte for byte
///
/// How it works: a stay's text is a head, `{"area":…,"phase":…,"in":`,
/// its two streaks, and a tail, `,"entered":…` and `,"dwell":[…]` when it
/// has them, then `}`. The head depends only on the area and the phase, the
/// tail only on the entry time and the DWELL conditions spent, and writing
/// them (the area id escaped, the time in its storage text) is most of a
/// stay's cost. A stay of the new state whose area, phase, entry and DWELLs
/// are those of a stay of `reusing` takes that stay's head and tail as
/// bytes; any other stay is written whole. Both states keep their stays in
/// the byte order of their area ids, so one walk pairs them.
public struct EncodedRecord {
    /// The record: `SubjectRecord.encode(state)`.
    public let text: String
    /// The state `text` is the record of.
    public let state: SubjectState
    /// Per stay of `state`, in order, where its text lies in `text`; nil
    /// when not known (a text read back, not written here).
    let stays: [StayBytes]?

    /// A record read back whose stays' places are not known: reused by
    /// nothing, kept only to be compared.
    public init(readBack text: String, state: SubjectState) {
        self.text = text; self.state = state; stays = nil
    }

    init(text: String, state: SubjectState, stays: [StayBytes]) {
        self.text = text; self.state = state; self.stays = stays
    }

    /// Byte offsets into the record of one stay: its `{`, the first byte
    /// of its streaks (after the head), the first byte of its tail, and the
    /// byte after its `}`.
    struct StayBytes {
        let start, streaks, tail, end: Int
    }
}

extension SubjectRecord {
    /// The canonical text of `state` (`encode`) with its stays' places; a
    /// stay unchanged from one of `previous` but for its streaks is copied
    /// from `previous.text`, the same bytes as written afresh.
    public static func encoded(_ state: SubjectState, reusing previous: EncodedRecord? = nil) -> EncodedRecord {
        var out: [UInt8] = []
        out.reserveCapacity(128 + 96 * state.stays.count + 20 * state.lastNotifiedDay.count)
        appendLead(state, &out)
        var places: [EncodedRecord.StayBytes] = []
        places.reserveCapacity(state.stays.count)
        if let previous, let old = previous.stays {
            var text = previous.text
            text.withUTF8 { bytes in
                let source = StaySource(stays: previous.state.stays, places: old, bytes: bytes)
                appendStays(state.stays, from: source, &out, &places)
            }
        } else {
            appendStays(state.stays, from: nil, &out, &places)
        }
        appendDays(state, &out)
        return EncodedRecord(text: String(decoding: out, as: UTF8.self), state: state, stays: places)
    }

    /// The stays of a record written before, and where each lies in its bytes.
    struct StaySource {
        let stays: StayMap
        let places: [EncodedRecord.StayBytes]
        let bytes: UnsafeBufferPointer<UInt8>
    }

    /// `{"v":1,"last":…,"judged":…,"stays":[`
    static func appendLead(_ state: SubjectState, _ out: inout [UInt8]) {
        JSONBytes.literal(#"{"v":"#, &out)
        JSONBytes.integer(Int64(version), &out)
        JSONBytes.literal(#","last":"#, &out)
        if let f = state.lastFix {
            JSONBytes.literal(#"{"ts":""#, &out)
            f.ts.appendStorageText(to: &out)
            JSONBytes.literal(#"","lat":"#, &out)
            JSONBytes.description(f.position.lat, &out)
            JSONBytes.literal(#","lon":"#, &out)
            JSONBytes.description(f.position.lon, &out)
            JSONBytes.literal(#","acc":"#, &out)
            JSONBytes.description(f.accuracy, &out)
            out.append(UInt8(ascii: "}"))
        } else {
            JSONBytes.literal("null", &out)
        }
        JSONBytes.literal(#","judged":"#, &out)
        JSONBytes.integer(Int64(state.judgedFixes), &out)
        JSONBytes.literal(#","stays":["#, &out)
    }

    /// The stays, comma-separated, each copied from `source` where it can
    /// be (`encoded`), their places appended to `places`. The map keeps its
    /// ids in byte order (`StayMap`), the canonical order; walked by index,
    /// no stay copied.
    static func appendStays(_ stays: StayMap, from source: StaySource?, _ out: inout [UInt8], _ places: inout [EncodedRecord.StayBytes]) {
        var j = 0
        for i in 0..<stays.count {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            let area = stays.key(at: i), stay = stays[at: i]
            let start = out.count
            if let source {
                while j < source.stays.count && source.stays.key(at: j).utf8Precedes(area) { j += 1 }
            }
            if let source, j < source.stays.count, source.stays.key(at: j).hasSameUTF8(as: area),
               differsOnlyInStreaks(source.stays[at: j], stay) {
                let was = source.places[j]
                out.append(contentsOf: UnsafeBufferPointer(rebasing: source.bytes[was.start..<was.streaks]))
                let streaks = out.count
                appendStreaks(stay, &out)
                let tail = out.count
                out.append(contentsOf: UnsafeBufferPointer(rebasing: source.bytes[was.tail..<was.end]))
                places.append(.init(start: start, streaks: streaks, tail: tail, end: out.count))
                continue
            }
            JSONBytes.literal(#"{"area":"#, &out)
            JSONValue.appendString(area, to: &out)
            JSONBytes.literal(#","phase":""#, &out)
            JSONBytes.literal(stay.phase.recordText, &out)
            JSONBytes.literal(#"","in":"#, &out)
            let streaks = out.count
            appendStreaks(stay, &out)
            let tail = out.count
            appendTail(stay, &out)
            places.append(.init(start: start, streaks: streaks, tail: tail, end: out.count))
        }
    }

    /// Whether two stays of one area have the same head and tail text.
    @inline(__always)
    static func differsOnlyInStreaks(_ a: StayState, _ b: StayState) -> Bool {
        a.phase == b.phase && a.enteredAt == b.enteredAt && a.dwellSpent == b.dwellSpent
    }

    /// `7,"out":0`: the streaks, after the head's `"in":`.
    @inline(__always)
    static func appendStreaks(_ stay: StayState, _ out: inout [UInt8]) {
        JSONBytes.integer(Int64(stay.inStreak), &out)
        JSONBytes.literal(#","out":"#, &out)
        JSONBytes.integer(Int64(stay.outStreak), &out)
    }

    /// `,"entered":"…","dwell":[…]}`, each member only when the stay has it.
    static func appendTail(_ stay: StayState, _ out: inout [UInt8]) {
        if let t = stay.enteredAt {
            JSONBytes.literal(#","entered":""#, &out)
            t.appendStorageText(to: &out)
            out.append(UInt8(ascii: "\""))
        }
        if !stay.dwellSpent.isEmpty {
            JSONBytes.literal(#","dwell":["#, &out)
            for (k, id) in stay.dwellSpent.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSONBytes.integer(id, &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `],"days":[…]}`: the days by condition id.
    static func appendDays(_ state: SubjectState, _ out: inout [UInt8]) {
        JSONBytes.literal(#"],"days":["#, &out)
        for (i, (id, day)) in state.lastNotifiedDay.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            JSONBytes.integer(id, &out)
            JSONBytes.literal(#",""#, &out)
            JSONBytes.date(day, &out)
            JSONBytes.literal(#""]"#, &out)
        }
        JSONBytes.literal("]}", &out)
    }
}
