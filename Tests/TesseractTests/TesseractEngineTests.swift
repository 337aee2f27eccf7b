import Testing
import Tesseract
import Leptonica
import FarmCore
import TestSupport

@Suite("Tesseract engine", .serialized)
final class TesseractEngineTests {
    let engine: TesseractEngine
    let page: Pix

    init() throws {
        engine = try TesseractEngine(EngineConfiguration(languages: ["eng"]))
        page = try Pix(contentsOfFile: Fixtures.phototest)
    }

    @Test("phototest.tif reads with a character error rate under 2%")
    func accuracy() throws {
        let recognition = try engine.recognize(page)
        let cer = TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: recognition.text)
        #expect(cer < 0.02, "CER \(cer)")
        #expect(recognition.meanConfidence > 80)
        #expect(recognition.width == 640)
    }

    @Test("words come with boxes inside the page, confidences, and lines and blocks around them")
    func structure() throws {
        let recognition = try engine.recognize(page)
        let words = recognition.words
        #expect(words.count > 50)
        #expect(words.contains { $0.text == "quick" })
        for word in words {
            #expect(word.box.x >= 0 && word.box.y >= 0)
            #expect(word.box.maxX <= 640 && word.box.maxY <= 480)
            #expect(word.box.width > 0 && word.box.height > 0)
            #expect((0...100).contains(word.confidence))
            #expect(word.language == "eng")
        }
        #expect(recognition.lines.count >= 8)
        #expect(!recognition.blocks.isEmpty)
        // Lines run top to bottom in a single-column page.
        let tops = recognition.lines.map(\.box.y)
        #expect(tops == tops.sorted())
        let first = try #require(recognition.lines.first)
        #expect(first.words.map(\.text).joined(separator: " ").hasPrefix("This is a lot of 12 point text"))
    }

    @Test("the engine is reused: three pages in a row give the same text")
    func reuse() throws {
        let texts = try (0..<3).map { _ in try engine.recognize(page).text }
        #expect(Set(texts).count == 1)
    }

    @Test("candidates: alternative readings come ordered by confidence, best equal to the word")
    func candidates() throws {
        engine.candidateCount = 3
        defer { engine.candidateCount = 0 }
        let words = try engine.recognize(page).words
        let withCandidates = words.filter { !$0.candidates.isEmpty }
        #expect(withCandidates.count > words.count / 2)
        for word in withCandidates {
            #expect(word.candidates.count <= 3)
            let confidences = word.candidates.map(\.confidence)
            #expect(confidences == confidences.sorted(by: >))
        }
        let agreeing = withCandidates.filter { $0.candidates.first?.text == $0.text }
        #expect(agreeing.count * 10 >= withCandidates.count * 8)
    }

    @Test("a deadline stops a page with a timeout error")
    func deadline() throws {
        let big = try page.grayscale().scaled(by: 3)
        do {
            _ = try engine.recognize(big, timeoutMilliseconds: 1)
            Issue.record("a 1 ms deadline should stop recognition")
        } catch {
            #expect(error.kind == .timeout)
        }
        // The engine still works afterwards.
        #expect(try engine.recognize(page).text.contains("quick brown"))
    }

    @Test("a missing language fails with the languages that are installed")
    func missingLanguage() {
        do {
            _ = try TesseractEngine(EngineConfiguration(languages: ["xyz"]))
            Issue.record("unknown language should fail")
        } catch {
            #expect(error.kind == .initialization)
            #expect(error.message.contains("xyz"))
            #expect(error.message.contains("eng"))
        }
        #expect(TesseractEngine.availableLanguages().contains("eng"))
        #expect(!TesseractEngine.availableLanguages().contains("osd"))
    }

    @Test("languages load in priority order", .enabled(if: Capabilities.allRequired || TesseractEngine.availableLanguages().contains("chi_sim"),
                                                   "needs tesseract-ocr-chi-sim"))
    func languageOrder() throws {
        let mixed = try TesseractEngine(EngineConfiguration(languages: ["chi_sim", "eng"]))
        #expect(mixed.loadedLanguages == ["chi_sim", "eng"])
    }

    @Test("variables set and read back")
    func variables() throws {
        #expect(engine.setVariable("tessedit_char_blacklist", "xyz"))
        #expect(engine.stringVariable("tessedit_char_blacklist") == "xyz")
        #expect(engine.setVariable("tessedit_char_blacklist", ""))
        #expect(!engine.setVariable("no_such_variable_anywhere", "1"))
        engine.pageSegmentationMode = .singleBlock
        #expect(engine.pageSegmentationMode == .singleBlock)
        engine.pageSegmentationMode = .auto
    }
}

@Suite("Tesseract orientation detection", .serialized)
struct OrientationTests {
    @Test("OSD finds how far each turned copy of phototest must be rotated", arguments: [
        ("phototest.tif", 0), ("phototest-rotated-180.png", 180), ("phototest-rotated-R.png", 90),
        ("phototest-rotated-L.png", 270),
    ])
    func orientation(file: String, expected: Int) throws {
        let detector = try OrientationDetector()
        let image = try Pix(contentsOfFile: Fixtures.path("tesseract-testdata/" + file))
        let result = try detector.detect(image)
        #expect(result.script == "Latin")
        // Turning the image clockwise by `rotation` must make it upright; check by recognizing.
        let upright = try image.rotatedOrthogonally(quarterTurns: result.rotation / 90)
        let text = try TesseractEngine().recognize(upright).text
        let cer = TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text)
        #expect(cer < 0.05, "\(file): rotation \(result.rotation), expected \(expected), CER \(cer)")
        #expect(result.confidence > 1)
    }

    @Test("a blank page has too little text to detect")
    func blank() throws {
        let detector = try OrientationDetector()
        let blank = try Pix(width: 600, height: 400, depth: 8)
        #expect(throws: TesseractError.self) { try detector.detect(blank) }
    }
}
