import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `ocrfarm ocr`, run as a separate process.
@Suite("ocrfarm ocr (end to end)")
struct OCRCommandTests {
    let folder = TemporaryDirectory("e2e-ocr")

    @Test("prints the text of phototest.tif with a CER under 2% and exits 0")
    func text() throws {
        let output = try Run.ocrfarm(["ocr", Fixtures.phototest])
        #expect(output.status == 0)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        let cer = TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: output.text)
        #expect(cer < 0.02, "CER \(cer)")
    }

    @Test("--format pdf writes a PDF whose pdftotext output has the same text")
    func pdf() throws {
        let out = folder.file("out.pdf")
        let result = try Run.ocrfarm(["ocr", Fixtures.phototest, "--format", "pdf", "--out", out])
        #expect(result.status == 0)
        let text = try Run.process("/usr/bin/pdftotext", [out, "-"]).text
        let plain = try Run.ocrfarm(["ocr", Fixtures.phototest]).text
        #expect(TextMetrics.characterErrorRate(reference: plain, hypothesis: text) < 0.01)
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text) < 0.02)
    }

    @Test("several images make one PDF with a page each, in order")
    func multipagePDF() throws {
        let out = folder.file("two.pdf")
        let eurotext = Fixtures.path("tesseract-testdata/eurotext.tif")
        #expect(try Run.ocrfarm(["ocr", eurotext, Fixtures.phototest, "--format", "pdf", "--out", out, "--jobs", "2"]).status == 0)
        let info = try Run.process("/usr/bin/pdfinfo", [out]).text
        #expect(info.contains("Pages:          2") || info.contains("Pages: 2") || info.range(of: #"Pages:\s+2"#, options: .regularExpression) != nil)
        let secondPage = try Run.process("/usr/bin/pdftotext", ["-f", "2", "-l", "2", out, "-"]).text
        #expect(secondPage.contains("quick brown"))
    }

    @Test("--format hocr and alto are well-formed XML documents with every page", arguments: ["hocr", "alto"])
    func xml(format: String) throws {
        let out = folder.file("out.\(format)")
        let result = try Run.ocrfarm(["ocr", Fixtures.phototest, Fixtures.phototest, "--format", format, "--out", out])
        #expect(result.status == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        let parser = XMLParser(data: data)
        let counter = ElementCounter()
        parser.delegate = counter
        #expect(parser.parse(), "\(format) should parse: \(parser.parserError.map { "\($0)" } ?? "")")
        if format == "hocr" {
            #expect(counter.classes["ocr_page"] == 2)
            #expect((counter.classes["ocrx_word"] ?? 0) > 100)
        } else {
            #expect(counter.elements["Page"] == 2)
            #expect((counter.elements["String"] ?? 0) > 100)
            #expect(counter.elements["alto"] == 1)
        }
    }

    @Test("--format page: one PAGE XML document per page; several pages need a folder")
    func pageXML() throws {
        let single = try Run.ocrfarm(["ocr", Fixtures.phototest, "--format", "page"])
        #expect(single.status == 0)
        let counter = ElementCounter()
        let parser = XMLParser(data: Data(single.stdout))
        parser.delegate = counter
        #expect(parser.parse())
        #expect(counter.elements["PcGts"] == 1 && counter.elements["Page"] == 1)
        #expect((counter.elements["Word"] ?? 0) > 50 && counter.elements["ReadingOrder"] == 1)

        let refused = try Run.ocrfarm(["ocr", Fixtures.phototest, Fixtures.phototest, "--format", "page"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("one page per file"))

        let dir = folder.file("pages")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let eurotext = Fixtures.path("tesseract-testdata/eurotext.tif")
        let both = try Run.ocrfarm(["ocr", Fixtures.phototest, eurotext, "--format", "page", "--out", dir])
        #expect(both.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["eurotext.xml", "phototest.xml"])
    }

    @Test("--candidates 3: up to three readings per word, best first, nearly always led by the word; none without it")
    func candidates() throws {
        let with = try Run.ocrfarm(["ocr", Fixtures.phototest, "--format", "json", "--candidates", "3"])
        #expect(with.status == 0)
        let words = try #require(try JSON.parse(Array(with.stdout))["pages"]?[0]?["words"]?.arrayValue)
        var withAlternatives = 0, firstIsTheWord = 0
        for word in words {
            let candidates = word["candidates"]?.arrayValue ?? []
            #expect(candidates.count <= 3)
            let confidences = candidates.compactMap { $0["confidence"]?.doubleValue }
            #expect(confidences == confidences.sorted(by: >), "\(word)")
            // The engine's own reading uses its language model; the raw best path agrees with it nearly always.
            if candidates.first?["text"]?.stringValue == word["text"]?.stringValue { firstIsTheWord += 1 }
            if candidates.count > 1 { withAlternatives += 1 }
        }
        #expect(withAlternatives > 10, "only \(withAlternatives) words with alternatives")
        #expect(Double(firstIsTheWord) >= 0.9 * Double(words.count), "\(firstIsTheWord) of \(words.count)")
        let without = try Run.ocrfarm(["ocr", Fixtures.phototest, "--format", "json"])
        let plain = try #require(try JSON.parse(Array(without.stdout))["pages"]?[0]?["words"]?.arrayValue)
        #expect(plain.allSatisfy { $0["candidates"] == nil })
        let refused = try Run.ocrfarm(["ocr", Fixtures.phototest, "--candidates", "99"])
        #expect(refused.status == 64)
    }

    @Test("--format json has per page the text, mean confidence and words with boxes and confidences")
    func json() throws {
        let output = try Run.ocrfarm(["ocr", Fixtures.phototest, "--format", "json"])
        #expect(output.status == 0)
        let document = try JSON.parse(Array(output.stdout))
        let page = try #require(document["pages"]?[0])
        #expect(page["source"]?.stringValue == Fixtures.phototest)
        #expect((page["mean_confidence"]?.doubleValue ?? 0) > 80)
        let text = try #require(page["text"]?.stringValue)
        #expect(TextMetrics.characterErrorRate(reference: Fixtures.phototestTruth, hypothesis: text) < 0.02)
        let words = try #require(page["words"]?.arrayValue)
        #expect(words.count > 50)
        let first = words[0]
        #expect(first["text"]?.stringValue == "This")
        #expect(Rect(json: first["box"]) != nil)
        #expect(first["confidence"]?.doubleValue != nil)
    }

    @Test("bad files: one clear line each, the good file still read, exit 65; no library noise")
    func badFiles() throws {
        let zero = folder.write("zero.png", [])
        let png = try Fixtures.read("tesseract-testdata/phototest-rotated-180.png")
        let truncated = folder.write("truncated.png", Array(png.prefix(png.count / 2)))
        let text = folder.write("notes.jpg", text: "this is a text file, not a photo\n")
        let random = folder.write("random.tif", BadInput.randomBytes(10_000))
        let bomb = folder.write("bomb.png", BadInput.pngBomb())
        let missing = folder.file("missing.png")
        let bad = [zero, truncated, text, random, bomb, missing]

        let output = try Run.ocrfarm(["ocr"] + bad + [Fixtures.phototest])
        #expect(output.status == 65)
        let lines = output.stderrLines
        #expect(lines.count == bad.count, "stderr: \(output.stderr)")
        for (path, line) in zip(bad, lines) {
            #expect(line.hasPrefix("ocrfarm: \(path): "), "\(line)")
        }
        #expect(lines[0].contains("empty"))
        #expect(lines[1].contains("decode-failed") && lines[1].contains("png"))
        #expect(lines[2].contains("not an image"))
        #expect(lines[4].contains("image-too-large"))
        #expect(lines[5].contains("unreadable") && lines[5].contains("No such file"))
        #expect(output.text.contains("quick brown"))
    }

    @Test("when no file can be read the exit status is 66")
    func nothingReadable() throws {
        let output = try Run.ocrfarm(["ocr", folder.file("a.png"), folder.write("b.png", [])])
        #expect(output.status == 66)
        #expect(output.stderrLines.count == 2)
        // A PDF of no pages is not written: no empty file at --out, and a file already there is left as it was.
        let pdf = folder.file("none.pdf")
        let missing = try Run.ocrfarm(["ocr", folder.file("missing.pdf"), "--format", "pdf", "--out", pdf])
        #expect(missing.status == 66 && !FileManager.default.fileExists(atPath: pdf), "\(missing.stderr)")
        let kept = folder.write("kept.pdf", TestPDF.onePage("kept"))
        #expect(try Run.ocrfarm(["ocr", folder.file("missing.pdf"), "--format", "pdf", "--out", kept]).status == 66)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: kept))) == TestPDF.onePage("kept"))
    }

    @Test("usage errors exit 64 with the usage line; a missing language exits 69 and names it")
    func usage() throws {
        let none = try Run.ocrfarm(["ocr"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("Usage: ocrfarm ocr IMAGE|PDF..."))
        let badFormat = try Run.ocrfarm(["ocr", Fixtures.phototest, "--format", "docx"])
        #expect(badFormat.status == 64)
        #expect(badFormat.stderr.contains("--format must be one of"))
        let unknown = try Run.ocrfarm(["ocr", Fixtures.phototest, "--colour"])
        #expect(unknown.status == 64)
        let language = try Run.ocrfarm(["ocr", Fixtures.phototest, "--lang", "klingon"])
        #expect(language.status == 69)
        #expect(language.stderr.contains("klingon"))
        #expect(language.stderrLines.count == 1)
    }

    @Test("--help and help ocr show the same option list")
    func help() throws {
        let a = try Run.ocrfarm(["ocr", "--help"])
        let b = try Run.ocrfarm(["help", "ocr"])
        #expect(a.status == 0 && b.status == 0)
        #expect(a.text == b.text)
        for option in ["--lang", "--format", "--out", "--jobs", "OCRFARM_JOBS"] { #expect(a.text.contains(option)) }
    }

    @Test("Tesseract runs with one OpenMP thread whatever the caller's environment says")
    func openMP() throws {
        for value in [nil, "8"] as [String?] {
            let output = try Run.ocrfarm(["version", "--verbose"], environment: ["OMP_THREAD_LIMIT": value])
            #expect(output.text.contains("openmp thread limit 1"), "with OMP_THREAD_LIMIT=\(value ?? "unset"): \(output.text)")
        }
    }

    /// Sources/AllocatorSettings: jemalloc's arena for large blocks is off, so the neural engine's buffers are not
    /// faulted in afresh at every model run (11 receipts: 5.9 M page faults, 18.6 s of system time, with it on);
    /// MALLOC_CONF still overrides it.
    @Test("jemalloc starts with oversize_threshold 0 unless MALLOC_CONF says otherwise")
    func allocatorSettings() throws {
        let plain = try Run.ocrfarm(["version", "--verbose"], environment: ["MALLOC_CONF": nil])
        #expect(plain.text.contains("allocator jemalloc") && plain.text.contains("(oversize_threshold 0)"), "\(plain.text)")
        let overridden = try Run.ocrfarm(["version", "--verbose"], environment: ["MALLOC_CONF": "oversize_threshold:1048576"])
        #expect(overridden.text.contains("(oversize_threshold 1048576)"), "\(overridden.text)")
    }

    @Test("--engine none skips recognition but still decodes and reports bad files")
    func nullEngine() throws {
        let output = try Run.ocrfarm(["ocr", Fixtures.phototest, folder.write("x.png", []), "--engine", "none", "--format", "json"])
        #expect(output.status == 65)
        let pages = try #require(try JSON.parse(Array(output.stdout))["pages"]?.arrayValue)
        #expect(pages.count == 2)
        #expect(pages[0]["text"]?.stringValue == "")
        // The page is measured and resized for reading (phototest's print is large): 640 px × the scale factor.
        let factor = try #require(pages[0]["stages"]?["scale"]?["factor"]?.doubleValue)
        let width = try #require(pages[0]["width"]?.intValue)
        #expect(abs(Double(width) - 640 * factor) <= 1, "width \(width), factor \(factor)")
        #expect(width < 640)
        #expect(pages[1]["error"]?["code"]?.stringValue == "decode-failed")
    }

    @Test("--format pdf refuses a terminal, as standard output or as --out; a device or FIFO given to --out is written, not replaced (issue 36)")
    func terminalAndDevices() throws {
        let folder = TemporaryDirectory("ocr-terminal")
        let image = Fixtures.path("formats/page.pnm")
        let script = try #require(Run.which("script"), "util-linux script gives the command a terminal")
        /// `command` run by sh on a pseudo-terminal: what the terminal showed.
        func onTerminal(_ command: String) throws -> ProcessOutput {
            try Run.process(script, ["-qec", command, "/dev/null"], environment: ["OCRFARM": Fixtures.binary, "IMAGE": image])
        }
        // Standard output a terminal: refused before any page is read (today's behaviour, kept).
        let plain = try onTerminal(#""$OCRFARM" ocr --format pdf "$IMAGE"; echo "exit $?""#)
        #expect(plain.text.contains("--format pdf writes binary data") && plain.text.contains("exit 64"), "\(plain.text)")
        #expect(!plain.text.contains("%PDF"), "no PDF bytes on the terminal")
        // The terminal named as --out: refused too (it was "cannot write": a file cannot be renamed over a pty).
        let named = try onTerminal(#""$OCRFARM" ocr --format pdf --out "$(tty)" "$IMAGE"; echo "exit $?""#)
        #expect(named.text.contains("is a terminal; give a file") && named.text.contains("exit 64"), "\(named.text)")
        // A FIFO given to --out is written through (a file renamed over /dev/stdout had replaced the device node).
        let fifo = folder.file("pipe")
        try #require(mkfifo(fifo, 0o644) == 0)
        let received = folder.file("received.txt")
        let piped = try Run.process("/bin/sh", ["-c", #"timeout 60 cat "$FIFO" > "$OUT" & "$OCRFARM" ocr --out "$FIFO" "$IMAGE"; s=$?; wait; exit $s"#],
                                    environment: ["OCRFARM": Fixtures.binary, "IMAGE": image, "FIFO": fifo, "OUT": received,
                                                  "OMP_THREAD_LIMIT": "1"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try FileSystem.status(fifo, followLinks: false).kind == .other, "the FIFO is still a FIFO")
        #expect(try FileSystem.readText(received).contains("point text"), "the text came through the FIFO")
    }
}

final class ElementCounter: NSObject, XMLParserDelegate {
    var elements: [String: Int] = [:]
    var classes: [String: Int] = [:]

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        elements[name, default: 0] += 1
        if let cls = attributes["class"] { classes[cls, default: 0] += 1 }
    }
}

/// The searchable PDF's text layer, read back by poppler.
@Suite("searchable PDF text layer (end to end)")
struct SearchablePDFTests {
    let folder = TemporaryDirectory("e2e-pdf")

    static let pages: [(image: String, truth: String, languages: String)] = [
        (Fixtures.packageRoot + "/Samples/pages/clean-001.png", Fixtures.packageRoot + "/Samples/truth/clean-001.gt.txt", "eng"),
        (Fixtures.path("pdf/two-columns.png"), Fixtures.path("pdf/two-columns.gt.txt"), "eng"),
        (Fixtures.packageRoot + "/Samples/pages/cjk-000.png", Fixtures.packageRoot + "/Samples/truth/cjk-000.gt.txt", "chi_sim+eng"),
    ]

    @Test("plain pdftotext gives the page text in reading order, within half a point of CER of our text",
          arguments: 0..<3)
    func readingOrder(index: Int) throws {
        let page = Self.pages[index]
        let pdf = folder.file("page-\(index).pdf")
        #expect(try Run.ocrfarm(["ocr", page.image, "--lang", page.languages, "--format", "pdf", "--out", pdf]).status == 0)
        let extracted = try Run.process("/usr/bin/pdftotext", [pdf, "-"]).text
        let plain = try Run.ocrfarm(["ocr", page.image, "--lang", page.languages]).text
        let truth = try String(contentsOfFile: page.truth, encoding: .utf8)
        let pdfError = TextMetrics.characterErrorRate(reference: truth, hypothesis: extracted)
        let textError = TextMetrics.characterErrorRate(reference: truth, hypothesis: plain)
        #expect(pdfError <= textError + 0.005, "pdftotext CER \(pdfError) against our text's \(textError)")
        #expect(TextMetrics.characterErrorRate(reference: plain, hypothesis: extracted) < 0.01)
    }

    @Test("every word's invisible text lies on the word: pdftotext -bbox against the JSON boxes")
    func wordsOnTheirBoxes() throws {
        let image = Self.pages[0].image
        let pdf = folder.file("boxes.pdf")
        #expect(try Run.ocrfarm(["ocr", image, "--format", "pdf", "--out", pdf]).status == 0)
        let json = try JSON.parse(Run.ocrfarm(["ocr", image, "--format", "json"]).text)
        let page = json["pages"]?[0] ?? json
        let resolution = Double(try #require(page["resolution"]?.intValue))
        let (placed, checked) = try PDFWordPlacement.count(pdf: pdf, words: try #require(page["words"]?.arrayValue),
                                                           resolution: resolution)
        #expect(checked > 300)
        #expect(Double(placed) >= 0.98 * Double(checked), "\(placed) of \(checked) words on their boxes")
    }
}

/// Recognition options that change what the engine reads, each shown to do something on a real page.
@Suite("recognition options (end to end)")
struct RecognitionOptionTests {
    let folder = TemporaryDirectory("e2e-options")

    @Test("--words: a made-up word read wrongly without it is read right with it")
    func customWords() throws {
        let page = Fixtures.path("words/cc0.png")
        let plain = try Run.ocrfarm(["ocr", page]).text
        #expect(plain.contains("CCO") && !plain.contains("CC0"), "without --words Tesseract reads CC0 as CCO")
        let words = folder.write("words.txt", text: "CC0\nAffirmer\n")
        let corrected = try Run.ocrfarm(["ocr", page, "--words", words])
        #expect(corrected.status == 0)
        #expect(corrected.text.components(separatedBy: "CC0").count - 1 == 3, "\(corrected.text)")
        #expect(!corrected.text.contains("CCO"))
        // Nothing else changes.
        let truth = try String(contentsOfFile: Fixtures.path("words/cc0.gt.txt"), encoding: .utf8)
        #expect(TextMetrics.characterErrorRate(reference: truth, hypothesis: corrected.text)
                < TextMetrics.characterErrorRate(reference: truth, hypothesis: plain))
        let missing = try Run.ocrfarm(["ocr", page, "--words", folder.file("no-such-file.txt")])
        #expect(missing.status == 64 && missing.stderr.contains("no-such-file.txt"))
    }

    @Test("--min-text-height: the footer line drops, the body stays; a higher limit leaves only the heading, faster")
    func minimumTextHeight() throws {
        let page = Fixtures.packageRoot + "/Samples/pages/clean-000.png"
        func read(_ extra: [String]) throws -> (lines: [String], recognize: Double) {
            let json = try JSON.parse(Run.ocrfarm(["ocr", page, "--format", "json", "--jobs", "1"] + extra).text)
            let text = json["pages"]?[0]?["text"]?.stringValue ?? ""
            let milliseconds = json["pages"]?[0]?["timings_ms"]?["recognize"]?.doubleValue ?? 0
            return (text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }, milliseconds)
        }
        let all = try read([])
        #expect(all.lines.last == "93", "the page number is the last line: \(all.lines.suffix(2))")
        let body = try read(["--min-text-height", "0.010"])
        #expect(body.lines.count == all.lines.count - 1)
        #expect(body.lines.last != "93" && !body.lines.contains("93"))
        let heading = try read(["--min-text-height", "0.013"])
        #expect(heading.lines.count < 5)
        #expect(heading.recognize < all.recognize / 2, "recognize \(heading.recognize) ms against \(all.recognize) ms")
    }
}

@Suite("recognition options: languages, level, language correction (end to end)")
struct RecognitionLevelAndLanguageTests {
    let folder = TemporaryDirectory("e2e-levels")

    func page(_ path: String, _ extra: [String]) throws -> JSON {
        let run = try Run.ocrfarm(["ocr", path, "--format", "json", "--jobs", "1"] + extra)
        #expect(run.status == 0, "\(run.stderr)")
        return try JSON.parse(run.text)["pages"]?[0] ?? .null
    }

    @Test("--lang auto reads a mixed Chinese and English page with chi_sim+eng and an English page with eng")
    func automaticLanguage() throws {
        let cjk = Fixtures.packageRoot + "/Samples/pages/cjk-000.png"
        let auto = try page(cjk, ["--lang", "auto"])
        #expect(auto["stages"]?["language"]?["chosen"]?.stringValue == "chi_sim+eng", "\(auto["stages"]?["language"] ?? .null)")
        #expect(auto["language"]?.stringValue == "chi_sim")
        let explicit = try page(cjk, ["--lang", "chi_sim+eng"])
        #expect(auto["text"]?.stringValue == explicit["text"]?.stringValue, "auto reads the page as chi_sim+eng does")
        #expect(auto["text"]?.stringValue?.contains("论语") == true)

        let english = try page(Fixtures.packageRoot + "/Samples/pages/clean-000.png", ["--lang", "auto"])
        #expect(english["stages"]?["language"]?["chosen"]?.stringValue == "eng")
        #expect(english["language"]?.stringValue == "eng")

        let mixed = try Run.ocrfarm(["ocr", cjk, "--lang", "auto+eng"])
        #expect(mixed.status == 64 && mixed.stderr.contains("auto"))
    }

    @Test("--no-language-correction: custom words and Chinese punctuation are not applied; the engine reads without word lists")
    func noLanguageCorrection() throws {
        let words = folder.write("words.txt", text: "CC0\n")
        let cc0 = Fixtures.path("words/cc0.png")
        let corrected = try Run.ocrfarm(["ocr", cc0, "--words", words]).text
        let raw = try Run.ocrfarm(["ocr", cc0, "--words", words, "--no-language-correction"]).text
        #expect(corrected.contains("CC0") && !corrected.contains("CCO"))
        #expect(raw.contains("CCO") && !raw.contains("CC0"), "custom words are language correction: \(raw.prefix(200))")

        let cjk = Fixtures.packageRoot + "/Samples/pages/cjk-000.png"
        let marks: Set<Character> = ["，", "：", "；", "！", "？", "（", "）"]
        func fullWidth(_ text: String) -> Int { text.filter { marks.contains($0) }.count }
        let chinese = try Run.ocrfarm(["ocr", cjk, "--lang", "chi_sim+eng"]).text
        let asRead = try Run.ocrfarm(["ocr", cjk, "--lang", "chi_sim+eng", "--no-language-correction"]).text
        #expect(fullWidth(chinese) > fullWidth(asRead) + 5, "\(fullWidth(chinese)) against \(fullWidth(asRead))")
    }
}

@Suite("ocrfarm submit --outputs (end to end)")
struct StoredOutputsOptionTests {
    @Test("--outputs names storable renderings or none; anything else is a usage error naming it")
    func usage() throws {
        let folder = TemporaryDirectory("e2e-outputs")
        let page = Fixtures.path("tesseract-testdata/phototest.tif")
        let bad = try Run.ocrfarm(["submit", "--store", folder.file("s.db"), "--outputs", "pdf,docx", page])
        #expect(bad.status == 64 && bad.stderr.contains("docx"))
        let none = try Run.ocrfarm(["submit", "--store", folder.file("s.db"), "--outputs", "none", page])
        #expect(none.status == 0, "\(none.stderr)")
        let store = try Store(path: folder.file("s.db"), readOnly: true)
        let document = try #require(try store.pages().first).document
        #expect(try store.options(of: document)?.outputs == [])
    }
}

extension RecognitionLevelAndLanguageTests {
    @Test("--level accurate: three readings, the surest line kept: fewer errors than fast on a Chinese page")
    func accurateLevel() throws {
        let cjk = Fixtures.path("levels/cjk-001.png")
        let truth = try String(contentsOfFile: Fixtures.path("levels/cjk-001.gt.txt"), encoding: .utf8)
        let fast = try page(cjk, ["--lang", "chi_sim+eng"])
        let accurate = try page(cjk, ["--lang", "chi_sim+eng", "--level", "accurate"])
        let fastError = TextMetrics.characterErrorRate(reference: truth, hypothesis: fast["text"]?.stringValue ?? "")
        let accurateError = TextMetrics.characterErrorRate(reference: truth, hypothesis: accurate["text"]?.stringValue ?? "")
        #expect(accurateError < fastError, "accurate \(accurateError) against fast \(fastError)")
        let readings = accurate["stages"]?["recognize"]
        #expect(readings?["readings"]?.intValue == 3 && (readings?["lines_replaced"]?.intValue ?? 0) > 0, "\(readings ?? .null)")
        #expect(fast["stages"]?["recognize"] == nil)
    }
}

extension RecognitionLevelAndLanguageTests {
    @Test("--timeout: a page that takes longer fails with the code timeout, named in the output; without it the page is read")
    func timeLimit() throws {
        let image = Fixtures.packageRoot + "/Samples/pages/clean-000.png"
        let run = try Run.ocrfarm(["ocr", image, "--format", "json", "--timeout", "0.05"])
        #expect(run.status == 66, "\(run.stderr)")
        let error = try JSON.parse(run.text)["pages"]?[0]?["error"]
        // The limit covers the whole page: recognition's own cancel reports it (stage recognize), or, when the page
        // was still in decode or a stage, the slot's watchdog (stage page).
        #expect(error?["code"]?.stringValue == "timeout" && ["recognize", "page"].contains(error?["stage"]?.stringValue ?? ""),
                "\(error ?? .null)")
        #expect(run.stderr.contains("clean-000.png") && run.stderr.contains("timeout"), "\(run.stderr)")
        let read = try page(image, ["--timeout", "120"])
        #expect(read["text"]?.stringValue?.contains("Permission") == true)
    }
}

@Suite("tiny images (end to end)")
struct TinyImageTests {
    @Test("1×1, 8×8 and 12×40 pixel pages go through every stage: read (no text), not an internal error",
          arguments: [(1, 1), (8, 8), (40, 12)])
    func tiny(size: (width: UInt32, height: UInt32)) throws {
        let folder = TemporaryDirectory("e2e-tiny")
        let path = folder.write("tiny.png", TestImages.png(width: size.width, height: size.height, shade: 200))
        for mode in ["gray", "bw"] {
            let run = try Run.ocrfarm(["ocr", path, "--format", "json", "--mode", mode])
            #expect(run.status == 0, "\(size) \(mode): \(run.stderr)")
            #expect(!run.text.contains("internal-error"), "\(run.text)")
        }
    }
}
