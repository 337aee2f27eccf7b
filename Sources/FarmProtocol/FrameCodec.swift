import FarmCore

/// Turns messages into frames and back. Pure: no sockets, so every malformed input can be tested directly.
public enum FrameCodec {
    // MARK: Encoding

    public static func encode(_ message: Message) -> [[UInt8]] {
        var header: [(String, JSON)] = []
        var blobs: [[UInt8]] = []
        switch message {
        case .hello(let hello):
            header = [
                ("worker", JSON(hello.worker.rawValue)), ("host", JSON(hello.host)), ("pid", JSON(hello.pid)),
                ("version", JSON(hello.version)), ("slots", JSON(hello.slots)),
                ("languages", .array(hello.languages.map { JSON($0) })), ("engine", JSON(hello.engine)),
                ("held", attemptList(hello.held)),
            ]
        case .credit(let n):
            header = [("n", JSON(n))]
        case .job(let job):
            header = attemptFields(job.attempt) + [
                ("source", JSON(job.source)), ("kind", JSON(job.kind.rawValue)), ("index", JSON(job.index)),
                ("options", job.options.json),
            ] + (job.sha256.map { [("sha256", JSON($0))] } ?? [])
            blobs = [job.bytes]
        case .result(let result):
            header = attemptFields(result.attempt) + [
                ("engine", JSON(result.engine)), ("mean_confidence", .rounded(result.meanConfidence)),
                ("width", JSON(result.width)), ("height", JSON(result.height)),
                ("timings_ms", result.timings),
                ("artifacts", .array(result.artifacts.map { JSON($0.0) })),
            ]
            blobs = [result.text, result.structure] + result.artifacts.map(\.1)
        case .fail(let fail):
            header = attemptFields(fail.attempt) + [
                ("stage", JSON(fail.failure.stage)), ("code", JSON(fail.failure.code.rawValue)),
                ("message", JSON(fail.failure.message)), ("retryable", JSON(fail.failure.retryable)),
            ]
        case .heartbeat:
            header = []
        case .bye(let bye):
            header = [
                ("reason", JSON(bye.reason)),
                ("returned", attemptList(bye.returned)),
            ]
        case .ping(let probe):
            header = [("nonce", JSON(probe.nonce))]
        case .pong(let probe):
            header = [("nonce", JSON(probe.nonce)), ("version", JSON(probe.version))]
        }
        return [Wire.version, Array(message.command.rawValue.utf8), JSON.object(header).bytes] + blobs
    }

    private static func attemptList(_ attempts: [AttemptID]) -> JSON {
        .array(attempts.map { .array([.int($0.page.rawValue), JSON($0.number)]) })
    }

    private static func attempts(_ json: JSON?) -> [AttemptID] {
        (json?.arrayValue ?? []).compactMap { pair -> AttemptID? in
            guard let page = pair[0]?.intValue, let number = pair[1]?.intValue, page > 0, number > 0 else { return nil }
            return AttemptID(page: PageID(Int64(page)), number: number)
        }
    }

    private static func attemptFields(_ attempt: AttemptID) -> [(String, JSON)] {
        [("page", .int(attempt.page.rawValue)), ("attempt", JSON(attempt.number))]
    }

    // MARK: Decoding

    /// Reads the frames of one message (without any routing id in front).
    public static func decode<Frames: RandomAccessCollection>(_ frames: Frames) throws(ProtocolError) -> Message
    where Frames.Element == [UInt8], Frames.Index == Int {
        guard let first = frames.first else { throw .empty }
        let start = frames.startIndex
        guard first == Wire.version else {
            throw .wrongVersion(String(decoding: first.prefix(16), as: UTF8.self))
        }
        guard frames.count >= 2 else { throw .unknownCommand("") }
        let commandText = String(decoding: frames[start + 1].prefix(32), as: UTF8.self)
        guard let command = Command(rawValue: commandText) else { throw .unknownCommand(commandText) }
        guard frames.count >= 3 else { throw .badHeader("no header frame") }
        let headerBytes = frames[start + 2]
        guard headerBytes.count <= Wire.maxHeaderBytes else { throw .tooLarge("header of \(headerBytes.count) bytes") }
        let header: JSON
        do {
            header = try JSON.parse(headerBytes, maxDepth: 8)
        } catch {
            throw .badHeader(error.description)
        }
        guard case .object = header else { throw .badHeader("not a JSON object") }
        let blobs = Array(frames.dropFirst(3))
        return try decode(command, header, blobs)
    }

