import Testing
import FarmCore
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The checkers for the files in Deploy/. Each returns the problems it finds (empty: the file passes), so a test can
/// show both that the real file passes and that a broken copy does not.
enum DeployChecks {
    static let root = Fixtures.packageRoot + "/Deploy"

    static func text(_ name: String) throws -> String { try String(contentsOfFile: root + "/" + name, encoding: .utf8) }

    // MARK: systemd

    /// `systemd-analyze verify` (which exits 0 on unknown keys and bad values, so any output is a problem too) and
    /// `systemd-analyze security --offline` with an exposure threshold, on a copy whose ExecStart points at the built
    /// binary (verify insists the binary exists). `instance` names the copy for a template unit.
    static func systemdProblems(unit text: String, fileName: String) throws -> [String] {
        let folder = TemporaryDirectory("deploy-systemd")
        let path = folder.write(fileName, text: text.replacingOccurrences(of: "/usr/local/bin/ocrfarm", with: Fixtures.binary))
        var problems: [String] = []
        let verify = try Run.process("/usr/bin/systemd-analyze", ["verify", "--man=no", path])
        let said = (verify.text + verify.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
        if verify.status != 0 || !said.isEmpty { problems.append("verify (exit \(verify.status)): \(said)") }
        // Exposure is 0.0 (locked down) to 10.0 (unprotected); --threshold is on a 0-100 scale. Ours are 1.4.
        let security = try Run.process("/usr/bin/systemd-analyze", ["security", "--offline=true", "--threshold=20", "--no-pager", path])
        if security.status != 0 {
            let overall = security.text.split(separator: "\n").last { $0.contains("Overall exposure") } ?? "?"
            problems.append("security (exit \(security.status)): \(overall) \(security.stderr)")
        }
        return problems
    }

    // MARK: YAML

    /// Every YAML document in `text`, parsed by PyYAML (safe_load_all) and handed over as JSON.
    static func yamlDocuments(_ text: String) throws -> [Any] {
        let script = "import sys, json, yaml\njson.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)"
        let output = try Run.process("/usr/bin/python3", ["-c", script], stdin: Data(text.utf8))
        guard output.status == 0 else { throw DeployError.yaml(output.stderr) }
        guard let documents = try JSONSerialization.jsonObject(with: output.stdout) as? [Any] else { throw DeployError.yaml("not a list") }
        return documents
    }

    enum DeployError: Error { case yaml(String) }

    static func dictionary(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }
    static func list(_ value: Any?) -> [Any] { value as? [Any] ?? [] }
    static func strings(_ value: Any?) -> [String] { list(value).compactMap { $0 as? String } }

    /// A Kubernetes quantity in bytes ("448Mi", "1Gi", "512M").
    static func bytes(_ quantity: String) -> Double? {
        let units: [(String, Double)] = [("Ki", 1024), ("Mi", 1024 * 1024), ("Gi", 1024 * 1024 * 1024),
                                         ("K", 1e3), ("M", 1e6), ("G", 1e9)]
        for (suffix, factor) in units where quantity.hasSuffix(suffix) {
            return Double(quantity.dropLast(suffix.count)).map { $0 * factor }
        }
        return Double(quantity)
    }

    /// What a container in `documents` runs: (name, args, env). Looks into Deployments and StatefulSets.
    static func containers(_ documents: [Any]) -> [(kind: String, spec: [String: Any], container: [String: Any])] {
        documents.flatMap { document -> [(kind: String, spec: [String: Any], container: [String: Any])] in
            let object = dictionary(document)
            let spec = dictionary(object["spec"])
            let podSpec = dictionary(dictionary(spec["template"])["spec"])
            return list(podSpec["containers"]).map { (object["kind"] as? String ?? "?", object, dictionary($0)) }
        }
    }

    static func environment(_ container: [String: Any]) -> [String: String] {
        var result: [String: String] = [:]
        for entry in list(container["env"]) {
            let entry = dictionary(entry)
            if let name = entry["name"] as? String { result[name] = entry["value"] as? String }
        }
        return result
    }

    /// The problems in the Kubernetes manifests: fields, selectors, names and ports that must agree, probes, sizing.
    static func kubernetesProblems(_ documents: [Any]) -> [String] {
        var problems: [String] = []
        let objects = documents.map { dictionary($0) }
        for object in objects {
            for field in ["apiVersion", "kind"] where (object[field] as? String ?? "").isEmpty {
                problems.append("a document has no \(field)")
            }
            if object["kind"] as? String != "Kustomization", (dictionary(object["metadata"])["name"] as? String ?? "").isEmpty {
                problems.append("a \(object["kind"] ?? "?") has no metadata.name")
            }
        }
        let services = objects.filter { $0["kind"] as? String == "Service" }
        let statefulSets = objects.filter { $0["kind"] as? String == "StatefulSet" }
        let deployments = objects.filter { $0["kind"] as? String == "Deployment" }
        if statefulSets.count != 1 { problems.append("expected one StatefulSet (the coordinator), found \(statefulSets.count)") }
        if deployments.count != 1 { problems.append("expected one Deployment (the workers), found \(deployments.count)") }

        for workload in statefulSets + deployments {
            let name = dictionary(workload["metadata"])["name"] as? String ?? "?"
            let spec = dictionary(workload["spec"])
            let matchLabels = dictionary(dictionary(spec["selector"])["matchLabels"])
            let labels = dictionary(dictionary(dictionary(spec["template"])["metadata"])["labels"])
            for (key, value) in matchLabels where labels[key] as? String != value as? String {
                problems.append("\(name): selector \(key)=\(value) does not match the pod template's labels")
            }
            if matchLabels.isEmpty { problems.append("\(name): no selector.matchLabels") }
            let podSpec = dictionary(dictionary(spec["template"])["spec"])
            if dictionary(podSpec["securityContext"])["runAsNonRoot"] as? Bool != true { problems.append("\(name): not runAsNonRoot") }
        }

        if let coordinator = statefulSets.first {
            let spec = dictionary(coordinator["spec"])
            let serviceName = spec["serviceName"] as? String ?? ""
            let governing = services.first { dictionary($0["metadata"])["name"] as? String == serviceName }
            if governing == nil { problems.append("StatefulSet serviceName '\(serviceName)' names no Service here") }
            else if dictionary(governing?["spec"])["clusterIP"] as? String != "None" {
                problems.append("StatefulSet serviceName '\(serviceName)' is not a headless Service")
            }
            let claims = list(spec["volumeClaimTemplates"]).map { dictionary(dictionary($0)["metadata"])["name"] as? String ?? "" }
            if claims.isEmpty { problems.append("the coordinator StatefulSet has no volumeClaimTemplates") }
            let podLabels = dictionary(dictionary(dictionary(spec["template"])["metadata"])["labels"])
            for service in services {
                let selector = dictionary(dictionary(service["spec"])["selector"])
                for (key, value) in selector where podLabels[key] as? String != value as? String {
                    problems.append("Service \(dictionary(service["metadata"])["name"] ?? "?") selects \(key)=\(value), not the coordinator")
                }
            }
            for (_, _, container) in containers([coordinator]) {
                let args = strings(container["args"])
                if args.first != "coordinator" { problems.append("the StatefulSet's container does not run 'coordinator': \(args)") }
                let mounts = list(container["volumeMounts"]).map { dictionary($0) }
                let storeFlag = args.firstIndex(of: "--store").map { args.indices.contains($0 + 1) ? args[$0 + 1] : "" } ?? ""
                let storeMount = mounts.first { storeFlag.hasPrefix(($0["mountPath"] as? String ?? "\u{0}") + "/") }
                if storeMount == nil || !claims.contains(storeMount?["name"] as? String ?? "") {
                    problems.append("the store '\(storeFlag)' is not on the persistent volume claim \(claims)")
                }
                for probe in ["readinessProbe", "livenessProbe"] {
                    problems += probeProblems(container[probe], owner: "coordinator \(probe)")
                }
            }
        }

        if let workers = deployments.first {
            for (_, _, container) in containers([workers]) {
                let args = strings(container["args"])
                let env = environment(container)
                if args.first != "worker" { problems.append("the Deployment's container does not run 'worker': \(args)") }
                let connect = args.firstIndex(of: "--connect").map { args.indices.contains($0 + 1) ? args[$0 + 1] : "" }
                    ?? env["OCRFARM_CONNECT"] ?? ""
                if !servesAddress(connect, services: services) {
                    problems.append("workers connect to '\(connect)', which is no Service port here")
                }
                problems += probeProblems(container["readinessProbe"], owner: "worker readinessProbe")
                let resources = dictionary(container["resources"])
                let requests = dictionary(resources["requests"])
                let limits = dictionary(resources["limits"])
                for key in ["cpu", "memory"] {
                    if requests[key] == nil { problems.append("workers have no \(key) request") }
                    if limits[key] == nil { problems.append("workers have no \(key) limit") }
                }
                // docs/decisions/0007-worker-returns-memory-between-pages.md: about 90 MB per eng slot while reading (Scripts/bench/memory).
                let slots = Int(env["OCRFARM_SLOTS"] ?? "") ?? 0
                if slots < 1 { problems.append("workers do not set OCRFARM_SLOTS (they would count the node's cores)") }
                let memory = bytes(requests["memory"] as? String ?? "") ?? 0
                if memory < Double(slots) * 90e6 {
                    problems.append("workers request \(requests["memory"] ?? "no") memory for \(slots) slots (about 90 MB each)")
                }
                if requests["cpu"] as? String != String(slots) {
                    problems.append("workers request \(requests["cpu"] ?? "no") CPUs for \(slots) slots (one each)")
                }
            }
        }

        for (kind, _, container) in containers(documents) {
            if environment(container)["OMP_THREAD_LIMIT"] != "1" { problems.append("a \(kind)'s container lacks OMP_THREAD_LIMIT=1") }
            let security = dictionary(container["securityContext"])
            if security["allowPrivilegeEscalation"] as? Bool != false { problems.append("a \(kind)'s container allows privilege escalation") }
        }
        return problems
    }

    /// An exec probe running `ocrfarm health --connect tcp://HOST:PORT`.
    static func probeProblems(_ probe: Any?, owner: String) -> [String] {
        let command = strings(dictionary(dictionary(probe)["exec"])["command"])
        guard command.count == 4, command[0] == "ocrfarm", command[1] == "health", command[2] == "--connect",
              command[3].hasPrefix("tcp://")
        else { return ["\(owner) is not an exec probe of 'ocrfarm health --connect tcp://HOST:PORT': \(command)"] }
        return []
    }

    /// Whether `address` (tcp://NAME:PORT) names a Service in these manifests and one of its ports.
    static func servesAddress(_ address: String, services: [[String: Any]]) -> Bool {
        guard address.hasPrefix("tcp://"), let colon = address.lastIndex(of: ":") else { return false }
        let host = String(address[address.index(address.startIndex, offsetBy: 6)..<colon])
        let port = Int(address[address.index(after: colon)...]) ?? -1
        return services.contains { service in
            dictionary(service["metadata"])["name"] as? String == host
                && list(dictionary(service["spec"])["ports"]).contains { dictionary($0)["port"] as? Int == port }
        }
    }

    /// The problems in compose.yaml: a coordinator with its store on a named volume and no published port, workers
    /// that scale and connect to it, OMP_THREAD_LIMIT=1, a health check with `ocrfarm health`.
    static func composeProblems(_ documents: [Any]) -> [String] {
        guard documents.count == 1 else { return ["compose.yaml holds \(documents.count) documents, not 1"] }
        var problems: [String] = []
        let compose = dictionary(documents[0])
        let services = dictionary(compose["services"])
        let coordinator = dictionary(services["coordinator"])
        let worker = dictionary(services["worker"])
        if coordinator.isEmpty || worker.isEmpty { return ["compose.yaml needs services 'coordinator' and 'worker'"] }
        let command = strings(coordinator["command"])
        if command.first != "coordinator" { problems.append("the coordinator service does not run 'coordinator': \(command)") }
        if coordinator["ports"] != nil { problems.append("the coordinator publishes ports: they must stay internal") }
        let volumes = dictionary(compose["volumes"])
        let store = command.firstIndex(of: "--store").map { command.indices.contains($0 + 1) ? command[$0 + 1] : "" } ?? ""
        let onVolume = strings(coordinator["volumes"]).contains { mount in
            let parts = mount.split(separator: ":").map(String.init)
            return parts.count >= 2 && volumes.keys.contains(parts[0]) && store.hasPrefix(parts[1] + "/")
        }
        if !onVolume { problems.append("the store '\(store)' is not on a named volume") }
        let bind = command.firstIndex(of: "--bind").map { command.indices.contains($0 + 1) ? command[$0 + 1] : "" } ?? ""
        let port = bind.split(separator: ":").last.map(String.init) ?? ""
        let workerCommand = strings(worker["command"])
        if workerCommand.first != "worker" { problems.append("the worker service does not run 'worker': \(workerCommand)") }
        if !workerCommand.contains("tcp://coordinator:\(port)") {
            problems.append("workers do not connect to tcp://coordinator:\(port): \(workerCommand)")
        }
        if worker["container_name"] != nil { problems.append("the worker has a container_name, so it cannot scale") }
        if worker["ports"] != nil { problems.append("the worker publishes ports, so it cannot scale") }
        if !(dictionary(worker["deploy"])["replicas"] is Int) { problems.append("the worker has no deploy.replicas") }
        for (name, service) in [("coordinator", coordinator), ("worker", worker)] {
            if dictionary(service["environment"])["OMP_THREAD_LIMIT"] as? String != "1" {
                problems.append("the \(name) service lacks OMP_THREAD_LIMIT=\"1\"")
            }
        }
        let health = strings(dictionary(coordinator["healthcheck"])["test"])
        if Array(health.dropFirst()) != ["ocrfarm", "health", "--connect", "tcp://127.0.0.1:\(port)"] {
            problems.append("the coordinator's healthcheck is not 'ocrfarm health --connect tcp://127.0.0.1:\(port)': \(health)")
        }
        return problems
    }

    // MARK: Containerfile

    /// Instructions of a Containerfile: continuation lines joined, comments dropped, (KEYWORD, rest).
    static func instructions(_ text: String) -> [(String, String)] {
        var result: [(String, String)] = []
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if pending.isEmpty && (trimmed.isEmpty || trimmed.hasPrefix("#")) { continue }
            if trimmed.hasPrefix("#") { continue }
            if trimmed.hasSuffix("\\") { pending += trimmed.dropLast() + " "; continue }
            let full = pending + trimmed
            pending = ""
            let parts = full.split(separator: " ", maxSplits: 1).map(String.init)
            result.append((parts[0].uppercased(), parts.count > 1 ? parts[1] : ""))
        }
        return result
    }

