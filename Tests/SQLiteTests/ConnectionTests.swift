import Testing
#if canImport(Glibc)
import Glibc
#endif
import SQLite
import TestSupport

@Suite("SQLite connection and statements")
struct ConnectionTests {
    let folder = TemporaryDirectory("sqlite-test")

    @Test("WAL mode, STRICT tables and typed binding round-trip every type")
    func typedRoundTrip() throws {
        let db = try Connection(path: folder.file("a.db"))
        #expect(try db.enableWAL() == "wal")
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT) STRICT")
        let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
        try insert.execute([.integer(Int64.max), .real(2.5), .text("héllo 世界"), .blob([0, 1, 255]), .null])
        try insert.execute([.integer(-7), .real(-0.125), .text(""), .blob([]), .text("x")])
        #expect(db.lastInsertRowID == 2)

        let rows = try db.prepare("SELECT i, r, s, b, n FROM t ORDER BY rowid").rows { row in
            (row.int64(0), row.double(1), row.text(2), row.blob(3), row.optionalText(4))
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == Int64.max)
        #expect(rows[0].1 == 2.5)
        #expect(rows[0].2 == "héllo 世界")
        #expect(rows[0].3 == [0, 1, 255])
        #expect(rows[0].4 == nil)
        #expect(rows[1].0 == -7)
        #expect(rows[1].3 == [])
        #expect(rows[1].4 == "x")
    }

    @Test("a full disk is told by the code or the OS's errno, not by the message's words")
    func diskFull() {
        #expect(SQLiteError(code: .full, message: "database or disk is full").isDiskFull)
        #expect(SQLiteError(code: ResultCode(rawValue: 4874), message: "disk I/O error", systemErrno: ENOSPC).isDiskFull)
        #expect(SQLiteError(code: .ioError, message: "disk I/O error", systemErrno: EDQUOT).isDiskFull)
        // A failing disk is not a full one, although SQLite's message says "disk" for both.
        #expect(!SQLiteError(code: .ioError, message: "disk I/O error", systemErrno: EIO).isDiskFull)
        #expect(!SQLiteError(code: .readOnly, message: "attempt to write a readonly database").isDiskFull)
    }

    @Test("STRICT tables reject a value of the wrong type, and the error carries the code and the SQL")
    func errorsCarryCodeAndSQL() throws {
        let db = try Connection(path: folder.file("b.db"))
        try db.execute("CREATE TABLE t (i INTEGER NOT NULL UNIQUE) STRICT")
        try db.prepare("INSERT INTO t VALUES (?)").execute([.integer(1)])
        do {
            try db.prepare("INSERT INTO t VALUES (?)").execute([.integer(1)])
            Issue.record("duplicate should fail")
        } catch {
            #expect(error.code.primary == .constraint)
            #expect(error.sql == "INSERT INTO t VALUES (?)")
            #expect(error.message.contains("UNIQUE"))
        }
        #expect(throws: SQLiteError.self) { try db.prepare("INSERT INTO t VALUES (?)").execute([.text("not a number")]) }
        do {
            _ = try db.prepare("SELEC nonsense")
            Issue.record("bad SQL should fail")
        } catch {
            #expect(error.code.primary == .error)
            #expect(error.description.contains("SELEC nonsense"))
        }
    }

    @Test("cached statements are reused and come back reset")
    func cachedStatements() throws {
        let db = try Connection(path: folder.file("c.db"))
        try db.execute("CREATE TABLE t (v INTEGER)")
        for value in 1...5 {
            try db.cached("INSERT INTO t VALUES (?)").execute([.integer(Int64(value))])
        }
        let first = try db.cached("SELECT sum(v) FROM t")
        #expect(try first.step())
        #expect(first.int(0) == 15)
        let again = try db.cached("SELECT sum(v) FROM t")
        #expect(first === again)
        #expect(try again.step())
        #expect(again.int(0) == 15)
    }

    @Test("a transaction commits on return and rolls back on a throw")
    func transactions() throws {
        let db = try Connection(path: folder.file("d.db"))
        try db.execute("CREATE TABLE t (v INTEGER)")
        try db.transaction { try db.execute("INSERT INTO t VALUES (1)") }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Abort()
            }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 1)
        #expect(db.isAutocommit)
    }

    @Test("BEGIN IMMEDIATE takes the write lock: a second writer gets BUSY after its timeout")
    func immediateLocks() throws {
        let path = folder.file("e.db")
        let a = try Connection(path: path, busyTimeoutMilliseconds: 50)
        try a.enableWAL()
        try a.execute("CREATE TABLE t (v INTEGER)")
        let b = try Connection(path: path, busyTimeoutMilliseconds: 50)
        try a.execute("BEGIN IMMEDIATE")
        do {
            try b.execute("BEGIN IMMEDIATE")
            Issue.record("second writer should be busy")
        } catch {
            #expect(error.code.primary == .busy)
        }
        // Readers are not blocked by the writer in WAL mode.
        #expect(try b.scalarInt("SELECT count(*) FROM t") == 0)
        try a.execute("COMMIT")
        try b.execute("BEGIN IMMEDIATE")
        try b.execute("COMMIT")
    }

    @Test("a read-only connection reads but cannot write")
    func readOnly() throws {
        let path = folder.file("f.db")
        let writer = try Connection(path: path)
        try writer.execute("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (42)")
        let reader = try Connection(path: path, mode: .readOnly)
        #expect(try reader.scalarInt("SELECT v FROM t") == 42)
        do {
            try reader.execute("INSERT INTO t VALUES (1)")
            Issue.record("write through a read-only connection should fail")
        } catch {
            #expect(error.code.primary == .readOnly)
        }
        #expect(throws: SQLiteError.self) { _ = try Connection(path: folder.file("missing.db"), mode: .readOnly) }
        #expect(try writer.integrityCheck() == "ok")
    }

    @Test("a file that is not a database is refused with NOTADB")
    func notADatabase() throws {
        let path = folder.write("junk.db", text: String(repeating: "this is not sqlite ", count: 100))
        let db = try Connection(path: path)
        do {
            _ = try db.scalarInt("SELECT count(*) FROM sqlite_master")
            Issue.record("junk should not read")
        } catch {
            #expect(error.code.primary == .notADatabase)
        }
    }
}
