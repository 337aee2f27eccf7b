import Testing
import FarmCore
import FarmRuntime
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

    @Test("one pass: along sees every byte once, in order; the file is kept whole only when its head asks for it")
    func readAlong() throws {
        // 3 MB and a bit: over the 64 KB head, and not a whole number of the 256 KB stretches.
        let block = (0..<65_537).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        var big: [UInt8] = []
        for _ in 0..<49 { big += block }
        let path = RawPath(folder.write("big.bin", big))
        var seen: [UInt8] = []
        var calls = 0
        let streamed = try FileSystem.read(path, regularOnly: true, keepingAll: { $0.count == 1 << 16 && $0[0] == 0xFF },
                                           along: { seen += $0.bindMemory(to: UInt8.self); calls += 1 })
        #expect(!streamed.isWhole && streamed.size == big.count && streamed.bytes == Array(big.prefix(1 << 16)))
        #expect(seen == big, "the stretches are the file, in order, each once")
        #expect(calls == 13, "through a reused 256 KB buffer")

        seen = []
        let kept = try FileSystem.read(path, regularOnly: true, keepingAll: { _ in true },
                                       along: { seen += $0.bindMemory(to: UInt8.self) })
        #expect(kept.isWhole && kept.bytes == big && seen == big)
        seen = []
        #expect(try FileSystem.read(path, along: { seen += $0.bindMemory(to: UInt8.self) }) == big && seen == big)

        // A file no longer than the head is whole without asking.
        let small = RawPath(folder.write("small.bin", [7, 8, 9]))
        seen = []
        let whole = try FileSystem.read(small, keepingAll: { _ in Issue.record("asked about a small file"); return false },
                                        along: { seen += $0.bindMemory(to: UInt8.self) })
        #expect(whole.isWhole && whole.bytes == [7, 8, 9] && seen == [7, 8, 9])
    }

    @Test("remove takes a tree whose names are not UTF-8, and removes a symlink without following it")
    func removeRawNames() throws {
        let outside = folder.write("outside.txt", text: "kept")
        let tree = RawPath(folder.file("tree"))
        let odd = tree.appending([0x6C, 0xE9, 0x74, 0xE9])  // "lété" in Latin-1
        try FileSystem.makeDirectory(folder.file("tree"))
        try #require(odd.withCString { mkdir($0, 0o755) } == 0)
        let file = odd.appending(Array("x".utf8) + [0xFF, 0x0A])
        let fd = file.withCString { open($0, O_WRONLY | O_CREAT, 0o644) }
        try #require(fd >= 0)
        close(fd)
        try #require(tree.appending(Array("link".utf8)).withCString { symlink(outside, $0) } == 0)

        FileSystem.remove(folder.file("tree"))  // as TemporaryDirectory removes itself
        #expect((try? FileSystem.status(tree, followLinks: false)) == nil, "the tree is gone")
        #expect(try FileSystem.read(outside) == Array("kept".utf8), "the link's target is untouched")
    }

    @Test("a FIFO is refused before along sees anything")
    func readAlongRefusesFIFO() throws {
        let fifo = folder.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        var calls = 0
        #expect(throws: FileError.self) {
            try FileSystem.read(RawPath(fifo), regularOnly: true, keepingAll: { _ in true }, along: { _ in calls += 1 })
        }
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
        // One slash between a folder and a name, however the folder was typed (issue 36: export//quality.csv).
        #expect(FileSystem.joined("export/", "quality.csv") == "export/quality.csv")
        #expect(FileSystem.joined("export//", "quality.csv") == "export/quality.csv")
        #expect(FileSystem.joined("export", "quality.csv") == "export/quality.csv")
        #expect(FileSystem.joined("/", "x") == "/x")
    }

    @Test("a folder of 3,000 entries lists every name whole, reading no record past its end (checked under AddressSanitizer by Scripts/leakcheck)")
    func manyEntries() throws {
        let folder = TemporaryDirectory("fs-entries")
        // Names of every length from 1 to 60 bytes: readdir's records are as long as their names, so some record
        // ends right at the end of its buffer, where copying the whole 256-byte d_name field read past it.
        var expected: Set<String> = []
        for index in 0..<3000 {
            let name = String(index) + String(repeating: "x", count: index % 55) + ".png"
            expected.insert(name)
            _ = folder.write(name, [1])
        }
        #expect(Set(try FileSystem.entries(folder.path)) == expected)
        let raw = try FileSystem.entries(RawPath(folder.path)).map { String(decoding: $0, as: UTF8.self) }
        #expect(raw.count == 3000 && Set(raw) == expected)
    }
}
