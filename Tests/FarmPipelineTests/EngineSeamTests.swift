import Foundation
import Synchronization
import Testing
import FarmCore
@testable import FarmPipeline
import TestSupport

/// A scripted engine: reads every page as the same words, says which version it is, and records, for each page it
/// read, whether the page as decoded came with it, its size, and the body text's x-height measured for it.
final class ScriptedRecognizer: NeuralReader, Sendable {
    let text: String
    let version: String
    let wantsUncorrected: Bool
    let symbols: Set<Character>
    private let seen = Mutex<[(uncorrected: Bool, width: Int, height: Int, xHeight: Double?)]>([])
    /// For each page read, whether it came with the page as decoded (`DecodedPage.uncorrected`).
    var pagesWithUncorrected: [Bool] { seen.withLock { $0.map(\.uncorrected) } }
    /// The size of each page read.
    var sizesRead: [(width: Int, height: Int)] { seen.withLock { $0.map { ($0.width, $0.height) } } }
    /// The x-height each page came with (`DecodedPage.measuredTextSize`; nil: not measured).
    var xHeightsGiven: [Double?] { seen.withLock { $0.map(\.xHeight) } }

    init(text: String, version: String, wantsUncorrected: Bool = false, symbols: Set<Character> = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")) {
        self.text = text
        self.version = version
        self.wantsUncorrected = wantsUncorrected
        self.symbols = symbols
    }

    var engineName: String { version + " (scripted)" }
    var engineVersion: String { version }
    var readsUncorrectedImage: Bool { wantsUncorrected }

    func recognize(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        seen.withLock { $0.append((page.uncorrected != nil, page.image.width, page.image.height, page.measuredTextSize?.xHeight)) }
        let box = Rect(x: 10, y: 10, width: 100, height: 20)
        let words = text.split(separator: " ").enumerated().map { index, word in
            Word(text: String(word), box: Rect(x: 10 + 40 * index, y: 10, width: 30, height: 20), confidence: 91)
        }
        var result = PageResult(width: page.image.width, height: page.image.height, resolution: page.declaredResolution,
                                text: text + "\n", meanConfidence: 91,
                                blocks: [Block(box: box, kind: "text", paragraphs: [Paragraph(box: box, lines: [Line(box: box, words: words)])])])
        result.engine = version
        return result
    }
}

/// Counts the recognizers an `Engines` made, by engine.
final class MadeCounter: Sendable {
    private let counts = Mutex<[ReadingEngine: Int]>([:])
    func add(_ engine: ReadingEngine) { counts.withLock { $0[engine, default: 0] += 1 } }
    func count(_ engine: ReadingEngine) -> Int { counts.withLock { $0[engine] ?? 0 } }
}

@Suite("The engine seam: the page processor reads with whatever engine a page names, through PageRecognizer only")
struct EngineSeamTests {
    static func scripted(_ made: MadeCounter) -> Engines {
        Engines([
            .tesseract: { _ throws(PageFailure) in made.add(.tesseract); return ScriptedRecognizer(text: "tess words", version: "tess 1", wantsUncorrected: true) },
            .neural: { _ throws(PageFailure) in made.add(.neural); return ScriptedRecognizer(text: "neural words", version: "net 2") },
        ])
    }

