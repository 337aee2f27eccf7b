import Testing
import FarmCore
@testable import FarmPipeline
import FarmRuntime
import Leptonica
import TestSupport

/// The neural reading engine end to end on real fixtures, with the installed models (a missing install fails).
@Suite("Neural recognizer end to end")
struct NeuralRecognizerTests {
    static func recognizer() throws -> NeuralRecognizer {
        try NeuralRecognizer(models: try NeuralModels.locate())
    }

    /// A fixture decoded as `ocrfarm ocr` decodes it (gray), without the correction stages.
    static func page(_ name: String) throws -> DecodedPage {
        try Decoder.decode(try Fixtures.read(name), keepColor: false)
    }

    /// Every word's box lies in its line's box, every line's in the page; confidences are 0–100.
    static func checkStructure(_ result: PageResult) {
        let page = Rect(x: 0, y: 0, width: result.width, height: result.height)
        for line in result.lines {
            #expect(line.box.x >= 0 && line.box.y >= 0 && line.box.maxX <= page.maxX && line.box.maxY <= page.maxY)
            for word in line.words {
                #expect(word.box.x >= line.box.x && word.box.maxX <= line.box.maxX && word.box.y >= line.box.y
                        && word.box.maxY <= line.box.maxY, "\(word.text) \(word.box) outside \(line.box)")
                #expect(word.box.width > 0 && word.box.height > 0)
                #expect(word.confidence >= 0 && word.confidence <= 100)
                #expect(!word.fromDictionary && word.language == nil)
                #expect(!word.text.contains(" "))
            }
        }
    }

    // Tesseract's reading, measured on main (8cd181b) with
    //   ocrfarm ocr --jobs 1 Tests/Fixtures/reread/sroie-000.jpg > sroie-000.txt
    //   python3 ../shared/bench/score.py --fold-case Tests/Fixtures/reread/sroie-000.gt.txt sroie-000.txt
    // F1 0.754, CER 16.70%. The neural engine read it with F1 0.841, CER 10.1% (raw page, no stages).
    @Test("a real SROIE receipt is read better than Tesseract reads it (F1 0.754, CER 16.7%)")
    func receipt() throws {
        let result = try Self.recognizer().recognize(try Self.page("reread/sroie-000.jpg"), options: RecognitionOptions())
        let truth = String(decoding: try Fixtures.read("reread/sroie-000.gt.txt"), as: UTF8.self)
        let f1 = TextMetrics.wordF1(reference: truth, hypothesis: result.text, foldCase: true)
        let cer = TextMetrics.characterErrorRate(reference: truth.uppercased(), hypothesis: result.text.uppercased())
        #expect(f1 > 0.80, "F1 \(f1): \(result.text)")
        #expect(cer < 0.13, "CER \(cer): \(result.text)")
        #expect(result.text.contains("81100 JOHOR BAHRU"))
        // Read in rows: a label before its value, as the receipt prints them.
        let documentLine = result.text.split(separator: "\n").first { $0.contains("Document No") }
        #expect(documentLine?.contains("TD01167104") == true, "\(result.text)")
        Self.checkStructure(result)
        #expect(result.meanConfidence > 50 && result.meanConfidence <= 100)
        #expect(result.timings.map(\.stage) == [NeuralRecognizer.stage])
    }

    // Tesseract's reading, measured on main (8cd181b) with
    //   ocrfarm ocr --jobs 1 Tests/Fixtures/pubtabnet/PMC1626454_002_00.png > t.txt
    //   python3 ../shared/bench/score.py Tests/Fixtures/pubtabnet/PMC1626454_002_00.gt.txt t.txt
    // F1 0.719, CER 54.1%. The neural engine read it with F1 0.973 (raw page, no stages).
    // Raw Tesseract's reading of the page (`tesseract bar-quenching-12.jpg -`, scored with ../shared/bench/score.py
    // --nfkc): F1 0.901; Tesseract's layout calls the figures images and reads no text in them. Before figure regions
    // the neural engine read the plots' tick labels as text ("10 10 10" across three panels): F1 0.862.
    @Test("a paper page's figure labels are left out of the text, its captions and prose are read (F1 within 0.03 of Tesseract's 0.901)")
    func figureLabels() throws {
        let result = try Self.recognizer().recognize(try Self.page("docbank/bar-quenching-12.jpg"), options: RecognitionOptions())
        let truth = try String(contentsOfFile: Fixtures.path("docbank/bar-quenching-12.gt.txt"), encoding: .utf8)
        let f1 = PaperPageTests.wordF1(reference: truth, hypothesis: result.text)
        #expect(f1 >= 0.901 - 0.03, "F1 \(f1): \(result.text)")
        #expect(!result.text.contains("10 10 10") && !result.text.contains("x [kpc]"), "\(result.text)")
        #expect(result.text.contains("Fig. 13. Maps of the gas surface density"), "\(result.text)")
        #expect(result.text.contains("Article number, page 13 of 17"), "\(result.text)")
        let labels = try #require(result.findings["recognize"]?["figure_labels"]?.intValue)
        #expect(labels >= 20, "\(result.findings)")
    }

    @Test("a real PubTabNet table crop is read better than Tesseract reads it (F1 0.719)")
    func table() throws {
        let result = try Self.recognizer().recognize(try Self.page("pubtabnet/PMC1626454_002_00.png"), options: RecognitionOptions())
        let truth = String(decoding: try Fixtures.read("pubtabnet/PMC1626454_002_00.gt.txt"), as: UTF8.self)
        let f1 = TextMetrics.wordF1(reference: truth, hypothesis: result.text)
        #expect(f1 > 0.9, "F1 \(f1): \(result.text)")
        Self.checkStructure(result)
    }

    // Tesseract: F1 0.932, CER 5.13% (`ocrfarm ocr --jobs 1 Tests/Fixtures/pubtabnet/PMC5134617_013_00.png`, as above).
    // The neural engine: F1 0.997, CER 12.9% (its heading's cells are read in another order).
    @Test("a ruled table is read row by row: each date with its numbers on one line")
    func tableRows() throws {
        let result = try Self.recognizer().recognize(try Self.page("pubtabnet/PMC5134617_013_00.png"), options: RecognitionOptions())
        let truth = String(decoding: try Fixtures.read("pubtabnet/PMC5134617_013_00.gt.txt"), as: UTF8.self)
        #expect(TextMetrics.wordF1(reference: truth, hypothesis: result.text) > 0.95)
        #expect(result.text.contains("11 August 30.27 177.30 137.14 32.99% 49.48% 71.13% 76.29%"), "\(result.text)")
        Self.checkStructure(result)
    }

    @Test("an upside-down table is turned line by line and read; its word boxes land on the page")
    func upsideDown() throws {
        let page = try Self.page("pubtabnet/PMC5134617_013_00.png")
        let turned = DecodedPage(image: try page.image.rotatedOrthogonally(quarterTurns: 2), format: .png, declaredResolution: 0)
        let result = try Self.recognizer().recognize(turned, options: RecognitionOptions())
        let truth = String(decoding: try Fixtures.read("pubtabnet/PMC5134617_013_00.gt.txt"), as: UTF8.self)
        // Measured F1 0.80 (upright 0.997): short crops of digits are turned only when the classifier is sure
        // (0.9), so some stay upside down; whole pages are turned by ocrfarm's orient stage first.
        #expect(TextMetrics.wordF1(reference: truth, hypothesis: result.text) > 0.75, "\(result.text)")
        Self.checkStructure(result)
        if case .object(let fields) = result.findings, case .object(let recognize)? = fields.first?.1 {
            #expect((recognize.first { $0.0 == "turned" }?.1.intValue ?? 0) > 5)
        } else {
            Issue.record("no findings")
        }
    }

    @Test("an empty page, a 1×1 page and a single line give results, not crashes")
    func tinyPages() throws {
        let recognizer = try Self.recognizer()
        for (width, height) in [(1, 1), (200, 100), (3000, 2)] {
            let blank = try Pix(gray: GrayPixels(width: width, height: height, value: 255))
            let result = try recognizer.recognize(DecodedPage(image: blank, format: .png, declaredResolution: 0), options: RecognitionOptions())
            #expect(result.lines.isEmpty && result.text.isEmpty)
            #expect(result.width == width && result.height == height)
        }
        // One line of the table alone (a strip 1:20): padded above and below for the detector, then read.
        let page = try Self.page("pubtabnet/PMC5134617_013_00.png")
        let strip = try page.image.cropped(to: Leptonica.Box(x: 0, y: 22, width: page.image.width, height: 16))
        let result = try recognizer.recognize(DecodedPage(image: strip, format: .png, declaredResolution: 0), options: RecognitionOptions())
        #expect(result.text.contains("August"), "\(result.text)")
    }

    @Test("options: a spent time limit stops the page, small text is left out, candidates and custom words are kept")
    func options() throws {
        let recognizer = try Self.recognizer()
        let page = try Self.page("reread/sroie-000.jpg")
        do {
            _ = try recognizer.recognize(page, options: RecognitionOptions(timeoutMilliseconds: 0))
            Issue.record("a spent time limit was ignored")
        } catch {
            #expect(error.code == .timeout && error.retryable && error.stage == NeuralRecognizer.stage)
        }
        let none = try recognizer.recognize(page, options: RecognitionOptions(minTextHeight: 0.2))
        #expect(none.lines.isEmpty)
        let withCandidates = try recognizer.recognize(page, options: RecognitionOptions(candidates: 3, words: ["Bahru"]))
        #expect(withCandidates.words.contains { $0.candidates.count > 1 })
        #expect(withCandidates.words.allSatisfy { $0.candidates.count <= 3 })
        #expect(withCandidates.text.contains("81100 JOHOR Bahru"), "custom word: \(withCandidates.text)")
    }

    @Test("a damaged model fails with a PageFailure naming the file")
    func damagedModel() throws {
        let installed = try NeuralModels.locate()
        let folder = TemporaryDirectory("ocrfarm-neural")
        for file in [NeuralModels.runtimeFile, NeuralModels.detectorFile, NeuralModels.classifierFile] {
            _ = folder.write(file, try FileSystem.read(installed.folder + "/" + file))
        }
        _ = folder.write(NeuralModels.recognizerFile, text: "not a model")
        do {
            _ = try NeuralRecognizer(models: NeuralModels(folder: folder.path))
            Issue.record("a damaged model was loaded")
        } catch {
            #expect(error.stage == "recognize" && error.code == .ocrFailed)
            #expect(error.message.contains(NeuralModels.recognizerFile), "\(error.message)")
        }
    }
}
