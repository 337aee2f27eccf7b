import Testing
import FarmCore
import TestSupport

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
