import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation

/// Render on demand (issue 19): a real run keeps each page's model, and `export` renders hOCR, ALTO, PAGE and JSON
/// from it byte for byte as the worker rendered them at OCR time; results stored the old way (renderings, no model)
/// export as stored.
@Suite("render on demand (end to end)", .serialized)
struct RenderOnDemandTests {
    static let formats = "text,hocr,alto,page,json"

    /// Every file under `path` (relative name → bytes); PAGE's creation times left out (`Created`, `LastChange`:
    /// the worker's clock when it rendered, which the model records to the millisecond only after rendering).
    static func files(_ path: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: path))
        while let name = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            var bytes = try FileSystem.read(path + "/" + name)
            if name.hasSuffix(".page.xml") {
                let text = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.contains("<Created>") && !$0.contains("<LastChange>") }.joined(separator: "\n")
                bytes = Array(text.utf8)
            }
            files[name] = bytes
        }
        return files
    }

    static func sql(_ store: String, _ statement: String) throws {
        let output = try Run.process("/usr/bin/sqlite3", [store, statement])
        guard output.status == 0 else { throw FarmError("sqlite3 \(statement): \(output.stderr)") }
    }

    @Test("export renders from the stored model what the worker rendered; an old store exports its stored renderings")
    func sameBytes() throws {
        let folder = TemporaryDirectory()
        let store = folder.file("farm.db")
        let samples = Fixtures.packageRoot + "/Samples/pages"
        // A photo (rectified: boxes are quadrilaterals in the original) and a Chinese page (no spaces between words),
        // with alternatives; every rendering frozen at OCR time, to compare with.
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "2", "--lang", "chi_sim+eng", "--candidates", "2",
                                   "--outputs", "hocr,alto,page,json", "\(samples)/photo-000.jpg", "\(samples)/cjk-000.png"],
                                  environment: ["OMP_THREAD_LIMIT": "1"], currentDirectory: folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        let reader = try Store(path: store, readOnly: true)
        let pages = try reader.documents(after: nil, limit: 10).flatMap { try reader.pages(of: $0.id, after: 0, limit: 10) }
        #expect(pages.count == 2 && pages.allSatisfy { $0.state == .done })
        for page in pages {
            #expect(try reader.model(of: page.id) != nil, "page \(page.id) has no model")
            // The structure kept beside the model has no blocks; read back, it has them again.
            #expect(try reader.structure(of: page.id)?["blocks"]?.arrayValue?.isEmpty == false)
        }

        // The renderings as the worker made them.
        let frozen = try Run.ocrfarm(["export", "--store", store, "--format", Self.formats, "--out", folder.file("frozen")])
        #expect(frozen.status == 0, "\(frozen.stderr)")
        // An old store: the same results with renderings and without models exports the same files, all of them.
        try Self.sql(store, "VACUUM INTO '\(folder.file("old.db"))'")
        try Self.sql(folder.file("old.db"), "UPDATE results SET model = NULL")
        let old = try Run.ocrfarm(["export", "--store", folder.file("old.db"), "--format", Self.formats, "--out", folder.file("old")])
        #expect(old.status == 0, "\(old.stderr)")
        // Rendered on demand: the stored renderings gone, the model left.
        try Self.sql(store, "DELETE FROM artifacts WHERE name IN ('hocr', 'alto', 'page', 'json')")
        let rendered = try Run.ocrfarm(["export", "--store", store, "--format", Self.formats, "--out", folder.file("rendered")])
        #expect(rendered.status == 0, "\(rendered.stderr)")

        let expected = try Self.files(folder.file("frozen"))
        #expect(expected.count == 10, "\(expected.keys.sorted())")
        #expect(try Self.files(folder.file("old")) == expected)
        let onDemand = try Self.files(folder.file("rendered"))
        #expect(Set(onDemand.keys) == Set(expected.keys))
        for (name, bytes) in expected {
            #expect(onDemand[name] == bytes, "\(name) rendered on demand differs from the worker's rendering")
        }

        // An old store without renderings (submitted with --outputs none) still says so, and writes the text.
        try Self.sql(folder.file("old.db"), "DELETE FROM artifacts")
        let bare = try Run.ocrfarm(["export", "--store", folder.file("old.db"), "--format", Self.formats, "--out", folder.file("bare")])
        #expect(bare.status == 65)
        #expect(bare.stderrLines.filter { $0.contains("no stored hocr for page 1") }.count == 2, "\(bare.stderr)")
        #expect(try Self.files(folder.file("bare")).keys.allSatisfy { $0.hasSuffix(".txt") })
    }
}
