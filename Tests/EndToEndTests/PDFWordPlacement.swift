import Foundation
import FarmCore
import TestSupport

/// Whether the invisible words of a searchable PDF lie on the boxes a result's JSON gives them: `pdftotext -bbox`
/// (points from the top left) against the JSON's pixel boxes scaled to points.
enum PDFWordPlacement {
    /// Of the JSON's words of three or more characters that `pdftotext` finds on `page` of `pdf` (`checked`), how many
    /// lie on their box (`placed`): the left edge within 1 pt, the right within 3 pt, the box's middle inside.
    static func count(pdf: String, page: Int? = nil, words: [JSON], resolution: Double) throws -> (placed: Int, checked: Int) {
        let pages = page.map { ["-f", "\($0)", "-l", "\($0)"] } ?? []
        let html = try Run.process("/usr/bin/pdftotext", pages + ["-bbox", pdf, "-"]).text
        // <word xMin="..." yMin="..." xMax="..." yMax="...">text</word>, in points from the top left.
        let pattern = try NSRegularExpression(pattern: #"<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>"#)
        var extracted: [(text: String, box: [Double])] = []
        for match in pattern.matches(in: html, range: NSRange(html.startIndex..., in: html)) {
            let field = { (i: Int) in String(html[Range(match.range(at: i), in: html)!]) }
            extracted.append((field(5), (1...4).map { Double(field($0))! }))
        }
        var placed = 0, checked = 0
        for word in words {
            guard let text = word["text"]?.stringValue, text.count >= 3,
                  let box = word["box"]?.arrayValue?.compactMap(\.doubleValue), box.count == 4 else { continue }
            let points = box.map { $0 * 72 / resolution }  // x, y, width, height
            let candidates = extracted.filter { $0.text == text.replacingOccurrences(of: "&", with: "&amp;") }
            guard !candidates.isEmpty else { continue }
            checked += 1
            let centerY = points[1] + points[3] / 2
            if candidates.contains(where: { abs($0.box[0] - points[0]) < 1 && abs($0.box[2] - (points[0] + points[2])) < 3
                                            && $0.box[1] <= centerY && centerY <= $0.box[3] }) {
                placed += 1
            }
        }
        return (placed, checked)
    }
}