    /// A structural check (hadolint is not available offline): Debian 12 base, an ARG for the languages used by the
    /// install, OMP_THREAD_LIMIT=1 in ENV, a final USER that is not root, the binary as ENTRYPOINT, and a runtime
    /// package for every shared library the built binary needs (readelf NEEDED, mapped with dpkg -S).
    static func containerfileProblems(_ text: String) throws -> [String] {
        var problems: [String] = []
        let steps = instructions(text)
        let from = steps.filter { $0.0 == "FROM" }.map(\.1)
        if let last = from.last, !(last.hasPrefix("debian:12") || last.hasPrefix("debian:bookworm")) {
            problems.append("the image is not built FROM debian:12 or bookworm: \(last)")
        }
        if from.isEmpty { problems.append("no FROM") }
        let args = steps.filter { $0.0 == "ARG" }.map(\.1)
        guard let langs = args.first(where: { $0.hasPrefix("LANGS=") }) else { return problems + ["no ARG LANGS=…"] }
        if !langs.contains("eng") { problems.append("ARG LANGS has no default with eng: \(langs)") }
        let runs = steps.filter { $0.0 == "RUN" }.map(\.1).joined(separator: " ")
        if !runs.contains("${LANGS}") && !runs.contains("$LANGS") { problems.append("no RUN uses $LANGS") }
        if !runs.contains("tesseract-ocr-") { problems.append("no RUN installs tesseract-ocr-LANG packages") }
        let env = steps.filter { $0.0 == "ENV" }.map(\.1).joined(separator: " ")
        if env.range(of: #"(^|\s)OMP_THREAD_LIMIT=1(\s|$)"#, options: .regularExpression) == nil {
            problems.append("ENV does not set OMP_THREAD_LIMIT=1")
        }
        let user = steps.last { $0.0 == "USER" }?.1 ?? "root"
        if user.hasPrefix("root") || user.hasPrefix("0") { problems.append("the image runs as root (USER \(user))") }
        let entry = steps.last { $0.0 == "ENTRYPOINT" }?.1 ?? ""
        if !entry.contains("ocrfarm") { problems.append("the ENTRYPOINT is not ocrfarm: \(entry)") }
        // The neural engine's folder where ocrfarm looks for it (NeuralModels.systemFolder).
        let copies = steps.filter { $0.0 == "COPY" }.map(\.1)
        if !copies.contains(where: { $0.hasSuffix(" /usr/local/lib/ocrfarm/neural") }) {
            problems.append("no COPY puts the neural engine's folder at /usr/local/lib/ocrfarm/neural")
        }

        let elf = try Run.process("/usr/bin/readelf", ["-d", Fixtures.binary])
        let needed = elf.text.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        // The Swift runtime is linked in by --static-swift-stdlib in the release build (checked by hand: no
        // /opt/swift library left in `ldd`, NEEDED adds only libstdc++ and libgcc_s).
        for library in needed where !library.hasPrefix("libswift") && !library.hasPrefix("libdispatch")
            && !library.hasPrefix("libBlocksRuntime") && !library.hasPrefix("libFoundation")
        {
            let owner = try Run.process("/usr/bin/dpkg", ["-S", "*/\(library)"])
            guard owner.status == 0, let package = owner.text.split(separator: ":").first.map(String.init) else {
                problems.append("no Debian package owns \(library)")
                continue
            }
            if package == "libc6" || package == "libgcc-s1" { continue }   // "required": in every Debian image
            if runs.range(of: #"(^|\s)\#(package)(\s|$)"#, options: .regularExpression) == nil {
                problems.append("the binary needs \(library) (package \(package)), which the image does not install")
            }
        }
        return problems
    }

