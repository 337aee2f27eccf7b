import Testing
import FarmCore
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The CURVE wiring of the files in Deploy/: the key options each file sets point at files it provides, with modes
/// the worker and coordinator accept. Each check maps the paths the processes would see onto a temporary folder laid
/// out the way systemd, compose or the kubelet would lay it out, and runs a real coordinator, worker and health
/// probe with exactly the environment the file gives them.
enum CurveWiring {
    typealias Check = DeployChecks

    /// The `OCRFARM_CURVE_SECRET`, `OCRFARM_AUTHORIZED_WORKERS` and `OCRFARM_COORDINATOR_KEY` settings of a process.
    static let keys = ["OCRFARM_CURVE_SECRET", "OCRFARM_AUTHORIZED_WORKERS", "OCRFARM_COORDINATOR_KEY"]

    /// A fresh key pair NAME.key (0600) and NAME.pub in `folder`.
    static func keygen(_ folder: String, _ name: String) throws {
        let result = try Run.ocrfarm(["keygen", "--out", folder + "/" + name])
        guard result.status == 0 else { throw WiringError("keygen \(name): \(result.stderr)") }
    }

    static func copy(_ from: String, _ to: String, mode: mode_t) throws {
        try? FileManager.default.removeItem(atPath: to)
        try FileManager.default.copyItem(atPath: from, toPath: to)
        chmod(to, mode)
    }

