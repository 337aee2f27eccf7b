import Foundation
import Testing
import FarmCore
@testable import FarmStore
import Leptonica
import SQLite
import TestSupport

/// `ocrfarm review` over a store read by `ocrfarm run` (real workers, real Tesseract): the weak pages first.
@Suite("ocrfarm review: the weakest pages first (end to end)")
struct ReviewCommandTests {
    @Test("a blank and an upside-down page come before a clean scan and a real paper page; --below, --json, text, old results")
    func weakPagesFirst() throws {
        let folder = TemporaryDirectory()
        let pages = folder.file("pages")
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        let phototest = try Fixtures.read("tesseract-testdata/phototest.tif")
        folder.write("pages/clean.tif", phototest)
        folder.write("pages/paper.jpg", try Fixtures.read("docbank/delayed-acceptance-11.jpg"))
        folder.write("pages/upside-down.png", try Pix(encoded: phototest).rotatedOrthogonally(quarterTurns: 2).encoded(as: .png))
        folder.write("pages/blank.png", try Pix(gray: GrayPixels(width: 1200, height: 900, value: 250)).encoded(as: .png))
        let store = folder.file("farm.db")
        // Orientation is not corrected, so the upside-down page is read as it lies by Tesseract: garble. (The neural
        // engine, auto's choice for a weak reading, turns upside-down lines itself and reads it well.)
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "2", "--skip", "orient", "--outputs", "none",
                                   "--engine", "tesseract", pages],
                                  environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(run.status == 0, "\(run.stderr)")

        let output = try Run.ocrfarm(["review", "--store", store, "--json", "--limit", "0"])
        #expect(output.status == 0, "\(output.stderr)")
        let review = try JSON.parse(Array(output.stdout))
        #expect(review["measured"]?.intValue == 4)
        #expect(review["unmeasured"]?.intValue == 0)
        let listed = try #require(review["pages"]?.arrayValue)
        let names = listed.compactMap { $0["document"]?.stringValue }
        #expect(names.count == 4)
        #expect(Set(names.prefix(2)) == ["blank.png", "upside-down.png"], "\(names)")
        let figures = listed.compactMap { $0["figure"]?.doubleValue }
        #expect(figures == figures.sorted(), "weakest first: \(figures)")
        #expect(listed[0]["figure"]?.doubleValue == 0 && listed[0]["document"]?.stringValue == "blank.png")
        for page in listed.suffix(2) {
            #expect(try #require(page["figure"]?.doubleValue) > 0.7, "\(page)")
            let worst = try #require(page["worst"])
            #expect(Rect(json: worst["box"]) != nil)
            let worstConfidence = try #require(worst["confidence"]?.doubleValue)
            #expect(worstConfidence <= (try #require(page["confidence"]?.doubleValue)))
        }
        let documents = try #require(review["documents"]?.arrayValue)
        #expect(documents.first?["document"]?.stringValue == "blank.png")
        #expect(documents.count == 4)

        // --below keeps the weak ones only; text output names them with their worst line.
        let below = try Run.ocrfarm(["review", "--store", store, "--below", "0.5"])
        #expect(below.status == 0, "\(below.stderr)")
        let text = String(decoding: below.stdout, as: UTF8.self)
        #expect(text.contains("blank.png p1") && text.contains("upside-down.png p1"), "\(text)")
        #expect(!text.contains("clean.tif") && !text.contains("paper.jpg"), "\(text)")
        #expect(text.contains("worst line"), "\(text)")
        #expect(try Run.ocrfarm(["review", "--store", store, "--below", "2"]).status == 64)

        // status --quality: the count and the weakest pages in one line, and in its JSON.
        let status = try Run.ocrfarm(["status", "--store", store, "--quality"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.text.contains("quality: 4 pages measured, 2 below 0.5; weakest: blank.png p1 0.00, upside-down.png p1"),
                "\(status.text)")
        let statusJSON = try JSON.parse(Array(try Run.ocrfarm(["status", "--store", store, "--quality", "--json"]).stdout))
        #expect(statusJSON["quality"]?["measured"]?.intValue == 4 && statusJSON["quality"]?["below_half"]?.intValue == 2)
        #expect(statusJSON["quality"]?["weakest"]?[0]?["document"]?.stringValue == "blank.png")
        #expect(try Run.ocrfarm(["status", "--store", store]).text.contains("quality:") == false)
        #expect(try Run.ocrfarm(["status", "--store", store, "--quality", "--prometheus"]).status == 64)

        // A result stored before quality was measured (no figure in its structure) is counted, not listed.
        let sqlite = try #require(Run.which("sqlite3"))
        let stripped = try Run.process(sqlite, [store, """
            UPDATE results SET structure = CAST(json_remove(CAST(structure AS TEXT), '$.quality') AS BLOB)
            WHERE page_id = (SELECT p.id FROM pages p JOIN documents d ON d.id = p.document_id WHERE d.name = 'clean.tif')
            """])
        #expect(stripped.status == 0, "\(stripped.stderr)")
        let after = try JSON.parse(Array(try Run.ocrfarm(["review", "--store", store, "--json"]).stdout))
        #expect(after["measured"]?.intValue == 3 && after["unmeasured"]?.intValue == 1)
        #expect(after["pages"]?.arrayValue?.contains { $0["document"]?.stringValue == "clean.tif" } == false)
    }

    @Test("a store from before quality was measured (schema 3), opened read-only: its pages are counted as not measured")
    func oldStore() throws {
        let folder = TemporaryDirectory()
        let path = folder.file("old.db")
        do {
            let connection = try Connection(path: path)
            try Migrator(Array(Schema.migrations.prefix(3))).migrate(connection)
            try connection.execute("""
                INSERT INTO documents (id, name, source, page_count, submitted_at) VALUES (1, 'letters', X'2F6C', 1, 0);
                INSERT INTO pages (id, document_id, number, source_path, source_index, source_kind, state, priority, updated_at)
                VALUES (1, 1, 1, X'2F6C', 0, 'image', 'done', 0, 0);
                INSERT INTO results (page_id, attempt, worker_id, engine, text, mean_confidence, width, height, structure,
                                     timings, finished_at)
                VALUES (1, 1, 'w', 'tesseract', 'Dear archivist', 90, 1, 1, X'7B7D', '{}', 0);
                """)
        }
        // Not writable by review: the store stays at schema 3 and is read with the structure's figure.
        let output = try Run.ocrfarm(["review", "--store", path])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.text.contains("no measured pages") && output.text.contains("1 done pages read before"), "\(output.text)")
        #expect(try Connection(path: path, mode: .readOnly).userVersion == 3)
        let json = try JSON.parse(Array(try Run.ocrfarm(["review", "--store", path, "--json"]).stdout))
        #expect(json["measured"]?.intValue == 0 && json["unmeasured"]?.intValue == 1)
        // Opened for writing, it is migrated; the old result still has no figure, and nothing was rewritten.
        _ = try Store(path: path)
        #expect(try Connection(path: path, mode: .readOnly).userVersion == Schema.migrations.count)
        let migrated = try JSON.parse(Array(try Run.ocrfarm(["review", "--store", path, "--json"]).stdout))
        #expect(migrated["measured"]?.intValue == 0 && migrated["unmeasured"]?.intValue == 1)
    }
}