    // MARK: shell

    static func shellcheckProblems(_ path: String) throws -> [String] {
        let output = try Run.process("/usr/bin/shellcheck", ["--format=gcc", path])
        let said = (output.text + output.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
        return output.status == 0 && said.isEmpty ? [] : ["shellcheck (exit \(output.status)): \(said)"]
    }

    // MARK: flags and variables

    /// `OCRFARM_…` variables in `text` that no command's help lists (a misspelt one would be silently ignored).
    static func unknownVariables(_ text: String, allowed extra: Set<String> = []) throws -> [String] {
        var known = extra
        for command in ["coordinator", "worker", "submit", "status", "run"] {
            let help = try Run.ocrfarm(["help", command]).text
            for match in help.matches(of: /\[env (OCRFARM_[A-Z_]+)\]/) { known.insert(String(match.1)) }
        }
        let used = Set(text.matches(of: /OCRFARM_[A-Z_]+/).map { String($0.0) })
        return used.subtracting(known).sorted()
    }

    /// `--flags` given to `command` that its help does not list.
    static func unknownFlags(command: String, in arguments: [String]) throws -> [String] {
        let help = try Run.ocrfarm(["help", command])
        guard help.status == 0 else { return ["ocrfarm help \(command) failed: \(help.stderr)"] }
        return arguments.filter { $0.hasPrefix("--") && !help.text.contains("  \($0) ") }
    }
}

@Suite("Deploy files pass their checkers", .serialized)
struct DeployFilesTests {
    typealias Check = DeployChecks

