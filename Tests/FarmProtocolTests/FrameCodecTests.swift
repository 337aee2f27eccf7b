import Testing
import FarmCore
import FarmProtocol

@Suite("Wire protocol frame codec")
struct FrameCodecTests {
    static let attempt = AttemptID(page: PageID(42), number: 3)

    static let messages: [Message] = [
        .hello(Hello(worker: WorkerID("host/1/abc"), host: "host", pid: 1, version: "0.1.0", slots: 4,
                     languages: ["eng", "chi_sim"], engine: "tesseract", held: [attempt])),
        .credit(5),
        .job(Job(attempt: attempt, source: "scans/page 7.tif", kind: .image, index: 2,
                 options: PageOptions(languages: ["chi_sim", "eng"], timeoutMilliseconds: 30_000), bytes: [0, 1, 2, 255])),
        .job(Job(attempt: attempt, source: "book.pdf", kind: .pdf, index: 0, options: PageOptions(), bytes: [])),
        .job(Job(attempt: attempt, source: "book.pdf page 9", kind: .pdf, index: 0, options: PageOptions(), bytes: [1, 2],
                 sha256: "a12871fee210fb8619291eaea194581cbd2531e4b23759d225f6806923f63222")),
        .job(Job(attempt: attempt, source: "codes.png", kind: .image, index: 0,
                 options: PageOptions(languages: ["auto"], imageMode: .bw, skippedStages: [.deskew], candidates: 3,
                                      words: ["CC0"], minTextHeight: 0.01, level: .accurate, languageCorrection: false),
                 bytes: [9])),
        .result(ResultMessage(attempt: attempt, engine: "tesseract 5.3.0 eng", meanConfidence: 91.25, width: 2480,
                              height: 3508, timings: [StageTiming(stage: "decode", milliseconds: 12.5)],
                              text: Array("héllo\n世界".utf8), structure: Array("{}".utf8),
                              artifacts: [("hocr", Array("<div/>".utf8)), ("pdf", [37, 80])])),
        .fail(FailMessage(attempt: attempt, failure: PageFailure(stage: "decode", code: .decodeFailed,
                                                                message: "damaged png", retryable: false))),
        .heartbeat,
        .bye(Bye(reason: "shutdown", returned: [attempt, AttemptID(page: PageID(7), number: 1)])),
        .ping(Probe(nonce: 123_456)),
        .pong(Probe(nonce: 123_456, version: "0.1.0")),
    ]

    @Test("every message round-trips through its frames", arguments: messages)
    func roundTrip(message: Message) throws {
        let frames = FrameCodec.encode(message)
        #expect(frames[0] == Array("OCRF1".utf8))
        #expect(frames[1] == Array(message.command.rawValue.utf8))
        #expect(try FrameCodec.decode(frames) == message)
    }

    @Test("malformed frames are refused with a kind", arguments: [
        ([], "empty"),
        ([Array("OCRF9".utf8), Array("HELLO".utf8), Array("{}".utf8)], "wrong-version"),
        ([Array("OCRF1".utf8), Array("DANCE".utf8), Array("{}".utf8)], "unknown-command"),
        ([Array("OCRF1".utf8), Array("CREDIT".utf8)], "bad-header"),
        ([Array("OCRF1".utf8), Array("CREDIT".utf8), Array("{\"n\":".utf8)], "bad-header"),
        ([Array("OCRF1".utf8), Array("CREDIT".utf8), Array("[1]".utf8)], "bad-header"),
        ([Array("OCRF1".utf8), Array("CREDIT".utf8), Array("{\"n\":-1}".utf8)], "bad-header"),
        ([Array("OCRF1".utf8), Array("HELLO".utf8), Array("{\"worker\":\"w\",\"slots\":0}".utf8)], "bad-header"),
        ([Array("OCRF1".utf8), Array("JOB".utf8), Array("{\"page\":1,\"attempt\":1,\"kind\":\"image\"}".utf8)], "missing-blob"),
        ([Array("OCRF1".utf8), Array("RESULT".utf8), Array("{\"page\":1,\"attempt\":1}".utf8), [1]], "missing-blob"),
        ([Array("OCRF1".utf8), Array("FAIL".utf8), Array("{\"page\":0,\"attempt\":1}".utf8)], "bad-header"),
        ([Array("OCRF1".utf8), Array("FAIL".utf8), [0xFF, 0xFE]], "bad-header"),
        ([Array("OCRF1".utf8), Array("PING".utf8), Array("{}".utf8)], "bad-header"),
    ] as [([[UInt8]], String)])
    func malformed(frames: [[UInt8]], kind: String) {
        do {
            _ = try FrameCodec.decode(frames)
            Issue.record("should be refused")
        } catch {
            #expect(error.kind == kind, "\(error)")
        }
    }

    @Test("an oversized header and deep nesting are refused without parsing them fully")
    func hostileHeaders() {
        let big = [Array("OCRF1".utf8), Array("CREDIT".utf8), [UInt8](repeating: 0x20, count: Wire.maxHeaderBytes + 1)]
        #expect(throws: ProtocolError.tooLarge("header of \(Wire.maxHeaderBytes + 1) bytes")) { try FrameCodec.decode(big) }
        let deep = [Array("OCRF1".utf8), Array("CREDIT".utf8), Array(("{\"n\":" + String(repeating: "[", count: 50) + "1"
            + String(repeating: "]", count: 50) + "}").utf8)]
        #expect(throws: ProtocolError.self) { try FrameCodec.decode(deep) }
    }

    @Test("random frames are refused with a protocol error or decode to a message that survives a round trip")
    func fuzzish() {
        var state: UInt64 = 7
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        var accepted = 0, refused = 0
        for _ in 0..<2000 {
            let count = Int(next() % 6)
            var frames: [[UInt8]] = (0..<count).map { _ in (0..<Int(next() % 40)).map { _ in next() } }
            if count > 0 && next() % 2 == 0 { frames[0] = Array("OCRF1".utf8) }
            if count > 1 && next() % 2 == 0 { frames[1] = Array(Command.allCases[Int(next()) % Command.allCases.count].rawValue.utf8) }
            // An empty object now and then, so the generator also reaches the decoder's accepting paths.
            if count > 2 && next() % 4 == 0 { frames[2] = Array("{}".utf8) }
            do throws(ProtocolError) {
                let message = try FrameCodec.decode(frames)
                accepted += 1
                let again = try? FrameCodec.decode(FrameCodec.encode(message))
                #expect(again == message, "\(frames)")
            } catch {
                refused += 1
            }
        }
        #expect(refused > 1000)
        #expect(accepted > 10, "the generator never made a valid message: the test would check nothing")
    }
}
