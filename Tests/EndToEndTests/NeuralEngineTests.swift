import Foundation
import Testing
import FarmCore
import FarmStore
import FarmRuntime
import TestSupport

/// The neural engine (PP-OCRv6 through ONNX Runtime, installed by Scripts/install-neural) from the real binary:
/// pages Tesseract reads badly read well, its documents pass their readers' validators, the automatic choice, the
/// engine stored per document, and the error when the runtime is missing.
@Suite("The neural engine and --engine auto (end to end)", .serialized)
struct NeuralEngineTests {
    let folder = TemporaryDirectory("e2e-neural")

    func read(_ image: String, engine: String, format: String = "json", _ extra: [String] = []) throws -> ProcessOutput {
        let output = try Run.ocrfarm(["ocr", image, "--engine", engine, "--format", format, "--jobs", "1"] + extra)
        #expect(output.status == 0, "\(engine): \(output.stderr)")
        return output
    }

    func truth(_ fixture: String) throws -> String {
        try String(contentsOfFile: Fixtures.path(fixture), encoding: .utf8)
    }

    @Test("a real receipt: the neural engine reads it with far fewer errors than Tesseract, and says so in the JSON")
    func receipt() throws {
        let image = Fixtures.path("reread/sroie-600-dots.jpg")
        let reference = try truth("reread/sroie-600-dots.gt.txt").lowercased()
        let output = try JSON.parse(read(image, engine: "neural").text)
        let neural = output["pages"]?[0] ?? output
        let tesseract = try read(image, engine: "tesseract", format: "text").text
        let neuralCER = TextMetrics.characterErrorRate(reference: reference, hypothesis: neural["text"]?.stringValue?.lowercased() ?? "")
        let tesseractCER = TextMetrics.characterErrorRate(reference: reference, hypothesis: tesseract.lowercased())
        // Measured (release, score.py --fold-case): neural CER 2.1%, Tesseract 14.1% (with its second reading).
        #expect(neuralCER < 0.06, "neural CER \(neuralCER)")
        #expect(neuralCER < tesseractCER - 0.08, "neural \(neuralCER) against Tesseract \(tesseractCER)")
        #expect(neural["engine"]?.stringValue?.hasPrefix("PP-OCRv6-small+tiny (onnxruntime 1.32") == true, "\(neural["engine"] ?? .null)")
        let words = try #require(neural["words"]?.arrayValue)
        #expect(words.count > 50, "words, not lines: \(words.count)")
    }

    @Test("a real table crop: the neural engine reads the small print Tesseract misses")
    func tableCrop() throws {
        let image = Fixtures.path("pubtabnet/PMC5198506_004_00.png")
        let reference = try truth("pubtabnet/PMC5198506_004_00.gt.txt")
        let neural = try read(image, engine: "neural", format: "text").text
        let tesseract = try read(image, engine: "tesseract", format: "text").text
        let neuralF1 = TextMetrics.wordF1(reference: reference, hypothesis: neural)
        let tesseractF1 = TextMetrics.wordF1(reference: reference, hypothesis: tesseract)
        // Measured (release, score.py): neural F1 0.835, Tesseract 0.365 (glyphs 4–6 px high).
        #expect(neuralF1 > 0.75, "neural F1 \(neuralF1)")
        #expect(neuralF1 > tesseractF1 + 0.3, "neural \(neuralF1) against Tesseract \(tesseractF1)")
    }