    @Test("systemd units: systemd-analyze verify is silent and security exposure stays under 2.0; broken copies fail")
    func systemdUnits() throws {
        let coordinator = try Check.text("systemd/ocrfarm-coordinator.service")
        let worker = try Check.text("systemd/ocrfarm-worker@.service")
        #expect(try Check.systemdProblems(unit: coordinator, fileName: "ocrfarm-coordinator.service") == [])
        // A template unit is verified as one of its instances.
        #expect(try Check.systemdProblems(unit: worker, fileName: "ocrfarm-worker@test.service") == [])

        // The checker notices an unknown key, a bad value, a missing binary, and a unit with its sandbox removed.
        let broken = [
            coordinator.replacingOccurrences(of: "ProtectSystem=strict", with: "ProtectSystm=strict"),
            coordinator.replacingOccurrences(of: "Restart=on-failure", with: "Restart=sometimes"),
            coordinator.replacingOccurrences(of: "/usr/local/bin/ocrfarm", with: "/nonexistent/ocrfarm"),
            coordinator.split(separator: "\n").filter { !$0.hasPrefix("Protect") && !$0.hasPrefix("Restrict") && !$0.hasPrefix("SystemCall")
                && !$0.hasPrefix("Private") && !$0.hasPrefix("Capability") && !$0.hasPrefix("DynamicUser") }.joined(separator: "\n"),
        ]
        for copy in broken {
            #expect(try !Check.systemdProblems(unit: copy, fileName: "ocrfarm-coordinator.service").isEmpty)
        }

        for (name, unit) in [("coordinator", coordinator), ("worker", worker)] {
            for line in ["Environment=OMP_THREAD_LIMIT=1", "Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict",
                         "ProtectHome=yes", "PrivateTmp=yes", "CapabilityBoundingSet=\n", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
                         "StartLimitBurst=", "RestartSec="] {
                #expect(unit.contains(line), "the \(name) unit lacks \(line)")
            }
            let exec = unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }.map(String.init) ?? ""
            let arguments = exec.split(separator: " ").map(String.init)
            #expect(arguments.count > 1 && arguments[0] == "ExecStart=/usr/local/bin/ocrfarm" && arguments[1] == name, "\(exec)")
            #expect(try Check.unknownFlags(command: name, in: arguments) == [], "\(exec)")
            #expect(try Check.unknownVariables(unit) == [])
        }
        #expect(coordinator.contains("StateDirectory=ocrfarm") && coordinator.contains("--store /var/lib/ocrfarm/"))
        #expect(try Check.unknownVariables("OCRFARM_CONECT=x") == ["OCRFARM_CONECT"])
    }

