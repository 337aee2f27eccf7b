import FarmCore
import FarmRuntime
import SQLite
#if canImport(Glibc)
import Glibc
#endif

/// A store error for people: what went wrong, with the store's path.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        case other
        /// The disk (or quota) under the store is full: writes fail until space returns.
        case diskFull
        /// SQLite finds the file damaged (a failed quick_check, SQLITE_CORRUPT, SQLITE_NOTADB).
        case damaged
        /// The file is not an ocrfarm store (another program's database, or none at the path).
        case notAStore
        /// The store file was deleted, moved or replaced while in use.
        case gone
        /// No store can be made or opened for writing at the path: its folder is missing or not writable.
        case cannotCreate
    }

    public let message: String
    public let kind: Kind
    public var isDiskFull: Bool { kind == .diskFull }
    public var isDamaged: Bool { kind == .damaged }

    public init(_ message: String, kind: Kind = .other) {
        self.message = message
        self.kind = kind
    }

    public init(_ message: String, isDiskFull: Bool) {
        self.init(message, kind: isDiskFull ? .diskFull : .other)
    }

    /// A full disk (or quota) shows in SQLite's code or in the OS's errno behind it (`SQLiteError.isDiskFull`); the
    /// file system's free space goes into the message for people.
    init(_ error: SQLiteError, path: String) {
        if error.isDiskFull {
            let space = Store.diskSpace(of: path).map { " (\($0.description))" } ?? ""
            self.init("store \(path): the disk is full\(space); free space and try again (\(error.message))", kind: .diskFull)
        } else if error.code.primary == .notADatabase && !Store.hasSQLiteHeader(path) {
            // SQLite says NOTADB both for a database whose header it cannot use and for any other file; without the
            // header the file never was a store (a text file, /etc/passwd), and "restore a backup" would mislead.
            self.init("\(path) is not an ocrfarm store: it is not a SQLite database (\(error.message)); give another "
                      + "--store (if it was a store, its header is gone: " + Store.damagedAdvice + ")", kind: .notAStore)
        } else if error.code.primary == .corrupt || error.code.primary == .notADatabase {
            self.init("store \(path) is damaged (\(error.message)); " + Store.damagedAdvice, kind: .damaged)
        } else {
            self.init("store \(path): \(error.message)")
        }
    }

    public var description: String { message }
}

/// The farm's SQLite store: documents, pages, attempts, results, workers. WAL mode, so readers (status, search)
/// never block the coordinator, and the coordinator writes in batched transactions (group commit).
/// Owns one connection; not `Sendable`: one `Store` per thread.
public final class Store {
    public let path: String
    /// The store file as opened (for `fileGone`): nil for a read-only store.
    public private(set) var openedIdentity: FileSystem.Identity?

