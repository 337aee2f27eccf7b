import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `ocrfarm health` and `ocrfarm backup` against a real coordinator on loopback.
@Suite("Health and backup (end to end)", .serialized)
struct HealthBackupTests {
    func openStore(_ farm: FarmHarness) throws -> Store { try Store(path: farm.storePath, readOnly: true) }

    func health(_ port: Int, timeout: String = "1") throws -> (output: ProcessOutput, seconds: Double) {
        let start = Date()
        let output = try Run.ocrfarm(["health", "--connect", "tcp://127.0.0.1:\(port)", "--timeout", timeout])
        return (output, Date().timeIntervalSince(start))
    }

    @Test("one coordinator per store: a second coordinator (by the path, a symbolic or a hard link) and run exit 75 naming the first; a killed one's lock is taken over")
    func oneCoordinatorPerStore() throws {
        let farm = FarmHarness()
        #expect(try farm.submit([try TestImages.tinyPages(2, in: farm.folder)]).status == 0)
        let port = FarmHarness.freePort()
        let first = try farm.startCoordinator(port: port)
        #expect(try FarmHarness.wait(seconds: 20) { try health(port).output.status == 0 }, "\(farm.logs)")

        let second = try Run.ocrfarm(["coordinator", "--store", farm.storePath, "--bind", "tcp://127.0.0.1:\(FarmHarness.freePort())"])
        #expect(second.status == 75, "\(second.stderr)")
        #expect(second.stderr.contains("is already served by a coordinator (pid \(first.pid) on "), "\(second.stderr)")
        let run = try Run.ocrfarm(["run", "--store", farm.storePath, "--engine", "none", try TestImages.tinyPages(1, in: farm.folder, prefix: "r")])
        #expect(run.status == 75 && run.stderr.contains("one coordinator per store"), "\(run.stderr)")
        #expect(try openStore(farm).status().totalPages == 2, "run submitted nothing")
        // The same store by another name (issue 37: these took the first one's live leases): a symbolic link, and a
        // hard link in another folder, where the first one's lock file is not.
        let symbolic = farm.folder.file("linked.db")
        #expect(symlink(farm.storePath, symbolic) == 0)
        let elsewhere = farm.folder.file("elsewhere")
        try FileSystem.makeDirectory(elsewhere)
        let hard = elsewhere + "/hard.db"
        #expect(link(farm.storePath, hard) == 0)
        for path in [symbolic, hard] {
            // A coordinator that starts anyway would run for good: timeout(1) ends it (124) and the test fails.
            let linked = try Run.process("/usr/bin/timeout", ["20", Fixtures.binary, "coordinator", "--store", path,
                                                              "--bind", "tcp://127.0.0.1:\(FarmHarness.freePort())"])
            #expect(linked.status == 75, "\(path): \(linked.stderr)")
            #expect(linked.stderr.contains("is already served by a coordinator (pid \(first.pid) on "), "\(path): \(linked.stderr)")
        }
        #expect(try FarmHarness.wait(seconds: 5) { try health(port).output.status == 0 }, "the first coordinator still serves")

        kill(first.pid, SIGKILL)
        _ = first.terminate(waiting: 5)
        let next = try farm.startCoordinator(port: port, name: "next")
        #expect(FarmHarness.wait(seconds: 20) { next.log.contains("took over the store's lock from a coordinator that is gone") },
                "\(next.log)")
        #expect(next.log.contains("pid=\(first.pid) "), "\(next.log)")
        farm.stopAll()
    }

    @Test("the store moved away under a running coordinator: it stops dispatching within seconds, exits 74 saying so, and the moved file holds every result")
    func storeMovedWhileRunning() throws {
        let farm = FarmHarness()
        #expect(try farm.submit([try TestImages.tinyPages(3, in: farm.folder)]).status == 0)
        let port = FarmHarness.freePort()
        let coordinator = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none"], name: "worker")
        #expect(try FarmHarness.wait(seconds: 30) { try openStore(farm).status().count(.done) == 3 }, "\(farm.logs)")
        let moved = farm.folder.file("moved.db")
        #expect(rename(farm.storePath, moved) == 0)
        #expect(FarmHarness.wait(seconds: 15) { !coordinator.isRunning }, "\(coordinator.log)")
        #expect(coordinator.terminate(waiting: 1) == 74)
        #expect(coordinator.log.contains("the store file is gone: dispatch stopped"), "\(coordinator.log)")
        #expect(coordinator.log.contains("was deleted or moved while in use"), "\(coordinator.log)")
        let store = try Store(path: moved, readOnly: true)
        #expect(try store.status().count(.done) == 3)
        #expect(try store.integrityCheck() == "ok")
        farm.stopAll()
    }

    @Test("a damaged store: health --store, status --check and the coordinator exit 76 naming it; another program's file is refused with 66, untouched")
    func damagedAndForeignStores() throws {
        let farm = FarmHarness()
        #expect(try farm.submit([try TestImages.tinyPages(300, in: farm.folder)]).status == 0)
        let sound = try Run.ocrfarm(["health", "--store", farm.storePath])
        #expect(sound.status == 0 && sound.text == "ok store \(farm.storePath): 300 pages\n", "\(sound.text)\(sound.stderr)")
        let soundStatus = try Run.ocrfarm(["status", "--check", "--store", farm.storePath])
        #expect(soundStatus.status == 0 && soundStatus.text.hasPrefix("quick_check: ok (\(farm.storePath))\n"), "\(soundStatus.text)")
        #expect(soundStatus.text.contains("300"), "the report follows the check: \(soundStatus.text)")
        // The store's last page damaged: status reads its counts from pages this leaves alone and exits 0 as if
        // sound (issue 37); --check reads every page and says which is damaged.
        var lastPageDamaged = try FileSystem.read(farm.storePath)
        for index in stride(from: lastPageDamaged.count - 4096 + 100, to: lastPageDamaged.count, by: 7) { lastPageDamaged[index] = 0x5A }
        let quietlyDamaged = farm.folder.file("quietly-damaged.db")
        try FileSystem.write(lastPageDamaged, to: quietlyDamaged)
        let plain = try Run.ocrfarm(["status", "--store", quietlyDamaged])
        #expect(plain.status == 0, "status without --check: \(plain.stderr)")
        let caught = try Run.ocrfarm(["status", "--check", "--json", "--store", quietlyDamaged])
        #expect(caught.status == 76 && caught.stderr.contains("is damaged (quick_check: "), "\(caught.status) \(caught.stderr)")

        // Damage the middle of the file, the header kept: SQLite opens it and counting pages may even work.
        var bytes = try FileSystem.read(farm.storePath)
        for index in (2 * 4096)..<(bytes.count - 4096) where index % 5 == 0 { bytes[index] = 0x5A }
        try FileSystem.write(bytes, to: farm.storePath)
        let health = try Run.ocrfarm(["health", "--store", farm.storePath])
        #expect(health.status == 76, "\(health.text)\(health.stderr)")
        // status reads counts a damaged file may still give; --check runs quick_check first (issue 37).
        let checked = try Run.ocrfarm(["status", "--check", "--store", farm.storePath])
        #expect(checked.status == 76 && checked.stderr.contains("store \(farm.storePath) is damaged"),
                "\(checked.status) \(checked.text)\(checked.stderr)")
        #expect(health.stderr.contains("store \(farm.storePath) is damaged"), "\(health.stderr)")
        let coordinator = try Run.ocrfarm(["coordinator", "--store", farm.storePath, "--bind", "tcp://127.0.0.1:\(FarmHarness.freePort())"])
        #expect(coordinator.status == 76, "\(coordinator.stderr)")
        #expect(coordinator.stderr.contains("is damaged") && coordinator.stderr.contains("restore it from a backup"), "\(coordinator.stderr)")

        let foreign = farm.folder.file("photos.db")
        #expect(try Run.process(try #require(Run.which("python3")), ["-c",
            "import sqlite3; c = sqlite3.connect('\(foreign)'); c.execute('CREATE TABLE photos (id INTEGER)'); c.commit()"]).status == 0)
        let before = try FileSystem.read(foreign)
        let submit = try Run.ocrfarm(["submit", "--store", foreign, try TestImages.tinyPages(1, in: farm.folder, prefix: "x")])
        #expect(submit.status == 66, "\(submit.stderr)")
        #expect(submit.stderr.contains("is not an ocrfarm store") && submit.stderr.contains("photos"), "\(submit.stderr)")
        #expect(try FileSystem.read(foreign) == before, "the other program's file is unchanged")
        #expect(try Run.ocrfarm(["status", "--store", foreign]).status == 66)
    }

    @Test("health: 0 when the coordinator answers, 69 within the timeout when nothing listens or its loop is stopped")
    func healthStates() throws {
        let farm = FarmHarness()
        let port = FarmHarness.freePort()

        let nobody = try health(port)
        #expect(nobody.output.status == 69)
        #expect(nobody.output.stderr.contains("no answer from the coordinator at tcp://127.0.0.1:\(port) within 1.0 s"))
        #expect(nobody.output.stderrLines.count == 1)
        #expect(nobody.seconds < 3, "the timeout bounds the wait")

        let coordinator = try farm.startCoordinator(port: port)
        #expect(try FarmHarness.wait(seconds: 20) { try health(port).output.status == 0 }, "\(farm.logs)")
        let up = try health(port)
        #expect(up.output.status == 0)
        #expect(up.output.text.hasPrefix("ok tcp://127.0.0.1:\(port) version \(FarmVersion.string) in "))

        // A stopped (hung) coordinator still has its port open, but its loop does not answer.
        kill(coordinator.pid, SIGSTOP)
        let hung = try health(port)
        kill(coordinator.pid, SIGCONT)
        #expect(hung.output.status == 69)
        #expect(hung.output.stderr.contains("no answer"))
        #expect(hung.seconds < 3)
        #expect(try FarmHarness.wait(seconds: 10) { try health(port).output.status == 0 }, "\(farm.logs)")

        #expect(try Run.ocrfarm(["health", "--connect", "not an address"]).status == 64)
        #expect(try Run.ocrfarm(["health", "--timeout", "0"]).status == 64)
        farm.stopAll()
    }

    @Test("health probes are not workers: no credit, no jobs, not in status")
    func probeIsNoWorker() throws {
        let farm = FarmHarness()
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, ["--heartbeat", "200"])
        #expect(try FarmHarness.wait(seconds: 20) { try health(port).output.status == 0 }, "\(farm.logs)")
        for _ in 0..<5 { #expect(try health(port).output.status == 0) }
        try farm.submit([try TestImages.tinyPages(20, in: farm.folder)])
        _ = try farm.startWorker(port: port, ["--engine", "none", "--heartbeat", "200"], name: "worker")
        for _ in 0..<5 { #expect(try health(port).output.status == 0) }
        #expect(try FarmHarness.wait(seconds: 30) { try openStore(farm).status().count(.done) == 20 }, "\(farm.logs)")

        let status = try Run.ocrfarm(["status", "--store", farm.storePath, "--json"])
        let json = try JSON.parse(Array(status.stdout))
        let workers = json["workers"]?.arrayValue ?? []
        #expect(workers.count == 1, "\(workers)")
        #expect(workers.first?["pages_done"]?.intValue == 20)
        // Answered PINGs are no malformed messages, and no worker was declared lost after the probes left.
        #expect(json["coordinator"]?["malformed"]?.objectValue?.isEmpty ?? true, "\(json)")
        #expect((json["coordinator"]?["workers_lost"]?.intValue ?? 0) == 0)
        farm.stopAll()
    }

    @Test("backup while a coordinator and a worker process pages: every copy sound, the farm finishes")
    func backupWhileRunning() throws {
        let farm = FarmHarness()
        let pages = 400
        try farm.submit([try TestImages.tinyPages(pages, in: farm.folder)])
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port)
        _ = try farm.startWorker(port: port, ["--engine", "none", "--slots", "1"], name: "worker")

        var copies: [(done: Int, total: Int)] = []
        var liveDoneAfter: [Int] = []
        var index = 0
        repeat {
            let file = farm.folder.file("backup-\(index).db")
            index += 1
            let run = try Run.ocrfarm(["backup", "--store", farm.storePath, "--to", file])
            #expect(run.status == 0, "\(run.stderr)")
            guard run.status == 0 else { break }
            #expect(run.text.contains("integrity ok"))
            liveDoneAfter.append(try openStore(farm).status().count(.done))
            #expect(!FileManager.default.fileExists(atPath: file + "-wal"), "the copy is one file")
            let copy = try Store(path: file, readOnly: true)
            #expect(try copy.integrityCheck() == "ok")
            let status = try copy.status()
            #expect(run.text.contains("pages \(status.totalPages) "), "\(run.text)")
            copies.append((status.count(.done), status.totalPages))
            if try openStore(farm).status().count(.done) >= pages { break }
        } while copies.count < 50

        #expect(try FarmHarness.wait(seconds: 60) { try openStore(farm).status().count(.done) == pages }, "\(farm.logs)")
        #expect(!copies.isEmpty)
        for (number, copy) in copies.enumerated() {
            #expect(copy.total == pages)
            #expect(copy.done <= liveDoneAfter[number], "a copy cannot be ahead of the live store")
            if number > 0 { #expect(copy.done >= copies[number - 1].done, "copies move forward in time") }
        }
        print("backup while running: \(copies.count) copies, done in copies \(copies.map(\.done))")

        // An existing file is kept unless --force; the store itself is never a target.
        let first = farm.folder.file("backup-0.db")
        let again = try Run.ocrfarm(["backup", "--store", farm.storePath, "--to", first])
        #expect(again.status == 73 && again.stderr.contains("already exists; give --force"))
        let forced = try Run.ocrfarm(["backup", "--store", farm.storePath, "--to", first, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try Store(path: first, readOnly: true).status().count(.done) == pages)
        let itself = try Run.ocrfarm(["backup", "--store", farm.storePath, "--to", farm.storePath, "--force"])
        #expect(itself.status == 73 && itself.stderr.contains("is the store itself"))
        #expect(try Run.ocrfarm(["backup", "--store", farm.storePath]).status == 64)
        #expect(try Run.ocrfarm(["backup", "--store", farm.folder.file("missing.db"), "--to", farm.folder.file("x.db")]).status == 66)
        #expect(!FileManager.default.fileExists(atPath: farm.folder.file("x.db")))
        farm.stopAll()
    }
}
