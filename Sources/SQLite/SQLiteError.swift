import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A SQLite result code, pattern-matchable on its primary value (`code.primary == .busy`).
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (extended codes carry it in their low byte).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    public static let ok = ResultCode(rawValue: SQLITE_OK)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    public static let done = ResultCode(rawValue: SQLITE_DONE)

    public var description: String {
        guard let text = sqlite3_errstr(rawValue) else { return "code \(rawValue)" }
        return "\(String(cString: text)) (\(rawValue))"
    }
}

/// An error from SQLite: its result code, the library's message, and the SQL it happened on.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let code: ResultCode
    public let message: String
    public let sql: String?
    /// The operating system's errno of the failed call behind an I/O error (`sqlite3_system_errno`), 0 if none.
    public let systemErrno: Int32

    public init(code: ResultCode, message: String, sql: String? = nil, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    /// The error just left on `database` by a call that returned `rc`, with its message and the OS errno.
    init(_ rc: Int32, on database: OpaquePointer?, message: String? = nil, sql: String? = nil) {
        self.init(code: ResultCode(rawValue: rc), message: message ?? String(cString: sqlite3_errmsg(database)), sql: sql,
                  systemErrno: sqlite3_system_errno(database))
    }

    /// The database is full (disk or quota); callers stop writing and retry later. SQLite says SQLITE_FULL when
    /// the database or journal cannot grow, but a shared-memory (`-shm`) file it cannot grow is only an I/O
    /// error: the OS's errno (ENOSPC, EDQUOT) tells which.
    public var isDiskFull: Bool {
        code.primary == .full || (code.primary == .ioError && (systemErrno == ENOSPC || systemErrno == EDQUOT))
    }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " [SQL: \(sql.count > 200 ? String(sql.prefix(200)) + "…" : sql)]" }
        return text
    }
}
