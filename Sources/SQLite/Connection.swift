import CSQLite

/// An open SQLite database. Owns one `sqlite3*`, closed with `sqlite3_close_v2` in `deinit` (statements still
/// alive keep the handle as a zombie until they are finalized). Not `Sendable`: one connection per thread.
public final class Connection {
    package let handle: OpaquePointer
    /// The file this connection opened.
    public let path: String
    private var cache: [String: Statement] = [:]
    private var walHook: WALHook?

    public enum Mode: Sendable {
        case readWriteCreate
        case readWrite
        case readOnly
        /// Read-only, taking no locks and making no `-shm` or `-wal` file (SQLite's `immutable=1`): only for a file
        /// nobody writes while it is open; a write meanwhile may make reads fail or see a half-changed page.
        case immutable
    }

    /// Opens (or creates) the database at `path`. `busyTimeoutMilliseconds` bounds how long a statement waits for
    /// another connection's lock before failing with `.busy`.
    public init(path: String, mode: Mode = .readWriteCreate, busyTimeoutMilliseconds: Int32 = 5000) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        switch mode {
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readOnly, .immutable: flags |= SQLITE_OPEN_READONLY
        }
        var name = path
        if mode == .immutable { name = Self.fileURI(path) + "?immutable=1" }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: ResultCode(rawValue: rc), message: "cannot open \(path): \(message)")
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(rc, on: handle, message: message, sql: sql)
        }
    }

    /// Compiles one statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw SQLiteError(rc, on: handle, sql: sql)
        }
        return Statement(handle: statement, database: handle, sql: sql)
    }

    /// A statement compiled once per connection and reused; it comes back reset, with its bindings cleared.
    public func cached(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = cache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        cache[sql] = statement
        return statement
    }

    public enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED"
        case immediate = "IMMEDIATE"
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` inside a transaction (`BEGIN IMMEDIATE` by default): committed when it returns, rolled back
    /// when it throws.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if !isAutocommit { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// True outside an explicit transaction.
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Puts the database in write-ahead-log mode (readers never block the writer) and returns the mode now in force.
    @discardableResult
    public func enableWAL(synchronous: String = "NORMAL") throws(SQLiteError) -> String {
        let mode = try scalarText("PRAGMA journal_mode=WAL") ?? ""
        try execute("PRAGMA synchronous=\(synchronous)")
        return mode
    }

    /// Calls `body` on the committing thread after each commit that wrote to the write-ahead log, with the log's
    /// size in frames (pages); when it returns true, a passive checkpoint runs there and then, as SQLite's own
    /// automatic checkpoint does. SQLite builds `wal_autocheckpoint` on this same hook, so setting one replaces
    /// it: the caller takes over checkpointing. Nil removes the hook and restores the automatic checkpoint.
    public func setWALHook(_ body: ((Int) -> Bool)?) {
        walHook = body.map(WALHook.init)
        guard let walHook else {
            sqlite3_wal_autocheckpoint(handle, 1000)
            return
        }
        sqlite3_wal_hook(handle, { context, database, name, frames in
            guard let context, Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().body(Int(frames)) else {
                return SQLITE_OK
            }
            let rc = sqlite3_wal_checkpoint_v2(database, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            return rc == SQLITE_BUSY ? SQLITE_OK : rc
        }, Unmanaged.passUnretained(walHook).toOpaque())
    }

    private final class WALHook {
        let body: (Int) -> Bool
        init(_ body: @escaping (Int) -> Bool) { self.body = body }
    }

    /// A passive checkpoint (`PRAGMA wal_checkpoint(PASSIVE)`): copies what it can of the write-ahead log into the
    /// database without waiting for other connections. Returns the log's frames and how many of them are now in
    /// the database.
    @discardableResult
    public func checkpointPassive() throws(SQLiteError) -> (log: Int, checkpointed: Int) {
        var log: Int32 = 0, checkpointed: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &checkpointed)
        guard rc == SQLITE_OK else { throw SQLiteError(rc, on: handle, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
        return (Int(log), Int(checkpointed))
    }

    /// The first column of the first row, as text.
    public func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.optionalText(0)
    }

    /// The first column of the first row, as an integer.
    public func scalarInt(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step(), !statement.isNull(0) else { return nil }
        return statement.int64(0)
    }

    /// `PRAGMA user_version`: the schema version that migrations maintain.
    public var userVersion: Int {
        get throws(SQLiteError) { Int(try scalarInt("PRAGMA user_version") ?? 0) }
    }

    /// `PRAGMA application_id`: the number a program stores in the file's header to mark its files as its own.
    public var applicationID: Int32 {
        get throws(SQLiteError) { Int32(truncatingIfNeeded: try scalarInt("PRAGMA application_id") ?? 0) }
    }

    public func setApplicationID(_ id: Int32) throws(SQLiteError) {
        try execute("PRAGMA application_id = \(id)")
    }

    /// The names of the tables in the file (SQLite's own `sqlite_*` tables left out).
    public func tableNames() throws -> [String] {
        try prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .rows { $0.text(0) }
    }

    /// `PRAGMA quick_check`: ["ok"] for a sound database, else up to `limit` problems. Like integrity_check
    /// without the index-content checks: O(size) but several times faster.
    public func quickCheck(limit: Int = 10) throws -> [String] {
        try prepare("PRAGMA quick_check(\(limit))").rows { $0.text(0) }
    }

    /// `file:` URI of a path: the characters a URI gives meaning to are percent-encoded.
    static func fileURI(_ path: String) -> String {
        var uri = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x21, 0x7F...:
                let hex = Array("0123456789ABCDEF".utf8)
                uri += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            default:
                uri += String(decoding: [byte], as: UTF8.self)
            }
        }
        return uri
    }

    /// `PRAGMA integrity_check`: "ok" for a sound database.
    public func integrityCheck() throws(SQLiteError) -> String {
        try scalarText("PRAGMA integrity_check") ?? ""
    }

    /// The library version, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
