import Testing
import TestSupport
import Foundation

/// The short versions of the drills in Scripts/drill, run against the built binary: `soak` (workers and the
/// coordinator SIGKILLed while 10,000 pages go through; every page read once) and `rss` (a real-Tesseract worker's
/// resident set stays flat over 300 pages). The long versions are run by hand: see docs/operations.md.
@Suite("Drills (end to end)", .serialized)
struct SoakDrillTests {
    /// Runs `Scripts/drill/NAME` with python3 and returns its exit status, output and the `summary` line's fields.
    func drill(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String, summary: [String: String]) {
        let python = try #require(Run.which("python3"), "the drills are python3 programs")
        let script = Fixtures.packageRoot + "/Scripts/drill/" + name
        let result = try Run.process(python, [script, "--binary", Fixtures.binary] + arguments,
                                     environment: ["OMP_THREAD_LIMIT": "1"])
        let output = result.text + result.stderr
        var summary: [String: String] = [:]
        if let line = result.text.split(separator: "\n").last(where: { $0.hasPrefix("summary ") }) {
            for field in line.split(separator: " ").dropFirst() {
                let parts = field.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { summary[String(parts[0])] = String(parts[1]) }
            }
        }
        return (result.status, output, summary)
    }

    @Test("soak: 10,000 pages while workers are SIGKILLed and the coordinator once; every page done with one result")
    func soak() throws {
        let run = try drill("soak", ["--pages", "10000", "--kill-every", "0.4"])
        #expect(run.status == 0, "\(run.output)")
        let summary = run.summary
        #expect(summary["submitted"] == "10000", "\(run.output)")
        #expect(summary["done"] == "10000")
        #expect(summary["failed"] == "0")
        #expect(summary["results"] == "10000")
        #expect(summary["distinct_results"] == "10000")
        #expect(summary["integrity"] == "ok")
        #expect(summary["coordinator_kills"] == "1")
        #expect(Int(summary["worker_kills"] ?? "") ?? 0 >= 1, "\(run.output)")
        #expect(Double(summary["pages_per_second"] ?? "") ?? 0 > 0)
        #expect(summary["ok"] == "yes")
    }

    @Test("soak refuses nonsense options with a usage error")
    func soakUsage() throws {
        let run = try drill("soak", ["--pages", "0"])
        #expect(run.status == 2)
        #expect(run.output.contains("--pages must be at least 1"), "\(run.output)")
    }

    /// The resident set over real pages must stay flat. It had climbed 1.43x over 2,000 pages in a sawtooth: the
    /// worker's job queue kept up to 1,024 taken jobs (each with its page's bytes) alive until it compacted.
    @Test("rss: a real-Tesseract worker's resident set at page 300 is within 1.1x of page 60")
    func workerMemory() throws {
        let formats = Fixtures.directory + "/formats/"
        let images = ["g4.tif", "page.pnm", "alpha.png", "page.webp", "cmyk.jpg"].map { formats + $0 }
        let run = try drill("rss", ["--pages", "300", "--early", "60", "--raw", "--images"] + images)
        #expect(run.summary["pages"] == "300", "\(run.output)")
        #expect(run.summary["failed"] == "0", "\(run.output)")
        let ratio = try #require(Double(run.summary["ratio"] ?? ""), "\(run.output)")
        #expect(ratio > 0.5 && ratio <= 1.1, "\(run.output)")
        #expect(run.status == 0, "\(run.output)")
    }
}
