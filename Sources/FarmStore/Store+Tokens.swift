import FarmCore
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

/// API tokens in the `tokens` table (schema version 9), by the SHA-256 of each token (FarmWeb's `Tokens` makes the
/// tokens and their hashes; the store never sees a token).
extension Store {
    /// Whether the store has the table (a store written by an older ocrfarm has none: no tokens).
    public var hasTokens: Bool { get throws { try connection.userVersion >= 9 } }

    /// Stores a new token's hash, in a transaction of its own; the record as listed.
    public func addToken(name: String, role: TokenRole, hash: String, createdAt: Double) throws -> TokenRecord {
        let id = try write { () throws -> Int in
            _ = try connection.cached("INSERT INTO tokens (name, role, hash, created_at) VALUES (?, ?, ?, ?)")
                .execute([.text(name), .text(role.rawValue), .text(hash), .real(createdAt)])
            return Int(connection.lastInsertRowID)
        }
        return TokenRecord(id: id, name: name, role: role, createdAt: createdAt, revokedAt: nil)
    }

    /// Every token, revoked or not, in id order; none on a store older than the table.
    public func tokens() throws -> [TokenRecord] {
        guard try hasTokens else { return [] }
        return try connection.cached("SELECT id, name, role, created_at, revoked_at FROM tokens ORDER BY id").rows([]) {
            TokenRecord(id: $0.int(0), name: $0.text(1), role: TokenRole(rawValue: $0.text(2)) ?? .read,
                        createdAt: $0.double(3), revokedAt: $0.optionalDouble(4))
        }
    }

    /// Revokes the live tokens with this id or name; how many were revoked now.
    public func revokeTokens(_ idOrName: String, at now: Double) throws -> Int {
        try write {
            let id = Int64(idOrName) ?? -1
            return try connection.cached("UPDATE tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL")
                .execute([.real(now), .integer(id), .text(idOrName)])
        }
    }

    /// The role of the live (not revoked) token with this hash; nil for none (or a role this ocrfarm does not know).
    public func tokenRole(hash: String) throws -> TokenRole? {
        guard try hasTokens else { return nil }
        return try connection.cached("SELECT role FROM tokens WHERE hash = ? AND revoked_at IS NULL")
            .first([.text(hash)]) { TokenRole(rawValue: $0.text(0)) } ?? nil
    }

    /// Whether any live token exists.
    public func hasLiveToken() throws -> Bool {
        guard try hasTokens else { return false }
        return try connection.cached("SELECT 1 FROM tokens WHERE revoked_at IS NULL LIMIT 1").first([]) { _ in true } ?? false
    }
}