    @Test("compose.yaml: the coordinator's store on a volume and its port internal, scalable workers, health check")
    func compose() throws {
        let text = try Check.text("compose.yaml")
        let documents = try Check.yamlDocuments(text)
        #expect(Check.composeProblems(documents) == [])
        #expect(try Check.unknownVariables(text) == [])
        let services = Check.dictionary(Check.dictionary(documents.first)["services"])
        for name in ["coordinator", "worker"] {
            let command = Check.strings(Check.dictionary(services[name])["command"])
            #expect(try Check.unknownFlags(command: name, in: command) == [], "\(command)")
        }

        #expect(throws: (any Error).self) { try Check.yamlDocuments(text + "\n  - : bad: [\n") }
        let published = text.replacingOccurrences(of: "    expose:\n", with: "    ports:\n")
        #expect(Check.composeProblems(try Check.yamlDocuments(published)).contains { $0.contains("publishes ports") })
        let unpinned = text.replacingOccurrences(of: "OMP_THREAD_LIMIT: \"1\"", with: "OMP_THREAD_LIMIT: \"4\"")
        #expect(Check.composeProblems(try Check.yamlDocuments(unpinned)).count == 2)
        let lost = text.replacingOccurrences(of: "tcp://coordinator:5555", with: "tcp://coordinatr:5555")
        #expect(!Check.composeProblems(try Check.yamlDocuments(lost)).isEmpty)
    }

