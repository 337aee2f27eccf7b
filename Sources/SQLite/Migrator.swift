/// One numbered schema change. Versions start at 1 and increase by one.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// Errors of schema migration.
public enum MigrationError: Error, CustomStringConvertible, Equatable {
    /// The database was written by a newer program: its schema is ahead of every migration this one knows.
    case schemaTooNew(found: Int, known: Int)
    /// The migration list itself is malformed (gaps or duplicates).
    case badMigrationList(String)

    public var description: String {
        switch self {
        case .schemaTooNew(let found, let known):
            "the database schema is version \(found), newer than this program knows (\(known)); upgrade the program"
        case .badMigrationList(let reason): "bad migration list: \(reason)"
        }
    }
}

/// Brings a database to the newest schema with numbered migrations, kept in `PRAGMA user_version`.
/// Each migration runs in its own `BEGIN IMMEDIATE` transaction together with the version bump, so a crash
/// leaves the database at one version or the next, never in between.
public struct Migrator: Sendable {
    public let migrations: [Migration]

    public init(_ migrations: [Migration]) throws(MigrationError) {
        for (index, migration) in migrations.enumerated() where migration.version != index + 1 {
            throw .badMigrationList("migration \(migration.name) has version \(migration.version), expected \(index + 1)")
        }
        self.migrations = migrations
    }

    public var latestVersion: Int { migrations.count }

    /// Applies every migration newer than the database's version; returns the versions applied.
    @discardableResult
    public func migrate(_ connection: Connection) throws -> [Int] {
        let current = try connection.userVersion
        if current > latestVersion { throw MigrationError.schemaTooNew(found: current, known: latestVersion) }
        var applied: [Int] = []
        for migration in migrations where migration.version > current {
            try connection.transaction(.immediate) {
                // Another process may have migrated while we waited for the write lock.
                let now = try connection.userVersion
                if now > latestVersion { throw MigrationError.schemaTooNew(found: now, known: latestVersion) }
                guard now < migration.version else { return }
                try connection.execute(migration.sql)
                try connection.execute("PRAGMA user_version = \(migration.version)")
                applied.append(migration.version)
            }
        }
        return applied
    }
}
