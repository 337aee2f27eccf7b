import Testing
import TestSupport

/// Scripts/bench/scale at its short size against the built coordinator: 50 simulated workers (the real wire
/// protocol over pyzmq, 1 s a page, one slot each, no prefetch) for a 4 s window, then 5 of them killed at once
/// and the coordinator killed and restarted. Checked by the bench on the store: nothing lost or done twice.
@Suite("Scale bench: 50 simulated workers, kills and a coordinator restart")
struct ScaleBenchTests {
    static func value(_ label: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(label + ": ") }.map { String($0.dropFirst(label.count + 2)) }
    }

    @Test("N = 50: >= 0.95 of the ideal pages/s, p99 wait <= 50 ms, killed workers' leases back in 3 s, all rejoin, 0 lost, 0 duplicated")
    func shortRun() throws {
        let python = try #require(Run.which("python3"), "python3 runs Scripts/bench/scale")
        let result = try Run.process(python, [Fixtures.packageRoot + "/Scripts/bench/scale", "--binary", Fixtures.binary,
                                              "--sizes", "50", "--window", "4", "--kill", "5"])
        let output = result.text + "\n" + result.stderr
        #expect(result.status == 0, "\(output)")
        let ratio = Self.value("N=50 ratio", in: output).flatMap(Double.init)
        #expect((ratio ?? 0) >= 0.95, "\(output)")
        let p99 = Self.value("N=50 p99 ms", in: output).flatMap(Double.init)
        #expect((p99 ?? .infinity) <= 50, "\(output)")
        #expect(Self.value("N=50 lost", in: output) == "0", "\(output)")
        #expect(Self.value("N=50 duplicated", in: output) == "0", "\(output)")
        let back = Self.value("leases back s", in: output).flatMap { Double($0.prefix { $0 != " " }) }
        #expect((back ?? .infinity) <= 3.5, "\(output)")
        #expect(Self.value("rejoined", in: output) == "45 of 45", "\(output)")
        #expect(Self.value("result", in: output) == "PASS", "\(output)")
    }
}
