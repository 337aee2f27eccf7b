import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A page file is read by the coordinator when its page is handed out: it must still be what was submitted.
@Suite("The page file is checked before it is sent (end to end)")
struct SourceCheckTests {
    @Test("a changed file, one of the same size, and a link to a secret fail as source-changed with both hashes; nothing of them is sent")
    func changedFiles() throws {
        let farm = FarmHarness()
        let folder = farm.folder.file("in")
        try FileSystem.makeDirectory(folder)
        let original = TestImages.png(marker: "original")
        for name in ["kept", "changed", "same-size", "linked"] {
            try FileSystem.write(original + Array(name.utf8), to: "\(folder)/\(name).png")
        }
        #expect(try farm.submit([folder]).status == 0)
        let secret = farm.folder.write("coordinator.key_secret", Array("metadata\ncurve\n  secret-key = \"not for workers\"\n".utf8))
        try FileSystem.write(TestImages.png(marker: "something else entirely"), to: folder + "/changed.png")
        var same = try FileSystem.read(folder + "/same-size.png")
        same[same.count - 1] ^= 0xFF
        try FileSystem.write(same, to: folder + "/same-size.png")
        unlink(folder + "/linked.png")
        #expect(symlink(secret, folder + "/linked.png") == 0)

        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        let done = FarmHarness.wait(seconds: 30) {
            let status = try? Store(path: farm.storePath, readOnly: true).status()
            return status?.count(.done) == 1 && status?.count(.failed) == 3
        }
        #expect(done, "\(farm.logs)")
        farm.stopAll()
        let pages = try Store(path: farm.storePath, readOnly: true).pages()
        func failure(_ name: String) -> (code: String, message: String)? {
            guard let page = pages.first(where: { $0.source.description.hasSuffix("/\(name).png") }),
                  let code = page.failureCode else { return nil }
            return (code, page.failureMessage ?? "")
        }
        #expect(failure("kept") == nil)
        for name in ["changed", "same-size"] {
            let failed = try #require(failure(name), "\(name)")
            #expect(failed.code == "source-changed", "\(failed)")
            #expect(failed.message.contains("changed since it was submitted (sha256 "), "\(failed.message)")
            #expect(failed.message.contains("Submit the new content"), "\(failed.message)")
        }
        #expect(try #require(failure("same-size")).message.contains(" now); not sent"))
        let linked = try #require(failure("linked"))
        #expect(linked.code == "source-changed" && linked.message.contains("is a symbolic link now"), "\(linked.message)")
        // The worker never had the secret: nothing it logged or stored holds it.
        #expect(!farm.logs.contains("not for workers"))

        // The new content is a new page when submitted again.
        let again = try farm.submit([folder + "/changed.png"])
        #expect(again.status == 0 && again.stderr.contains("submitted 1 document, 1 page"), "\(again.stderr)")
    }
}
