import FarmCore
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// A folder tree watched with inotify, and the files in it that are complete: written and closed (or moved in)
/// and then left alone for a quiet period, with the same size and modification time at the end of it.
///
/// inotify's IN_CLOSE_WRITE alone is not enough: tools that copy in parts close and reopen the file, and a file
/// found by the start-up scan may still be being written. So every event on a file (created, modified, closed,
/// moved in) restarts its quiet period, a file created or modified is not taken until it is closed, and a file is
/// taken only when a last look finds its size and time unchanged since the last event.
public final class WatchFolder {
    public let root: RawPath
    /// How long a file must be left alone before it is taken, in milliseconds.
    public let quietMilliseconds: Int64
    /// A folder below `root` not to watch (the done folder, when it is inside the watched one).
    private let skipFolder: RawPath?
    /// The inotify descriptor: owned here, closed in deinit.
    private let descriptor: Int32
    /// Watched folders by watch descriptor: their path below `root` (empty for `root`).
    private var folders: [Int32: [UInt8]] = [:]
    private struct Pending {
        var lastEvent: Int64
        var size: Int64
        var modified: Double
        /// Created or modified and not closed since: a writer has it open.
        var open: Bool
    }
    /// Files seen and not yet taken, by path below `root`.
    private var pending: [[UInt8]: Pending] = [:]
    /// Editors' and downloaders' temporary files left out since the start (each path once, however many events).
    private var ignored = Set<[UInt8]>()
    public var temporaryIgnored: Int { ignored.count }
    /// Entries that are not regular files (a symbolic link, a FIFO, a socket, a device) left out since the start,
    /// each path once; `takeRefused` hands over the ones not yet said.
    private var refused = Set<[UInt8]>()
    private var refusedUnsaid: [(path: [UInt8], reason: String)] = []
    public var refusedCount: Int { refused.count }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Starts watching `root` and every folder below it; the files already there are pending (taken after the quiet
    /// period like new ones, so a copy in progress when the watch starts is not read half-written).
    public init(root: RawPath, quietMilliseconds: Int64, skipFolder: RawPath? = nil) throws(Failure) {
        self.root = root
        self.quietMilliseconds = quietMilliseconds
        self.skipFolder = skipFolder.flatMap { FileSystem.canonicalPath($0) }
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw Failure(description: "cannot watch folders: \(String(cString: strerror(errno)))") }
        guard FileSystem.isDirectory(root.description) else {
            close(descriptor)
            throw Failure(description: "\(root): not a folder")
        }
        add(folder: [])
        guard !folders.isEmpty else {
            close(descriptor)
            throw Failure(description: "\(root): cannot watch it (\(String(cString: strerror(errno))))")
        }
    }

    deinit { close(descriptor) }

    /// Files waiting for their quiet period to end.
    public var pendingCount: Int { pending.count }

    /// Names never taken: hidden files (dot-files: editors' swap files, .DS_Store) and the temporary files of
    /// editors, downloads and copies (`name~`, `.swp`, `.part`, `.crdownload`, `.tmp`), whose final name arrives
    /// later by a rename (IN_MOVED_TO).
    public static func isTemporary(_ name: [UInt8]) -> Bool {
        if name.first == UInt8(ascii: ".") || name.last == UInt8(ascii: "~") { return true }
        let lower = String(decoding: name, as: UTF8.self).lowercased()
        return [".swp", ".swx", ".part", ".crdownload", ".tmp", ".partial", ".download"].contains { lower.hasSuffix($0) }
    }