    static func mkdir(_ path: String, mode: mode_t = 0o755) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, mode)
    }

    struct WiringError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs a coordinator and a worker on loopback with the given CURVE environments (paths already on this host),
    /// then `ocrfarm health` with `probe`'s. Returns the problems: pages not read, CURVE off, a probe not answered.
    static func farmProblems(coordinator: [String: String], worker: [String: String], probe: [String: String]) throws -> [String] {
        let farm = FarmHarness()
        let port = FarmHarness.freePort()
        guard try farm.submit([try TestImages.tinyPages(2, in: farm.folder)]).status == 0 else { return ["submit failed"] }
        let coordinatorProcess = try BackgroundProcess(Fixtures.binary, ["coordinator", "--store", farm.storePath,
                                                                         "--bind", "tcp://127.0.0.1:\(port)", "--heartbeat", "200"],
                                                       logPath: farm.folder.file("coordinator.log"), environment: coordinator)
        let workerProcess = try BackgroundProcess(Fixtures.binary, ["worker", "--connect", "tcp://127.0.0.1:\(port)",
                                                                    "--engine", "none", "--heartbeat", "200"],
                                                  logPath: farm.folder.file("worker.log"), environment: worker)
        defer {
            workerProcess.terminate()
            coordinatorProcess.terminate()
        }
        var problems: [String] = []
        _ = try FarmHarness.wait(seconds: 20) {
            try !workerProcess.isRunning || !coordinatorProcess.isRunning
                || Store(path: farm.storePath, readOnly: true).status().count(.done) == 2
        }
        if try Store(path: farm.storePath, readOnly: true).status().count(.done) != 2 {
            problems.append("the worker read no pages:\n\(coordinatorProcess.log)\n\(workerProcess.log)")
        }
        if !coordinatorProcess.log.contains("curve=\"on,") { problems.append("the coordinator runs without CURVE: \(coordinatorProcess.log)") }
        let health = try Run.ocrfarm(["health", "--connect", "tcp://127.0.0.1:\(port)"], environment: probe)
        if health.status != 0 { problems.append("the health probe failed: \(health.stderr)") }
        return problems
    }

    // MARK: systemd

    /// `KEY=VALUE` of every `Environment=` line, and `ID → PATH` of every `LoadCredential=` line.
    static func unitSettings(_ unit: String) -> (environment: [String: String], credentials: [String: String]) {
        var environment: [String: String] = [:]
        var credentials: [String: String] = [:]
        for line in unit.split(separator: "\n").map(String.init) {
            if line.hasPrefix("Environment="), let equals = line.dropFirst(12).firstIndex(of: "=") {
                environment[String(line[line.index(line.startIndex, offsetBy: 12)..<equals])] = String(line[line.index(after: equals)...])
            }
            if line.hasPrefix("LoadCredential="), let colon = line.firstIndex(of: ":") {
                credentials[String(line[line.index(line.startIndex, offsetBy: 15)..<colon])] = String(line[line.index(after: colon)...])
            }
        }
        return (environment, credentials)
    }

    /// Builds the credentials directory systemd would give the unit (0500, every credential 0400, a folder's files as
    /// ID_NAME) from files under `etc` (standing for the unit's absolute paths), and returns the unit's CURVE
    /// environment with %d resolved. Problems: a setting naming no credential, a credential from a missing file.
    static func systemdCredentials(unit: String, etc root: String, into directory: String) throws -> (environment: [String: String], problems: [String]) {
        let (environment, credentials) = unitSettings(unit)
        var problems: [String] = []
        try mkdir(directory, mode: 0o700)
        for (id, path) in credentials {
            let source = root + path
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: source, isDirectory: &isFolder) else {
                problems.append("LoadCredential=\(id):\(path): no such file after the documented keygen steps")
                continue
            }
            let files = isFolder.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: source).map { (source + "/" + $0, id + "_" + $0) }
                : [(source, id)]
            for (file, name) in files { try copy(file, directory + "/" + name, mode: 0o400) }
        }
        chmod(directory, 0o500)
        var resolved: [String: String] = [:]
        for key in keys {
            guard let value = environment[key] else { continue }
            guard value == "%d" || value.hasPrefix("%d/") else {
                problems.append("\(key)=\(value) is not in the credentials directory (%d)")
                continue
            }
            let id = value == "%d" ? nil : String(value.dropFirst(3))
            if let id, credentials[id] == nil { problems.append("\(key)=\(value) names no LoadCredential= of the unit") }
            resolved[key] = directory + (id.map { "/" + $0 } ?? "")
        }
        return (resolved, problems)
    }

    /// The systemd units' CURVE settings, run: keys made as the units' comments say, credentials laid out as systemd does.
    static func systemdProblems(coordinatorUnit: String, workerUnit: String) throws -> [String] {
        let folder = TemporaryDirectory("deploy-curve-systemd")
        let etc = folder.file("root")
        // The documented steps (the units' comments): coordinator keys on its host, a worker key on each worker host,
        // the worker's .pub in the coordinator's workers/ folder and the coordinator's .pub beside the worker's key.
        try mkdir(etc + "/etc/ocrfarm/curve/workers", mode: 0o700)
        try keygen(etc + "/etc/ocrfarm/curve", "coordinator")
        try keygen(etc + "/etc/ocrfarm/curve", "worker")
        try copy(etc + "/etc/ocrfarm/curve/worker.pub", etc + "/etc/ocrfarm/curve/workers/host-a.pub", mode: 0o644)
        // systemd's credentials directories are 0500; opened again so the temporary folder can be removed.
        defer { for name in ["cred-coordinator", "cred-worker"] { chmod(folder.file(name), 0o700) } }
        let coordinator = try systemdCredentials(unit: coordinatorUnit, etc: etc, into: folder.file("cred-coordinator"))
        let worker = try systemdCredentials(unit: workerUnit, etc: etc, into: folder.file("cred-worker"))
        var problems = coordinator.problems + worker.problems
        for key in ["OCRFARM_CURVE_SECRET", "OCRFARM_AUTHORIZED_WORKERS"] where coordinator.environment[key] == nil {
            problems.append("the coordinator unit does not set \(key)")
        }
        for key in ["OCRFARM_CURVE_SECRET", "OCRFARM_COORDINATOR_KEY"] where worker.environment[key] == nil {
            problems.append("the worker unit does not set \(key)")
        }
        guard problems.isEmpty else { return problems }
        return try farmProblems(coordinator: coordinator.environment, worker: worker.environment, probe: worker.environment)
    }

    // MARK: compose

    /// Where a container path of a compose service comes from on the host: a secret's file (/run/secrets/TARGET) or a
    /// bind mount. nil for a path nothing provides.
    static func composeHostPath(_ path: String, service: [String: Any], compose: [String: Any], base: String) -> String? {
        let topSecrets = Check.dictionary(compose["secrets"])
        for entry in Check.list(service["secrets"]) {
            let entry = Check.dictionary(entry)
            guard let source = entry["source"] as? String else { continue }
            let target = entry["target"] as? String ?? source
            let mounted = target.hasPrefix("/") ? target : "/run/secrets/" + target
            if path == mounted, let file = Check.dictionary(topSecrets[source])["file"] as? String { return base + "/" + file }
        }
        for volume in Check.strings(service["volumes"]) {
            let parts = volume.split(separator: ":").map(String.init)
            guard parts.count >= 2, parts[0].hasPrefix("./") || parts[0].hasPrefix("/") else { continue }
            if path == parts[1] || path.hasPrefix(parts[1] + "/") {
                if parts.count < 3 || !parts[2].split(separator: ",").contains("ro") { return nil }   // keys mounted read-only
                return base + "/" + parts[0] + path.dropFirst(parts[1].count)
            }
        }
        return nil
    }

    /// compose.yaml's CURVE settings, run: keys made as its comment says under a copy of Deploy/, each service's
    /// paths mapped to the files its secrets and bind mounts provide.
    static func composeProblems(_ compose: [String: Any]) throws -> [String] {
        let folder = TemporaryDirectory("deploy-curve-compose")
        let base = folder.path
        // The documented steps (compose.yaml's comment), in Deploy/.
        try mkdir(base + "/curve/workers")
        try keygen(base + "/curve", "coordinator")
        try keygen(base + "/curve", "worker")
        try copy(base + "/curve/worker.pub", base + "/curve/workers/worker.pub", mode: 0o644)
        try copy(base + "/curve/coordinator.pub", base + "/curve/workers/coordinator.pub", mode: 0o644)
        let services = Check.dictionary(compose["services"])
        var problems: [String] = []
        var environments: [String: [String: String]] = [:]
        for name in ["coordinator", "worker"] {
            let service = Check.dictionary(services[name])
            let environment = Check.dictionary(service["environment"]).compactMapValues { $0 as? String }
            var mapped: [String: String] = [:]
            for key in keys {
                guard let path = environment[key] else { continue }
                if let host = composeHostPath(path, service: service, compose: compose, base: base) {
                    mapped[key] = host
                } else {
                    problems.append("\(name): \(key)=\(path) is no secret or read-only bind mount of the service")
                }
            }
            environments[name] = mapped
        }
        for key in keys where environments["coordinator"]?[key] == nil { problems.append("the coordinator does not set \(key)") }
        for key in ["OCRFARM_CURVE_SECRET", "OCRFARM_COORDINATOR_KEY"] where environments["worker"]?[key] == nil {
            problems.append("the worker does not set \(key)")
        }
        guard problems.isEmpty else { return problems }
        let coordinator = environments["coordinator"] ?? [:]
        // The health check runs in the coordinator's container, with its environment.
        return try farmProblems(coordinator: coordinator, worker: environments["worker"] ?? [:], probe: coordinator)
    }

    // MARK: Kubernetes

    /// A pod's volumes by name, its containers and init containers.
    static func pod(_ workload: [String: Any]) -> (volumes: [String: [String: Any]], containers: [[String: Any]],
                                                   initContainers: [[String: Any]], securityContext: [String: Any])
    {
        let spec = Check.dictionary(Check.dictionary(Check.dictionary(workload["spec"])["template"])["spec"])
        var volumes: [String: [String: Any]] = [:]
        for volume in Check.list(spec["volumes"]) {
            let volume = Check.dictionary(volume)
            if let name = volume["name"] as? String { volumes[name] = volume }
        }
        return (volumes, Check.list(spec["containers"]).map { Check.dictionary($0) },
                Check.list(spec["initContainers"]).map { Check.dictionary($0) }, Check.dictionary(spec["securityContext"]))
    }

    /// Lays out a pod's volumes under `root` as the kubelet would, with `secretFiles` as the Secrets' contents: a
    /// Secret's files with its defaultMode, group-readable when the pod has an fsGroup (the kubelet adds 0440 then);
    /// runs the init containers' `install` commands; returns the main container's CURVE environment mapped to `root`.
    static func kubernetesPod(_ workload: [String: Any], secretFiles: [String: [String: String]], root: String) throws -> (environment: [String: String], problems: [String]) {
        let (volumes, containers, initContainers, securityContext) = pod(workload)
        var problems: [String] = []
        let name = Check.dictionary(workload["metadata"])["name"] as? String ?? "?"
        let hasFSGroup = securityContext["fsGroup"] != nil
        for (volumeName, volume) in volumes {
            let folder = root + "/volumes/" + volumeName
            try mkdir(folder, mode: 0o777)
            guard let secret = volume["secret"] as? [String: Any] else { continue }
            let secretName = secret["secretName"] as? String ?? ""
            let mode = secret["defaultMode"] as? Int ?? 0o644
            if mode & 0o077 != 0 { problems.append("\(name): Secret volume \(volumeName) has defaultMode \(String(mode, radix: 8))") }
            guard let files = secretFiles[secretName] else {
                problems.append("\(name): mounts Secret '\(secretName)', which the documented steps do not create")
                continue
            }
            for (file, source) in files {
                try copy(source, folder + "/" + file, mode: mode_t(mode | (hasFSGroup ? 0o440 : 0)))
            }
            if !hasFSGroup { problems.append("\(name): no fsGroup, so the Secret's files are root's and unreadable to user 10001") }
        }
        /// A container path on this host, through the container's volume mounts.
        func hostPath(_ path: String, _ container: [String: Any], writable: Bool = false) -> String? {
            for mount in Check.list(container["volumeMounts"]).map({ Check.dictionary($0) }) {
                guard let mountPath = mount["mountPath"] as? String, let volume = mount["name"] as? String,
                      path == mountPath || path.hasPrefix(mountPath + "/") else { continue }
                if writable && mount["readOnly"] as? Bool == true { return nil }
                if volumes[volume]?["secret"] != nil && mount["readOnly"] as? Bool != true { return nil }
                return root + "/volumes/" + volume + path.dropFirst(mountPath.count)
            }
            return nil
        }
        var copies: [String] = []
        for initContainer in initContainers {
            let command = Check.strings(initContainer["command"])
            guard command.count == 5, command[0] == "install", command[1] == "-m",
                  let source = hostPath(command[3], initContainer), let target = hostPath(command[4], initContainer, writable: true)
            else {
                problems.append("\(name): init container runs \(command), not install -m MODE SECRET COPY between its mounts")
                continue
            }
            copies.append(command[4])
            let result = try Run.process("/usr/bin/install", ["-m", command[2], source, target])
            if result.status != 0 { problems.append("\(name): \(command.joined(separator: " ")): \(result.stderr)") }
        }
        guard let container = containers.first else { return ([:], problems + ["\(name): no container"]) }
        let environment = Check.environment(container)
        var mapped: [String: String] = [:]
        for key in keys {
            guard let path = environment[key] else { continue }
            if let host = hostPath(path, container) { mapped[key] = host } else {
                problems.append("\(name): \(key)=\(path) is on no volume the container mounts (Secrets read-only)")
            }
            if key == "OCRFARM_CURVE_SECRET" && !copies.contains(path) {
                problems.append("\(name): \(key)=\(path) is not the init container's copy in the memory-backed emptyDir")
            }
        }
        for (volumeName, volume) in volumes where volume["emptyDir"] != nil && volumeName != "tmp" {
            if Check.dictionary(volume["emptyDir"])["medium"] as? String != "Memory" {
                problems.append("\(name): the key's emptyDir \(volumeName) is not medium: Memory")
            }
        }
        return (mapped, problems)
    }

    /// The Kubernetes manifests' CURVE settings, run: Secrets made as their comments say, each pod laid out and
    /// its init container run, then a farm with the containers' environments (the probes use the same).
    static func kubernetesProblems(_ documents: [Any]) throws -> [String] {
        let folder = TemporaryDirectory("deploy-curve-k8s")
        let keysFolder = folder.file("keys")
        try mkdir(keysFolder)
        try keygen(keysFolder, "coordinator")
        try keygen(keysFolder, "worker")
        func file(_ name: String) -> String { keysFolder + "/" + name }
        let secrets = [
            "ocrfarm-coordinator-curve": ["coordinator.key": file("coordinator.key"), "coordinator.pub": file("coordinator.pub"),
                                          "worker.pub": file("worker.pub")],
            "ocrfarm-worker-curve": ["worker.key": file("worker.key"), "coordinator.pub": file("coordinator.pub")],
        ]
        let objects = documents.map { Check.dictionary($0) }
        guard let statefulSet = objects.first(where: { $0["kind"] as? String == "StatefulSet" }),
              let deployment = objects.first(where: { $0["kind"] as? String == "Deployment" })
        else { return ["no StatefulSet and Deployment"] }
        let coordinator = try kubernetesPod(statefulSet, secretFiles: secrets, root: folder.file("coordinator-pod"))
        let worker = try kubernetesPod(deployment, secretFiles: secrets, root: folder.file("worker-pod"))
        var problems = coordinator.problems + worker.problems
        for key in keys where coordinator.environment[key] == nil { problems.append("the coordinator does not set \(key)") }
        for key in ["OCRFARM_CURVE_SECRET", "OCRFARM_COORDINATOR_KEY"] where worker.environment[key] == nil {
            problems.append("the workers do not set \(key)")
        }
        guard problems.isEmpty else { return problems }
        // The coordinator's probes run in its container with its environment.
        return try farmProblems(coordinator: coordinator.environment, worker: worker.environment, probe: coordinator.environment)
    }

    // MARK: Slurm

    /// The Slurm script with OCRFARM_CURVE_SECRET and OCRFARM_COORDINATOR_KEY against a CURVE coordinator.
    static func slurmProblems(script: String) throws -> [String] {
        let farm = FarmHarness()
        let keys = farm.folder.file("keys")
        try mkdir(keys + "/workers")
        try keygen(keys, "coordinator")
        try keygen(keys, "worker")
        try copy(keys + "/worker.pub", keys + "/workers/worker.pub", mode: 0o644)
        guard try farm.submit([try TestImages.tinyPages(2, in: farm.folder)]).status == 0 else { return ["submit failed"] }
        let port = FarmHarness.freePort()
        let coordinator = try farm.startCoordinator(port: port, ["--curve-secret", keys + "/coordinator.key",
                                                                 "--authorized-workers", keys + "/workers"])
        let task = try BackgroundProcess("/bin/bash", [script, "tcp://127.0.0.1:\(port)"], logPath: farm.folder.file("task.log"),
                                         environment: ["OCRFARM_BIN": Fixtures.binary, "OCRFARM_ENGINE": "none",
                                                       "OCRFARM_CURVE_SECRET": keys + "/worker.key",
                                                       "OCRFARM_COORDINATOR_KEY": keys + "/coordinator.pub"])
        defer {
            task.terminate()
            coordinator.terminate()
        }
        var problems: [String] = []
        let done = try FarmHarness.wait(seconds: 20) { try Store(path: farm.storePath, readOnly: true).status().count(.done) == 2 }
        if !done { problems.append("the task read no pages:\n\(coordinator.log)\n\(task.log)") }
        if !task.log.contains("with CURVE") || task.log.contains("clear text") { problems.append("the task did not use CURVE: \(task.log)") }
        return problems
    }
}

