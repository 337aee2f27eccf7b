import FarmAnalysis
import FarmCore
import Leptonica

/// Letter-sized marks of the page as the file has it that no line of a reading covers: the evidence that a reading
/// lost text (a row dropped, faint print the stages flattened away) rather than read it weakly.
///
/// Marks are the dark components of the page as decoded (thresholded at Otsu's level of its own gray histogram, so
/// faint print the stages lightened still counts), mapped onto the corrected page. A mark is letter-sized when its
/// height is between a quarter and twice the reading's median line height and it is at most four line heights wide
/// (rules, frames, pictures and specks are not letters); it is covered when its centre lies in a line box grown by
/// half a line height on every side (a line box hugs its glyphs; dots and accents fall just outside).
struct LostInk {
    /// Letter-sized marks on the page.
    let marks: Int
    /// Those no line of the reading covers.
    let uncovered: Int

    var share: Double { marks > 0 ? Double(uncovered) / Double(marks) : 0 }

    /// Measures `image` (the page as decoded; `toPage` maps it onto the corrected page of `width` × `height`)
    /// against `lines` (boxes on the corrected page). Nil when the reading has no lines to size letters by, or the
    /// image cannot be measured.
    init?(_ image: Pix, toPage: Homography, lines: [Rect], width: Int, height: Int) {
        let heights = lines.map(\.height).filter { $0 > 0 }.sorted()
        guard !heights.isEmpty, let gray = try? image.luminance(), let pixels = try? gray.grayPixels() else { return nil }
        let lineHeight = heights[heights.count / 2]
        var histogram = [Int](repeating: 0, count: 256)
        for value in pixels.data { histogram[Int(value)] += 1 }
        let threshold = QualityFigure.otsuThreshold(histogram)
        guard threshold > 0, let binary = try? gray.binarized(threshold: threshold),
              let components = try? binary.componentBoxes(grownBy: 1, 1) else { return nil }
        let grown = lines.map { line in
            Rect(x: line.x - lineHeight / 2, y: line.y - lineHeight / 2,
                 width: line.width + lineHeight, height: line.height + lineHeight)
        }
        var marks = 0, uncovered = 0
        for component in components {
            let box = Rect(x: component.x, y: component.y, width: component.width, height: component.height)
            // Off the corrected page (a photo's background) a mark is nothing the reading could have read.
            guard 2 * box.shareOnPage(through: toPage, width: width, height: height) > 1 else { continue }
            let mark = box.mapped(through: toPage, width: width, height: height)
            guard 4 * mark.height >= lineHeight, mark.height <= 2 * lineHeight, mark.width <= 4 * lineHeight else { continue }
            marks += 1
            let cx = mark.x + mark.width / 2, cy = mark.y + mark.height / 2
            if !grown.contains(where: { cx >= $0.x && cx < $0.maxX && cy >= $0.y && cy < $0.maxY }) { uncovered += 1 }
        }
        self.marks = marks
        self.uncovered = uncovered
    }
}

extension TesseractRecognizer {
    /// The share of a page's letter-sized marks left uncovered from which its reading lost text: a twentieth, a
    /// round share above what a reading that misses nothing leaves (the odd stamp, logo or box rule: measured 0 on
    /// the synthetic clean pages read again, at most 3.8% on 37 of the 41 SROIE receipts read again) and below what
    /// pages that lost lines leave (the other 4, SROIE 120, 165, 210 and 510, where the whole reading added lines:
    /// 5.8–21%).
    static let lostInkShare = 0.05
}

extension TesseractRecognizer {
    /// Whether a weak page's first reading, after the other binarization read its weak lines (`otherBinarization`,
    /// what that reading did), lost nothing a whole reading of the page as decoded could find: more than half the
    /// weak lines it read came out with the same words (weak by what they say: paths, codes, names, not by how they
    /// are printed), the lines still weak hold less than the weak page share, and no more than `lostInkShare` of
    /// the page's letter-sized marks lie outside its lines. A receipt whose print the stages hurt reads differently
    /// under another threshold; half its lines or fewer read the same.
    static func nothingLost(_ lost: LostInk, stillWeak: Double, otherBinarization: LineRereading?) -> Bool {
        guard let otherBinarization, otherBinarization.read > 0 else { return false }
        return 2 * otherBinarization.same > otherBinarization.read && stillWeak < ReadingStrength.weakPageShare
            && lost.share < lostInkShare
    }
}
