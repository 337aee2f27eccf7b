import FarmCore
import FarmProtocol
import TestSupport

/// Fuzzes the wire protocol's frame decoder (`FrameCodec.decode`): what a coordinator or worker does with the
/// frames a peer sends. An input is the frames of one message joined by `FuzzFrames.separator`.
///
/// Every input must either be refused with a `ProtocolError` that says why, or decode to a message that the
/// encoder writes back so that decoding again gives a fixed point (the encoder rounds numbers, so the first
/// decode may differ from the second; the second and third must not).
@main
enum FrameFuzzer {
    static func main() {
        Fuzzing.main(name: "FrameFuzzer", seeds: seeds, check: check)
    }

    /// Checks one input and says what became of it.
    static func check(_ bytes: [UInt8]) -> String {
        let frames = FuzzFrames.split(bytes)
        let message: Message
        do {
            message = try FrameCodec.decode(frames)
        } catch {
            precondition(!error.kind.isEmpty && error.description.count > error.kind.count, "unclear error: \(error)")
            return "refused: \(error)"
        }
        do {
            let once = try FrameCodec.decode(FrameCodec.encode(message))
            let twice = try FrameCodec.decode(FrameCodec.encode(once))
            precondition(once == twice, "the encoder does not settle: \(once) then \(twice)")
            return "decoded: \(message.command.rawValue)"
        } catch {
            preconditionFailure("the encoder wrote frames its decoder refuses (\(error)) for \(message)")
        }
    }

    /// Good frames made by the encoder: one message of every command.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let attempt = AttemptID(page: PageID(42), number: 3)
        let messages: [Message] = [
            .hello(Hello(worker: WorkerID("host/1/abc"), host: "host", pid: 1, version: "0.1.0", slots: 4,
                         languages: ["eng", "chi_sim"], engine: "tesseract", held: [attempt])),
            .credit(5),
            .job(Job(attempt: attempt, source: "scans/page 7.tif", kind: .image, index: 2,
                     options: PageOptions(languages: ["auto"], timeoutMilliseconds: 30_000, imageMode: .bw,
                                          skippedStages: [.deskew], candidates: 3, words: ["CC0"], minTextHeight: 0.01,
                                          level: .accurate, languageCorrection: false),
                     bytes: [0, 1, 2, 255])),
            .job(Job(attempt: attempt, source: "book.pdf", kind: .pdf, index: 0, options: PageOptions(), bytes: [37])),
            .result(ResultMessage(attempt: attempt, engine: "tesseract 5.3.0 eng", meanConfidence: 91.25, width: 2480,
                                  height: 3508, timings: [StageTiming(stage: "decode", milliseconds: 12.5)],
                                  text: Array("héllo\n世界".utf8), structure: Array("{}".utf8),
                                  artifacts: [("hocr", Array("<div/>".utf8)), ("pdf", [37, 80])])),
            .fail(FailMessage(attempt: attempt, failure: PageFailure(stage: "decode", code: .decodeFailed,
                                                                    message: "damaged png", retryable: true))),
            .heartbeat,
            .bye(Bye(reason: "shutdown", returned: [attempt, AttemptID(page: PageID(7), number: 1)])),
            .ping(Probe(nonce: 123_456)),
            .pong(Probe(nonce: 123_456, version: "0.1.0")),
        ]
        return messages.enumerated().map { index, message in
            ("\(index)-\(message.command.rawValue.lowercased())", FuzzFrames.joined(FrameCodec.encode(message)))
        }
    }
}
