import Testing
import FarmCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Leptonica
import Tesseract
import TestSupport

/// Words with the quadrilateral the output gives them in the image it names.
struct LocatedWord {
    let text: String
    let corners: [PixelPoint]   // tl, tr, br, bl of the word as read
}

/// Collects words from hOCR (`ocrx_word`: `poly`, else `bbox`), ALTO (`String`: `Shape/Polygon`, else position) and
/// PAGE (`Word`: `Coords` and `TextEquiv/Unicode`).
final class WordCollector: NSObject, XMLParserDelegate {
    var words: [LocatedWord] = []
    var imageName: String?
    private var text = ""
    private var inWord = false
    private var inSpan = false
    private var inUnicode = false
    private var corners: [PixelPoint] = []
    private var altoContent: String?

    static func rectangle(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> [PixelPoint] {
        [PixelPoint(x: x, y: y), PixelPoint(x: x + w, y: y), PixelPoint(x: x + w, y: y + h), PixelPoint(x: x, y: y + h)]
    }

    static func points(_ list: [Double]) -> [PixelPoint] {
        stride(from: 0, to: list.count - 1, by: 2).map { PixelPoint(x: list[$0], y: list[$0 + 1]) }
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:])
    {
        switch name {
        case "div" where attributes["class"] == "ocr_page":
            imageName = attributes["title"]?.components(separatedBy: "\"").dropFirst().first
        case "span" where attributes["class"] == "ocrx_word":
            let title = attributes["title"] ?? ""
            func numbers(after key: String) -> [Double] {
                guard let part = title.components(separatedBy: ";").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key + " ") })
                else { return [] }
                return part.split(separator: " ").dropFirst().compactMap { Double($0) }
            }
            let poly = numbers(after: "poly"), box = numbers(after: "bbox")
            corners = poly.count == 8 ? Self.points(poly) : Self.rectangle(box[0], box[1], box[2] - box[0], box[3] - box[1])
            inSpan = true
            text = ""
        case "fileName":
            inUnicode = true
            text = ""
        case "String":
            let n = { (key: String) in Double(attributes[key] ?? "0") ?? 0 }
            corners = Self.rectangle(n("HPOS"), n("VPOS"), n("WIDTH"), n("HEIGHT"))
            altoContent = attributes["CONTENT"]
        case "Polygon" where altoContent != nil:
            let list = (attributes["POINTS"] ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
            if list.count == 8 { corners = Self.points(list) }
        case "Page" where attributes["imageFilename"] != nil:
            imageName = attributes["imageFilename"]
        case "Word":
            inWord = true
        case "Coords" where inWord:
            let list = (attributes["points"] ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
            corners = Self.points(list)
        case "Unicode" where inWord:
            inUnicode = true
            text = ""
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inSpan || inUnicode { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "span" where inSpan:
            words.append(LocatedWord(text: text, corners: corners))
            inSpan = false
        case "fileName":
            imageName = text
            inUnicode = false
        case "String":
            if let content = altoContent { words.append(LocatedWord(text: content, corners: corners)) }
            altoContent = nil
        case "Unicode":
            inUnicode = false
        case "Word":
            words.append(LocatedWord(text: text, corners: corners))
            inWord = false
        default: break
        }
    }
}

