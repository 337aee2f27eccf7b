import FarmCore

/// The wire protocol between coordinator and workers, after the ZeroMQ guide's Majordomo and Paranoid Pirate.
///
/// A message is a list of frames: `[version "OCRF1"] [command] [header: JSON object] [blob]*`. Over a
/// DEALER→ROUTER connection the ROUTER also sees the sender's routing id in front. Any message counts as a
/// heartbeat; HEARTBEAT is sent only when nothing else was.
///
/// | from | command | header | blobs |
/// |---|---|---|---|
/// | worker | HELLO | worker, host, pid, version, slots, languages, engine, held: [[page, attempt]] | |
/// | worker | CREDIT | n: how many more jobs it can take | |
/// | coordinator | JOB | page, attempt, source, kind, index, options, sha256 (optional) | page bytes |
/// | worker | RESULT | page, attempt, engine, mean_confidence, width, height, timings, artifacts | text, structure JSON, artifacts… |
/// | worker | FAIL | page, attempt, stage, code, message, retryable | |
/// | both | HEARTBEAT | | |
/// | both | BYE | reason, returned: [[page, attempt]] | |
/// | probe | PING | nonce | |
/// | coordinator | PONG | nonce, version | |
///
/// PING comes from `ocrfarm health`, not from a worker: the coordinator answers it from its poll loop (so a hung
/// loop fails the probe) and keeps no state for the sender, which never joins as a worker.
public enum Wire {
    public static let version: [UInt8] = Array("OCRF1".utf8)
    /// How often each side sends a heartbeat when it has sent nothing else.
    public static let heartbeatMilliseconds = 1000
    /// Heartbeats missed before the peer is declared gone.
    public static let liveness = 3
    /// Reconnect backoff of a worker: starts here and doubles…
    public static let reconnectMinimumMilliseconds = 1000
    /// …up to here.
    public static let reconnectMaximumMilliseconds = 32_000
    /// Largest header accepted.
    public static let maxHeaderBytes = 64 * 1024
    /// Largest page a JOB carries by default; larger pages fail with `page-too-large`.
    public static let defaultMaxPageBytes = 64 << 20
    /// Hard limit on any inbound message, enforced by ZeroMQ itself (the peer is disconnected).
    public static let maxMessageBytes: Int64 = 512 << 20
}

public enum Command: String, Sendable, CaseIterable {
    case hello = "HELLO"
    case credit = "CREDIT"
    case job = "JOB"
    case result = "RESULT"
    case fail = "FAIL"
    case heartbeat = "HEARTBEAT"
    case bye = "BYE"
    case ping = "PING"
    case pong = "PONG"
}


public struct Hello: Sendable, Equatable {
    public var worker: WorkerID
    public var host: String
    public var pid: Int
    public var version: String
    public var slots: Int
    public var languages: [String]
    public var engine: String
    /// Jobs still in progress from before a reconnect; the coordinator keeps their leases and takes back the rest.
    public var held: [AttemptID]

    public init(worker: WorkerID, host: String, pid: Int, version: String, slots: Int, languages: [String], engine: String,
                held: [AttemptID] = [])
    {
        self.worker = worker
        self.host = host
        self.pid = pid
        self.version = version
        self.slots = slots
        self.languages = languages
        self.engine = engine
        self.held = held
    }
}

public struct Job: Sendable, Equatable {
    public var attempt: AttemptID
    /// The page's source as people know it (file path, and page for multi-page files).
    public var source: String
    public var kind: SourceKind
    /// Page within `bytes` (TIFF page or PDF page), from 0.
    public var index: Int
    public var options: PageOptions
    public var bytes: [UInt8]
    /// SHA-256 (hex) of `bytes` as the coordinator checked them, for the worker to check what arrived. Optional in
    /// the header (added in issue 37 without a new protocol version: a worker that does not know it ignores it, a
    /// JOB without it is read unchecked).
    public var sha256: String?

    public init(attempt: AttemptID, source: String, kind: SourceKind, index: Int, options: PageOptions, bytes: [UInt8],
                sha256: String? = nil) {
        self.attempt = attempt
        self.source = source
        self.kind = kind
        self.index = index
        self.options = options
        self.bytes = bytes
        self.sha256 = sha256
    }
}

public struct ResultMessage: Sendable, Equatable {
    public var attempt: AttemptID
    public var engine: String
    public var meanConfidence: Double
    public var width: Int
    public var height: Int
    /// Stage timings as the header's `timings_ms` object (stage: milliseconds to 0.1): made once by the slot and
    /// carried as it is to the store, which keeps this JSON text.
    public var timings: JSON
    /// The page text, UTF-8.
    public var text: [UInt8]
    /// The page structure (`PageResult.structureJSON`), UTF-8 JSON, stored as it comes.
    public var structure: [UInt8]
    /// Renderings by name ("hocr", "alto", "pdf"…).
    public var artifacts: [(String, [UInt8])]

