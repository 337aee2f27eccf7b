import Testing
import FarmCore
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Two "hosts": network namespaces made by this test, joined by a veth pair. Traffic stays inside them.
final class NamespacePair {
    let coordinatorHost: String
    let workerHost: String
    let coordinatorAddress = "10.231.7.1"
    let workerAddress = "10.231.7.2"

    init?() throws {
        let suffix = String(getpid())
        coordinatorHost = "ocrfarm-c\(suffix)"
        workerHost = "ocrfarm-w\(suffix)"
        guard getuid() == 0, let ip = Run.which("ip") else { return nil }
        let commands: [[String]] = [
            ["netns", "add", coordinatorHost],
            ["netns", "add", workerHost],
            ["link", "add", "veth-c\(suffix)", "type", "veth", "peer", "name", "veth-w\(suffix)"],
            ["link", "set", "veth-c\(suffix)", "netns", coordinatorHost],
            ["link", "set", "veth-w\(suffix)", "netns", workerHost],
            ["-n", coordinatorHost, "addr", "add", "\(coordinatorAddress)/24", "dev", "veth-c\(suffix)"],
            ["-n", workerHost, "addr", "add", "\(workerAddress)/24", "dev", "veth-w\(suffix)"],
            ["-n", coordinatorHost, "link", "set", "veth-c\(suffix)", "up"],
            ["-n", workerHost, "link", "set", "veth-w\(suffix)", "up"],
            ["-n", coordinatorHost, "link", "set", "lo", "up"],
            ["-n", workerHost, "link", "set", "lo", "up"],
        ]
        for arguments in commands {
            let result = try Run.process(ip, arguments)
            if result.status != 0 {
                teardown()
                if arguments.first == "netns" { return nil }  // not allowed here: skip
                throw NamespaceError(message: "ip \(arguments.joined(separator: " ")): \(result.stderr)")
            }
        }
    }

    func teardown() {
        guard let ip = Run.which("ip") else { return }
        _ = try? Run.process(ip, ["netns", "del", coordinatorHost])
        _ = try? Run.process(ip, ["netns", "del", workerHost])
    }

    deinit { teardown() }

    struct NamespaceError: Error { let message: String }
}

@Suite("Workers on another host (network namespaces)")
struct NetworkNamespaceTests {
    @Test("a coordinator and a worker in separate network namespaces joined by a veth pair",
          .enabled(if: Capabilities.canMakeNetworkNamespaces, "makes network namespaces: needs root and iproute2"))
    func separateHosts() throws {
        let hosts = try #require(try NamespacePair(), "`ip netns add` was not allowed")
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(4, in: farm.folder)
        #expect(try farm.submit([pages]).status == 0)
        let ip = try #require(Run.which("ip"))
        let coordinator = try BackgroundProcess(ip, ["netns", "exec", hosts.coordinatorHost, Fixtures.binary, "coordinator",
                                                     "--store", farm.storePath, "--bind", "tcp://\(hosts.coordinatorAddress):5555"],
                                                logPath: farm.folder.file("coordinator.log"))
        let worker = try BackgroundProcess(ip, ["netns", "exec", hosts.workerHost, Fixtures.binary, "worker",
                                                "--connect", "tcp://\(hosts.coordinatorAddress):5555", "--slots", "1"],
                                           logPath: farm.folder.file("worker.log"))
        defer {
            worker.terminate()
            coordinator.terminate()
        }
        let done = try FarmHarness.wait(seconds: 60) {
            try Store(path: farm.storePath, readOnly: true).status().count(.done) == 4
        }
        #expect(done, "coordinator:\n\(coordinator.log)\nworker:\n\(worker.log)")
        // The coordinator warned that it listens on a non-loopback address without encryption.
        #expect(coordinator.log.contains("without encryption"))
        let store = try Store(path: farm.storePath, readOnly: true)
        let results = try store.resultCounts()
        #expect(results.pages == 4 && results.rows == 4)
    }
}
