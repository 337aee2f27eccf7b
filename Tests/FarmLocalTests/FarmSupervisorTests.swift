import Foundation
import Testing
import FarmCore
import FarmLocal
import FarmRuntime
import FarmStore
import TestSupport

/// The loop `run` and `watch` share, with a real embedded coordinator over a real store and real worker processes.
/// Serialized: `Shutdown` is one flag for the whole process.
@Suite("Farm supervisor", .serialized)
struct FarmSupervisorTests {
    let folder = TemporaryDirectory("farm-supervisor")

    func settings(workers: Int = 1, executable: String) -> LocalFarmSettings {
        LocalFarmSettings(storePath: folder.file("farm.db"), workers: workers, slots: 1, engine: "none", languages: ["eng"],
                          maxAttempts: 3, retryDelay: 1, heartbeatMilliseconds: 200, executable: executable)
    }

    @Test("without a farm the loop runs the step until it is finished, and says no signal ended it")
    func stepsWithoutFarm() throws {
        Shutdown.reset()
        let supervisor = try FarmSupervisor(starting: nil)
        #expect(!supervisor.runsFarm)
        var turns = 0
        let interrupted = try supervisor.supervise(pauseMilliseconds: 1) {
            turns += 1
            return turns == 3 ? .finished : .goOn
        }
        #expect(turns == 3)
        #expect(!interrupted)
    }

    @Test("a signal ends the loop and is reported as the end")
    func signalEnds() throws {
        Shutdown.reset()
        defer { Shutdown.reset() }
        let supervisor = try FarmSupervisor(starting: nil)
        var turns = 0
        let interrupted = try supervisor.supervise(pauseMilliseconds: 1) {
            turns += 1
            if turns == 2 { Shutdown.request() }
            return .goOn
        }
        #expect(turns == 2)
        #expect(interrupted)
    }

    @Test("workers that keep exiting end the loop with a failure naming the log, after 20 replacements each")
    func workersKeepExiting() throws {
        Shutdown.reset()
        let supervisor = try FarmSupervisor(starting: settings(executable: "/bin/false"))
        defer { supervisor.stop() }
        #expect(supervisor.runsFarm)
        var turns = 0
        let started = Clock.monotonicMilliseconds
        do {
            _ = try supervisor.supervise(pauseMilliseconds: 10) {
                turns += 1
                return Clock.monotonicMilliseconds - started > 30_000 ? .finished : .goOn
            }
            Issue.record("the loop ended without a failure after \(turns) turns")
        } catch let failure as LocalFarmFailure {
            #expect(failure.description == "workers keep exiting (last status 1); see \(folder.file("farm.db")).log")
            #expect(turns >= 20)
        }
    }

    @Test("a graceful stop ends the workers and gives back the leases left in the store")
    func stopGivesBackLeases() throws {
        Shutdown.reset()
        let store = try Store(path: folder.file("farm.db"))
        let pages = (0..<2).map { NewPage(source: RawPath("/data/p-\($0).png"), index: 0, kind: .image) }
        _ = try store.add([NewDocument(name: "doc", source: RawPath("/data/doc"), contentHash: "doc", priority: 0,
                                       options: PageOptions(), pages: pages)])
        // A worker that sleeps, whatever its arguments: it stays until the stop's SIGTERM.
        let sleeper = folder.write("sleeper", text: "#!/bin/sh\nexec sleep 60\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sleeper)
        let supervisor = try FarmSupervisor(starting: settings(executable: sleeper))
        defer { supervisor.stop() }
        // The workers here never connect, so no lease is the coordinator's: this one is taken as a worker would.
        let queued = try store.queuedPages(limit: 1)
        let page = try #require(queued.first)
        #expect(try store.lease(page.id, to: WorkerID("w1"), now: Clock.now, expires: Clock.now + 3600) != nil)
        #expect(try store.counts(of: [page.document])[.leased] == 1)
        #expect(supervisor.stop(givingBackLeasesOf: store, graceMilliseconds: 2000) == 1)
        #expect(try store.counts(of: [page.document])[.leased] == nil)
        #expect(try store.counts(of: [page.document])[.queued] == 2)
        // The workers are gone and were not counted as exits to replace: the check after the stop finds nothing.
        try supervisor.check()
    }
}
