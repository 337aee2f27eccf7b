import CSQLite

/// An online copy of one database into another with SQLite's backup API. Owns one `sqlite3_backup*`, released
/// with `sqlite3_backup_finish` by `finish()` or in `deinit`; holds both connections until then. Not `Sendable`:
/// used on the thread of its connections.
///
/// Each `step` copies some pages. Between steps other connections may write to the source; SQLite then starts
/// the copy again from the first page, unless the source connection keeps a read transaction open across the
/// steps (in WAL mode that pins one snapshot without blocking writers).
public final class Backup {
    private var handle: OpaquePointer?
    private let source: Connection
    private let destination: Connection

    /// Prepares a copy of `source`'s main database over `destination`'s.
    public init(from source: Connection, to destination: Connection) throws(SQLiteError) {
        guard let handle = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            // The error is left on the destination connection.
            let rc = sqlite3_errcode(destination.handle)
            throw SQLiteError(code: ResultCode(rawValue: rc),
                              message: "cannot start a backup into \(destination.path): \(String(cString: sqlite3_errmsg(destination.handle)))")
        }
        self.handle = handle
        self.source = source
        self.destination = destination
    }

    deinit { if let handle { sqlite3_backup_finish(handle) } }

    /// Copies up to `pages` pages (all that are left when negative). Returns true when the copy is complete,
    /// false when pages remain or a lock held it up (`.busy`, `.locked`): call again.
    public func step(pages: Int32) throws(SQLiteError) -> Bool {
        guard let handle else { throw SQLiteError(code: .misuse, message: "the backup is already finished") }
        let rc = sqlite3_backup_step(handle, pages)
        switch ResultCode(rawValue: rc).primary {
        case .done: return true
        case .ok, .busy, .locked: return false
        default:
            // A failed step is almost always a write into the destination (a full disk): its errno says why.
            throw SQLiteError(rc, on: destination.handle, message: "backup of \(source.path) into \(destination.path) failed: "
                + String(cString: sqlite3_errstr(rc)))
        }
    }

    /// Pages still to copy, as of the last step.
    public var remaining: Int { handle.map { Int(sqlite3_backup_remaining($0)) } ?? 0 }

    /// Pages in the source, as of the last step.
    public var pageCount: Int { handle.map { Int(sqlite3_backup_pagecount($0)) } ?? 0 }

    /// Releases the backup; throws if an earlier step had failed. Later calls do nothing.
    public func finish() throws(SQLiteError) {
        guard let handle else { return }
        self.handle = nil
        let rc = sqlite3_backup_finish(handle)
        guard rc == SQLITE_OK else {
            throw SQLiteError(rc, on: destination.handle, message: "backup into \(destination.path) failed: "
                + String(cString: sqlite3_errmsg(destination.handle)))
        }
    }
}
