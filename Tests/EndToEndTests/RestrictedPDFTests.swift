import Foundation
import FarmCore
import Testing
import FarmRuntime
import TestSupport

/// Issue 37 item 3: a PDF restricted by an owner password alone (the user password empty, so it opens without one)
/// is read and written without its restrictions, and a finding says so; before, the worker's page PDF came out
/// encrypted, the coordinator refused it three times as `invalid-result` and blamed the worker.
@Suite("Restricted PDFs (owner password only; end to end, real Tesseract, qpdf)", .serialized)
struct RestrictedPDFTests {
    let folder = TemporaryDirectory("e2e-restricted")
    let environment: [String: String?] = ["OMP_THREAD_LIMIT": "1"]

    /// linn.pdf (OCRmyPDF's test resource) encrypted by qpdf with an owner password and an empty user password.
    func restricted() throws -> String {
        let source = Fixtures.sharedCorpus + "/real/ocrmypdf-test-resources/linn.pdf"
        try #require(FileManager.default.fileExists(atPath: source), "\(source) is missing (the shared corpus)")
        let out = folder.file("restricted.pdf")
        let made = try Run.process("/usr/bin/qpdf", ["--encrypt", "", "owner", "256", "--", source, out])
        try #require(made.status == 0, "\(made.stderr)")
        #expect(try Run.process("/usr/bin/qpdf", ["--show-encryption", out]).text.contains("User password = \n"))
        return out
    }

    static func encrypted(_ pdf: String) throws -> Bool {
        try !Run.process("/usr/bin/qpdf", ["--show-encryption", pdf]).text.contains("File is not encrypted")
    }

    @Test("run reads it (no invalid-result, no worker blamed); export writes it unencrypted, PDF/A-2B, with a finding")
    func farm() throws {
        let source = try restricted()
        let store = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "1", source], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("invalid-result"), "\(run.stderr)")
        let pdfs = folder.file("pdf")
        let export = try Run.ocrfarm(["export", "--store", store, "--out", pdfs, "--format", "pdf,json"], environment: environment)
        #expect(export.status == 0, "\(export.stderr)")
        let pdf = pdfs + "/restricted.pdf"
        #expect(try !Self.encrypted(pdf))
        let verdict = try Run.process("/usr/bin/python3", [Fixtures.packageRoot + "/Scripts/check-pdfa", pdf])
        #expect(verdict.status == 0, "\(verdict.text)")
        #expect(try Run.process("/usr/bin/pdftotext", [pdf, "-"]).text.contains("LinnSequencer"))
        let page = try JSON.parse(Array(try FileSystem.read(pdfs + "/restricted/0001.json")))
        let finding = page["stages"]?["pdf_restrictions"]
        #expect(finding?["removed"]?.boolValue == true, "\(page["stages"].map { $0.rendered } ?? "no stages")")
    }

    @Test("ocr --format pdf writes it without encryption, also as a plain PDF")
    func ocr() throws {
        let source = try restricted()
        let out = folder.file("plain.pdf")
        let run = try Run.ocrfarm(["ocr", source, "--format", "pdf", "--pdf-type", "pdf", "--out", out], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try !Self.encrypted(out))
        #expect(try Run.process("/usr/bin/pdftotext", [out, "-"]).text.contains("LinnSequencer"))
    }
}
