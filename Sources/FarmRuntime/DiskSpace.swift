#if canImport(Glibc)
import Glibc
#endif
import FarmCore

/// The space on the file system that holds a path (statvfs), as an unprivileged process may use it.
public struct DiskSpace: Sendable, Equatable {
    /// Bytes a process without root may still write (`f_bavail`).
    public let available: Int64
    public let total: Int64

    /// Below this the store is called full: one result with its renderings is about 1 MB, and SQLite needs room
    /// for the write-ahead log besides.
    public static let fullBelow: Int64 = 4 << 20

    public init(available: Int64, total: Int64) {
        self.available = available
        self.total = total
    }

    /// The space of the file system holding `path`, or nil if it cannot be asked (no such path).
    public static func of(_ path: String) -> DiskSpace? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        // Saturating: some network and FUSE file systems report sizes that do not fit.
        let unit = Int64(clamping: info.f_frsize)
        return DiskSpace(available: bytes(Int64(clamping: info.f_bavail), unit), total: bytes(Int64(clamping: info.f_blocks), unit))
    }

    private static func bytes(_ blocks: Int64, _ unit: Int64) -> Int64 {
        let (product, overflow) = blocks.multipliedReportingOverflow(by: unit)
        return overflow ? .max : product
    }

    /// Too little space left for the store to take another result.
    public var isFull: Bool { available < Self.fullBelow }

    /// "12.5 MB free of 16.0 MB".
    public var description: String { "\(Format.bytes(Int(available))) free of \(Format.bytes(Int(total)))" }
}