    @Test("Kubernetes: StatefulSet with a claim template and Services, sized Deployment, ocrfarm health probes")
    func kubernetes() throws {
        let names = ["kubernetes/coordinator.yaml", "kubernetes/worker.yaml"]
        let text = try names.map { try Check.text($0) }.joined(separator: "\n---\n")
        let documents = try Check.yamlDocuments(text)
        #expect(Check.kubernetesProblems(documents) == [])
        #expect(try Check.unknownVariables(text) == [])
        for (kind, _, container) in Check.containers(documents) {
            let args = Check.strings(container["args"])
            #expect(try Check.unknownFlags(command: args.first ?? "", in: args) == [], "\(kind): \(args)")
        }
        let kustomization = Check.dictionary(try Check.yamlDocuments(try Check.text("kubernetes/kustomization.yaml")).first)
        #expect(Check.strings(kustomization["resources"]).map { "kubernetes/" + $0 } == names)

        let breakages = [
            ("memory: 448Mi", "memory: 64Mi", "request"),
            ("\"ocrfarm\", \"health\"", "\"ocrfarm\", \"status\"", "ocrfarm health"),
            ("tcp://ocrfarm-coordinator:5555", "tcp://ocrfarm-coordinator:5556", "no Service port"),
            ("serviceName: ocrfarm-coordinator-headless", "serviceName: ocrfarm-coord", "names no Service"),
            ("{name: OMP_THREAD_LIMIT, value: \"1\"}", "{name: OMP_THREAD_LIMIT, value: \"2\"}", "OMP_THREAD_LIMIT"),
            ("{name: store, mountPath: /var/lib/ocrfarm}", "{name: data, mountPath: /var/lib/ocrfarm}", "persistent volume"),
        ]
        for (from, to, expected) in breakages {
            #expect(text.contains(from), "\(from)")
            let problems = Check.kubernetesProblems(try Check.yamlDocuments(text.replacingOccurrences(of: from, with: to)))
            #expect(problems.contains { $0.contains(expected) }, "\(from) → \(to): \(problems)")
        }
    }