    /// Watches the folder at `relative` and, recursively, those below it; its files become pending.
    private func add(folder relative: [UInt8]) {
        let path = relative.isEmpty ? root : root.appending(relative)
        if let skipFolder, let canonical = FileSystem.canonicalPath(path), canonical == skipFolder { return }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY | IN_ONLYDIR)
        let wd = path.withCString { inotify_add_watch(descriptor, $0, mask) }
        guard wd >= 0 else { return }
        // The same folder again (a rename, a rescan) keeps its one watch, under its latest path.
        folders[wd] = relative
        // Entries made before the watch was in place send no events: look at them now.
        guard let names = try? FileSystem.entries(path) else { return }
        for name in names {
            let below = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
            guard let status = try? FileSystem.status(root.appending(below), followLinks: false) else { continue }
            switch status.kind {
            case .directory where name.first != UInt8(ascii: "."): add(folder: below)
            // A file already pending keeps what its events said (still open for writing, say).
            case .file: seen(below, open: nil)
            case .directory: break
            case .symlink, .other: refuse(below, status.kind)
            }
        }
    }

    /// A file was seen (an event, or a scan): its quiet period starts again.
    private func seen(_ relative: [UInt8], open: Bool?) {
        guard let name = relative.split(separator: UInt8(ascii: "/")).last, !Self.isTemporary(Array(name)) else {
            ignored.insert(relative)
            return
        }
        let status = try? FileSystem.status(root.appending(relative), followLinks: false)
        let wasOpen = pending[relative]?.open ?? false
        pending[relative] = Pending(lastEvent: Clock.monotonicMilliseconds, size: status?.size ?? -1,
                                    modified: status?.modified ?? 0, open: open ?? wasOpen)
    }

    /// Leaves out an entry that is not a regular file, once.
    private func refuse(_ relative: [UInt8], _ kind: FileSystem.Kind) {
        guard refused.insert(relative).inserted else { return }
        let reason = kind == .symlink ? "a symbolic link (links are never followed: put the file itself here)"
            : "not a regular file (a FIFO, socket or device)"
        refusedUnsaid.append((relative, reason))
    }

    /// The links and special files left out since the last call, with why, in the order they were found.
    public func takeRefused() -> [(path: [UInt8], reason: String)] {
        defer { refusedUnsaid = [] }
        return refusedUnsaid
    }

    /// Reads the events that arrived, waiting up to `timeout` milliseconds for the first.
    public func poll(timeout: Int32) {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&request, 1, timeout) > 0 else { return }
        // Room for many events; each is a header and a NUL-padded name.
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (wd, mask, length) = buffer.withUnsafeBytes { raw in
                    (raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                     raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)]
                let name = Array(nameBytes.prefix { $0 != 0 })
                offset += header + length
                handle(wd: wd, mask: mask, name: name)
            }
        }
    }

    private func handle(wd: Int32, mask: UInt32, name: [UInt8]) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: look at every folder again (what was taken before is known by its hash).
            for relative in Set(folders.values) { add(folder: relative) }
            return
        }
        if mask & UInt32(IN_IGNORED) != 0 {
            folders[wd] = nil
            return
        }
        guard let folder = folders[wd], !name.isEmpty else { return }
        let relative = folder.isEmpty ? name : folder + [UInt8(ascii: "/")] + name
        if mask & UInt32(IN_ISDIR) != 0 {
            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0, name.first != UInt8(ascii: ".") { add(folder: relative) }
            return
        }
        if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
            seen(relative, open: false)
        } else if mask & UInt32(IN_CREATE | IN_MODIFY) != 0 {
            seen(relative, open: true)
        }
    }

    /// The files complete now (paths below `root`), in natural order; they are no longer pending. A file whose
    /// size or time changed since its last event starts its quiet period again; one gone is forgotten.
    public func takeComplete() -> [[UInt8]] {
        let now = Clock.monotonicMilliseconds
        var complete: [[UInt8]] = []
        for (relative, file) in pending where now - file.lastEvent >= quietMilliseconds {
            let found = try? FileSystem.status(root.appending(relative), followLinks: false)
            guard let status = found, status.kind == .file else {
                // Gone (removed, or moved away), also while open: its close would not be reported here. A link
                // or special file is never taken, and is said once.
                pending[relative] = nil
                if let kind = found?.kind, kind != .directory { refuse(relative, kind) }
                continue
            }
            guard !file.open else { continue }
            if status.size != file.size || status.modified != file.modified {
                pending[relative] = Pending(lastEvent: now, size: status.size, modified: status.modified, open: false)
                continue
            }
            pending[relative] = nil
            complete.append(relative)
        }
        return complete.sorted {
            NaturalOrder.areInIncreasingOrder(String(decoding: $0, as: UTF8.self), String(decoding: $1, as: UTF8.self))
        }
    }
}

extension WatchFolder {
    /// Moves the file at `relative` below `root` to the same relative path below `target` (making its folders),
    /// replacing a file of that name there. Across file systems it is copied and then removed.
    public static func move(_ relative: [UInt8], from root: RawPath, to target: RawPath) throws(FileError) {
        let source = root.appending(relative)
        let destination = target.appending(relative)
        var folder: [UInt8] = []
        for component in relative.split(separator: UInt8(ascii: "/")).dropLast() {
            folder += (folder.isEmpty ? [] : [UInt8(ascii: "/")]) + component
            let made = target.appending(folder).withCString { mkdir($0, 0o755) }
            if made != 0 && errno != EEXIST { throw FileError(path: target.appending(folder).description) }
        }
        let renamed = source.withCString { from in destination.withCString { to in rename(from, to) } }
        if renamed == 0 { return }
        guard errno == EXDEV else { throw FileError(path: source.description) }
        let bytes: [UInt8] = try FileSystem.read(source, limit: nil, regularOnly: true)
        try FileSystem.write(bytes, to: destination.description)
        guard source.withCString({ unlink($0) }) == 0 else { throw FileError(path: source.description) }
    }
}
