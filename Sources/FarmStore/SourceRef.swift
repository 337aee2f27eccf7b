import Crypto
import FarmCore
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// A page's source file as the store knows it: its path, what kind of file, which page or frame of it (from 0), and
/// the size and SHA-256 (hex) it had when it was submitted (nil for pages submitted before they were recorded).
/// `read(limit:)` is the one way any part of the farm reads a page's file (decision 0088).
public struct SourceRef: Sendable, Equatable {
    public let path: RawPath
    public let index: Int
    public let kind: SourceKind
    /// SHA-256 (hex) of the file as submitted.
    public let hash: String?
    public let size: Int?

    public init(path: RawPath, index: Int = 0, kind: SourceKind = .image, hash: String?, size: Int?) {
        self.path = path
        self.index = index
        self.kind = kind
        self.hash = hash
        self.size = size
    }
}

/// A page's file as read and checked: its bytes, their SHA-256 (hex), and whether the store had no hash to check
/// them against (an old store: the caller records `sha256` through `Store.recordSourceHash`).
public struct SourceBytes: Sendable {
    public var bytes: [UInt8]
    public let sha256: String
    public let unchecked: Bool
}

/// Why a page's file was not read. `message` names the file and the reason.
public struct SourceError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        /// The file is a symbolic link now.
        case link
        /// Not a regular file: a FIFO, a device, a socket, a directory.
        case notRegular
        /// Nothing there.
        case missing
        /// Larger than the reader's limit.
        case tooLarge
        /// Another size or SHA-256 than the store recorded.
        case changed
        /// Anything else (permissions, I/O); `retryable` when it may pass.
        case unreadable(retryable: Bool)
    }

    public let path: RawPath
    public let problem: Problem
    public let message: String

    public var description: String { message }
}

extension SourceRef {
    /// Reads the file once and checks it before any byte is used: not a symbolic link (`O_NOFOLLOW` on the file: a
    /// link put where a submitted file was could point at any file this process may read, a CURVE secret key;
    /// linked folders on the path are followed as at submit, and a folder swapped for a link to other content
    /// fails the hash), a regular file (`fstat` on the opened descriptor: a FIFO would block the reader until a
    /// writer came), at most `limit` bytes, and the size and SHA-256 recorded at submit. A hard link is the same
    /// file and passes. Without a recorded hash the bytes are returned `unchecked`, with their hash for the caller
    /// to record.
    public func read(limit: Int) throws(SourceError) -> SourceBytes {
        let hasher = SHA256.Hasher()
        let bytes: [UInt8]
        do throws(FileError) {
            bytes = try FileSystem.readRegularFile(noLinkAt: path, limit: limit) { hasher.update($0) }
        } catch {
            throw Self.failure(error, path: path, limit: limit)
        }
        let actual = SHA256.hex(digest: hasher.finish())
        guard let expected = hash else { return SourceBytes(bytes: bytes, sha256: actual, unchecked: true) }
        let then = size ?? bytes.count
        guard then != bytes.count || actual != expected else { return SourceBytes(bytes: bytes, sha256: actual, unchecked: false) }
        let now = then == bytes.count ? "sha256 \(actual)" : "\(bytes.count) bytes"
        throw SourceError(path: path, problem: .changed,
                          message: "\(path): changed since it was submitted (sha256 \(expected), \(then) bytes then; \(now) now)")
    }

    static func failure(_ error: FileError, path: RawPath, limit: Int) -> SourceError {
        switch error.code {
        case ELOOP:
            return SourceError(path: path, problem: .link,
                               message: "\(path): is a symbolic link now (it was a file when submitted); not read")
        case ENOENT:
            return SourceError(path: path, problem: .missing, message: "\(path): the file no longer exists")
        case EFBIG:
            return SourceError(path: path, problem: .tooLarge,
                               message: "\(path): the file is larger than the \(limit / (1 << 20)) MB a page's file may be")
        case EINVAL, EISDIR:
            return SourceError(path: path, problem: .notRegular,
                               message: "\(path): \(error.code == EISDIR ? "is a directory" : "not a regular file (a FIFO, a device or a socket)"); not read")
        case EACCES, ENOTDIR:
            return SourceError(path: path, problem: .unreadable(retryable: false), message: error.description)
        default:
            return SourceError(path: path, problem: .unreadable(retryable: true), message: error.description)
        }
    }
}

extension Store {
    /// Records the SHA-256 and size a page's file had when it was first read, for every page of that file that has
    /// none (a store from before hashes were recorded): from then on every read checks them.
    public func recordSourceHash(of source: SourceRef, read: SourceBytes) throws {
        try connection.cached("""
            UPDATE pages SET source_hash = ?, source_size = ? WHERE source_path = ? AND source_hash IS NULL
            """).execute([.text(read.sha256), .integer(Int64(read.bytes.count)), .blob(source.path.bytes)])
    }
}
