#if canImport(Glibc)
import Glibc
#endif
import FarmCore

/// A file-system error: the path and the system's reason.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public let code: Int32

    public init(path: String, code: Int32 = errno) {
        self.path = path
        self.code = code
        self.reason = String(cString: strerror(code))
    }

    public init(path: String, reason: String, code: Int32 = 0) {
        self.path = path
        self.reason = reason
        self.code = code
    }

    public var description: String { "\(path): \(reason)" }
}

/// Small, explicit file-system operations on paths (no Foundation).
public enum FileSystem {
    public enum Kind: Sendable, Equatable { case file, directory, symlink, other }

    /// A file by device and inode: the same file whatever its name.
    public struct Identity: Sendable, Hashable {
        public let device: UInt64
        public let inode: UInt64
    }

    public struct Status: Sendable, Equatable {
        public let kind: Kind
        public let size: Int64
        public let modified: Double
        public let device: UInt64
        public let inode: UInt64
        public var identity: Identity { Identity(device: device, inode: inode) }

        init(_ info: stat) {
            switch info.st_mode & S_IFMT {
            case S_IFREG: kind = .file
            case S_IFDIR: kind = .directory
            case S_IFLNK: kind = .symlink
            default: kind = .other
            }
            size = Int64(info.st_size)
            modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// The status of `path`, following symlinks unless `followLinks` is false.
    public static func status(_ path: String, followLinks: Bool = true) throws(FileError) -> Status {
        var info = stat()
        let rc = followLinks ? stat(path, &info) : lstat(path, &info)
        guard rc == 0 else { throw FileError(path: path) }
        return Status(info)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// True when `path` names a terminal (/dev/tty, /dev/stdout on a terminal, /dev/pts/N): opened without
    /// blocking and without becoming the process's controlling terminal, asked, closed.
    public static func isTerminal(_ path: String) -> Bool {
        guard (try? status(path))?.kind == .other else { return false }
        let fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return isatty(fd) == 1
    }

    /// This process may write the file at `path` (by its permissions; root may write any file).
    public static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool { (try? status(path).kind) == .directory }

    /// The whole file. `limit` refuses files larger than that many bytes; `along` sees the bytes as they are read
    /// (see `readAll`).
    public static func read(_ path: String, limit: Int? = nil,
                            along: (UnsafeRawBufferPointer) -> Void = { _ in }) throws(FileError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path) }
        defer { close(fd) }
        return try readAll(fd, path: path, limit: limit, along: along)
    }

