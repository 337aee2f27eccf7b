import Testing
import FarmCore
import FarmRuntime
import FarmStore
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

    @Test("status counts a page being reread as done, with a separate rereading figure (text and JSON)")
    func rereadingInStatus() throws {
        let folder = TemporaryDirectory("left-reread")
        let pages = try TestImages.tinyPages(3, in: folder)
        let store = folder.file("farm.db")
        let environment: [String: String?] = ["OMP_THREAD_LIMIT": "1"]
        let first = try Run.ocrfarm(["run", "--store", store, "--workers", "1", "--outputs", "none", pages], environment: environment)
        try #require(first.status == 0, "\(first.stderr)")
        let reread = try Run.ocrfarm(["reread", "--store", store, "--document", "tiny-1.png", "--level", "accurate"])
        try #require(reread.status == 0, "\(reread.text)\(reread.stderr)")
        try #require(try Store(path: store, readOnly: true).pages().filter { $0.state == .queued }.count == 1)

        let json = try Run.ocrfarm(["status", "--json", "--store", store])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSON.parse(Array(json.text.utf8))
        let counts = report["pages"]
        #expect(counts?["total"]?.intValue == 3 && counts?["done"]?.intValue == 3, "\(json.text)")
        #expect(counts?["queued"]?.intValue == 0 && counts?["rereading"]?.intValue == 1, "\(json.text)")
        let listed = report["by_document"]?.arrayValue ?? []
        #expect(listed.count == 1 && listed.first?["name"]?.stringValue == "tiny-1.png", "\(json.text)")
        #expect(listed.first?["pages"]?["done"]?.intValue == 1 && listed.first?["pages"]?["rereading"]?.intValue == 1, "\(json.text)")

        let one = try Run.ocrfarm(["status", "--json", "--store", store, "--document", "tiny-1.png"])
        let scoped = try JSON.parse(Array(one.text.utf8))["pages"]
        #expect(scoped?["done"]?.intValue == 1 && scoped?["queued"]?.intValue == 0 && scoped?["rereading"]?.intValue == 1, "\(one.text)")

        let text = try Run.ocrfarm(["status", "--store", store])
        #expect(text.text.contains("queued 0   leased 0   done 3   failed 0   rereading 1"), "\(text.text)")
        let metrics = try Run.ocrfarm(["status", "--prometheus", "--store", store])
        #expect(metrics.text.contains(#"ocrfarm_pages{state="queued"} 0"#) && metrics.text.contains("ocrfarm_pages_rereading 1"), "\(metrics.text)")

        // Once the new reading lands, nothing is being reread.
        let second = try Run.ocrfarm(["run", "--store", store, "--workers", "1"], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        let after = try JSON.parse(Array(try Run.ocrfarm(["status", "--json", "--store", store]).text.utf8))["pages"]
        #expect(after?["done"]?.intValue == 3 && after?["rereading"]?.intValue == 0, "\(String(describing: after))")
    }
}