@Suite("Deploy files: CURVE wiring", .serialized)
struct DeployCurveTests {
    typealias Check = DeployChecks

    @Test("systemd: keys come in as credentials (0400 in %d) that the CURVE settings name; a farm runs with them")
    func systemd() throws {
        let coordinator = try Check.text("systemd/ocrfarm-coordinator.service")
        let worker = try Check.text("systemd/ocrfarm-worker@.service")
        #expect(try CurveWiring.systemdProblems(coordinatorUnit: coordinator, workerUnit: worker) == [])
        let misnamed = coordinator.replacingOccurrences(of: "OCRFARM_CURVE_SECRET=%d/coordinator.key", with: "OCRFARM_CURVE_SECRET=%d/coordinator")
        #expect(try CurveWiring.systemdProblems(coordinatorUnit: misnamed, workerUnit: worker).contains { $0.contains("names no LoadCredential") })
        let absolute = worker.replacingOccurrences(of: "OCRFARM_CURVE_SECRET=%d/worker.key", with: "OCRFARM_CURVE_SECRET=/etc/ocrfarm/curve/worker.key")
        #expect(try CurveWiring.systemdProblems(coordinatorUnit: coordinator, workerUnit: absolute).contains { $0.contains("credentials directory") })
        let elsewhere = worker.replacingOccurrences(of: "worker.key:/etc/ocrfarm/curve/worker.key", with: "worker.key:/etc/ocrfarm/keys/worker.key")
        #expect(try CurveWiring.systemdProblems(coordinatorUnit: coordinator, workerUnit: elsewhere).contains { $0.contains("no such file") })
    }

