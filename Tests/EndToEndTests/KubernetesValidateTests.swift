import Testing
import TestSupport
import Foundation

/// Deploy/kubernetes validated against Kubernetes' own OpenAPI schemas by kubernetes-validate (Scripts/validators
/// installs it into the validators' venv), strictly (an unknown field is an error), for the oldest Kubernetes the
/// files claim (kustomization.yaml's "Needs Kubernetes X.Y or later") and the newest the validator knows.
@Suite("Kubernetes manifests: Kubernetes' own schemas (kubernetes-validate)", .serialized)
struct KubernetesValidateTests {
    static let folder = Fixtures.packageRoot + "/Deploy/kubernetes"
    static var tool: String { Fixtures.packageRoot + "/.build/validators/bin/kubernetes-validate" }

    /// The oldest version the files claim: "Needs Kubernetes 1.25 or later" in kustomization.yaml.
    static func claimedVersion() throws -> String? {
        let text = try String(contentsOfFile: folder + "/kustomization.yaml", encoding: .utf8)
        guard let match = text.firstMatch(of: /Needs Kubernetes (\d+\.\d+) or later/) else { return nil }
        return String(match.1)
    }

    /// The newest Kubernetes whose schemas the installed kubernetes-validate ships.
    static func newestVersion() throws -> String {
        let script = "import kubernetes_validate.utils as u; print(u.latest_version())"
        let result = try Run.process(FormatValidators.python, ["-c", script])
        guard result.status == 0 else { throw Failure.tool(result.stderr) }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    enum Failure: Error { case tool(String) }

    /// What kubernetes-validate says is wrong with `files` for `version` (empty: every resource passed). A resource
    /// it has no schema for (a WARN) counts as a problem: it was not validated.
    static func problems(_ files: [String], version: String) throws -> [String] {
        let result = try Run.process(tool, ["--strict", "--kubernetes-version", version] + files)
        let lines = (result.text + "\n" + result.stderr).split(separator: "\n").map(String.init)
        var problems = lines.filter { $0.hasPrefix("ERROR") || $0.hasPrefix("WARN") }
        if result.status != 0 && problems.isEmpty { problems.append("exit \(result.status): \(lines.joined(separator: " "))") }
        return problems
    }

    /// The files kustomization.yaml lists (the Kustomization itself is kustomize's, not a Kubernetes resource).
    static func resources() throws -> [String] {
        let text = try String(contentsOfFile: folder + "/kustomization.yaml", encoding: .utf8)
        let documents = try DeployChecks.yamlDocuments(text)
        return DeployChecks.strings(DeployChecks.dictionary(documents.first)["resources"]).map { folder + "/" + $0 }
    }

    @Test("every resource validates strictly for the oldest claimed and the newest known Kubernetes; broken copies fail",
          .enabled(if: Capabilities.hasFormatValidators, "Scripts/validators installs kubernetes-validate (Scripts/test runs it)"))
    func validate() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.tool), "kubernetes-validate is missing: run Scripts/validators")
        let oldest = try #require(try Self.claimedVersion(), "kustomization.yaml does not say which Kubernetes it needs")
        let newest = try Self.newestVersion()
        #expect(newest.split(separator: ".").count >= 2 && newest != oldest, "newest: \(newest)")
        let files = try Self.resources()
        #expect(files.count == 2, "\(files)")
        for version in [oldest, newest] {
            #expect(try Self.problems(files, version: version) == [], "Kubernetes \(version)")
            // Every resource was checked: 3 in coordinator.yaml (two Services, the StatefulSet), 1 in worker.yaml.
            let result = try Run.process(Self.tool, ["--strict", "--kubernetes-version", version] + files)
            #expect(result.text.split(separator: "\n").filter { $0.contains(" passed for resource ") }.count == 4, "\(result.text)")
        }

        // The validator fails a misspelled field, a wrong type, a missing required field and an unknown kind.
        let worker = try String(contentsOfFile: Self.folder + "/worker.yaml", encoding: .utf8)
        let breakages = [
            worker.replacingOccurrences(of: "runAsNonRoot: true", with: "runAsNonroot: true"),
            worker.replacingOccurrences(of: "replicas: 2", with: "replicas: two"),
            // A container without its (required) name.
            worker.replacingOccurrences(of: "        - name: worker\n          image: ocrfarm:latest", with: "        - image: ocrfarm:latest"),
            worker.replacingOccurrences(of: "kind: Deployment", with: "kind: Deploymnt"),
        ]
        let scratch = TemporaryDirectory("k8s-validate")
        for (n, copy) in breakages.enumerated() {
            #expect(copy != worker, "breakage \(n) changed nothing")
            let path = scratch.write("worker-\(n).yaml", text: copy)
            #expect(try !Self.problems([path], version: oldest).isEmpty, "breakage \(n) passed")
        }
    }
}