@Suite("Word boxes in hOCR, ALTO and PAGE point at the words (golden tests)")
struct GoldenBoxTests {
    static func comparable(_ text: String) -> [Character] {
        Array(text.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init))
    }

    /// The same word, allowing a third of its letters to be read differently (the crop is read on its own, without
    /// the line's context, so it sometimes reads better or worse than the page did; a wrong box reads as another
    /// word or nothing).
    static func sameWord(_ a: String, _ b: String) -> Bool {
        let x = comparable(a), y = comparable(b)
        guard !x.isEmpty, !y.isEmpty else { return x == y }
        var previous = Array(0...y.count)
        for i in 1...x.count {
            var current = [i] + Array(repeating: 0, count: y.count)
            for j in 1...y.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return 3 * previous[y.count] <= max(x.count, y.count)
    }

    func collect(_ image: String, _ format: String) throws -> WordCollector {
        let output = try Run.ocrfarm(["ocr", image, "--format", format])
        #expect(output.status == 0, "\(output.stderr)")
        let collector = WordCollector()
        let parser = XMLParser(data: Data(output.stdout))
        parser.delegate = collector
        #expect(parser.parse(), "\(format) does not parse: \(parser.parserError.map { "\($0)" } ?? "")")
        #expect(collector.imageName == image, "\(format) names \(collector.imageName ?? "no image")")
        return collector
    }

    @Test("each word's quadrilateral, cut out of the original image and read alone, gives the word (≥ 95%)",
          arguments: ["Samples/pages/scan-000.jpg", "Samples/pages/photo-000.jpg"])
    func boxesHoldTheirWords(page: String) throws {
        let image = Fixtures.packageRoot + "/" + page
        let formats = ["hocr", "alto", "page"]
        let collected = try formats.map { try collect(image, $0).words.filter { Self.comparable($0.text).count >= 2 } }
        // The three formats describe the same words at the same places (to the pixel).
        for (format, words) in zip(formats, collected).dropFirst() {
            #expect(words.map(\.text) == collected[0].map(\.text), "\(format) words differ from hOCR's")
            for (a, b) in zip(words, collected[0]) {
                for (p, q) in zip(a.corners, b.corners) where abs(p.x - q.x) > 1 || abs(p.y - q.y) > 1 {
                    Issue.record("\(format): \(a.text) at \(a.corners) vs hOCR \(b.corners)")
                    break
                }
            }
        }
        let words = collected[2]
        #expect(words.count > 100, "only \(words.count) words")

        let original = try Pix(contentsOfFile: image).grayscale()
        let reader = try TesseractEngine(EngineConfiguration(languages: ["eng"], pageSegmentationMode: .singleWord))
        var matched = 0
        var misses: [String] = []
        for word in words {
            let c = word.corners.map { Point($0.x, $0.y) }
            // The word's own axes in the image; a margin of a quarter of its height around it.
            let across = (c[1] - c[0]) * (1 / max(1, c[0].distance(to: c[1])))
            let down = (c[3] - c[0]) * (1 / max(1, c[0].distance(to: c[3])))
            let height = c[0].distance(to: c[3]), width = c[0].distance(to: c[1])
            let pad = 0.25 * height
            let padded = [c[0] - across * pad - down * pad, c[1] + across * pad - down * pad,
                          c[2] + across * pad + down * pad, c[3] - across * pad + down * pad]
            // Read at a comfortable size: the word's height scaled to about 40 px. The warp maps the whole source, so
            // it is given only the padded word's upright box (a page's warp per word took most of the suite's time).
            let scale = 40 / max(1, height)
            let left = max(0, Int(padded.map(\.x).min()!.rounded(.down)) - 2)
            let top = max(0, Int(padded.map(\.y).min()!.rounded(.down)) - 2)
            let right = min(original.width, Int(padded.map(\.x).max()!.rounded(.up)) + 3)
            let bottom = min(original.height, Int(padded.map(\.y).max()!.rounded(.up)) + 3)
            guard right > left, bottom > top else {
                misses.append("\(word.text) at \(word.corners): outside the image")
                continue
            }
            let around = try original.cropped(to: Box(x: left, y: top, width: right - left, height: bottom - top))
            let crop = try around.rectified(corners: padded.map { PixelPoint(x: $0.x - Double(left), y: $0.y - Double(top)) },
                                              width: max(8, Int(((width + 2 * pad) * scale).rounded())),
                                              height: max(8, Int(((height + 2 * pad) * scale).rounded())))
            let read = try reader.recognize(crop).text
            if Self.sameWord(read, word.text) {
                matched += 1
            } else if misses.count < 12 {
                misses.append("\(word.text)→\(read.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
        }
        let share = Double(matched) / Double(max(1, words.count))
        #expect(share >= 0.95, "\(page): \(matched)/\(words.count) boxes hold their word; e.g. \(misses)")
    }
}