    @Test("a neural page's hOCR, ALTO and PAGE pass their validators, and its PDF's words lie on the JSON's word boxes",
          .enabled(if: Capabilities.hasFormatValidators))
    func formats() throws {
        // A receipt that declares no resolution: --image-dpi gives the JSON's boxes and the PDF one scale.
        let image = Fixtures.path("reread/sroie-600-dots.jpg")
        var files: [String] = []
        for format in ["hocr", "alto", "page", "json"] {
            files.append(folder.write("neural.\(format)", [UInt8](try read(image, engine: "neural", format: format, ["--image-dpi", "200"]).stdout)))
        }
        // The boxes stand on each line's ink, not on the detector's grown regions, so neighbouring rows of the dense
        // receipt do not overlap: hocr-check's overlap test runs too.
        let sample = FormatReaderTests.Sample(name: "receipt (neural)", image: image, languages: "eng")
        try FormatReaderTests.validate(hocr: files[0], alto: files[1], page: files[2], json: files[3], sample, in: folder)
        for file in files.prefix(3) {
            #expect(try String(contentsOfFile: file, encoding: .utf8).contains("PP-OCRv6"), "\(file) names the engine")
        }
        let pdf = folder.file("neural.pdf")
        // The corrected page under the text, so the JSON's boxes (on the corrected page) are where the words lie.
        _ = try read(image, engine: "neural", format: "pdf", ["--out", pdf, "--image-dpi", "200", "--pdf-image", "corrected"])
        let json = try JSON.parse(String(contentsOfFile: files[3], encoding: .utf8))
        let page = json["pages"]?[0] ?? json
        let (placed, checked) = try PDFWordPlacement.count(pdf: pdf, words: try #require(page["words"]?.arrayValue),
                                                           resolution: Double(try #require(page["resolution"]?.intValue)))
        #expect(checked > 60)
        #expect(Double(placed) >= 0.95 * Double(checked), "\(placed) of \(checked) words on their boxes")
    }

    @Test("without the runtime and models: neural is exit 69 naming what is missing and the installer; auto, the default, reads with Tesseract and says so once; an install in part is exit 69 for both")
    func missingRuntime() throws {
        let eurotext = Fixtures.path("tesseract-testdata/eurotext.tif")
        let empty = folder.file("no-neural")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let neural = try Run.ocrfarm(["ocr", eurotext, "--engine", "neural"], environment: ["OCRFARM_NEURAL_DIR": empty])
        #expect(neural.status == 69, "\(neural.status) \(neural.stderr)")
        #expect(neural.stderr.contains("Scripts/install-neural") && neural.stderr.contains("libonnxruntime.so.1.32.0")
                && neural.stderr.contains(empty), "\(neural.stderr)")
        // eurotext's first Tesseract reading is weak: with the engine installed auto gives it to the neural engine.
        for arguments in [["--engine", "auto"], []] {
            let output = try Run.ocrfarm(["ocr", eurotext, "--format", "json"] + arguments,
                                         environment: ["OCRFARM_NEURAL_DIR": empty])
            #expect(output.status == 0, "\(arguments): \(output.stderr)")
            #expect(output.stderr.components(separatedBy: "neural engine is not installed").count == 2, "\(output.stderr)")
            let page = try #require(try JSON.parse(output.text)["pages"]?[0])
            #expect(page["engine"]?.stringValue?.hasPrefix("tesseract ") == true, "\(arguments)")
            #expect(page["stages"]?["engine"]?["neural"]?.stringValue == "not installed", "\(arguments)")
            #expect(page["text"]?.stringValue?.contains("quick") == true)
        }
        // The same page with the engine installed, by default: read by the neural engine.
        let installedDefault = try Run.ocrfarm(["ocr", eurotext, "--format", "json"])
        #expect(installedDefault.status == 0 && !installedDefault.stderr.contains("not installed"), "\(installedDefault.stderr)")
        let page = try #require(try JSON.parse(installedDefault.text)["pages"]?[0])
        #expect(page["stages"]?["engine"]?["chosen"]?.stringValue == "neural", "\(page["stages"] ?? nil)")
        // A folder with some of the engine's files is a broken install: an error for auto too, naming the first missing.
        let part = folder.file("part-neural")
        try FileManager.default.createDirectory(atPath: part, withIntermediateDirectories: true)
        try FileSystem.write(Array("x".utf8), to: part + "/PP-OCRv6_rec_tiny_dict.txt")
        for engine in ["neural", "auto"] {
            let output = try Run.ocrfarm(["ocr", Fixtures.phototest, "--engine", engine], environment: ["OCRFARM_NEURAL_DIR": part])
            #expect(output.status == 69 && output.stderr.contains("libonnxruntime.so.1.32.0"), "\(engine): \(output.status) \(output.stderr)")
        }
        // Tesseract alone needs none of it.
        #expect(try Run.ocrfarm(["ocr", Fixtures.phototest, "--engine", "tesseract"], environment: ["OCRFARM_NEURAL_DIR": part]).status == 0)
        // `version` says whether the engine is installed, and where.
        let missing = try Run.ocrfarm(["version"], environment: ["OCRFARM_NEURAL_DIR": empty])
        #expect(missing.status == 0 && missing.text.contains("neural not installed (Scripts/install-neural)"), "\(missing.text)")
        let installed = try Run.ocrfarm(["version"])
        #expect(installed.text.contains("neural PP-OCRv6-small+tiny (onnxruntime 1.32.0) in /"), "\(installed.text)")
        // ...and which document mask the segment stage weighs in on colour photos (decision 0102).
        #expect(missing.text.contains("document mask not installed (Scripts/install-neural)"), "\(missing.text)")
        #expect(installed.text.contains("document mask on, /") && installed.text.contains("/document-mask.onnx\n"),
                "\(installed.text)")
        let off = try Run.ocrfarm(["version"], environment: ["OCRFARM_DOCUMENT_MASK": "off"])
        #expect(off.text.contains("document mask off (OCRFARM_DOCUMENT_MASK=off)"), "\(off.text)")
        let named = try Run.ocrfarm(["version"], environment: ["OCRFARM_DOCUMENT_MASK": empty + "/other.onnx"])
        #expect(named.text.contains("document mask missing: \(empty)/other.onnx"), "\(named.text)")
    }

