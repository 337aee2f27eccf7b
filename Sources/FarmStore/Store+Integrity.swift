import FarmCore
import FarmRuntime
import SQLite

extension Store {
    /// "OCRF" in ASCII: every ocrfarm store carries it as SQLite's `application_id` (the file header's offset
    /// 68), so ocrfarm knows its own files and refuses to add its tables to another program's database.
    public static let applicationID: Int32 = 0x4F43_5246

    static let damagedAdvice = "restore it from a backup (ocrfarm backup makes one; see docs/operations.md)"

    static func walWithoutStoreMessage(_ path: String) -> String {
        "store \(path) is missing but its write-ahead log \(path)-wal is there: the store was moved or deleted while "
            + "in use, and the log may hold its last results; put the store back (or move the -wal and -shm files "
            + "away to start a new store)"
    }

    /// Refuses a file that is neither empty nor an ocrfarm store. Stores made before the application id was set
    /// are known by their schema version and their tables; opening one for writing marks it.
    static func checkOwnership(_ connection: Connection, path: String, version: Int) throws {
        let id = try connection.applicationID
        if id == applicationID { return }
        if id != 0 {
            let hex = String(UInt32(bitPattern: id), radix: 16)
            throw StoreError("\(path) is another program's SQLite database (application_id 0x\(hex)), not an ocrfarm store; "
                + "give another --store", kind: .notAStore)
        }
        let tables = try connection.tableNames()
        if tables.isEmpty && version == 0 { return }   // a new (empty) file: it becomes a store
        if version > 0 && tables.contains("documents") && tables.contains("pages") { return }
        let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
        throw StoreError("\(path) is not an ocrfarm store: it is a SQLite database with other tables (\(shown)); "
            + "ocrfarm does not add its tables to another program's file; give another --store", kind: .notAStore)
    }

    /// The store file's device and inode now, nil when nothing is at the path.
    static func identity(of path: String) -> FileSystem.Identity? {
        (try? FileSystem.status(RawPath(path)))?.identity
    }

    /// A write-ahead log with something in it beside a store file that is missing: the store was moved or
    /// deleted while in use, and the log may hold its last results.
    static func walWithoutStore(at path: String) -> Bool {
        !FileSystem.exists(path) && ((try? FileSystem.status(RawPath(path + "-wal")))?.size ?? 0) > 0
    }

    /// Why the file this store has open is no longer the file at its path (deleted, or moved and maybe replaced),
    /// nil while it still is. A coordinator asks every few seconds: it would otherwise go on logging "page done"
    /// into a file nobody will open again, and a later `submit` at the path would make a new store.
    public func fileGone() -> String? {
        guard let opened = openedIdentity else { return nil }
        guard let now = Self.identity(of: path) else {
            return "store \(path) was deleted or moved while in use: nothing is at that path now"
        }
        return now == opened ? nil : "store \(path) was replaced while in use: the file at that path is not the one opened"
    }

    /// Copies everything in the write-ahead log into the store file and empties the log. A coordinator does this when
    /// its store was moved: SQLite writes through the descriptor it holds, so the results reach the moved file,
    /// while on close it would leave them in the `-wal` under the old name (it will not checkpoint a renamed file).
    public func checkpoint() throws {
        do { try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") } catch { throw StoreError(error, path: path) }
    }

    /// `PRAGMA quick_check`: throws a `.damaged` StoreError naming the first problems unless the store is sound.
    /// It reads the whole file (a few seconds per GB), so it runs when a coordinator starts and on `health --store`,
    /// not on every command.
    public func checkSound() throws {
        let problems: [String]
        do {
            // The check reads every page of the file through this connection's cache: with the working size
            // (32 MB) it would fill it with pages no query wants, and a coordinator on a million-page store would
            // start 37 MB larger (Scripts/bench/memory). A small cache for the check, emptied after it.
            let cache = try connection.scalarInt("PRAGMA cache_size") ?? -2000
            try connection.execute("PRAGMA cache_size = -1024")
            defer { try? connection.execute("PRAGMA cache_size = \(cache); PRAGMA shrink_memory") }
            problems = try connection.quickCheck(limit: 5)
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        }
        guard problems != ["ok"] else { return }
        throw StoreError("store \(path) is damaged (quick_check: \(problems.joined(separator: "; "))); " + Self.damagedAdvice,
                         kind: .damaged)
    }
}