    @Test("Containerfile: Debian 12, ARG LANGS, OMP_THREAD_LIMIT=1, non-root, a package for every library the binary needs")
    func containerfile() throws {
        let text = try Check.text("Containerfile")
        #expect(try Check.containerfileProblems(text) == [])
        // The neural engine's folder variable is no option's: the worker's help names it in its text.
        #expect(try Check.unknownVariables(text, allowed: ["OCRFARM_NEURAL_DIR"]) == [])
        #expect(try Run.ocrfarm(["help", "worker"]).text.contains("OCRFARM_NEURAL_DIR"))
        let breakages = [
            ("FROM debian:12-slim", "FROM ubuntu:24.04"),
            ("USER ocrfarm:ocrfarm", "USER root"),
            ("OMP_THREAD_LIMIT=1 \\", "OMP_THREAD_LIMIT=4 \\"),
            ("ARG LANGS=", "ARG LANGUAGES="),
            (" libzmq5 ", " "),
            ("COPY ${NEURAL} /usr/local/lib/ocrfarm/neural", "COPY ${NEURAL} /opt/neural"),
        ]
        for (from, to) in breakages {
            #expect(text.contains(from), "\(from)")
            #expect(try !Check.containerfileProblems(text.replacingOccurrences(of: from, with: to)).isEmpty, "\(from) → \(to)")
        }
    }

