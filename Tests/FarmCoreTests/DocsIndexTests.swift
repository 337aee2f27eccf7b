import Testing
import FarmCore
import FarmRuntime
import TestSupport

/// The docs a newcomer starts from stay current: the module map names every target, the decision index every
/// decision file.
@Suite("Docs index")
struct DocsIndexTests {
    @Test("docs/architecture.md's module map names every target of Package.swift")
    func moduleMapComplete() throws {
        let graph = ModuleGraph(manifest: try FileSystem.readText(Fixtures.packageRoot + "/Package.swift"))
        let architecture = try FileSystem.readText(Fixtures.packageRoot + "/docs/architecture.md")
        let start = try #require(architecture.firstRange(of: "## 4. Modules"))
        let end = try #require(architecture[start.upperBound...].firstRange(of: "\n## "))
        let map = architecture[start.upperBound..<end.lowerBound]
        for (name, module) in graph.modules where module.kind != .testTarget {
            let named = map.contains("`\(name)`")
            #expect(named, "the module map (§4) does not name \(name)")
        }
    }

    @Test("docs/decisions/README.md links every decision file, and only files that exist")
    func decisionIndexComplete() throws {
        let folder = Fixtures.packageRoot + "/docs/decisions"
        let index = try FileSystem.readText(folder + "/README.md")
        let files = try FileSystem.entries(folder).filter { $0.first?.isNumber == true && $0.hasSuffix(".md") }
        #expect(files.count >= 80)
        for file in files { #expect(index.contains("(\(file))"), "README.md does not list \(file)") }
        for line in index.split(separator: "\n") where line.hasPrefix("| 0") {
            guard let open = line.firstRange(of: "]("), let close = line[open.upperBound...].firstIndex(of: ")") else {
                Issue.record("a row without a link: \(line)")
                continue
            }
            let linked = String(line[open.upperBound..<close])
            #expect(files.contains(linked), "README.md links \(linked), which is not there")
        }
    }
}
