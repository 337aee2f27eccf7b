#if canImport(Glibc)
import Glibc
#endif
import FarmCore

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
            let name = entryName(entry)
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return names
    }

    /// A directory entry's name, read up to its NUL in place. `d_name` is declared 256 bytes, but a record is only as
    /// long as its name: copying the whole field (`entry.pointee.d_name`) reads past the end of readdir's buffer when
    /// the record is its last (AddressSanitizer: heap-buffer-overflow in a folder of 6,000 files).
    static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        let field = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return Array(UnsafeRawBufferPointer(start: field, count: strlen(field.assumingMemoryBound(to: CChar.self))))
    }

    /// The absolute, symlink-free form of an existing path.
    public static func canonicalPath(_ path: RawPath) -> RawPath? {
        guard let resolved = path.withCString({ realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return RawPath(bytes: Array(UnsafeBufferPointer(start: UnsafeRawPointer(resolved).assumingMemoryBound(to: UInt8.self),
                                                        count: strlen(resolved))))
    }
}