    private static func decode(_ command: Command, _ header: JSON, _ blobs: [[UInt8]]) throws(ProtocolError) -> Message {
        switch command {
        case .hello:
            let slots = try int(header, "slots")
            guard slots > 0 && slots <= 4096 else { throw .badHeader("slots out of range: \(slots)") }
            return .hello(Hello(
                worker: WorkerID(try string(header, "worker")), host: string(header, "host", default: ""),
                pid: header["pid"]?.intValue ?? 0, version: string(header, "version", default: ""), slots: slots,
                languages: header["languages"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                engine: string(header, "engine", default: ""), held: attempts(header["held"])))
        case .credit:
            let n = try int(header, "n")
            guard n >= 0 && n <= 1_000_000 else { throw .badHeader("credit out of range: \(n)") }
            return .credit(n)
        case .job:
            guard let bytes = blobs.first else { throw .missingBlob("page bytes") }
            guard let kind = SourceKind(rawValue: try string(header, "kind")) else { throw .badHeader("unknown kind") }
            return .job(Job(attempt: try attempt(header), source: string(header, "source", default: ""), kind: kind,
                            index: header["index"]?.intValue ?? 0, options: PageOptions(json: header["options"]),
                            bytes: bytes, sha256: header["sha256"]?.stringValue))
        case .result:
            guard blobs.count >= 2 else { throw .missingBlob("text and structure") }
            let names = header["artifacts"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard blobs.count == 2 + names.count else { throw .missingBlob("artifacts: \(names.count) named, \(blobs.count - 2) sent") }
            return .result(ResultMessage(
                attempt: try attempt(header), engine: string(header, "engine", default: ""),
                meanConfidence: header["mean_confidence"]?.doubleValue ?? 0,
                width: header["width"]?.intValue ?? 0, height: header["height"]?.intValue ?? 0,
                timings: timings(header["timings_ms"]),
                text: blobs[0], structure: blobs[1], artifacts: Array(zip(names, blobs.dropFirst(2)))))
        case .fail:
            return .fail(FailMessage(attempt: try attempt(header), failure: PageFailure(
                stage: string(header, "stage", default: "unknown"),
                code: FailureCode(string(header, "code", default: FailureCode.internalError.rawValue)),
                message: string(header, "message", default: ""),
                retryable: header["retryable"]?.boolValue ?? false)))
        case .heartbeat:
            return .heartbeat
        case .bye:
            return .bye(Bye(reason: string(header, "reason", default: ""), returned: attempts(header["returned"])))
        case .ping:
            return .ping(Probe(nonce: try int(header, "nonce")))
        case .pong:
            return .pong(Probe(nonce: try int(header, "nonce"), version: string(header, "version", default: "")))
        }
    }

    /// The timings object as it came when it is one of numbers (the usual case: kept, not rebuilt); anything else
    /// is read as leniently as before (non-numbers as 0, a non-object as none).
    private static func timings(_ json: JSON?) -> JSON {
        guard let json, let fields = json.objectValue else { return .object([]) }
        if fields.allSatisfy({ $0.1.doubleValue != nil }) { return json }
        return .object(fields.map { ($0.0, .rounded($0.1.doubleValue ?? 0, places: 1)) })
    }

    private static func attempt(_ header: JSON) throws(ProtocolError) -> AttemptID {
        let page = try int(header, "page")
        let number = try int(header, "attempt")
        guard page > 0, number > 0 else { throw .badHeader("page and attempt must be positive") }
        return AttemptID(page: PageID(Int64(page)), number: number)
    }

    private static func int(_ header: JSON, _ key: String) throws(ProtocolError) -> Int {
        guard let value = header[key]?.intValue else { throw .badHeader("missing or non-integer '\(key)'") }
        return value
    }

    private static func string(_ header: JSON, _ key: String) throws(ProtocolError) -> String {
        guard let value = header[key]?.stringValue else { throw .badHeader("missing or non-string '\(key)'") }
        return value
    }

    private static func string(_ header: JSON, _ key: String, default value: String) -> String {
        header[key]?.stringValue ?? value
    }
}