    @Test("a page is read by the engine its options name; the result and every document name that engine")
    func pageNamesItsEngine() throws {
        let made = MadeCounter()
        let processor = PageProcessor(engine: .page, engines: Self.scripted(made))
        var options = PageOptions()
        options.engine = .neural
        let page = try processor.process(.image(Fixtures.read("tesseract-testdata/phototest.tif"), index: 0), options: options,
                                         outputs: [.hocr, .alto, .page, .json], sourceName: "photo.tif")
        #expect(page.result.text == "neural words\n")
        #expect(page.result.engine == "net 2")
        #expect(made.count(.neural) == 1 && made.count(.tesseract) == 0)
        for format in [OutputFormat.hocr, .alto, .page, .json] {
            let document = String(decoding: try #require(page.rendering(format)), as: UTF8.self)
            #expect(document.contains("net 2"), "\(format) does not name the engine: \(document.prefix(600))")
            #expect(!document.contains("tesseract"), "\(format) names tesseract")
        }
        // The same processor keeps the engine it made, and makes the other when a page asks for it.
        _ = try processor.process(.image(Fixtures.read("tesseract-testdata/phototest.tif"), index: 0), options: options)
        options.engine = .tesseract
        let tesseractPage = try processor.process(.image(Fixtures.read("tesseract-testdata/phototest.tif"), index: 0),
                                                  options: options)
        #expect(tesseractPage.result.engine == "tess 1")
        #expect(made.count(.neural) == 1 && made.count(.tesseract) == 1)
    }

    @Test("the page as decoded is kept through the stages only for an engine that reads it")
    func uncorrectedOnlyWhenRead() throws {
        let bytes = try Fixtures.read("tesseract-testdata/phototest.tif")
        let reads = ScriptedRecognizer(text: "a", version: "x 1", wantsUncorrected: true)
        let ignores = ScriptedRecognizer(text: "b", version: "y 1", wantsUncorrected: false)
        let processor = PageProcessor(engine: .page, engines: Engines([.tesseract: { _ throws(PageFailure) in reads },
                                                                       .neural: { _ throws(PageFailure) in ignores }]))
        var options = PageOptions()
        options.engine = .tesseract
        _ = try processor.process(.image(bytes, index: 0), options: options)
        options.engine = .neural
        _ = try processor.process(.image(bytes, index: 0), options: options)
        #expect(reads.pagesWithUncorrected == [true])
        #expect(ignores.pagesWithUncorrected == [false])
    }

    @Test("the quality figure weighs dictionary words only for Tesseract's readings: the neural engine has no word lists")
    func qualityWithoutWordLists() throws {
        let bytes = try Fixtures.read("tesseract-testdata/phototest.tif")
        var options = PageOptions()
        options.engine = .neural
        func quality(version: String) throws -> PageQuality {
            let engines = Engines([.neural: { _ throws(PageFailure) in
                ScriptedRecognizer(text: "alpha bravo charlie delta", version: version) }])
            let result = try PageProcessor(engine: .page, engines: engines).process(.image(bytes, index: 0), options: options).result
            return try #require(result.quality)
        }
        // The same four words, none flagged as in a dictionary: from the neural engine the share is left out ...
        let neural = try quality(version: "net 2")
        #expect(neural.dictionary == nil, "\(neural)")
        // ... from Tesseract it counts against the page (no word of four was in its dictionary).
        let tesseract = try quality(version: "tesseract 9")
        #expect(tesseract.dictionary == 0, "\(tesseract)")
        #expect(neural.figure > tesseract.figure)
    }

    @Test("an engine with no maker fails the page with a message naming it, not the process")
    func missingEngine() throws {
        let processor = PageProcessor(engine: .page, engines: Engines([:]))
        var options = PageOptions()
        options.engine = .neural
        let bytes = try Fixtures.read("tesseract-testdata/phototest.tif")
        do throws(PageFailure) {
            _ = try processor.process(.image(bytes, index: 0), options: options)
            Issue.record("a page asking for an engine with no maker was read")
        } catch {
            #expect(error.message.contains("neural"), "\(error)")
        }
    }

    @Test("the engine travels with the page's options (stored per document, carried in every JOB); options without one are tesseract, new work's default is auto")
    func optionsCarryEngine() {
        var options = PageOptions()
        #expect(options.engine == .tesseract)
        #expect(options.json["engine"] == nil, "tesseract is not written")
        #expect(PageOptions(json: .object([("lang", "eng")])).engine == .tesseract, "options stored before auto was the default")
        #expect(ReadingEngine.defaultChoice == .auto)
        options.engine = .defaultChoice
        #expect(options.json["engine"]?.stringValue == "auto")
        for engine in ReadingEngine.allCases {
            options.engine = engine
            #expect(PageOptions(json: options.json).engine == engine)
        }
        #expect(PageOptions(json: .object([("engine", "abacus")])).engine == .tesseract)
    }
}

@Suite("--engine auto: Tesseract where its first reading is sure, the neural engine where it is weak (real Tesseract)")
struct AutomaticEngineTests {
    func automatic(neural: ScriptedRecognizer, made: MadeCounter, languages: [String] = ["eng"]) -> Engines {
        Engines([.auto: { request throws(PageFailure) in
            try AutomaticRecognizer(tesseract: TesseractRecognizer(languages: request.languages),
                                    neural: { () throws(PageFailure) in made.add(.neural); return neural },
                                    languages: request.languages)
        }])
    }

