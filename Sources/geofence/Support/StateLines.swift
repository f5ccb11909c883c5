import GeofenceCore
import GeofenceSQL
@preconcurrency import Glibc

/// The lines of a state file, as `geofence state export` writes them: one
/// `{"subject_id":ID,"record":RECORD}` per subject (docs/state.md). Read
/// here for every command that takes one (`state import`, `judge --state`),
/// written by `line` for every command that makes one, so that
/// a file is read and written one way only.
enum StateLines {
    /// Reads every line of `input` (called `name` in messages), checks it
    /// (`checked`: a JSON object with a subject_id and a record this engine
    /// writes, `StateTransfer.check`) and calls `body` with it and where it
    /// is ("line N"), in file order. Blank lines are skipped. The first bad
    /// line, or a subject on a second line (subjects told apart by their
    /// bytes, as a catalog keys them), throws an `InputError` naming the
    /// file and the line; the caller decides what is kept then. Returns the
    /// number of lines given to `body`.
    @discardableResult
    static func read(_ input: UnsafeMutablePointer<FILE>, _ name: String,
                     _ body: (StateTransfer.Checked, _ at: String) throws -> Void) throws -> Int {
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var number = 0, given = 0
        // By the ids' bytes, as the catalog keys them: "café" composed and decomposed are two subjects.
        var seen = Set<SubjectKey>()
        while true {
            let n = getline(&line, &capacity, input)
            if n < 0 {
                if ferror(input) != 0 { throw InputError("read error: \(String(cString: strerror(errno)))", file: name) }
                break
            }
            number += 1
            let bytes = UnsafeRawBufferPointer(start: line, count: n)
            let at = "line \(number)"
            guard let text = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) else {
                throw InputError("is not UTF-8 text", file: name, item: at)
            }
            if text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { continue }
            let checked: StateTransfer.Checked
            do { checked = try Self.checked(text) } catch let e as InputError { throw e.located(file: name, item: at) }
            guard seen.insert(SubjectKey(checked.subject)).inserted else {
                throw InputError("subject \(Echo.quoted(checked.subject)) has a line above already: one line per subject", file: name, item: at)
            }
            try body(checked, at)
            given += 1
        }
        return given
    }

    /// One line's subject and record, checked (`StateTransfer.check`).
    static func checked(_ text: String) throws -> StateTransfer.Checked {
        let value: JSONValue
        do { value = try JSONReader.parse(text) } catch {
            throw InputError("is not a JSON object {\"subject_id\":…,\"record\":…} (\(error))")
        }
        guard case .object(let members) = value else {
            throw InputError("is a JSON \(value.typeName), not an object {\"subject_id\":…,\"record\":…}")
        }
        var subject: String?, record: JSONValue?
        for (key, member) in members {
            switch key {
            case "subject_id" where subject == nil:
                guard case .string(let s) = member else { throw InputError("has a subject_id of type \(member.typeName), not a string") }
                subject = s
            case "record" where record == nil:
                record = member
            case "subject_id", "record":
                throw InputError("has two members \(Echo.quoted(key))")
            default:
                throw InputError("has a member \(Echo.quoted(key)), which a state line does not have (only subject_id and record)")
            }
        }
        guard let subject else { throw InputError("has no subject_id") }
        guard let record, case .object = record else {
            throw InputError("has no \"record\" object for subject \(Echo.quoted(subject))")
        }
        return try StateTransfer.check(subject: subject, record: record)
    }

    /// One line: `{"subject_id":…,"record":…}` and a newline, the record's
    /// text as it is (the canonical text the engine writes).
    static func line(_ subject: String, _ record: String, _ out: inout [UInt8]) {
        out += #"{"subject_id":"#.utf8
        JSONValue.appendString(subject, to: &out)
        out += #","record":"#.utf8
        out += record.utf8
        out += "}\n".utf8
    }
}
