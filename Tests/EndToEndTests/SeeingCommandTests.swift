import Testing
import FarmCore
import FarmRuntime
import Leptonica
import TestSupport

@Suite("Seeing the page (end to end)")
struct SeeingCommandTests {
    let folder = TemporaryDirectory("e2e-seeing")
    let frame = Fixtures.path("smartdoc15/background01_letter001_frame_0098.jpeg")

    func trueCorners() throws -> [[Double]] {
        let json = try JSON.parse(try Fixtures.read("smartdoc15/background01_letter001_frame_0098.json"))
        let corners = json["corners"]?.arrayValue ?? []
        return corners.map { corner in (corner.arrayValue ?? []).compactMap { $0.doubleValue } }
    }

    @Test("ocr --format json reports the corners in original pixels, rotation, skew and every stage's time")
    func jsonFindings() throws {
        let output = try Run.ocrfarm(["ocr", frame, "--format", "json"])
        #expect(output.status == 0, "\(output.stderr)")
        let page = try #require(try JSON.parse(Array(output.stdout))["pages"]?[0])
        let corners = try #require(page["stages"]?["segment"]?["corners"]?.arrayValue)
        let truths = try trueCorners()
        for (found, truth) in zip(corners, truths) {
            let x = found[0]?.doubleValue ?? 0, y = found[1]?.doubleValue ?? 0
            #expect(abs(x - truth[0]) < 8 && abs(y - truth[1]) < 8, "corner (\(x), \(y)) vs \(truth)")
        }
        #expect(page["stages"]?["orient"]?["rotation"]?.intValue == 0)
        #expect(page["stages"]?["deskew"]?["angle"]?.doubleValue != nil)
        let timings = page["timings_ms"]?.objectValue ?? []
        let timed = Set(timings.map { $0.0 })
        #expect(timed.isSuperset(of: ["decode", "segment", "rectify", "orient", "deskew", "enhance", "scale", "recognize"]),
                "\(timed)")
        // The corrected page's corners map back onto the document in the photo.
        let values = page["to_original"]?.arrayValue ?? []
        let map = values.compactMap { $0.doubleValue }
        try #require(map.count == 9)
        let origin = Homography(map).apply(Point(0, 0))
        #expect(abs(origin.x - truths[0][0]) < 10 && abs(origin.y - truths[0][1]) < 10)
    }

    @Test("inspect --highlight tints everything outside the page mauve; --stages writes each stage's image")
    func inspect() throws {
        let highlight = folder.file("highlight.png"), stages = folder.file("stages")
        let output = try Run.ocrfarm(["inspect", frame, "--highlight", highlight, "--stages", stages])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.text.contains("document: corners"))
        let original = try Pix(contentsOfFile: frame).colorPixels()
        let marked = try Pix(contentsOfFile: highlight).colorPixels()
        #expect(marked.width == original.width && marked.height == original.height)
        // Outside (the desk, top left): pulled toward mauve, so blue now exceeds green clearly.
        let outside = 100 * marked.width + 100
        #expect(Int(marked.blue[outside]) - Int(marked.green[outside]) > 30)
        #expect(marked.red[outside] != original.red[outside] || marked.blue[outside] != original.blue[outside])
        // Inside (the middle of the page): untouched.
        let inside = 540 * marked.width + 950
        #expect(marked.red[inside] == original.red[inside] && marked.blue[inside] == original.blue[inside])
        let written = try FileSystem.entries(stages).sorted()
        #expect(written.contains("03-rectify.png") && written.contains("07-enhance.png"), "\(written)")
        let rectified = try Pix(contentsOfFile: stages + "/03-rectify.png")
        #expect(rectified.height > rectified.width)
    }

    @Test("--mode chooses the look of the page image in the PDF: color, gray or black and white",
          arguments: [("color", "rgb"), ("gray", "gray"), ("bw", "gray")])
    func modes(mode: String, color: String) throws {
        let pdf = folder.file("page-\(mode).pdf")
        let output = try Run.ocrfarm(["ocr", frame, "--mode", mode, "--format", "pdf", "--out", pdf])
        #expect(output.status == 0, "\(output.stderr)")
        // pdfimages -list: page num type width height color comp bpc enc ...
        let list = try Run.process(try #require(Run.which("pdfimages")), ["-list", pdf])
        let row = try #require(list.text.split(separator: "\n").dropFirst(2).first).split(separator: " ").map(String.init)
        #expect(row[5] == color, "\(list.text)")
        #expect(row[7] == (mode == "bw" ? "1" : "8"), "\(list.text)")
    }

    @Test("the document mask, on by default: on a page lying on another page on a carpet, where the detector alone (OCRFARM_DOCUMENT_MASK=off) keeps the whole frame and does not read the page's heading, ocr crops to the mask's outline and reads the page's section heading",
          .timeLimit(.minutes(5)))
    func documentMask() throws {
        let photo = Fixtures.path("cluttered/train-4141-097.jpg")
        let truthJSON = try JSON.parse(try Fixtures.read("cluttered/train-4141-097.json"))
        let truth = Quad((truthJSON["corners"]?.arrayValue ?? []).map { Point($0[0]?.doubleValue ?? 0, $0[1]?.doubleValue ?? 0) })
        func page(_ setting: String?) throws -> JSON {
            let output = try Run.ocrfarm(["ocr", photo, "--format", "json"], environment: ["OCRFARM_DOCUMENT_MASK": setting])
            #expect(output.status == 0, "\(output.stderr)")
            return try #require(try JSON.parse(Array(output.stdout))["pages"]?[0])
        }
        func corners(_ page: JSON) -> Quad? {
            let found = (page["stages"]?["segment"]?["corners"]?.arrayValue ?? []).map {
                Point($0[0]?.doubleValue ?? 0, $0[1]?.doubleValue ?? 0)
            }
            return found.count == 4 ? Quad(found) : nil
        }
        let alone = try page("off")
        #expect(alone["stages"]?["segment"]?["full_frame"]?.boolValue == true)
        #expect(alone["stages"]?["segment"]?["document_mask"] == nil)
        let unread = alone["text"]?.stringValue ?? ""
        #expect(!unread.contains("5.3"), "\(unread)")
        let masked = try page(nil)
        let segment = masked["stages"]?["segment"]
        #expect(segment?["document_mask"]?["chosen"]?.stringValue == "mask", "\(String(describing: segment))")
        #expect(segment?["full_frame"]?.boolValue == false)
        let iou = corners(masked).map { $0.iou(with: truth, inFrameWidth: 1280, height: 720) } ?? 0
        #expect(iou >= 0.9, "IoU \(iou): \(String(describing: segment))")
        let text = masked["text"]?.stringValue ?? ""
        #expect(text.contains("5.3"), "\(text)")
    }
}