    func read(_ fixture: String, with engines: Engines, languages: [String] = ["eng"]) throws -> PageResult {
        var options = PageOptions(languages: languages)
        options.engine = .auto
        return try PageProcessor(engine: .page, engines: engines).process(.image(Fixtures.read(fixture), index: 0), options: options).result
    }

    @Test("a clean printed page stays with Tesseract, and the neural engine is never made")
    func cleanPageTesseract() throws {
        let made = MadeCounter()
        let result = try read("tesseract-testdata/phototest.tif", with: automatic(neural: ScriptedRecognizer(text: "x", version: "net 2"), made: made))
        #expect(result.engine == TesseractRecognizer.version)
        #expect(result.text.contains("quick brown"))
        #expect(result.findings["engine"]?["chosen"]?.stringValue == "tesseract")
        #expect(made.count(.neural) == 0)
    }

    @Test("where the neural engine is not installed, a weak page stays with Tesseract and its finding says why")
    func neuralNotInstalled() throws {
        let engines = Engines([.auto: { request throws(PageFailure) in
            try AutomaticRecognizer(tesseract: TesseractRecognizer(languages: request.languages), neural: nil,
                                    languages: request.languages)
        }])
        let result = try read("tesseract-testdata/eurotext.tif", with: engines)
        let finding = try #require(result.findings["engine"])
        #expect(finding["chosen"]?.stringValue == "tesseract", "\(finding)")
        #expect(finding["neural"]?.stringValue == "not installed", "\(finding)")
        #expect(result.engine == TesseractRecognizer.version)
        #expect(result.text.contains("quick"))
        // Tesseract finished the page (its second reading ran), as with --engine tesseract.
        #expect(result.findings["second_reading"] != nil, "\(result.findings)")
    }

    @Test("a page of large print Tesseract reads weakly goes to the neural engine, with the evidence recorded")
    func weakPageNeural() throws {
        let made = MadeCounter()
        let neural = ScriptedRecognizer(text: "neural words", version: "net 2")
        // eurotext: x-height about 22 px, Tesseract unsure of the accented words of four languages read as English.
        let result = try read("tesseract-testdata/eurotext.tif", with: automatic(neural: neural, made: made))
        let finding = try #require(result.findings["engine"])
        #expect(finding["chosen"]?.stringValue == "neural", "\(finding)")
        #expect(result.engine == "net 2")
        #expect(result.text == "neural words\n")
        // The neural engine read the page before scale and enhance (the page is reduced for Tesseract); its boxes came
        // back onto the corrected page.
        let scale = try #require(result.findings["scale"])
        #expect(scale["applied"]?.boolValue == true, "\(scale)")
        let factor = try #require(scale["factor"]?.doubleValue)
        let read = try #require(neural.sizesRead.first)
        #expect(abs(Double(result.width) / Double(read.width) - factor) < 0.01, "\(read) \(result.width)")
        // It came with the body text's size the scale stage measured on that page, not to be measured again.
        let given = try #require(neural.xHeightsGiven.first ?? nil, "the neural engine's page came without its x-height")
        #expect(abs(given - (scale["x_height"]?.doubleValue ?? 0)) <= 0.05, "\(given) \(scale)")
        let first = try #require(result.words.first)
        #expect(first.box == Rect(x: 10, y: 10, width: 30, height: 20).scaled(by: Double(result.width) / Double(read.width)))
        let evidence = try #require(finding["evidence"])
        let characters = evidence["characters"]?.intValue ?? 0
        #expect((evidence["weak_share"]?.doubleValue ?? 0) > EngineEvidence.neuralShare(characters: characters)
                    || characters < EngineEvidence.fewCharacters, "\(evidence)")
        #expect(made.count(.neural) == 1)
        // Tesseract's first reading keeps its cost under a stage of its own, and no stage is named twice.
        let stages = result.timings.map(\.stage)
        #expect(stages.filter { $0 == TesseractRecognizer.firstReadingStage }.count == 1, "\(stages)")
        #expect(Set(stages).count == stages.count, "\(stages)")
    }

