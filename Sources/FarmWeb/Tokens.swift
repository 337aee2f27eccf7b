#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FarmCore
import FarmStore

/// API tokens, kept in the store (`Store+Tokens`, schema version 9): only each token's SHA-256 is stored, so a copy of
/// the store (a backup) lets no one in. A token is "ocrfarm_" and 64 hex digits of the system's random bytes.
public enum Tokens {
    static let prefix = "ocrfarm_"

    /// Whether the store has the table (a store written by an older ocrfarm has none: no tokens).
    public static func supported(_ store: Store) throws -> Bool { try store.hasTokens }

    /// Makes a token and stores its hash; the token is returned once and never again.
    public static func create(in store: Store, role: TokenRole, name: String, now: Double = Clock.now) throws -> (token: String, record: TokenRecord) {
        let random = try randomBytes(32)
        let token = prefix + SHA256.hex(digest: random)
        return (token, try store.addToken(name: name, role: role, hash: hash(token), createdAt: now))
    }

    public static func list(in store: Store) throws -> [TokenRecord] { try store.tokens() }

    /// Revokes the tokens with this id or name; how many were revoked now.
    public static func revoke(_ idOrName: String, in store: Store, now: Double = Clock.now) throws -> Int {
        try store.revokeTokens(idOrName, at: now)
    }

    /// The role of a live (not revoked) token; nil for any other text.
    public static func role(of token: String, in store: Store) throws -> TokenRole? {
        guard token.hasPrefix(prefix) else { return nil }
        return try store.tokenRole(hash: hash(token))
    }

    /// Whether any live token exists (a listen beyond loopback needs one, or --insecure-open).
    public static func anyLive(in store: Store) throws -> Bool { try store.hasLiveToken() }

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
