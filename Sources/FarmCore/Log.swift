import Synchronization

/// One line per event on standard error, in logfmt (`time=… level=info role=coordinator msg="…" page=12`) or JSON.
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
    }

    private static let settings = Mutex(Settings())

    public static func configure(level: Level? = nil, format: Format? = nil, role: String? = nil) {
        settings.withLock { s in
            if let level { s.level = level }
            if let format { s.format = format }
            if let role { s.role = role }
        }
    }

    public static var level: Level { settings.withLock { $0.level } }

    public static func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.debug, message, fields) }
    public static func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.info, message, fields) }
    public static func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.warning, message, fields) }
    public static func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.error, message, fields) }

    public static func write(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>) {
        let current = settings.withLock { $0 }
        guard level >= current.level else { return }
        let time = Clock.iso8601(Clock.now)
        var pairs: [(String, String)] = [("time", time), ("level", level.name), ("role", current.role), ("msg", message)]
        pairs += fields.map { ($0.key, $0.value) }
        Console.error(render(pairs, format: current.format))
    }

    static func render(_ pairs: [(String, String)], format: Format) -> String {
        switch format {
        case .json:
            return JSON.object(pairs.map { ($0.0, JSON($0.1)) }).rendered
        case .logfmt:
            return pairs.map { key, value in "\(key)=\(quoted(value))" }.joined(separator: " ")
        }
    }

    private static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0.isNewline || $0 == "\\" }
        guard needsQuotes else { return value }
        var out = "\""
        for character in value {
            switch character {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}
