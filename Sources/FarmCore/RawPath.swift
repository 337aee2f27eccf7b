#if canImport(Glibc)
import Glibc
#endif

/// A file path as the operating system has it: bytes, which need not be UTF-8. Archives hold names that are
/// not valid UTF-8; turning them into Swift strings would replace bytes and lose the file.
public struct RawPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }

    /// For people: invalid bytes shown as \xNN, control characters (newlines in names) escaped.
    public var description: String {
        var out = ""
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                switch byte {
                case 0x0A: out += "\\n"
                case 0x09: out += "\\t"
                case 0x0D: out += "\\r"
                case 0x5C: out += "\\\\"
                case 0..<0x20, 0x7F: out += "\\x" + hex(byte)
                default: out.unicodeScalars.append(Unicode.Scalar(byte))
                }
                index += 1
                continue
            }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            if length > 1, index + length <= bytes.count,
               let text = String(validating: bytes[index..<index + length], as: UTF8.self) {
                out += text
                index += length
            } else {
                out += "\\x" + hex(byte)
                index += 1
            }
        }
        return out
    }

    /// The path as a string when it is valid UTF-8.
    public var string: String? { String(validating: bytes, as: UTF8.self) }

    public static func < (a: RawPath, b: RawPath) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    public func appending(_ name: [UInt8]) -> RawPath {
        var result = bytes
        if result.last != UInt8(ascii: "/") { result.append(UInt8(ascii: "/")) }
        result.append(contentsOf: name)
        return RawPath(bytes: result)
    }

    /// The folder that holds this path: "." for a bare name, "/" for a name at the root.
    public var parent: RawPath {
        var end = bytes.endIndex
        while end > bytes.startIndex + 1, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) else { return RawPath(".") }
        return slash == bytes.startIndex ? RawPath("/") : RawPath(bytes: Array(bytes[..<slash]))
    }

    /// This path made absolute against `directory` (itself absolute): unchanged when it starts with "/", else
    /// `directory` + "/" + the path with its leading "./" components dropped.
    public func absolute(in directory: RawPath) -> RawPath {
        if bytes.first == UInt8(ascii: "/") { return self }
        var rest = bytes[...]
        while rest.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) {
            rest = rest.dropFirst(2).drop { $0 == UInt8(ascii: "/") }
        }
        if rest.isEmpty || Array(rest) == [UInt8(ascii: ".")] { return directory }
        return directory.appending(Array(rest))
    }

    /// The process's current directory as raw bytes; nil when it cannot be had (it was removed).
    public static var currentDirectory: RawPath? {
        guard let cwd = getcwd(nil, 0) else { return nil }
        defer { free(cwd) }
        return RawPath(bytes: Array(UnsafeBufferPointer(start: UnsafeRawPointer(cwd).assumingMemoryBound(to: UInt8.self),
                                                        count: strlen(cwd))))
    }

    /// The last component, as bytes.
    public var lastComponent: [UInt8] {
        var end = bytes.count
        while end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        return Array(bytes[start..<end])
    }

    /// Calls `body` with a NUL-terminated C string of the path.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var terminated = bytes.map { CChar(bitPattern: $0) }
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    /// The process's arguments as raw bytes (Swift's `CommandLine.arguments` repairs invalid UTF-8).
    public static var arguments: [RawPath] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return RawPath(bytes: []) }
            return RawPath(bytes: Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                                            count: strlen(pointer))))
        }
    }
}

extension FileSystem {
    /// Reads a whole file named by raw bytes. With `regularOnly`, anything but a regular file (a FIFO, a device,
    /// a socket) is refused with EINVAL without waiting: opening a FIFO for reading would block until a writer came.
    /// `followLinks: false` refuses a symbolic link as the last component (ELOOP): the coordinator reads a page
    /// file so, since a link put where a submitted file was could point at any file it may read.
    /// `along` sees the bytes as they are read (see `readAll`).
    public static func read(_ path: RawPath, limit: Int? = nil, regularOnly: Bool = false, followLinks: Bool = true,
                            along: (UnsafeRawBufferPointer) -> Void = { _ in }) throws(FileError) -> [UInt8] {
        let fd = try openForReading(path, regularOnly: regularOnly, followLinks: followLinks)
        defer { close(fd) }
        return try readAll(fd, path: path.description, limit: limit, along: along)
    }

