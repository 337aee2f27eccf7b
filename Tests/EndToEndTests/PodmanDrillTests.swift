import Testing
import TestSupport

/// Scripts/drill/podman: the image built from Deploy/Containerfile with podman on a debootstrap'd Debian 12 base
/// (made once and cached under /var/cache/ocrfarm; no registry is reachable) runs a worker against a coordinator on
/// the host. The first run on a machine debootstraps the base and downloads the runtime packages (minutes); later
/// runs reuse the base and podman's layer cache. A sandbox that refuses containers fails this test with podman's
/// own words (the drill's `refused:` line), never a skip.
@Suite("Container: podman builds Deploy/Containerfile and runs a worker")
struct PodmanDrillTests {
    static func value(_ label: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(label + ": ") }.map { String($0.dropFirst(label.count + 2)) }
    }

    @Test("the image builds, runs as non-root with OMP_THREAD_LIMIT=1 and no compiler, and its worker reads the host coordinator's pages",
          .enabled(if: Capabilities.isRoot, "podman and debootstrap run as root here"))
    func drill() throws {
        let python = try #require(Run.which("python3"), "python3 runs Scripts/drill/podman")
        // The test binary links the Swift runtime dynamically; the image takes the release binary built with
        // --static-swift-stdlib, which Scripts/test builds before the tests (a build from inside `swift test` would
        // wait forever for the build folder's lock).
        let binary = Fixtures.packageRoot + "/.build/release/ocrfarm"
        let linked = try Run.process("/usr/bin/ldd", [binary])
        guard linked.status == 0, !linked.text.contains("libswiftCore") else {
            Issue.record("\(binary) is missing or links the Swift runtime: run swift build -c release --static-swift-stdlib --product ocrfarm")
            return
        }
        let result = try Run.process(python, [Fixtures.packageRoot + "/Scripts/drill/podman", "--binary", binary])
        let output = result.text + "\n" + result.stderr
        if let refusal = Self.value("refused", in: output) {
            Issue.record("this machine's sandbox refused to run containers: \(refusal)")
            return
        }
        #expect(Self.value("skipped", in: output) == nil, "\(output)")
        #expect(result.status == 0, "\(output)")
        let user = Self.value("user", in: output)
        #expect(user != nil && user != "0", "\(output)")
        #expect(Self.value("OMP_THREAD_LIMIT", in: output) == "1", "\(output)")
        #expect(Self.value("pages done", in: output) == "4 of 4", "\(output)")
        #expect(Self.value("image size MB", in: output).flatMap(Int.init) != nil, "\(output)")
        #expect(Self.value("result", in: output) == "PASS", "\(output)")
    }
}
