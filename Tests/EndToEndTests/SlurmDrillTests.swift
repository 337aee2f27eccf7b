import Testing
import FarmStore
import TestSupport
import Foundation

/// `worker --exit-when-idle`, which lets a Slurm array task end when the queue is empty, and Scripts/drill/slurm at
/// its short default size: a real munged, slurmctld and slurmd on this host run Deploy/slurm/ocrfarm-workers.sbatch.
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
}
