import Testing
import FarmCore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Small known weaknesses, end to end with the real binary.
@Suite("Leftovers (end to end)", .serialized)
struct LeftoversEndToEndTests {
    @Test("a worker sleeping in its reconnect backoff leaves promptly on SIGTERM")
    func sigtermDuringBackoff() throws {
        let farm = FarmHarness()
        // Nobody listens on this port: the worker hears nothing, reconnects every 3 heartbeats, and its backoff
        // doubles 1 s, 2 s, 4 s.
        let port = FarmHarness.freePort()
        let worker = try farm.startWorker(port: port, ["--engine", "none", "--slots", "1", "--heartbeat", "100"], name: "w")
        // The third reconnect starts a 4 s sleep; SIGTERM lands in it.
        let sleeping = FarmHarness.wait(seconds: 30) { worker.log.contains("backoff_ms=4000") }
        #expect(sleeping, "\(worker.log)")
        usleep(200_000)
        let sent = Date()
        let status = worker.terminate(waiting: 10)
        let took = Date().timeIntervalSince(sent)
        #expect(status == 0, "\(worker.log)")
        #expect(took < 1.5, "took \(took) s: \(worker.log)")
        #expect(worker.log.contains("worker stopped"), "\(worker.log)")
    }

    @Test("a file that is not SQLite given as a store is not an ocrfarm store (66), named, never changed")
    func textFileAsStore() throws {
        let folder = TemporaryDirectory("left-notdb")
        // Longer than SQLite's 100-byte header, so SQLite reads it and says "file is not a database".
        let text = folder.write("notes.txt", text: String(repeating: "not a database, just notes\n", count: 20))
        let before = try FileSystem.read(text)
        let modified = try FileSystem.status(text).modified
        let page = try TestImages.tinyPages(1, in: folder)
        for arguments in [["status", "--store", text], ["status", "--json", "--store", text],
                          ["submit", "--store", text, page], ["health", "--store", text]] {
            let result = try Run.ocrfarm(arguments)
            #expect(result.status == 66, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\(text) is not an ocrfarm store: it is not a SQLite database"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("is damaged"), "\(arguments): \(result.stderr)")
        }
        #expect(try FileSystem.read(text) == before)
        #expect(try FileSystem.status(text).modified == modified)
        for suffix in ["-wal", "-shm", "-journal"] { #expect(!FileSystem.exists(text + suffix), "\(suffix)") }

        // A system file read by status: the same answer, and it stays as it was.
        let passwd = "/etc/passwd"
        let passwdBefore = try FileSystem.read(passwd)
        let passwdModified = try FileSystem.status(passwd).modified
        let status = try Run.ocrfarm(["status", "--store", passwd])
        #expect(status.status == 66, "\(status.stderr)")
        #expect(status.stderr.contains("/etc/passwd is not an ocrfarm store"), "\(status.stderr)")
        #expect(try FileSystem.read(passwd) == passwdBefore)
        #expect(try FileSystem.status(passwd).modified == passwdModified)
        for suffix in ["-wal", "-shm", "-journal"] { #expect(!FileSystem.exists(passwd + suffix), "\(suffix)") }
    }
}