    /// Reads everything from `fd`: one allocation of the size fstat reports, filled by read() directly, then more
    /// only if the file grew. `path` is built only for an error message. `along` is called with every stretch of
    /// the result, in order, each once (a content hash computed as the file is read).
    static func readAll(_ fd: Int32, path: @autoclosure () -> String, limit: Int?,
                        along: (UnsafeRawBufferPointer) -> Void = { _ in }) throws(FileError) -> [UInt8] {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path()) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw FileError(path: path(), reason: "is a directory", code: EISDIR) }
        if let limit, info.st_size > limit {
            throw FileError(path: path(), reason: "file is \(info.st_size) bytes, over the limit of \(limit)", code: EFBIG)
        }
        // Plus one byte to see the end.
        let capacity = max(Int(info.st_size), 0) + 1
        var readError: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            (count, readError) = fill(fd, buffer.baseAddress!, capacity: capacity)
        }
        if readError != 0 { throw FileError(path: path(), code: readError) }
        bytes.withUnsafeBytes { along($0) }
        guard bytes.count == capacity else { return bytes }
        // The file grew while we read it: take the rest in chunks.
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path())
            }
            if count == 0 { break }
            chunk.withUnsafeBytes { along(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            bytes.append(contentsOf: chunk[..<count])
            if let limit, bytes.count > limit {
                throw FileError(path: path(), reason: "file is over the limit of \(limit) bytes", code: EFBIG)
            }
        }
        return bytes
    }

    /// Reads into `base` until `capacity` bytes, the end of the file or an error: (bytes read, errno or 0).
    static func fill(_ fd: Int32, _ base: UnsafeMutableRawPointer, capacity: Int) -> (Int, Int32) {
        var count = 0
        while count < capacity {
            let n = Glibc.read(fd, base + count, capacity - count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return (count, errno) }
            if n == 0 { break }
            count += n
        }
        return (count, 0)
    }

    /// A file read once from start to end by `read(_:head:keepingAll:along:)`.
    public struct Scan: Sendable {
        /// The whole file, or only its first bytes when the rest was not kept.
        public let bytes: [UInt8]
        /// The file's size: every byte `along` saw.
        public let size: Int
        /// `bytes` is the whole file.
        public var isWhole: Bool { bytes.count == size }
    }

    /// Reads a file once, handing every byte to `along` in order, and keeps it whole only when `keepingAll` says
    /// so of its first `head` bytes (or it is no longer than that). Otherwise the rest goes through one reused
    /// 256 KB buffer (small enough to stay in cache for the hash): a 200 MB file then costs neither 200 MB of
    /// memory nor the 51,200 page faults of filling it, which cost about as much CPU as hashing it. The file is
    /// read, never mapped: a mapping of a file that another process truncates raises SIGBUS on access, and a
    /// submitted file may be changing.
    /// `regularOnly` and `followLinks` as for `read(_:limit:regularOnly:followLinks:along:)`.
    public static func read(_ path: RawPath, head: Int = 1 << 16, regularOnly: Bool = false, followLinks: Bool = true,
                            keepingAll: ([UInt8]) -> Bool,
                            along: (UnsafeRawBufferPointer) -> Void) throws(FileError) -> Scan {
        let fd = try openForReading(path, regularOnly: regularOnly, followLinks: followLinks)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path.description) }
        // Most files are smaller than the head: read whole at once, as `read` would.
        if Int(info.st_size) < head {
            let bytes = try readAll(fd, path: path.description, limit: nil, along: along)
            return Scan(bytes: bytes, size: bytes.count)
        }
        // A look at the head that leaves the file offset at 0 (pread), so either way below reads from the start.
        var readError: Int32 = 0
        let first = [UInt8](unsafeUninitializedCapacity: head) { buffer, count in
            while count < head {
                let n = pread(fd, buffer.baseAddress! + count, head - count, off_t(count))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { readError = errno; break }
                if n == 0 { break }
                count += n
            }
        }
        if readError != 0 { throw FileError(path: path.description, code: readError) }
        if first.count < head || keepingAll(first) {
            let bytes = try readAll(fd, path: path.description, limit: nil, along: along)
            return Scan(bytes: bytes, size: bytes.count)
        }
        var kept: [UInt8] = []
        kept.reserveCapacity(head)
        var size = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let (count, error) = fill(fd, buffer.baseAddress!, capacity: buffer.count)
            if error != 0 { throw FileError(path: path.description, code: error) }
            if count == 0 { break }
            let stretch = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            // The head kept is the one this pass read (the file may have changed since the look).
            if kept.count < head { kept += stretch.prefix(head - kept.count) }
            along(stretch)
            size += count
            if count < buffer.count { break }
        }
        return Scan(bytes: kept, size: size)
    }

    public static func readText(_ path: String) throws(FileError) -> String {
        String(decoding: try read(path), as: UTF8.self)
    }

    /// Writes `bytes` to `path` through a temporary file and a rename, so readers never see half a file.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(FileError) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FileError(path: path) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let error = FileError(path: path)
                close(fd)
                unlink(temporary)
                throw error
            }
            offset += written
        }
        guard close(fd) == 0 else {
            let error = FileError(path: path)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = FileError(path: path)
            unlink(temporary)
            throw error
        }
    }

    public static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws(FileError) {
        try write(Array(text.utf8), to: path, mode: mode)
    }

    /// Creates `path` and any missing parents.
    public static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws(FileError) {
        if isDirectory(path) { return }
        let parent = directoryName(path)
        if parent != path && !parent.isEmpty && parent != "." && parent != "/" { try makeDirectory(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST { throw FileError(path: path) }
    }

    /// A new private directory under `$TMPDIR` (or /tmp).
    public static func makeTemporaryDirectory(prefix: String = "ocrfarm") throws(FileError) -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        let result: String? = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let result else { throw FileError(path: base) }
        return result
    }

    /// Removes a file, or a directory and everything in it. Symlinks are removed, never followed.
    public static func remove(_ path: String) { remove(RawPath(path)) }

    /// Removes a file, or a directory and everything in it, by the names' bytes: a name that is not UTF-8 is
    /// removed too (as a string it would be read with replacement characters, and name nothing).
    public static func remove(_ path: RawPath) {
        guard let info = try? status(path, followLinks: false) else { return }
        if info.kind == .directory {
            for name in (try? entries(path)) ?? [] { remove(path.appending(name)) }
            _ = path.withCString { rmdir($0) }
        } else {
            _ = path.withCString { unlink($0) }
        }
    }

    /// Removes `path` only if it is an empty directory; true when it did.
    @discardableResult
    public static func removeEmptyDirectory(_ path: RawPath) -> Bool { path.withCString { rmdir($0) } == 0 }

    /// The names in a directory (without "." and ".."), unsorted.
    public static func entries(_ path: String) throws(FileError) -> [String] {
        guard let directory = opendir(path) else { throw FileError(path: path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = String(decoding: entryName(entry), as: UTF8.self)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The folder part of a path ("a/b/c.png" → "a/b"; "c.png" → ".").
    public static func directoryName(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    /// `name` in the folder `folder`, with one slash between them whatever `folder` ends with ("out/" and
    /// "out" + "quality.csv" → "out/quality.csv", "/" + "x" → "/x"): paths people see are printed as typed.
    public static func joined(_ folder: String, _ name: String) -> String {
        var trimmed = Substring(folder)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed == "/" ? "/" + name : trimmed + "/" + name
    }

    /// The last component of a path ("a/b/c.png" → "c.png").
    public static func baseName(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// The absolute, symlink-free form of an existing path.
    public static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The current directory.
    public static var currentDirectory: String {
        guard let cwd = getcwd(nil, 0) else { return "." }
        defer { free(cwd) }
        return String(cString: cwd)
    }

    /// The path of the running executable.
    public static var executablePath: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments.first ?? "ocrfarm" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
