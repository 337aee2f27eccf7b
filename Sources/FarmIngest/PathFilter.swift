import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// `--include` and `--exclude`: shell patterns (`*`, `?`, `[...]`, case ignored) that choose the files taken from
/// submitted folders.
///
/// A pattern without a `/` is matched against a file's (or folder's) own name, one with a `/` against its path
/// below the submitted folder (`box17/*.tif`; there `*` also crosses `/`). A file is taken when it matches an
/// include pattern (any file when there are none) and no exclude pattern; a folder that matches an exclude
/// pattern is not walked at all.
public struct PathFilter: Sendable, Equatable {
    public var include: [String]
    public var exclude: [String]

    public init(include: [String] = [], exclude: [String] = []) {
        self.include = include
        self.exclude = exclude
    }

    public var isEmpty: Bool { include.isEmpty && exclude.isEmpty }

    /// Whether a file at `relative` (its path below the submitted folder) is taken.
    public func takes(file relative: [UInt8]) -> Bool {
        if exclude.contains(where: { Self.matches($0, relative) }) { return false }
        return include.isEmpty || include.contains { Self.matches($0, relative) }
    }

    /// Whether the folder at `relative` is left out (not walked).
    public func excludes(folder relative: [UInt8]) -> Bool {
        exclude.contains { Self.matches($0, relative) }
    }

    /// glibc's FNM_CASEFOLD (1 << 4): a GNU extension, so Swift's Glibc module leaves the macro out.
    static let caseFold: Int32 = 1 << 4

    static func matches(_ pattern: String, _ relative: [UInt8]) -> Bool {
        let subject = pattern.contains("/") ? relative : RawPath(bytes: relative).lastComponent
        // fnmatch wants C strings: the path's bytes as they are (they need not be UTF-8), NUL-terminated.
        return (subject + [0]).withUnsafeBufferPointer { path in
            path.baseAddress!.withMemoryRebound(to: CChar.self, capacity: path.count) { name in
                fnmatch(pattern, name, Self.caseFold) == 0
            }
        }
    }
}
