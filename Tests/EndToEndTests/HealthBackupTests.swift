import Testing
import FarmCore
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
}