    @Test("compose: keys are secrets and a read-only bind the settings name; a farm and its health check run with them")
    func compose() throws {
        let text = try Check.text("compose.yaml")
        let compose = Check.dictionary(try Check.yamlDocuments(text).first)
        #expect(try CurveWiring.composeProblems(compose) == [])
        let unmounted = text.replacingOccurrences(of: "OCRFARM_CURVE_SECRET: /run/secrets/worker.key", with: "OCRFARM_CURVE_SECRET: /run/secrets/w.key")
        #expect(try CurveWiring.composeProblems(Check.dictionary(try Check.yamlDocuments(unmounted).first)).contains { $0.contains("no secret") })
        let writable = text.replacingOccurrences(of: "./curve/workers:/etc/ocrfarm/workers:ro", with: "./curve/workers:/etc/ocrfarm/workers")
        #expect(try !CurveWiring.composeProblems(Check.dictionary(try Check.yamlDocuments(writable).first)).isEmpty)
    }

    @Test("Kubernetes: Secrets mounted read-only (0400), the key copied 0600 by an init container; a farm and the probes run with them")
    func kubernetes() throws {
        let text = try ["kubernetes/coordinator.yaml", "kubernetes/worker.yaml"].map { try Check.text($0) }.joined(separator: "\n---\n")
        #expect(try CurveWiring.kubernetesProblems(try Check.yamlDocuments(text)) == [])
        // The key read straight from the Secret: group-readable under the fsGroup, so the coordinator refuses it.
        let direct = text.replacingOccurrences(of: "{name: OCRFARM_CURVE_SECRET, value: /run/ocrfarm/curve/coordinator.key}",
                                               with: "{name: OCRFARM_CURVE_SECRET, value: /etc/ocrfarm/curve-secret/coordinator.key}")
        let directProblems = try CurveWiring.kubernetesProblems(try Check.yamlDocuments(direct))
        #expect(directProblems.contains { $0.contains("emptyDir") }, "\(directProblems)")
        let breakages = [
            ("fsGroup: 10001\n        seccompProfile", "seccompProfile", "no fsGroup"),
            ("secretName: ocrfarm-worker-curve, defaultMode: 0400", "secretName: ocrfarm-worker-curve, defaultMode: 0444", "defaultMode"),
            ("\"/run/ocrfarm/curve/worker.key\"]", "\"/run/ocrfarm/curve/w.key\"]", "worker"),
        ]
        for (from, to, expected) in breakages {
            #expect(text.contains(from), "\(from)")
            let problems = try CurveWiring.kubernetesProblems(try Check.yamlDocuments(text.replacingOccurrences(of: from, with: to)))
            #expect(problems.contains { $0.contains(expected) }, "\(from) → \(to): \(problems)")
        }
    }

    @Test("The key mode check holds for what the kubelet makes of a Secret under an fsGroup (0440): refused, exit 78")
    func groupReadableSecretRefused() throws {
        let folder = TemporaryDirectory("deploy-curve-mode")
        try CurveWiring.keygen(folder.path, "coordinator")
        chmod(folder.file("coordinator.key"), 0o440)
        try CurveWiring.mkdir(folder.file("workers"))
        let result = try Run.ocrfarm(["coordinator", "--store", folder.file("s.db"), "--bind", "tcp://127.0.0.1:\(FarmHarness.freePort())"],
                                     environment: ["OCRFARM_CURVE_SECRET": folder.file("coordinator.key"),
                                                   "OCRFARM_AUTHORIZED_WORKERS": folder.file("workers")])
        #expect(result.status == 78 && result.stderr.contains("chmod 600"), "\(result.stderr)")
    }

    @Test("Slurm: OCRFARM_CURVE_SECRET and OCRFARM_COORDINATOR_KEY reach the worker, which reads pages from a CURVE coordinator")
    func slurm() throws {
        #expect(try CurveWiring.slurmProblems(script: DeployChecks.root + "/slurm/ocrfarm-workers.sbatch") == [])
    }
}
