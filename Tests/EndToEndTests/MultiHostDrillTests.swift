import Testing
import TestSupport

/// Scripts/drill/multihost at its short default size against the built binary: a coordinator host and three
/// worker hosts in network namespaces; a worker host's link is cut and restored and the coordinator is killed
/// with SIGKILL and restarted, all mid-batch. Skipped (with the script's reason) where namespaces are not allowed.
@Suite("Multi-host drill (network namespaces)")
struct MultiHostDrillTests {
    /// The value printed after `label: ` on a line of its own, if any.
    static func value(_ label: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(label + ": ") }.map { String($0.dropFirst(label.count + 2)) }
    }

    @Test("link cut, rejoin and a coordinator SIGKILL mid-batch: no page lost or done twice, the store intact",
          .enabled(if: Capabilities.canMakeNetworkNamespaces, "runs hosts in network namespaces: needs root and iproute2"))
    func drill() throws {
        let python = try #require(Run.which("python3"), "python3 runs Scripts/drill/multihost")
        let result = try Run.process(python, [Fixtures.packageRoot + "/Scripts/drill/multihost", "--binary", Fixtures.binary],
                                     environment: ["OMP_THREAD_LIMIT": "1"])
        let output = result.text
        // The condition above says namespaces can be made here: the drill's own skip is then a failure.
        if let reason = Self.value("skipped", in: output) {
            Issue.record("the drill skipped itself: \(reason)")
            return
        }
        #expect(result.status == 0, "\(output)\n\(result.stderr)")
        let submitted = Self.value("pages submitted", in: output).flatMap { Int($0.prefix { $0.isNumber }) }
        #expect((submitted ?? 0) >= 2000, "\(output)")
        #expect(Self.value("pages done", in: output).flatMap(Int.init) == submitted, "\(output)")
        #expect(Self.value("lost", in: output) == "0", "\(output)")
        #expect(Self.value("duplicates", in: output) == "0", "\(output)")
        #expect(Self.value("integrity_check", in: output) == "ok", "\(output)")
        #expect(Self.value("result", in: output) == "PASS", "\(output)")
    }
}
