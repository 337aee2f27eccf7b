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
}
