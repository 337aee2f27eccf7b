import Testing
import SQLite
import TestSupport

@Suite("SQLite online backup")
struct BackupTests {
    let folder = TemporaryDirectory("sqlite-backup")

    func filled(_ name: String, rows: Int) throws -> Connection {
        let db = try Connection(path: folder.file(name))
        #expect(try db.enableWAL() == "wal")
        try db.execute("CREATE TABLE t (i INTEGER PRIMARY KEY, b BLOB) STRICT")
        let insert = try db.prepare("INSERT INTO t (b) VALUES (?)")
        try db.transaction {
            for i in 0..<rows { try insert.execute([.blob([UInt8](repeating: UInt8(i % 251), count: 2000))]) }
        }
        return db
    }

    @Test("a copy in one-page steps holds every row and passes its integrity check")
    func stepwiseCopy() throws {
        let source = try filled("source.db", rows: 300)
        let destination = try Connection(path: folder.file("copy.db"))
        let backup = try Backup(from: source, to: destination)
        var steps = 0
        while try !backup.step(pages: 1) { steps += 1 }
        #expect(backup.remaining == 0)
        #expect(backup.pageCount > 100, "300 rows of 2 kB need more than 100 pages")
        #expect(steps >= backup.pageCount - 1)
        try backup.finish()
        try backup.finish()  // a second finish does nothing
        #expect(throws: SQLiteError.self) { _ = try backup.step(pages: 1) }
        #expect(try destination.integrityCheck() == "ok")
        #expect(try destination.scalarInt("SELECT count(*) FROM t") == 300)
        #expect(try destination.scalarInt("SELECT sum(length(b)) FROM t") == 600_000)
    }

    @Test("writes from another connection between steps: a pinned read transaction keeps one snapshot")
    func writerBetweenSteps() throws {
        let source = try filled("busy.db", rows: 200)
        let writer = try Connection(path: folder.file("busy.db"))
        let insert = try writer.prepare("INSERT INTO t (b) VALUES (?)")

        // Without a read transaction the copy restarts after each write, and ends with the rows of its last start.
        let restarted = try Connection(path: folder.file("restarted.db"))
        let first = try Backup(from: source, to: restarted)
        #expect(try !first.step(pages: 10))
        try insert.execute([.blob([1, 2, 3])])
        while try !first.step(pages: 10) {}
        try first.finish()
        #expect(try restarted.scalarInt("SELECT count(*) FROM t") == 201)

        // With one, the copy is the snapshot taken at its start, and the writer is never blocked.
        let pinned = try Connection(path: folder.file("pinned.db"))
        try source.execute("BEGIN DEFERRED")
        #expect(try source.scalarInt("SELECT count(*) FROM t") == 201)
        let second = try Backup(from: source, to: pinned)
        var writes = 0
        while try !second.step(pages: 10) {
            try insert.execute([.blob([4, 5, 6])])
            writes += 1
        }
        try second.finish()
        try source.execute("COMMIT")
        #expect(writes > 5)
        #expect(try pinned.integrityCheck() == "ok")
        #expect(try pinned.scalarInt("SELECT count(*) FROM t") == 201)
        #expect(try writer.scalarInt("SELECT count(*) FROM t") == Int64(201 + writes))
    }

    @Test("a backup into a read-only connection is refused with the destination named")
    func refusedDestination() throws {
        let source = try filled("src.db", rows: 1)
        _ = try filled("ro.db", rows: 1)
        let readOnly = try Connection(path: folder.file("ro.db"), mode: .readOnly)
        let backup = try Backup(from: source, to: readOnly)
        do {
            _ = try backup.step(pages: -1)
            Issue.record("copying into a read-only database should fail")
        } catch {
            #expect(error.code.primary == .readOnly)
            #expect(error.message.contains("ro.db"))
        }
    }
}