    /// Whether the file at `path` starts with the 16 bytes every SQLite database starts with ("SQLite format 3",
    /// NUL). A file that cannot be read counts as having them, so the error keeps SQLite's own reading.
    static func hasSQLiteHeader(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 16)
        var count = 0
        while count < head.count {
            let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + count, $0.count - count, off_t(count)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return true }
            if n == 0 { break }
            count += n
        }
        return head == Array("SQLite format 3".utf8) + [0]
    }

    /// The space left on the file system that holds the store at `path` (and its -wal and -shm files).
    public static func diskSpace(of path: String) -> DiskSpace? { DiskSpace.of(FileSystem.directoryName(path)) }

    /// The space left on the store's file system.
    public var diskSpace: DiskSpace? { Store.diskSpace(of: path) }
    /// The SQLite connection: FarmStore's alone. Every query is a method of `Store`, so no module above reaches SQL
    /// (tests reach it through `@testable import FarmStore`).
    let connection: Connection

    /// Pages made leased or done in the open `write` transaction, by document, not yet in `document_counts`
    /// (`Store+DocumentCounts.swift`): added before its COMMIT, dropped with a rollback.
    var countChanges: [Int64: CountChange] = [:]
    /// Whether a `write` transaction is open (count changes wait for its end).
    var writing = false
    /// The statements run for every page, once prepared (`Store+HotStatements.swift`).
    var hotStatements = [Statement?](repeating: nil, count: HotStatement.allCases.count)

    /// Opens the store at `path`, creating and migrating it unless `readOnly`.
    ///
    /// A read-only open by a process that may not write the store (an operator's `status` on the coordinator's
    /// store) leaves nothing behind: with no writer around (no `-wal` or `-shm` beside it) it reads the file as
    /// immutable and makes no `-shm`. A `-shm` made by such a reader is its own, and the coordinator could not
    /// write it later: every writer was blocked. A reader that may write the file (its owner, root: SQLite gives
    /// root's `-shm` to the file's owner) opens it normally, so it sees a writer that starts while it reads; an
    /// immutable reader does not, and `status --watch` opens the store again for each frame.
    public init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 10_000) throws {
        self.path = path
        // SQLite would make an empty store here, and a writer would later empty the log.
        if Self.walWithoutStore(at: path) { throw StoreError(Self.walWithoutStoreMessage(path), kind: .notAStore) }
        if readOnly {
            guard FileSystem.exists(path) else {
                throw StoreError("no store at \(path) (submit something first, or give --store)", kind: .notAStore)
            }
            do {
                let quiet = !FileSystem.exists(path + "-wal") && !FileSystem.exists(path + "-shm")
                let immutable = quiet && !FileSystem.isWritable(path)
                connection = try Connection(path: path, mode: immutable ? .immutable : .readOnly,
                                            busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                let version = try connection.userVersion
                if version > Schema.migrations.count {
                    throw StoreError("store \(path) has schema \(version), newer than this ocrfarm knows; upgrade ocrfarm")
                }
                if version == 0 { throw StoreError("\(path) is not an ocrfarm store", kind: .notAStore) }
                try Self.checkOwnership(connection, path: path, version: version)
            } catch let error as SQLiteError {
                throw StoreError(error, path: path)
            }
            return
        }
        // SQLite's own word for these is "unable to open database file": say which folder and why.
        if !FileSystem.exists(path) {
            let folder = FileSystem.directoryName(path)
            if !FileSystem.isDirectory(folder) {
                throw StoreError("cannot make the store \(path): the folder \(folder) does not exist", kind: .cannotCreate)
            }
            if !FileSystem.isWritable(folder) {
                throw StoreError("cannot make the store \(path): the folder \(folder) is not writable", kind: .cannotCreate)
            }
        } else if !FileSystem.isWritable(path) {
            throw StoreError("cannot write the store \(path): the file is not writable (a reading command such as "
                             + "status can still open it)", kind: .cannotCreate)
        }
        do {
            connection = try Connection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            try Self.checkOwnership(connection, path: path, version: try connection.userVersion)
            let mode = try connection.enableWAL(synchronous: "NORMAL")
            guard mode == "wal" else { throw StoreError("store \(path): cannot use write-ahead logging (got \(mode))") }
            try connection.execute("PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32000")
            try Migrator(Schema.migrations).migrate(connection)
            if try connection.applicationID != Self.applicationID { try connection.setApplicationID(Self.applicationID) }
            try backfillSearchIndex()
            try foldDocumentNames()
            openedIdentity = Self.identity(of: path)
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        } catch let error as MigrationError {
            throw StoreError("store \(path): \(error)")
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction; SQLite errors become `StoreError`s naming the store.
    /// Pages made leased or done in it are added to `document_counts` just before its COMMIT.
    public func write<T>(_ body: () throws -> T) throws -> T {
        // A write inside a write fails at its BEGIN: the outer one's count changes stay its own.
        let outer = !writing
        if outer { writing = true }
        defer {
            if outer {
                writing = false
                countChanges.removeAll(keepingCapacity: true)
            }
        }
        do {
            return try connection.transaction(.immediate) {
                let value = try body()
                if outer { try writeCountChanges() }
                return value
            }
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        }
    }

    /// Runs `body` in a read transaction (one consistent snapshot). Inside a transaction already (a read of
    /// `StoreReaders`, a write), `body` runs in that one.
    public func read<T>(_ body: () throws -> T) throws -> T {
        if !connection.isAutocommit { return try body() }
        do {
            return try connection.transaction(.deferred, body)
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        }
    }

    public func integrityCheck() throws -> String {
        do { return try connection.integrityCheck() } catch { throw StoreError(error, path: path) }
    }

    /// A value from the coordinator's key/value table.
    public func setting(_ key: String) throws -> String? {
        try connection.cached("SELECT value FROM coordinator WHERE key = ?").first([.text(key)]) { $0.text(0) }
    }

    public func setSetting(_ key: String, _ value: String) throws {
        try connection.cached("INSERT INTO coordinator (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .execute([.text(key), .text(value)])
    }
}

/// When and how often a page is tried again.
public struct RetryPolicy: Sendable, Equatable {
    /// Tries before a page ends `failed`.
    public var maxAttempts: Int
    /// Wait before the second try; doubles with each further try…
    public var baseDelay: Double
    /// …up to this.
    public var maxDelay: Double
    /// Random spread added to each wait, as a fraction of it, so retried pages do not all return at once.
    public var jitter: Double

    public init(maxAttempts: Int = 3, baseDelay: Double = 1, maxDelay: Double = 300, jitter: Double = 0.5) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
    }

    /// Seconds to wait before try `tries + 1`, after `tries` tries have failed.
    public func delay(afterTries tries: Int) -> Double {
        let exponent = min(max(tries - 1, 0), 30)
        let plain = min(baseDelay * Double(1 << exponent), maxDelay)
        return plain * (1 + Double.random(in: 0...jitter))
    }
}
