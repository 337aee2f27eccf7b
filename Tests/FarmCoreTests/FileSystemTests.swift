import Testing
import FarmCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("File system")
struct FileSystemTests {
    let folder = TemporaryDirectory("fs-test")

    @Test("write is atomic, read gives the bytes back, limits are enforced")
    func readWrite() throws {
        let path = folder.file("a/b/c.bin")
        try FileSystem.makeDirectory(FileSystem.directoryName(path))
        try FileSystem.write([1, 2, 3], to: path)
        #expect(try FileSystem.read(path) == [1, 2, 3])
        #expect(throws: FileError.self) { try FileSystem.read(path, limit: 2) }
        #expect(try FileSystem.status(path).size == 3)
        #expect(try FileSystem.entries(folder.file("a/b")) == ["c.bin"])
    }

    @Test("along sees every byte once, in order, as the file is read: small files in one piece, big ones in stretches")
    func readAlong() throws {
        // 20 MB, not a whole number of stretches: over the size where a second thread reads while `along` works
        // on the stretch before.
        let block = (0..<65_537).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        var big: [UInt8] = []
        for _ in 0..<320 { big += block }
        let path = folder.file("big.bin")
        try FileSystem.write(big, to: path)
        var seen: [UInt8] = []
        var calls = 0
        let bytes = try FileSystem.read(RawPath(path), regularOnly: true, along: { seen += $0.bindMemory(to: UInt8.self); calls += 1 })
        #expect(bytes == big)
        #expect(seen == big, "the stretches are the file, in order, each once")
        #expect(calls > 2, "a big file is handed over while it is read, not at the end")

        let small = folder.file("small.bin")
        try FileSystem.write([7, 8, 9], to: small)
        seen = []
        calls = 0
        #expect(try FileSystem.read(small, along: { seen += $0; calls += 1 }) == [7, 8, 9])
        #expect(seen == [7, 8, 9] && calls == 1)
    }

    @Test("a FIFO is refused before along sees anything")
    func readAlongRefusesFIFO() throws {
        let fifo = folder.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        var calls = 0
        #expect(throws: FileError.self) { try FileSystem.read(RawPath(fifo), regularOnly: true, along: { _ in calls += 1 }) }
        #expect(calls == 0)
    }

    @Test("errors name the path and the system's reason")
    func errors() {
        do {
            _ = try FileSystem.read(folder.file("missing"))
            Issue.record("should fail")
        } catch {
            #expect(error.path.hasSuffix("missing"))
            #expect(error.reason.contains("No such file"))
        }
        do {
            _ = try FileSystem.read(folder.path)
            Issue.record("a directory should not read")
        } catch {
            #expect(error.reason == "is a directory")
        }
    }

    @Test("path components")
    func names() {
        #expect(FileSystem.baseName("/a/b/c.png") == "c.png")
        #expect(FileSystem.directoryName("/a/b/c.png") == "/a/b")
        #expect(FileSystem.directoryName("c.png") == ".")
        #expect(FileSystem.baseName("dir/") == "dir")
    }
}