    @Test("a worker host with the neural engine installed in part: a default worker will not start (69, naming the missing file); a Tesseract worker fails the auto page that needs the engine, saying so, and reads the rest")
    func workerWithPartInstall() throws {
        let part = folder.file("worker-part-neural")
        try FileManager.default.createDirectory(atPath: part, withIntermediateDirectories: true)
        try FileSystem.write(Array("x".utf8), to: part + "/PP-OCRv6_rec_tiny_dict.txt")
        let environment = ["OCRFARM_NEURAL_DIR": part]
        let farm = FarmHarness()
        let port = FarmHarness.freePort()
        // Its start engine is auto, the default: the install is checked before it connects.
        let refused = try farm.startWorker(port: port, name: "default-worker", environment: environment)
        #expect(FarmHarness.wait(seconds: 30) { !refused.isRunning })
        #expect(refused.terminate() == 69 && refused.log.contains("libonnxruntime.so.1.32.0")
                && refused.log.contains("Scripts/install-neural"), "\(refused.log)")
        // Documents name their engine: eurotext, whose first Tesseract reading is weak, goes to the neural engine under
        // auto (missingRuntime above); phototest asks for Tesseract.
        let pages = folder.file("worker-part-pages")
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        try FileSystem.write(try Fixtures.read("tesseract-testdata/eurotext.tif"), to: pages + "/eurotext.tif")
        #expect(try farm.submit(["--engine", "auto", pages]).status == 0)
        #expect(try farm.submit(["--engine", "tesseract", Fixtures.phototest]).status == 0)
        _ = try farm.startCoordinator(port: port, ["--retry-delay", "0.1"])
        _ = try farm.startWorker(port: port, ["--engine", "tesseract", "--slots", "1"], name: "worker", environment: environment)
        let finished = try FarmHarness.wait(seconds: 120) {
            let status = try Store(path: farm.storePath, readOnly: true).status()
            return status.count(.done) + status.count(.failed) == 2
        }
        #expect(finished, "\(farm.logs)")
        let all = try Store(path: farm.storePath, readOnly: true).pages()
        let eurotext = try #require(all.first { $0.source.description.hasSuffix("eurotext.tif") })
        #expect(eurotext.state == .failed && eurotext.failureCode == "ocr-failed", "\(eurotext)")
        #expect(eurotext.failureMessage?.contains("libonnxruntime.so.1.32.0") == true
                && eurotext.failureMessage?.contains("Scripts/install-neural") == true, "\(eurotext)")
        let phototest = try #require(all.first { $0.source.description.hasSuffix("phototest.tif") })
        #expect(phototest.state == .done, "\(phototest)")
        farm.stopAll()
    }

    @Test("run --engine auto: the engine is stored per document, each page names the engine that read it; reread switches it")
    func farmStoresEngine() throws {
        let pages = folder.file("farm-pages")
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        folder.write("farm-pages/clean.tif", try Fixtures.read("tesseract-testdata/phototest.tif"))
        folder.write("farm-pages/receipt.jpg", try Fixtures.read("reread/sroie-600-dots.jpg"))
        let store = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1", "--engine", "auto", "--outputs", "none", pages])
        try #require(run.status == 0, "\(run.stderr)")
        func engines() throws -> [String: String] {
            let reader = try Store(path: store, readOnly: true)
            var engines: [String: String] = [:]
            for page in try reader.pages() {
                engines[String(decoding: page.source.lastComponent, as: UTF8.self)] = try reader.model(of: page.id)?.result.engine ?? "none"
            }
            return engines
        }
        let first = try engines()
        #expect(first["clean.tif"] == "tesseract 5.3.0", "\(first)")
        #expect(first["receipt.jpg"]?.hasPrefix("PP-OCRv6-small") == true, "\(first)")
        let reread = try Run.ocrfarm(["reread", "--store", store, "--document", "clean.tif", "--engine", "neural"])
        #expect(reread.status == 0 && reread.text.contains("engine neural"), "\(reread.text)\(reread.stderr)")
        let again = try Run.ocrfarm(["run", "--store", store, "--workers", "1"])
        try #require(again.status == 0, "\(again.stderr)")
        #expect(try engines()["clean.tif"]?.hasPrefix("PP-OCRv6-small") == true)
    }
}
