import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// The resolution a page was scanned at, which sets its PDF page's size: the file's when it says one that makes a
/// paper-sized page, else inferred from the page itself.
///
/// Files often carry no resolution (PNGs from scanners and phones) or a screen default (72 or 96 pixels per inch
/// written by software that never knew): an A4 page of 2480 pixels at "96 dpi" would be 26 inches wide. The page
/// says more than that: its shape matches a paper size (A-series, Letter, Legal), and its text has a size (body
/// text lines are about 0.14 inch from ascender to descender, 10 to 12 point type). Where the shape matches a
/// paper, the paper whose resolution the text size agrees with best is taken, so the PDF page is exactly A4 or
/// Letter; else the text size alone, rounded to a scanner's usual setting, when the page it makes lies between a
/// business card and A0; with neither, 300 dpi of the file, kept between those bounds (issue 36: four Fraktur
/// lines the engine merged into taller ones made a 1381 × 368 scan a 3.1 × 0.8 cm page).
public enum PageResolution {
    /// Paper sizes in inches, portrait (width, height).
    static let papers: [(name: String, width: Double, height: Double)] = [
        ("A4", 8.27, 11.69), ("Letter", 8.5, 11), ("Legal", 8.5, 14), ("A5", 5.83, 8.27), ("A3", 11.69, 16.54),
        ("B5", 6.93, 9.84), ("Tabloid", 11, 17),
    ]
    /// A line of body text, ascender to descender, in inches.
    static let lineHeight = 0.14
    /// Settings scanners offer; a text-size estimate within 12% of one is taken as it.
    static let usual = [100, 150, 200, 240, 300, 400, 600, 1200]
    /// A declared resolution that makes the page's long side longer than this (inches) is not believed: larger
    /// than a broadsheet newspaper page.
    static let longestPaper = 24.0
    public static let fallback = 300

    /// A guessed page's long side is at least a business card's (85 mm) ...
    static let smallestLongSide = 85 / 25.4
    /// ... and the page fits on A0 (841 × 1189 mm).
    static let largest = (short: 841 / 25.4, long: 1189 / 25.4)

    /// How the resolution was chosen, for the page's findings.
    public enum Source: String, Sendable { case option, file, paper, text, fallback }

    /// A chosen resolution: pixels per inch of the image measured, how it was found, and for a fallback why the
    /// page's own evidence was not taken and whether the page size bounds moved it off 300.
    public struct Choice: Sendable, Equatable {
        public let dpi: Double
        public let source: Source
        /// Why the evidence was weak (a fallback only).
        public var why: String?
        /// "business card" or "A0" when 300 dpi would have made a page outside them and the bound was taken.
        public var bound: String?

        public init(dpi: Double, source: Source, why: String? = nil, bound: String? = nil) {
            (self.dpi, self.source, self.why, self.bound) = (dpi, source, why, bound)
        }
    }

    /// The resolution (pixels per inch of an image `width` × `height`) and how it was found. `declared`: the
    /// file's (0 when none); `lineHeights`: heights in pixels of the page's text lines, in the same image;
    /// `scale`: the image's pixels per pixel of the file (the stages enlarge or reduce a page), so a fallback is
    /// 300 dpi of the file, not of the enlarged page.
    ///
    /// A guess (paper, text, fallback) makes a page between a business card and A0: text that implies a page
    /// outside them is weak evidence (a few lines, or lines the engine merged), and weak evidence gives 300 dpi,
    /// moved to the nearer bound when 300 itself is outside them (a crop of a few words).
    public static func choose(width: Int, height: Int, declared: Int, lineHeights: [Int], option: Int? = nil,
                              scale: Double = 1) -> Choice
    {
        if let option { return Choice(dpi: Double(option), source: .option) }
        guard width > 0, height > 0 else { return Choice(dpi: Double(fallback), source: .fallback, why: "the page is empty") }
        let long = Double(max(width, height)), short = Double(min(width, height))
        if declared > 0, long / Double(declared) <= longestPaper, long / Double(declared) >= 2 {
            return Choice(dpi: Double(declared), source: .file)
        }
        let text = textResolution(lineHeights)
        let ratio = long / short
        let matching = papers.filter { abs($0.height / $0.width - ratio) / ratio < 0.02 }
        if !matching.isEmpty {
            let candidates = matching.map { (short / $0.width) }
            if let text {
                // The paper whose resolution is nearest the text's (by ratio), if the text agrees at all.
                let best = candidates.min { abs(log($0 / text)) < abs(log($1 / text)) }!
                if abs(log(best / text)) < log(1.5) { return Choice(dpi: best, source: .paper) }
            } else {
                return Choice(dpi: candidates[0], source: .paper)
            }
        }
        var why = "fewer than 3 text lines to measure"
        if let text {
            let dpi = Self.rounded(text)
            if plausible(long: long, short: short, dpi: dpi) { return Choice(dpi: dpi, source: .text) }
            let lines = lineHeights.filter { $0 > 2 }.count
            why = "the text lines (\(lines), median \(Int(text * lineHeight)) px) imply a page of "
                + "\(centimetres(width, dpi)) × \(centimetres(height, dpi)) cm, outside a business card to A0"
        }
        let wanted = Double(fallback) * (scale > 0 ? scale : 1)
        // The most pixels per inch that keeps the long side a business card's, the fewest that fit A0.
        let most = long / smallestLongSide, fewest = max(long / largest.long, short / largest.short)
        if wanted > most { return Choice(dpi: most, source: .fallback, why: why, bound: "business card") }
        if wanted < fewest { return Choice(dpi: fewest, source: .fallback, why: why, bound: "A0") }
        return Choice(dpi: wanted, source: .fallback, why: why)
    }

    /// True when `dpi` makes a page between a business card and A0.
    static func plausible(long: Double, short: Double, dpi: Double) -> Bool {
        long / dpi >= smallestLongSide && long / dpi <= largest.long && short / dpi <= largest.short
    }

    /// `pixels` at `dpi`, in centimetres to one place.
    static func centimetres(_ pixels: Int, _ dpi: Double) -> String {
        let millimetres = Int((Double(pixels) / dpi * 25.4).rounded())
        return "\(millimetres / 10).\(millimetres % 10)"
    }

    /// The resolution the text lines' median height implies; nil with fewer than 3 lines.
    static func textResolution(_ lineHeights: [Int]) -> Double? {
        let heights = lineHeights.filter { $0 > 2 }.sorted()
        guard heights.count >= 3 else { return nil }
        return Double(heights[heights.count / 2]) / lineHeight
    }

    static func rounded(_ dpi: Double) -> Double {
        let nearest = usual.min { abs(Double($0) - dpi) < abs(Double($1) - dpi) }!
        return abs(Double(nearest) - dpi) / dpi < 0.12 ? Double(nearest) : dpi.rounded()
    }
}