    /// Opens a file for reading under the rules of `read(_:limit:regularOnly:followLinks:along:)`; the caller
    /// closes the descriptor.
    static func openForReading(_ path: RawPath, regularOnly: Bool, followLinks: Bool) throws(FileError) -> Int32 {
        let flags = O_RDONLY | O_CLOEXEC | (regularOnly ? O_NONBLOCK : 0) | (followLinks ? 0 : O_NOFOLLOW)
        let fd = path.withCString { open($0, flags) }
        guard fd >= 0 else { throw FileError(path: path.description) }
        if regularOnly {
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let error = FileError(path: path.description)
                close(fd)
                throw error
            }
            let kind = info.st_mode & S_IFMT
            if kind != S_IFREG && kind != S_IFDIR {
                close(fd)
                throw FileError(path: path.description, reason: "not a regular file", code: EINVAL)
            }
            // Back to blocking reads (a regular file ignores the flag anyway).
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        }
        return fd
    }

    /// Reads a whole regular file whose last component is not a symbolic link. Opened with `O_NOFOLLOW` (a link
    /// as the file: ELOOP, since a link put where a submitted file was could point at any file this process may
    /// read) and `O_NONBLOCK` (a FIFO never blocks the reader); `fstat` of the opened descriptor then refuses a
    /// FIFO, device or socket (EINVAL) and a directory (EISDIR). Linked folders on the path are followed, as the
    /// path was typed at submit (decision 0088): the caller checks the bytes read against the hash recorded then.
    /// `along` sees the bytes as they are read (see `readAll`).
    public static func readRegularFile(noLinkAt path: RawPath, limit: Int? = nil,
                                       along: (UnsafeRawBufferPointer) -> Void = { _ in }) throws(FileError) -> [UInt8] {
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) }
        guard fd >= 0 else { throw FileError(path: path.description) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path.description) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw FileError(path: path.description, reason: "is a directory", code: EISDIR)
        default: throw FileError(path: path.description, reason: "not a regular file", code: EINVAL)
        }
        // Back to blocking reads (a regular file ignores the flag anyway).
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return try readAll(fd, path: path.description, limit: limit, along: along)
    }

    /// The first `count` bytes of a file (fewer when it is shorter), with `read`'s `regularOnly`.
    public static func readPrefix(_ path: RawPath, count: Int, regularOnly: Bool = false) throws(FileError) -> [UInt8] {
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC | (regularOnly ? O_NONBLOCK : 0)) }
        guard fd >= 0 else { throw FileError(path: path.description) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path.description) }
        let kind = info.st_mode & S_IFMT
        if regularOnly && kind != S_IFREG {
            throw FileError(path: path.description, reason: kind == S_IFDIR ? "is a directory" : "not a regular file",
                            code: kind == S_IFDIR ? EISDIR : EINVAL)
        }
        var readError: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in
            filled = 0
            while filled < count {
                let n = Glibc.pread(fd, buffer.baseAddress! + filled, count - filled, off_t(filled))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { readError = errno; break }
                if n == 0 { break }
                filled += n
            }
        }
        if readError != 0 { throw FileError(path: path.description, code: readError) }
        return bytes
    }

    /// The status of a path named by raw bytes.
    public static func status(_ path: RawPath, followLinks: Bool = true) throws(FileError) -> Status {
        var info = stat()
        let rc = path.withCString { followLinks ? stat($0, &info) : lstat($0, &info) }
        guard rc == 0 else { throw FileError(path: path.description) }
        return Status(info)
    }

    /// The entries of a directory as raw names (without "." and ".."), unsorted.
    public static func entries(_ path: RawPath) throws(FileError) -> [[UInt8]] {
        guard let directory = path.withCString({ opendir($0) }) else { throw FileError(path: path.description) }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return names
    }

    /// The absolute, symlink-free form of an existing path.
    public static func canonicalPath(_ path: RawPath) -> RawPath? {
        guard let resolved = path.withCString({ realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return RawPath(bytes: Array(UnsafeBufferPointer(start: UnsafeRawPointer(resolved).assumingMemoryBound(to: UInt8.self),
                                                        count: strlen(resolved))))
    }
}
