import FarmCore
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// The folder an export writes into (`--out`).
///
/// Every file is written under a hidden staging folder inside it (`.ocrfarm-export-<pid>`, on the same file system)
/// and renamed into place when complete, so no file ever appears under its final name half written, and an
/// interrupted export leaves its partial files only there; the next export removes staging folders whose process is
/// gone. Names are checked to be single components (`SafeName.isSingleComponent`) and files are created relative to
/// descriptors of folders opened without following symbolic links, so nothing is written outside the folder, even
/// through a link planted inside it.
///
/// Owns the descriptors of the folder and of its staging folder, closed in `deinit`, which also removes the staging
/// folder. Confined to one thread.
final class ExportFolder {
    /// A folder inside the export folder. Owns its descriptor, closed in `deinit`.
    final class Subfolder {
        let name: String
        fileprivate let descriptor: Int32

        fileprivate init(name: String, descriptor: Int32) {
            self.name = name
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }
    }

    static let stagingPrefix = ".ocrfarm-export-"

    let path: String
    /// The staging folder's path, for writers that need one (qpdf).
    let stagingPath: String
    private let descriptor: Int32
    private let staging: Int32
    private let stagingName: String
    private var counter = 0

    init(path: String) throws(FileError) {
        try FileSystem.makeDirectory(path)
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(path: path) }
        Self.removeAbandonedStaging(in: path)
        let stagingName = Self.stagingPrefix + String(getpid())
        FileSystem.remove(path + "/" + stagingName)
        guard mkdirat(descriptor, stagingName, 0o700) == 0 else {
            let error = FileError(path: path + "/" + stagingName)
            close(descriptor)
            throw error
        }
        let staging = openat(descriptor, stagingName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard staging >= 0 else {
            let error = FileError(path: path + "/" + stagingName)
            close(descriptor)
            throw error
        }
        self.path = path
        self.descriptor = descriptor
        self.staging = staging
        self.stagingName = stagingName
        stagingPath = path + "/" + stagingName
    }

    deinit {
        close(staging)
        close(descriptor)
        FileSystem.remove(stagingPath)
    }

    /// The folder at `relative` inside the export folder (`box17` or `box17/folder3`), each level made if missing
    /// and opened without following symbolic links. An existing link or file on the way is an error: the export
    /// never writes through it.
    func subfolder(_ relative: String) throws(FileError) -> Subfolder {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // The descriptor of the level reached so far; the export folder's own is not ours to close.
        var parent = descriptor
        var walked = ""
        for part in parts {
            walked += (walked.isEmpty ? "" : "/") + part
            let next: Int32
            do throws(FileError) {
                try check(part)
                if mkdirat(parent, part, 0o755) != 0 && errno != EEXIST { throw FileError(path: path + "/" + walked) }
                next = openat(parent, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard next >= 0 else {
                    if errno == ELOOP || errno == ENOTDIR {
                        throw FileError(path: path + "/" + walked,
                                        reason: "exists and is not a folder (a symbolic link or a file); not writing through it",
                                        code: errno)
                    }
                    throw FileError(path: path + "/" + walked)
                }
            } catch {
                if parent != descriptor { close(parent) }
                throw error
            }
            if parent != descriptor { close(parent) }
            parent = next
        }
        return Subfolder(name: relative, descriptor: parent)
    }

    /// A fresh name in the staging folder, and its path.
    func stagedFile(_ ending: String = "") -> (name: String, path: String) {
        counter += 1
        let name = "f\(counter)\(ending)"
        return (name, stagingPath + "/" + name)
    }

    /// Writes `bytes` as `name` in `folder` (the export folder itself when nil): staged, then renamed into place.
    func write(_ bytes: [UInt8], as name: String, in folder: Subfolder? = nil) throws(FileError) {
        // A relative path (only without `folder`) is checked part by part when it is published.
        try check(folder == nil ? String(name.split(separator: "/", omittingEmptySubsequences: false).last ?? "") : name)
        let staged = stagedFile()
        let file = openat(staging, staged.name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw FileError(path: staged.path) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(file, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let error = FileError(path: target(name, in: folder))
                close(file)
                unlinkat(staging, staged.name, 0)
                throw error
            }
            offset += written
        }
        guard close(file) == 0 else {
            let error = FileError(path: target(name, in: folder))
            unlinkat(staging, staged.name, 0)
            throw error
        }
        try publish(staged.name, as: name, in: folder)
    }

    /// Moves the complete staged file `staged` to `name` in `folder` (the export folder itself when nil), replacing
    /// a file of that name. Without `folder`, `name` may be a relative path (`box17/folder3.pdf`): its folders are
    /// made as `subfolder` makes them.
    func publish(_ staged: String, as name: String, in folder: Subfolder? = nil) throws(FileError) {
        if folder == nil, let slash = name.lastIndex(of: "/") {
            let parent: Subfolder
            do throws(FileError) {
                parent = try subfolder(String(name[..<slash]))
            } catch {
                unlinkat(staging, staged, 0)
                throw error
            }
            return try publish(staged, as: String(name[name.index(after: slash)...]), in: parent)
        }
        try check(name)
        guard renameat(staging, staged, folder?.descriptor ?? descriptor, name) == 0 else {
            let error = FileError(path: target(name, in: folder))
            unlinkat(staging, staged, 0)
            throw error
        }
    }

    private func target(_ name: String, in folder: Subfolder?) -> String {
        path + "/" + (folder.map { $0.name + "/" } ?? "") + name
    }

    private func check(_ name: String) throws(FileError) {
        guard SafeName.isSingleComponent(name), !name.hasPrefix(Self.stagingPrefix) else {
            throw FileError(path: path, reason: "refusing to write '\(RawPath(name))': not a plain file name", code: EINVAL)
        }
    }

    /// Removes the staging folders of exports whose process is gone (interrupted, killed).
    private static func removeAbandonedStaging(in path: String) {
        for name in (try? FileSystem.entries(path)) ?? [] where name.hasPrefix(stagingPrefix) {
            guard let pid = Int32(name.dropFirst(stagingPrefix.count)) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { FileSystem.remove(path + "/" + name) }
        }
    }
}