    @Test("Slurm script: shellcheck is silent, and a broken copy is not")
    func slurmShellcheck() throws {
        let path = DeployChecks.root + "/slurm/ocrfarm-workers.sbatch"
        #expect(try Check.shellcheckProblems(path) == [])
        let text = try Check.text("slurm/ocrfarm-workers.sbatch")
        #expect(text.contains("#SBATCH --array=") && text.contains("OMP_THREAD_LIMIT=1"))
        #expect(try Check.unknownVariables(text, allowed: ["OCRFARM_BIN"]) == [])
        let folder = TemporaryDirectory("deploy-slurm")
        let broken = folder.write("broken.sbatch", text: text.replacingOccurrences(of: "--connect \"$connect\"", with: "--connect $connect"))
        #expect(try !Check.shellcheckProblems(broken).isEmpty)
    }

    @Test("Slurm script: refuses a missing or malformed address, and runs a worker that reads a coordinator's pages")
    func slurmRuns() throws {
        let script = DeployChecks.root + "/slurm/ocrfarm-workers.sbatch"
        let environment: [String: String?] = ["OCRFARM_BIN": Fixtures.binary, "OCRFARM_CONNECT": nil]
        let none = try Run.process("/bin/bash", [script], environment: environment)
        #expect(none.status == 64 && none.stderr.contains("no coordinator address"), "\(none.stderr)")
        let bad = try Run.process("/bin/bash", [script, "coordinator:5555"], environment: environment)
        #expect(bad.status == 64 && bad.stderr.contains("expected tcp://HOST:PORT"), "\(bad.stderr)")
        let missing = try Run.process("/bin/bash", [script, "tcp://127.0.0.1:1"], environment: ["OCRFARM_BIN": "/nonexistent/ocrfarm"])
        #expect(missing.status == 69 && missing.stderr.contains("not found"), "\(missing.stderr)")

        let farm = FarmHarness()
        let port = FarmHarness.freePort()
        #expect(try farm.submit([try TestImages.tinyPages(6, in: farm.folder)]).status == 0)
        let coordinator = try farm.startCoordinator(port: port)
        let task = try BackgroundProcess("/bin/bash", [script], logPath: farm.folder.file("slurm-task.log"), environment: [
            "OCRFARM_BIN": Fixtures.binary, "OCRFARM_CONNECT": "tcp://127.0.0.1:\(port)", "OCRFARM_ENGINE": "none",
            "SLURM_CPUS_PER_TASK": "2", "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_JOB_ID": "77",
        ])
        let done = try FarmHarness.wait(seconds: 60) { try Store(path: farm.storePath, readOnly: true).status().count(.done) == 6 }
        #expect(done, "\(farm.logs)\n--- slurm task\n\(task.log)")
        // Slurm's SIGTERM reaches the worker itself (the script execs it), which finishes and exits cleanly.
        #expect(task.terminate(waiting: 20) == 0, "\(task.log)")
        #expect(task.log.contains("task 3 of job 77") && task.log.contains("2 slots"), "\(task.log)")
        let workers = try Store(path: farm.storePath, readOnly: true).status().workers
        #expect(workers.count == 1)
        coordinator.terminate()
    }
}
