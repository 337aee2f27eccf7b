import Testing
import SQLite
import TestSupport

@Suite("SQLite migrations")
struct MigratorTests {
    let folder = TemporaryDirectory("migrations")

    let migrations = [
        Migration(version: 1, name: "pages", sql: "CREATE TABLE pages (id INTEGER PRIMARY KEY, state TEXT NOT NULL) STRICT"),
        Migration(version: 2, name: "page-priority", sql: "ALTER TABLE pages ADD COLUMN priority INTEGER NOT NULL DEFAULT 0"),
    ]

    @Test("applies numbered migrations once, in order")
    func appliesInOrder() throws {
        let db = try Connection(path: folder.file("m.db"))
        let migrator = try Migrator(migrations)
        #expect(try migrator.migrate(db) == [1, 2])
        #expect(try db.userVersion == 2)
        #expect(try migrator.migrate(db) == [])
        try db.execute("INSERT INTO pages (state, priority) VALUES ('queued', 5)")

        let onlyFirst = try Migrator(Array(migrations.prefix(1)))
        let fresh = try Connection(path: folder.file("n.db"))
        #expect(try onlyFirst.migrate(fresh) == [1])
        #expect(try migrator.migrate(fresh) == [2])
    }

    @Test("refuses a database whose schema is newer than the program")
    func refusesNewerSchema() throws {
        let db = try Connection(path: folder.file("new.db"))
        try db.execute("PRAGMA user_version = 7")
        do {
            try Migrator(migrations).migrate(db)
            Issue.record("newer schema should be refused")
        } catch let error as MigrationError {
            #expect(error == .schemaTooNew(found: 7, known: 2))
            #expect(error.description.contains("upgrade"))
        }
    }

    @Test("a failing migration leaves the database at the previous version")
    func failedMigrationRollsBack() throws {
        let db = try Connection(path: folder.file("fail.db"))
        let broken = try Migrator(migrations + [Migration(version: 3, name: "broken", sql: "CREATE TABLE x (a); SELEC oops")])
        #expect(throws: SQLiteError.self) { try broken.migrate(db) }
        #expect(try db.userVersion == 2)
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'x'") == 0)
    }

    @Test("a migration list with a gap is rejected")
    func rejectsGaps() {
        #expect(throws: MigrationError.self) {
            try Migrator([Migration(version: 1, name: "a", sql: ""), Migration(version: 3, name: "c", sql: "")])
        }
    }
}
