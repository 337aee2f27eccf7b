import FarmCore
import SQLite
#if canImport(Glibc)
import Glibc
#endif

/// What `Store.backup(to:)` made.
public struct BackupSummary: Sendable {
    /// The finished copy.
    public var path: String
    /// Database pages copied (of the file, not scanned pages).
    public var databasePages: Int
    /// Backup steps it took.
    public var steps: Int
    /// `PRAGMA integrity_check` of the copy: "ok".
    public var integrity: String
    /// The copy's contents (its report: documents and pages by state).
    public var status: FarmReport
}

extension Store {
    /// Copies the store to `path` with SQLite's backup API while other connections (a running coordinator) keep
    /// writing.
    ///
    /// This connection holds one read transaction for the whole copy, so the copy is one consistent snapshot
    /// and never restarts; in WAL mode that blocks no writer (the log only grows until the copy ends). Pages
    /// are copied `pagesPerStep` at a time into `path` plus a temporary suffix; the copy is switched to a
    /// single-file journal mode, checked with `PRAGMA integrity_check`, and only then renamed to `path`,
    /// replacing what is there (and its `-wal` and `-shm`, which would otherwise be read as part of the copy).
    /// The caller decides whether replacing is allowed.
    public func backup(to path: String, pagesPerStep: Int32 = 1024) throws -> BackupSummary {
        let temporary = path + ".partial-\(getpid())"
        Self.removeCopy(temporary)
        do {
            let (databasePages, steps) = try copy(into: temporary, pagesPerStep: pagesPerStep, naming: path)
            let integrity = try Self.check(temporary, naming: path)
            let status = try Store(path: temporary, readOnly: true).status()
            unlink(path + "-wal")
            unlink(path + "-shm")
            guard rename(temporary, path) == 0 else {
                throw StoreError("backup to \(path): cannot move the copy into place: \(String(cString: strerror(errno)))")
            }
            return BackupSummary(path: path, databasePages: databasePages, steps: steps, integrity: integrity, status: status)
        } catch {
            Self.removeCopy(temporary)
            throw error
        }
    }

    /// Copies this store into `temporary` inside one read transaction; returns the pages copied and steps taken.
    private func copy(into temporary: String, pagesPerStep: Int32, naming path: String) throws(StoreError) -> (Int, Int) {
        do throws(SQLiteError) {
            let destination = try Connection(path: temporary)
            try connection.execute("BEGIN DEFERRED")
            do throws(SQLiteError) {
                // A deferred transaction starts reading at its first statement: pin the snapshot now.
                _ = try connection.scalarInt("SELECT count(*) FROM sqlite_schema")
                let backup = try Backup(from: connection, to: destination)
                var steps = 0
                var lastRemaining = -1
                while true {
                    steps += 1
                    if try backup.step(pages: pagesPerStep) { break }
                    // Held up by a lock (another process's, not our snapshot): wait a little.
                    if backup.remaining == lastRemaining { usleep(10_000) }
                    lastRemaining = backup.remaining
                }
                let pages = backup.pageCount
                try backup.finish()
                try connection.execute("COMMIT")
                return (pages, steps)
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        } catch {
            throw StoreError(error.isDiskFull ? "backup to \(path): the disk is full" : "backup to \(path): \(error.message)",
                             isDiskFull: error.isDiskFull)
        }
    }

    /// Turns the copy into a single file (a backup is copied around on its own) and returns its integrity check.
    private static func check(_ temporary: String, naming path: String) throws(StoreError) -> String {
        let integrity: String
        do throws(SQLiteError) {
            let copy = try Connection(path: temporary, mode: .readWrite)
            _ = try copy.scalarText("PRAGMA journal_mode=DELETE")
            integrity = try copy.integrityCheck()
        } catch {
            throw StoreError("backup to \(path): cannot check the copy: \(error.message)")
        }
        guard integrity == "ok" else { throw StoreError("backup to \(path): the copy failed its integrity check: \(integrity)") }
        return integrity
    }

    private static func removeCopy(_ temporary: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) }
    }
}
