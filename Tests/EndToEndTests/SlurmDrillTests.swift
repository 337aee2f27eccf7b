import Testing
import FarmStore
import TestSupport
import Foundation

/// `worker --exit-when-idle`, which lets a Slurm array task end when the queue is empty, and Scripts/drill/slurm at
/// a short size (12 pages): a real munged, slurmctld and slurmd on this host run Deploy/slurm/ocrfarm-workers.sbatch.
@Suite("Slurm: idle exit and the drill under a real slurmctld/slurmd", .serialized)
struct SlurmDrillTests {
    @Test("worker --exit-when-idle: reads the queue empty, then leaves on its own with status 0; idle from the start too")
    func exitWhenIdle() throws {
        let farm = FarmHarness()
        let port = FarmHarness.freePort()
        #expect(try farm.submit([try TestImages.tinyPages(5, in: farm.folder)]).status == 0)
        let coordinator = try farm.startCoordinator(port: port)
        let started = Date()
        let worker = try farm.startWorker(port: port, ["--engine", "none", "--slots", "2", "--exit-when-idle", "2"], name: "idle")
        let exited = FarmHarness.wait(seconds: 30) { !worker.isRunning }
        #expect(exited, "the worker did not leave: \(farm.logs)")
        if exited {
            #expect(worker.process.terminationStatus == 0, "\(worker.log)")
            #expect(Date().timeIntervalSince(started) >= 2, "left before it was idle for 2 s")
        }
        #expect(try Store(path: farm.storePath, readOnly: true).status().count(.done) == 5, "\(farm.logs)")
        #expect(worker.log.contains("no page in hand for the idle limit"), "\(worker.log)")
        coordinator.terminate()

        // No coordinator at all: nothing ever arrives, so the worker leaves after the limit.
        let alone = try farm.startWorker(port: FarmHarness.freePort(), ["--engine", "none", "--exit-when-idle", "1"], name: "alone")
        #expect(FarmHarness.wait(seconds: 20) { !alone.isRunning }, "\(alone.log)")
        #expect(!alone.isRunning && alone.process.terminationStatus == 0, "\(alone.log)")
        // A bad value is a usage error.
        #expect(try Run.ocrfarm(["worker", "--exit-when-idle", "0"]).status == 64)
    }

    /// The value printed after `label: ` on a line of its own, if any.
    static func value(_ label: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(label + ": ") }.map { String($0.dropFirst(label.count + 2)) }
    }

    @Test("Scripts/drill/slurm: tasks join and read, a scancelled task's leases return in the liveness window, the job ends when the queue is empty",
          .enabled(if: Capabilities.isRoot, "starts munged, slurmctld and slurmd: needs root"))
    func drill() throws {
        let python = try #require(Run.which("python3"), "python3 runs Scripts/drill/slurm")
        let result = try Run.process(python, [Fixtures.packageRoot + "/Scripts/drill/slurm", "--binary", Fixtures.binary, "--pages", "12"],
                                     environment: ["OMP_THREAD_LIMIT": "1"])
        let output = result.text
        // Root is here, and the drill installs slurm-wlm and munge itself: its skip (they cannot be installed) fails.
        if let reason = Self.value("skipped", in: output) {
            Issue.record("the drill skipped itself: \(reason)")
            return
        }
        #expect(result.status == 0, "\(output)\n\(result.stderr)")
        #expect(Self.value("slurm", in: output)?.hasPrefix("slurm") == true, "\(output)")
        #expect(Self.value("pages submitted", in: output) == "12", "\(output)")
        #expect(Self.value("pages done", in: output) == "12", "\(output)")
        #expect(Self.value("lost", in: output) == "0", "\(output)")
        #expect(Self.value("duplicates", in: output) == "0", "\(output)")
        #expect(Self.value("integrity_check", in: output) == "ok", "\(output)")
        for check in ["tasks joined as workers", "leases back after scancel", "batch complete", "job ended on its own",
                      "tasks left when idle", "nothing of the job left running"] {
            #expect(output.contains("ok: \(check): "), "\(check)\n\(output)")
        }
        #expect(Self.value("result", in: output) == "PASS", "\(output)")
    }
}
