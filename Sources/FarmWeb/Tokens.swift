#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FarmCore
import FarmStore
import SQLite

/// What a token may do: read answers every GET; admin also submits, requeues and deletes.
public enum TokenRole: String, Sendable, CaseIterable {
    case read, admin
}

/// A token as listed: never the token itself, which only its creator saw once.
public struct TokenRecord: Sendable, Equatable {
    public let id: Int
    public let name: String
    public let role: TokenRole
    public let createdAt: Double
    public let revokedAt: Double?
}

/// API tokens in the store's `tokens` table (schema version 9): only each token's SHA-256 is stored, so a copy of
/// the store (a backup) lets no one in. A token is "ocrfarm_" and 64 hex digits of the system's random bytes.
public enum Tokens {
    static let prefix = "ocrfarm_"
    static let schemaVersion = 9

    /// Whether the store has the table (a store written by an older ocrfarm has none: no tokens).
    public static func supported(_ store: Store) throws -> Bool { try store.connection.userVersion >= schemaVersion }

    /// Makes a token and stores its hash; the token is returned once and never again.
    public static func create(in store: Store, role: TokenRole, name: String, now: Double = Clock.now) throws -> (token: String, record: TokenRecord) {
        let random = try randomBytes(32)
        let token = prefix + SHA256.hex(digest: random)
        let id = try store.write { () throws -> Int in
            _ = try store.connection.cached("INSERT INTO tokens (name, role, hash, created_at) VALUES (?, ?, ?, ?)")
                .execute([.text(name), .text(role.rawValue), .text(hash(token)), .real(now)])
            return Int(store.connection.lastInsertRowID)
        }
        return (token, TokenRecord(id: id, name: name, role: role, createdAt: now, revokedAt: nil))
    }

    public static func list(in store: Store) throws -> [TokenRecord] {
        guard try supported(store) else { return [] }
        return try store.connection.cached("SELECT id, name, role, created_at, revoked_at FROM tokens ORDER BY id").rows([]) {
            TokenRecord(id: $0.int(0), name: $0.text(1), role: TokenRole(rawValue: $0.text(2)) ?? .read,
                        createdAt: $0.double(3), revokedAt: $0.optionalDouble(4))
        }
    }

    /// Revokes the tokens with this id or name; how many were revoked now.
    public static func revoke(_ idOrName: String, in store: Store, now: Double = Clock.now) throws -> Int {
        try store.write {
            let id = Int64(idOrName) ?? -1
            return try store.connection.cached("UPDATE tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL")
                .execute([.real(now), .integer(id), .text(idOrName)])
        }
    }

    /// The role of a live (not revoked) token; nil for any other text.
    public static func role(of token: String, in store: Store) throws -> TokenRole? {
        guard token.hasPrefix(prefix), try supported(store) else { return nil }
        return try store.connection.cached("SELECT role FROM tokens WHERE hash = ? AND revoked_at IS NULL")
            .first([.text(hash(token))]) { TokenRole(rawValue: $0.text(0)) } ?? nil
    }

    /// Whether any live token exists (a listen beyond loopback needs one, or --insecure-open).
    public static func anyLive(in store: Store) throws -> Bool {
        guard try supported(store) else { return false }
        return try store.connection.cached("SELECT 1 FROM tokens WHERE revoked_at IS NULL LIMIT 1").first([]) { _ in true } ?? false
    }

    /// Bytes from the kernel's random source.
    static func randomBytes(_ count: Int) throws -> [UInt8] {
        let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError("cannot open /dev/urandom: errno \(errno)") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, count - got) }
            guard read > 0 else { throw StoreError("cannot read /dev/urandom: errno \(errno)") }
            got += read
        }
        return bytes
    }

    static func hash(_ token: String) -> String { SHA256.hex(Array(token.utf8)) }
}