    @Test("a table crop of small print goes to the neural engine without Tesseract's first reading")
    func smallPrintNeural() throws {
        let made = MadeCounter()
        let neural = ScriptedRecognizer(text: "cells", version: "net 2")
        // x-height about 5 px: the stages enlarge the crop 2.5× for Tesseract.
        let result = try read("pubtabnet/PMC5198506_004_00.png", with: automatic(neural: neural, made: made))
        let finding = try #require(result.findings["engine"])
        #expect(finding["chosen"]?.stringValue == "neural", "\(finding)")
        #expect((finding["small_print"]?["enlarged"]?.doubleValue ?? 0) >= AutomaticRecognizer.smallPrintEnlargement, "\(finding)")
        #expect(finding["evidence"] == nil, "Tesseract did not read the page first: \(finding)")
        #expect(!result.timings.contains { $0.stage == TesseractRecognizer.firstReadingStage }, "\(result.timings)")
        #expect(result.engine == "net 2" && result.text == "cells\n")
        // Small print in Chinese stays with Tesseract, which then reads the page.
        let chinese = try read("pubtabnet/PMC5198506_004_00.png", with: automatic(neural: neural, made: made), languages: ["chi_sim"])
        #expect(chinese.findings["engine"]?["chosen"]?.stringValue == "tesseract")
        #expect(chinese.engine == TesseractRecognizer.version && !chinese.words.isEmpty)
    }

    @Test("print smaller than Tesseract's target x-height goes to the neural engine without a first reading")
    func smallXHeightNeural() throws {
        for fixture in ["reread/sroie-000.jpg", "docbank/delayed-acceptance-11.jpg"] {
            let made = MadeCounter()
            let neural = ScriptedRecognizer(text: "neural words", version: "net 2")
            let result = try read(fixture, with: automatic(neural: neural, made: made))
            let finding = try #require(result.findings["engine"])
            #expect(finding["chosen"]?.stringValue == "neural", "\(fixture): \(finding)")
            let xHeight = try #require(finding["small_print"]?["x_height"]?.doubleValue, "\(fixture): \(finding)")
            #expect(xHeight < ScaleStage.targetXHeight && xHeight > 5, "\(fixture): \(finding)")
            // The x-height judged is the one the scale stage measured (once a page), and it went on to the engine.
            let scale = try #require(result.findings["scale"]?["x_height"]?.doubleValue, "\(fixture): \(result.findings)")
            #expect(abs(xHeight - scale) <= 0.05, "\(fixture): \(finding) scale \(scale)")
            #expect(abs((neural.xHeightsGiven.first ?? nil).map { $0 - scale } ?? 1) <= 0.05, "\(fixture): \(neural.xHeightsGiven)")
            #expect(finding["evidence"] == nil, "Tesseract did not read the page first: \(finding)")
            #expect(!result.timings.contains { $0.stage == TesseractRecognizer.firstReadingStage }, "\(result.timings)")
            #expect(made.count(.neural) == 1)
        }
        // The clean page of large print is read by Tesseract first (x-height about 22 px).
        let made = MadeCounter()
        let result = try read("tesseract-testdata/phototest.tif", with: automatic(neural: ScriptedRecognizer(text: "x", version: "net 2"), made: made))
        #expect(result.findings["engine"]?["small_print"] == nil)
        #expect(result.findings["engine"]?["evidence"] != nil)
    }

