import Testing
import FarmCore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A coordinator listening beyond loopback in clear text says so; with CURVE it has nothing to warn about.
/// It binds tcp://0.0.0.0:PORT inside a network namespace this test makes (only its own loopback is up, so nothing
/// outside can reach the clear-text listener), and the probe connects via 127.0.0.1 in the same namespace.
@Suite("Plain-text warning (end to end)", .serialized)
struct PlainTextWarningTests {
    static let warning = "listening on a non-loopback address without encryption"

    /// A network namespace with only its loopback up; nil where `ip netns add` is not allowed.
    final class IsolatedHost {
        let name = "ocrfarm-pt\(getpid())"
        let ip: String

        init?() throws {
            guard getuid() == 0, let ip = Run.which("ip") else { return nil }
            self.ip = ip
            _ = try? Run.process(ip, ["netns", "del", name])
            guard try Run.process(ip, ["netns", "add", name]).status == 0 else { return nil }
            let up = try Run.process(ip, ["-n", name, "link", "set", "lo", "up"])
            if up.status != 0 {
                _ = try? Run.process(ip, ["netns", "del", name])
                return nil
            }
        }

        /// The arguments that run `binary arguments` inside the namespace, through `ip`.
        func exec(_ arguments: [String]) -> [String] { ["netns", "exec", name, Fixtures.binary] + arguments }

        deinit { _ = try? Run.process(ip, ["netns", "del", name]) }
    }

    /// Starts a coordinator on tcp://0.0.0.0:PORT in `host`, waits until it answers a probe on 127.0.0.1 there,
    /// stops it and returns its log.
    func logOfCoordinator(_ farm: FarmHarness, in host: IsolatedHost, curve: [String], probe: [String]) throws -> String {
        let port = FarmHarness.freePort()
        let coordinator = try BackgroundProcess(host.ip, host.exec(["coordinator", "--store", farm.storePath,
                                                                    "--bind", "tcp://0.0.0.0:\(port)", "--log-format", "json"] + curve),
                                                logPath: farm.folder.file("coordinator-\(port).log"))
        let answered = try FarmHarness.wait(seconds: 20) {
            try Run.process(host.ip, host.exec(["health", "--connect", "tcp://127.0.0.1:\(port)", "--timeout", "1"] + probe)).status == 0
        }
        #expect(answered, "\(coordinator.log)")
        #expect(coordinator.terminate() == 0, "\(coordinator.log)")
        return coordinator.log
    }

    @Test("binding 0.0.0.0 without CURVE logs the plain-text warning (with the endpoint); with CURVE it does not",
          .enabled(if: Capabilities.canMakeNetworkNamespaces, "listens on 0.0.0.0 inside a network namespace: needs root and iproute2"))
    func warning() throws {
        let host = try #require(try IsolatedHost(), "`ip netns add` was not allowed")
        let farm = FarmHarness()
        #expect(try farm.submit([try TestImages.tinyPages(1, in: farm.folder)]).status == 0)

        let clear = try logOfCoordinator(farm, in: host, curve: [], probe: [])
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
            farm, in: host, curve: ["--curve-secret", farm.folder.file("coordinator.key"), "--authorized-workers", authorized],
            probe: ["--curve-secret", farm.folder.file("probe.key"), "--coordinator-key", farm.folder.file("coordinator.pub")])
        #expect(encrypted.contains("coordinator started") && encrypted.contains("\"curve\":\"on"), "\(encrypted)")
        #expect(!encrypted.contains(Self.warning), "\(encrypted)")
    }
}
