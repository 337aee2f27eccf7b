import Foundation
import Testing
import FarmCore
import Leptonica
import TestSupport

/// `export --quality-report` over a store read by `ocrfarm run` (real workers, real Tesseract).
@Suite("export --quality-report: a per-document quality CSV (end to end)")
struct QualityReportTests {
    @Test("quality.csv parses with Python's csv module, the weak document first, the unmeasured one last")
    func qualityCSV() throws {
        let folder = TemporaryDirectory()
        let pages = folder.file("pages")
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        let phototest = try Fixtures.read("tesseract-testdata/phototest.tif")
        folder.write("pages/clean.tif", phototest)
        // Read as it lies (orientation not corrected) by Tesseract: garble. (The neural engine, auto's choice for a weak
        // reading, turns upside-down lines itself.) Its name needs CSV quoting.
        let weakName = "upside, \"down\".png"
        folder.write("pages/\(weakName)", try Pix(encoded: phototest).rotatedOrthogonally(quarterTurns: 2).encoded(as: .png))
        folder.write("pages/broken.png", Array("not a png at all".utf8))
        let store = folder.file("farm.db")
        let run = try Run.ocrfarm(["run", "--store", store, "--workers", "2", "--skip", "orient", "--outputs", "none",
                                   "--engine", "tesseract", pages],
                                  environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(run.status == 65, "the broken page fails: \(run.stderr)")

        let out = folder.file("export")
        let export = try Run.ocrfarm(["export", "--store", store, "--out", out, "--format", "text", "--quality-report"])
        #expect(export.status == 0 || export.status == 65, "\(export.stderr)")
        #expect(export.text.contains("quality report"), "\(export.text)")
        let script = """
        import csv, json, sys
        with open(sys.argv[1], newline='', encoding='utf-8') as f:
            print(json.dumps(list(csv.DictReader(f))))
        """
        let parsed = try Run.process("/usr/bin/python3", ["-c", script, out + "/quality.csv"])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let rows = try #require(try JSON.parse(Array(parsed.stdout)).arrayValue)
        let names = rows.compactMap { $0["document"]?.stringValue }
        #expect(names == [weakName, "clean.tif", "broken.png"], "weakest first, unmeasured last: \(names)")
        try #require(rows.count == 3)
        func number(_ row: JSON, _ key: String) -> Double? { row[key]?.stringValue.flatMap(Double.init) }
        let weak = rows[0], clean = rows[1], broken = rows[2]
        for row in [weak, clean] {
            #expect(row["pages"]?.stringValue == "1" && row["done"]?.stringValue == "1" && row["failed"]?.stringValue == "0", "\(row)")
            #expect(row["worst_page"]?.stringValue == "1" && row["worst_region_page"]?.stringValue == "1", "\(row)")
            let region = try #require(number(row, "worst_region_quality"), "\(row)")
            #expect((0...1).contains(region))
        }
        #expect(try #require(number(weak, "mean_quality")) < 0.5, "\(weak)")
        #expect(try #require(number(clean, "mean_quality")) > 0.7, "\(clean)")
        #expect(try #require(number(weak, "worst_region_quality")) < (try #require(number(clean, "worst_region_quality"))))
        #expect(broken["failed"]?.stringValue == "1" && broken["done"]?.stringValue == "0", "\(broken)")
        #expect(broken["mean_quality"]?.stringValue == "" && broken["worst_page"]?.stringValue == "", "\(broken)")

        // The folder typed with a slash at its end: the path printed has one slash (issue 36: export//quality.csv).
        let slashed = try Run.ocrfarm(["export", "--store", store, "--out", out + "/", "--format", "text", "--quality-report"])
        #expect(slashed.text.contains("quality report \(out)/quality.csv;") && !slashed.text.contains("//"), "\(slashed.text)")

        // Without the option there is no report.
        let plain = folder.file("plain")
        _ = try Run.ocrfarm(["export", "--store", store, "--out", plain, "--format", "text"])
        #expect(!FileManager.default.fileExists(atPath: plain + "/quality.csv"))
    }
}
