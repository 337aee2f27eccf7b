import Synchronization
import FarmCore

/// One line per event on standard error, in logfmt (`time=… level=info role=coordinator msg="…" page=12`) or JSON.
///
/// Every line starts with `time`, `level`, `role` and `msg`, then the process's context fields (a worker's
/// `worker`), then the event's own. Field names are fixed per concept (docs/operations.md, "Logs"): `page` (the
/// page id), `attempt` (its number), `worker` (the worker id), `source` (the job's label: document name and page),
/// `code`, `stage`, `error` (a failure), `endpoint`, `reason`. An event's field overrides a context field of the
/// same name. Thread-safe: lines from several threads never interleave.
public enum Log {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        public var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warn"
            case .error: "error"
            }
        }

        public init?(name: String) {
            switch name.lowercased() {
            case "debug": self = .debug
            case "info": self = .info
            case "warn", "warning": self = .warning
            case "error": self = .error
            default: return nil
            }
        }

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    public enum Format: String, Sendable { case logfmt, json }

    private struct Settings: Sendable {
        var level: Level = .info
        var format: Format = .logfmt
        var role: String = "cli"
        var context: [(String, String)] = []
    }

    private static let settings = Mutex(Settings())

    /// Sets what is given; `context` fields go on every later line (a worker passes its id).
    public static func configure(level: Level? = nil, format: Format? = nil, role: String? = nil,
                                 context: KeyValuePairs<String, String>? = nil)
    {
        settings.withLock { s in
            if let level { s.level = level }
            if let format { s.format = format }
            if let role { s.role = role }
            if let context { s.context = context.map { ($0.key, $0.value) } }
        }
    }

    /// The role set by `configure`: "cli" until a long-running command names itself.
    public static var role: String { settings.withLock { $0.role } }

    public static var level: Level { settings.withLock { $0.level } }

    public static func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.debug, message, fields) }
    public static func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.info, message, fields) }
    public static func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.warning, message, fields) }
    public static func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.error, message, fields) }

    public static func write(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>) {
        write(level, message, fields: fields.map { ($0.key, $0.value) })
    }

    /// Writes one event whose fields are built at run time (a page's, which depend on what is known of it).
    public static func write(_ level: Level, _ message: String, fields: [(String, String)]) {
        if let line = line(level, message, fields: fields) { Console.error(line) }
    }

    /// The line `write` would write for this event (without its newline), or nil below the level: for callers that
    /// write many events at once (a coordinator's page events of one transaction go out in one write).
    public static func line(_ level: Level, _ message: String, fields: [(String, String)]) -> String? {
        let current = settings.withLock { $0 }
        guard level >= current.level else { return nil }
        let time = Clock.iso8601(Clock.now)
        var pairs: [(String, String)] = [("time", time), ("level", level.name), ("role", current.role), ("msg", message)]
        pairs += current.context.filter { key, _ in !fields.contains { $0.0 == key } }
        pairs += fields
        return render(pairs, format: current.format)
    }

    /// Writes lines made by `line` with one write to standard error.
    public static func write(lines: [String]) {
        guard !lines.isEmpty else { return }
        Console.error(lines.joined(separator: "\n"))
    }

    /// One line (without its newline) in `format`. Keys are written as given: callers use plain snake_case names.
    package static func render(_ pairs: [(String, String)], format: Format) -> String {
        switch format {
        case .json:
            return JSON.object(pairs.map { ($0.0, JSON($0.1)) }).rendered
        case .logfmt:
            return pairs.map { key, value in "\(key)=\(quoted(value))" }.joined(separator: " ")
        }
    }

    /// A logfmt value: bare when it is a plain word, else in double quotes with `"` and `\` escaped and every
    /// control character (newlines, tabs, escape sequences, C1 controls) written as an escape, so one event
    /// stays one line and a value cannot forge a field or move the terminal's cursor.
    package static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains { scalar in
            scalar.value <= 0x20 || scalar == "=" || scalar == "\"" || scalar == "\\" || scalar.isControlCharacter
        }
        guard needsQuotes else { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.isControlCharacter:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
