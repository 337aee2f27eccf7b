import Testing
import FarmCore
import FarmIngest
import FarmRuntime
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The watch folder's own rules, with real inotify on a real folder.
@Suite("WatchFolder: complete files only", .serialized)
struct WatchFolderTests {
    /// Polls for `milliseconds`, collecting what becomes complete.
    static func collect(_ watcher: WatchFolder, milliseconds: Int64) -> [String] {
        var taken: [String] = []
        let end = Clock.monotonicMilliseconds + milliseconds
        while Clock.monotonicMilliseconds < end {
            watcher.poll(timeout: 50)
            taken += watcher.takeComplete().map { String(decoding: $0, as: UTF8.self) }
        }
        return taken
    }

    @Test("editors' and downloads' temporary names are recognised; ordinary names are not")
    func temporaryNames() {
        for name in [".scan.tif.swp", "scan.png~", "draft.swp", "scan.tif.part", "scan.PNG.crdownload", "upload.tmp", ".DS_Store"] {
            #expect(WatchFolder.isTemporary(Array(name.utf8)), "\(name)")
        }
        for name in ["scan.tif", "page~1.png", "tmp.png", "part 2.pdf"] {
            #expect(!WatchFolder.isTemporary(Array(name.utf8)), "\(name)")
        }
    }

    @Test("a file held open is not taken however long its writer pauses; closed, it is taken once after the quiet period")
    func openFileWaits() throws {
        let folder = TemporaryDirectory("watch-unit")
        let watcher = try WatchFolder(root: RawPath(folder.path), quietMilliseconds: 200)
        let fd = open(folder.file("slow.png"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        let bytes = [UInt8](repeating: 7, count: 1000)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, 500) }
        #expect(Self.collect(watcher, milliseconds: 700).isEmpty, "open for writing, paused 3.5 quiet periods")
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + 500, 500) }
        close(fd)
        folder.write("notes~", bytes)
        let taken = Self.collect(watcher, milliseconds: 800)
        #expect(taken == ["slow.png"], "\(taken)")
        #expect(watcher.temporaryIgnored >= 1)
        #expect(Self.collect(watcher, milliseconds: 400).isEmpty, "once")
    }

    @Test("a folder made later is watched, with the files already in it; the skipped folder is not")
    func newFoldersAndSkippedFolder() throws {
        let folder = TemporaryDirectory("watch-unit")
        try FileSystem.makeDirectory(folder.file("done"))
        let watcher = try WatchFolder(root: RawPath(folder.path), quietMilliseconds: 100, skipFolder: RawPath(folder.file("done")))
        try FileSystem.makeDirectory(folder.file("box/inner"))
        try FileSystem.write([1, 2, 3], to: folder.file("box/inner/p1.png"))
        try FileSystem.write([1, 2, 3], to: folder.file("done/finished.png"))
        let taken = Self.collect(watcher, milliseconds: 600)
        #expect(taken == ["box/inner/p1.png"], "\(taken)")
    }

    @Test("links and special files are never taken, and each is named once with why: there at the start or dropped in later")
    func linksAndSpecialFilesRefused() throws {
        let folder = TemporaryDirectory("watch-unit")
        let outside = TemporaryDirectory("watch-outside")
        outside.write("secret.png", [1, 2, 3])
        try FileSystem.makeDirectory(outside.file("box"))
        #expect(symlink(outside.file("secret.png"), folder.file("early-link.png")) == 0)
        let watcher = try WatchFolder(root: RawPath(folder.path), quietMilliseconds: 100)
        #expect(symlink(outside.file("secret.png"), folder.file("late-link.png")) == 0)
        #expect(symlink(outside.file("box"), folder.file("linked-folder")) == 0)
        #expect(mkfifo(folder.file("pipe.png"), 0o644) == 0)
        folder.write("real.png", [4, 5, 6])
        var refused: [String: String] = [:]
        var taken: [String] = []
        let end = Clock.monotonicMilliseconds + 800
        while Clock.monotonicMilliseconds < end {
            watcher.poll(timeout: 50)
            taken += watcher.takeComplete().map { String(decoding: $0, as: UTF8.self) }
            for (path, reason) in watcher.takeRefused() {
                let name = String(decoding: path, as: UTF8.self)
                #expect(refused[name] == nil, "\(name) said twice")
                refused[name] = reason
            }
        }
        #expect(taken == ["real.png"], "\(taken)")
        #expect(Set(refused.keys) == ["early-link.png", "late-link.png", "linked-folder", "pipe.png"], "\(refused)")
        #expect(refused["late-link.png"]?.contains("symbolic link") == true)
        #expect(refused["pipe.png"]?.contains("not a regular file") == true)
        #expect(watcher.refusedCount == 4)
        // Touched again, a link is not said again.
        _ = unlink(folder.file("late-link.png"))
        #expect(symlink(outside.file("secret.png"), folder.file("late-link.png")) == 0)
        for _ in 0..<6 { watcher.poll(timeout: 50); _ = watcher.takeComplete() }
        #expect(watcher.takeRefused().isEmpty)
    }
}