    @Test("where the neural engine cannot write the page's language, Tesseract reads it")
    func unwrittenLanguage() throws {
        let made = MadeCounter()
        // A scripted engine with digits only: it writes no English letter.
        let digits = ScriptedRecognizer(text: "1 2", version: "net 2", symbols: Set("0123456789"))
        let result = try read("reread/sroie-600-dots.jpg", with: automatic(neural: digits, made: made))
        let finding = try #require(result.findings["engine"])
        #expect(finding["chosen"]?.stringValue == "tesseract", "\(finding)")
        #expect(finding["not_written"]?["eng"]?.doubleValue == 0)
        #expect(result.engine == TesseractRecognizer.version)
        #expect(digits.pagesWithUncorrected.isEmpty)
    }
}

extension AutomaticEngineTests {
    @Test("a Chinese page stays with Tesseract even when its first reading is weak")
    func unspacedStaysTesseract() throws {
        let made = MadeCounter()
        // The receipt read as Chinese: Tesseract reads next to nothing of it, which would favour the neural engine.
        let result = try read("reread/sroie-600-dots.jpg", with: automatic(neural: ScriptedRecognizer(text: "x", version: "net 2"), made: made),
                              languages: ["chi_sim"])
        let finding = try #require(result.findings["engine"])
        #expect(finding["chosen"]?.stringValue == "tesseract" && finding["unspaced"]?.boolValue == true, "\(finding)")
        #expect(made.count(.neural) == 0)
    }

    @Test("the doubt a page needs before the neural engine reads it grows with its length")
    func evidenceBoundary() {
        func page(_ words: [(String, Double)]) -> PageResult {
            let box = Rect(x: 0, y: 0, width: 10, height: 10)
            let line = Line(box: box, words: words.map { Word(text: $0.0, box: box, confidence: $0.1) })
            return PageResult(width: 10, height: 10, resolution: 300, text: "", meanConfidence: 0,
                              blocks: [Block(box: box, kind: "text", paragraphs: [Paragraph(box: box, lines: [line])])])
        }
        let word = String(repeating: "a", count: 10)
        // 300 characters, a fifth of them unsure: a short doubtful page (a receipt) is read by the neural engine.
        let short = EngineEvidence(page(Array(repeating: (word, 95.0), count: 24) + Array(repeating: (word, 50.0), count: 6)))
        #expect(short.characters == 300 && abs(short.weakShare - 0.2) < 1e-9)
        #expect(short.favoursNeural)
        // 3,000 characters with the same share unsure: a paper page stays with Tesseract.
        let long = EngineEvidence(page(Array(repeating: (word, 95.0), count: 240) + Array(repeating: (word, 50.0), count: 60)))
        #expect(!long.favoursNeural)
        // Nothing read: the layout found no text, the neural detector may.
        #expect(EngineEvidence(page([])).favoursNeural)
        #expect(!EngineEvidence(page(Array(repeating: (word, 95.0), count: 30))).favoursNeural)
    }
}

@Suite("Which languages an engine's symbols write: letters from the installed traineddata")
struct LanguageCoverageTests {
    @Test("English's letters are the Latin alphabet; Chinese's include Han")
    func letters() throws {
        let english = try #require(LanguageCoverage.letters(of: "eng"))
        #expect(english.isSuperset(of: Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")))
        #expect(!english.contains("1") && !english.contains("."), "digits and punctuation are not letters")
        let chinese = try #require(LanguageCoverage.letters(of: "chi_sim"))
        #expect(chinese.contains("中") && chinese.count > 3000)
        #expect(LanguageCoverage.letters(of: "no_such_language") == nil)
        #expect(LanguageCoverage.letters(traineddata: [1, 2, 3]) == nil)
        #expect(LanguageCoverage.letters(traineddata: Array(repeating: 0xFF, count: 400)) == nil)
    }

    @Test("a set of symbols writes a language when it has nearly all its letters")
    func writes() {
        let latin = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        #expect(LanguageCoverage.writes(["eng"], with: latin).writes)
        #expect(!LanguageCoverage.writes(["eng"], with: Set("abc")).writes)
        #expect(!LanguageCoverage.writes(["eng", "no_such_language"], with: latin).writes)
        #expect(!LanguageCoverage.writes(["chi_sim"], with: latin).writes)
    }
}
