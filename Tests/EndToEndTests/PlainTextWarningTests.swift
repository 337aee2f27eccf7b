import Testing
import FarmCore
import TestSupport
import Foundation

/// A coordinator listening beyond loopback in clear text says so; with CURVE it has nothing to warn about.
/// It binds tcp://0.0.0.0:PORT (listening on every interface sends nothing anywhere); the probe connects via 127.0.0.1.
@Suite("Plain-text warning (end to end)", .serialized)
struct PlainTextWarningTests {
    static let warning = "listening on a non-loopback address without encryption"

    /// Starts a coordinator on tcp://0.0.0.0:PORT, waits until it answers a probe on 127.0.0.1, stops it and
    /// returns its log.
    func logOfCoordinator(_ farm: FarmHarness, curve: [String], probe: [String]) throws -> String {
        let port = FarmHarness.freePort()
        let coordinator = try BackgroundProcess(Fixtures.binary, ["coordinator", "--store", farm.storePath,
                                                                  "--bind", "tcp://0.0.0.0:\(port)", "--log-format", "json"] + curve,
                                                logPath: farm.folder.file("coordinator-\(port).log"))
        let answered = try FarmHarness.wait(seconds: 20) {
            try Run.ocrfarm(["health", "--connect", "tcp://127.0.0.1:\(port)", "--timeout", "1"] + probe).status == 0
        }
        #expect(answered, "\(coordinator.log)")
        #expect(coordinator.terminate() == 0, "\(coordinator.log)")
        return coordinator.log
    }

    @Test("binding 0.0.0.0 without CURVE logs the plain-text warning (with the endpoint); with CURVE it does not")
    func warning() throws {
        let farm = FarmHarness()
        #expect(try farm.submit([try TestImages.tinyPages(1, in: farm.folder)]).status == 0)

        let clear = try logOfCoordinator(farm, curve: [], probe: [])
        let warnings = clear.split(separator: "\n").filter { $0.contains(Self.warning) }
        #expect(warnings.count == 1, "\(clear)")
        let event = warnings.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        #expect(event?["level"] == "warn" && event?["endpoint"]?.hasPrefix("tcp://0.0.0.0:") == true, "\(clear)")

        for name in ["coordinator", "probe"] {
            #expect(try Run.ocrfarm(["keygen", "--out", farm.folder.file(name)]).status == 0)
        }
        let authorized = farm.folder.file("authorized")
        try FileManager.default.createDirectory(atPath: authorized, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: farm.folder.file("probe.pub"), toPath: authorized + "/probe.pub")
        let encrypted = try logOfCoordinator(
            farm, curve: ["--curve-secret", farm.folder.file("coordinator.key"), "--authorized-workers", authorized],
            probe: ["--curve-secret", farm.folder.file("probe.key"), "--coordinator-key", farm.folder.file("coordinator.pub")])
        #expect(encrypted.contains("coordinator started") && encrypted.contains("\"curve\":\"on"), "\(encrypted)")
        #expect(!encrypted.contains(Self.warning), "\(encrypted)")
    }
}