    public init(attempt: AttemptID, engine: String, meanConfidence: Double, width: Int, height: Int,
                timings: [StageTiming], text: [UInt8], structure: [UInt8], artifacts: [(String, [UInt8])] = [])
    {
        self.init(attempt: attempt, engine: engine, meanConfidence: meanConfidence, width: width, height: height,
                  timings: Self.timingsJSON(timings), text: text, structure: structure, artifacts: artifacts)
    }

    /// A result whose timings are already the `timings_ms` object (as decoded from the wire).
    public init(attempt: AttemptID, engine: String, meanConfidence: Double, width: Int, height: Int,
                timings: JSON, text: [UInt8], structure: [UInt8], artifacts: [(String, [UInt8])] = [])
    {
        self.attempt = attempt
        self.engine = engine
        self.meanConfidence = meanConfidence
        self.width = width
        self.height = height
        self.timings = timings
        self.text = text
        self.structure = structure
        self.artifacts = artifacts
    }

    /// The `timings_ms` object of a list of stage timings.
    public static func timingsJSON(_ timings: [StageTiming]) -> JSON {
        .object(timings.map { ($0.stage, .rounded($0.milliseconds, places: 1)) })
    }

    /// The timings as a list (for readers; the store takes `timings` as it is).
    public var stageTimings: [StageTiming] {
        timings.objectValue?.map { StageTiming(stage: $0.0, milliseconds: $0.1.doubleValue ?? 0) } ?? []
    }

    public static func == (a: ResultMessage, b: ResultMessage) -> Bool {
        a.attempt == b.attempt && a.engine == b.engine && a.meanConfidence == b.meanConfidence && a.width == b.width
            && a.height == b.height && a.timings == b.timings && a.text == b.text && a.structure == b.structure
            && a.artifacts.map(\.0) == b.artifacts.map(\.0) && a.artifacts.map(\.1) == b.artifacts.map(\.1)
    }
}

public struct FailMessage: Sendable, Equatable {
    public var attempt: AttemptID
    public var failure: PageFailure

    public init(attempt: AttemptID, failure: PageFailure) {
        self.attempt = attempt
        self.failure = failure
    }
}

public struct Bye: Sendable, Equatable {
    public var reason: String
    /// Jobs handed back unstarted; the coordinator requeues them without counting a try.
    public var returned: [AttemptID]

    public init(reason: String, returned: [AttemptID] = []) {
        self.reason = reason
        self.returned = returned
    }
}

/// A probe's question (`ocrfarm health`) and the coordinator's answer, matched by `nonce`.
public struct Probe: Sendable, Equatable {
    public var nonce: Int
    /// The answering coordinator's version (empty in a PING).
    public var version: String

    public init(nonce: Int, version: String = "") {
        self.nonce = nonce
        self.version = version
    }
}

/// One protocol message.
public enum Message: Sendable, Equatable {
    case hello(Hello)
    case credit(Int)
    case job(Job)
    case result(ResultMessage)
    case fail(FailMessage)
    case heartbeat
    case bye(Bye)
    case ping(Probe)
    case pong(Probe)

    public var command: Command {
        switch self {
        case .hello: .hello
        case .credit: .credit
        case .job: .job
        case .result: .result
        case .fail: .fail
        case .heartbeat: .heartbeat
        case .bye: .bye
        case .ping: .ping
        case .pong: .pong
        }
    }
}

/// Why frames could not be read as a message. The receiver counts these and drops the message.
public enum ProtocolError: Error, Equatable, CustomStringConvertible, Sendable {
    case empty
    case wrongVersion(String)
    case unknownCommand(String)
    case badHeader(String)
    case missingBlob(String)
    case tooLarge(String)

    /// A short name for counters and logs.
    public var kind: String {
        switch self {
        case .empty: "empty"
        case .wrongVersion: "wrong-version"
        case .unknownCommand: "unknown-command"
        case .badHeader: "bad-header"
        case .missingBlob: "missing-blob"
        case .tooLarge: "too-large"
        }
    }

    public var description: String {
        switch self {
        case .empty: "empty message"
        case .wrongVersion(let v): "wrong protocol version '\(v)'"
        case .unknownCommand(let c): "unknown command '\(c)'"
        case .badHeader(let why): "bad header: \(why)"
        case .missingBlob(let what): "missing frame: \(what)"
        case .tooLarge(let what): "too large: \(what)"
        }
    }
}
